/**
 * Trinity's explorer step (trinity/explorer/explorer.py, workflow_runner.py): read `batch_size` tasks, run each
 * task's workflow `repeat_times` times, send the experiences through the pipeline into the buffer, and log
 * `rollout/…` and pipeline metrics. Eval runs every eval taskset whole and logs `eval/<name>/…`. Names follow the
 * release (runtime/config/runs/metric-names.ts): per-run timing keys, eval reduction ({mean,max,min}, @k or @n) and the rest.
 *
 * A task runs as Trinity's scheduler runs it (`RunnerWrapper.run_with_retry`): each attempt may take the task timeout
 * at most, a failed or timed-out attempt is retried up to `max_retry_times`, and a task whose attempts all failed is
 * still returned — it counts in `finished_task_count`, and of its metrics only the task time remains. On main a task
 * whose repeated runs (a workflow that cannot repeat itself) partly failed keeps the runs that finished
 * (workflow_runner.py `_aggregate_run_results`, f3c8dec6769c): `over_rollout.return_partial_tasks` runs them all and
 * takes such a task as it is, else the runs stop at the first failure and the task is retried.
 *
 * With `explorer.over_rollout` a training step stops waiting `wait_after_min` seconds after `min_wait_num` of its tasks
 * are back; the tasks running then are cancelled and the ones not started are dropped (see `runTasks`). Eval tasks go
 * through the same runners as a step's (see `evaluate`).
 *
 * A step whose every task failed is a failed step (logged as an error), and after
 * {@link MAX_STEPS_WITHOUT_EXPERIENCE} steps in a row without one experience the explorer stops the run with the
 * first task's error. Trinity is slower to say so: its explorer logs each failed task and goes on
 * (trinity/explorer/explorer.py at 08ab577, `_finish_explore_step`), and the run fails only when its trainer has
 * waited `buffer.trainer_input.experience_buffer.max_read_timeout` (1800 s by default) for a batch and raises
 * "Read incomplete batch (0/n), please check your workflow." (trinity/buffer/reader/queue_reader.py); a local run
 * on a laptop has no reason to wait half an hour, and the first task's error is what there is to fix.
 */
import {
  evalGatherSuffixes,
  evalStyle,
  evalTimeKey,
  logsFinishedTaskCount,
  runMetricKeys,
} from '../../config/runs/metric-names';
import { atLeast, NEWEST_RELEASE, type Release } from '../../config/releases';
import { GenerationStoppedError } from '../../engine/sampling';
import { StepAbandoned, type StopPoint } from '../stop-point';
import type { RolloutSample } from '../../protocol';
import type { SelectorFeedback } from '../data/reader';
import { gatherMetrics } from '../algorithm';
import type { Experience } from '../experience';
import type { ExperiencePipeline } from './experience-pipeline';
import type { RolloutModel } from '../models/rollout-model';
import type { AuxiliaryModel } from '../models/auxiliary-model';
import type { RunLog } from '../monitor/run-log';
import type { RewardFactory, WorkflowTask } from '../workflows/types';
import { workflowFactory } from '../workflows/registry';
import { TurnBatcher } from '../workflows/multi-turn/batched-turns';
import { RunSlots } from './run-slots';
import { evalTaskMetrics } from './eval-metrics';
import { advantagesByUid, sampleRollouts } from './rollout-samples';
import { timed } from '../monitor/phase-times';

export interface ExplorerTask extends WorkflowTask {
  workflow: string;
  repeatTimes: number;
  /** Trinity's `task.index`: the dataset row, and the taskset when a scheduler mixed them (its experiences' `task_index`). */
  taskIndex?: { index: number; taskset_id?: number };
}

export interface ExplorerOptions {
  maxRetryTimes: number;
  createReward: RewardFactory;
  /** Rollout samples reported per step (prompt, response, reward). */
  samplesPerStep: number;
  log: RunLog;
  /** The Trinity release whose metric names are logged (default: the newest). */
  release?: Release;
  /** `monitor.detailed_stats` (≥ v0.5.0): eval metrics gathered as {mean,max,min,std} instead of the mean only. */
  detailedStats?: boolean;
  /** The task timeout (none: tasks run to the end). */
  timeout?: TaskTimeoutOptions;
  /** `explorer.over_rollout` with a positive ratio: when a training step stops waiting for its tasks. */
  overRollout?: OverRollout;
  /** `over_rollout.return_partial_tasks` (main). */
  returnPartialTasks?: boolean;
  /**
   * `explorer.runner_per_model`: how many runs of a task whose workflow allows it (`concurrentRuns`) go at once, their
   * model calls batched into one engine call (unset: 1, one after another; a run passes the config's, 8 by default in
   * every modelled release: trinity/common/config.py `ExplorerConfig.runner_per_model`, 7d2323f to f3c8dec). Trinity's
   * scheduler (trinity/explorer/scheduler.py: `runner_num = engines × runner_per_model`) runs that many workflow
   * runners per engine and spreads a task's repeats over them in chunks of `max_repeat_times_per_runner`
   * (`_split_and_submit_tasks`, b6321d7; null by default: a task is one runner's), so the runs of all a step's tasks
   * share the engine, which batches their concurrent requests. Here, with more than one runner, a step's tasks (or an
   * evaluation's, every eval taskset's together) go at once: up to `runner_per_model` runs of them at a time
   * (RunSlots, granted in task and run order), all their episodes' turns through one TurnBatcher, and the
   * `chat`/`generate` calls of a repeatable workflow's runs (one per task, its `repeat_times` samples as `n`) that
   * arrive together as one engine call (RolloutModel's SampleBatcher). A workflow without `concurrentRuns` takes
   * every runner while it runs. The chunking is refused where it would split a task (refusals/refused-settings.ts).
   *
   * What differs from one task after another: each episode draws its sampling seed when it opens, and each
   * `chat`/`generate` call when it is made, so the results of a seed are the same as sequentially (up to the float32
   * rounding of a wider batch) when every run of the step fits the runners at once (runs start in task and run
   * order); with more runs than runners they start in the order runners come free, which the same seed and config
   * still repeat. A retried attempt draws its seeds when it starts again. A task's clocks (its time, its attempt's
   * timeout) start when its first run gets a runner; a run that goes at once with others ends at its task's deadline
   * (TurnBatcher fails an episode's turn there, SampleBatcher a call; the others in its batch go on), and the attempt
   * times out and is retried as Trinity's; a run that makes no model call is not interrupted (an attempt that comes
   * back late still fails as timed out). A workflow that runs alone keeps its deadline on the model's generations.
   */
  runnersPerModel?: number;
  /** `explorer.auxiliary_models`, handed to every workflow; the explorer owns them (see `dispose`). */
  auxiliaryModels?: AuxiliaryModel[];
  /**
   * Awaited before each task attempt and each batched engine call of a step: what it throws (StepAbandoned, the run
   * is stopping) gives the whole step up, past retries and partial runs (stop-point.ts).
   */
  stop?: StopPoint;
}

export interface TaskTimeoutOptions {
  /** `explorer.max_timeout`, seconds. */
  maxTimeout: number;
  /** `explorer.dynamic_timeout` (≥ v0.4.0; `warmup_min_steps` on main). */
  dynamic?: { enable: boolean; ratio: number; warmup_min_steps?: number } | null;
  /** `buffer.batch_size`: training tasks to finish before the dynamic timeout applies (up to v0.5.2). */
  batchSize?: number;
}

export interface OverRollout {
  /** `ceil(batch_size × (1 − ratio))` (explorer.py `min_wait_num`). */
  minWaitNum: number;
  /** `over_rollout.wait_after_min`, seconds. */
  waitAfterMinS: number;
}

/** Over-rollout cancelled the task while it ran (Trinity's scheduler cancels it when the step stops waiting). */
const CUT = Symbol('cut');

/** A task attempt ran past its timeout (Trinity: `asyncio.wait_for` raising `TimeoutError`). */
class TaskTimeoutError extends Error {}

/** What one attempt's workflow runs gave: the finished runs' experiences, and the first failure if a run failed. */
interface Attempt {
  exps: Experience[];
  /** Runs that failed (main, a workflow that cannot repeat itself), with the first one's error. */
  failedRuns: number;
  firstError?: string;
}

/** Explorer steps in a row that may make no experience before the run fails (see the module comment). */
export const MAX_STEPS_WITHOUT_EXPERIENCE = 3;

/** The explorer made no experience for {@link MAX_STEPS_WITHOUT_EXPERIENCE} steps: the run cannot learn. */
export class NoExperienceError extends Error {}

/** Records kept of each eval taskset's episodes per evaluation, spread over its tasks (monitor/eval-rollouts.jsonl). */
export const EVAL_SAMPLES_PER_TASKSET = 32;

/** An evaluation: its metrics (`<prefix>/<taskset>/…`) and some records of each eval taskset's runs. */
export interface EvalOutput {
  metrics: Record<string, number>;
  samples: { taskset: string; samples: RolloutSample[] }[];
}

export interface StepOutput {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
  /** The pipeline's per-task pass rates for the taskset's selector (with `pass_rate_calculator`). */
  selectorFeedback?: SelectorFeedback[];
}

/**
 * What the tasks of a step that go at once share: the runners, the batcher of their episodes' turns, and when
 * over-rollout stops waiting for them (a `performance.now()` time, once set).
 */
interface StepShare {
  slots: RunSlots;
  turns: TurnBatcher;
  cut: number | null;
}

/** One eval taskset's tasks. */
export interface EvalTaskset {
  name: string;
  tasks: readonly ExplorerTask[];
}

interface TaskRun {
  exps: Experience[];
  /** The task's metrics: each run's (one per experience) mean, plus the release's timing keys. */
  metrics: Record<string, number>;
  /** One record per run (experience) of the task, for eval's per-task reduction. */
  runs: Record<string, number>[];
  /** The release's timing keys (run, task) with the task's seconds. */
  timing: Record<string, number>;
  /** Every attempt failed or timed out. */
  failed: boolean;
  /** The last attempt's error, when failed. */
  error?: string;
}

export class Explorer {
  private readonly release: Release;
  /** Trinity's scheduler totals for the dynamic timeout: seconds and count of finished training tasks. */
  private totalRunningTime = 0;
  private totalCompletedTasks = 0;
  /** Training steps whose every task came back (main's `total_completed_steps`, for `warmup_min_steps`). */
  private totalCompletedSteps = 0;

  /** Training steps in a row whose workflows made no experience, and the first failed task's error among them. */
  private emptySteps = 0;
  private firstError: string | undefined;
  private madeAny = false;

  constructor(
    readonly model: RolloutModel,
    private readonly opts: ExplorerOptions,
  ) {
    this.release = opts.release ?? NEWEST_RELEASE;
  }

  /** Runs one batch of training tasks; the experiences carry eid.batch = step. */
  async explore(step: number, tasks: readonly ExplorerTask[], pipeline: ExperiencePipeline): Promise<StepOutput> {
    const started = Date.now();
    const runs = kept(
      await this.runTasks(
        tasks.map((task, index) => ({ task, batch: step, index })),
        this.opts.overRollout,
      ),
    );
    if (runs.length === tasks.length) this.totalCompletedSteps++;
    else
      this.opts.log(
        'info',
        `over_rollout: step ${step} goes on with ${runs.length} of ${tasks.length} tasks (${tasks.length - runs.length} dropped)`,
      );
    const all = runs.flatMap((r) => r.exps);
    this.noteExperiences(step, runs, all.length);
    const {
      exps,
      metrics: pipelineMetrics,
      selectorFeedback,
    } = timed('explorer: experience pipeline (advantages)', () => pipeline.process(all));
    // Failed tasks are statuses too: their task time enters the stats, and they count as finished.
    const metrics: Record<string, number> = {
      'rollout/model_version': this.model.version,
      ...gatherMetrics(
        runs.map((r) => r.metrics),
        'rollout',
      ),
      ...pipelineMetrics,
      ...(logsFinishedTaskCount(this.release) ? { 'rollout/finished_task_count': runs.length } : {}),
      'time/explore_step': (Date.now() - started) / 1000,
    };
    const out: StepOutput = {
      experiences: exps,
      metrics,
      samples: sampleRollouts(all, this.opts.samplesPerStep, {
        decode: (ids) => this.model.tokenizer.decode(ids, { skipSpecialTokens: false }),
        advantages: advantagesByUid(exps),
      }),
    };
    if (selectorFeedback) out.selectorFeedback = selectorFeedback;
    return out;
  }

  /**
   * A step whose tasks all failed is a failed step; too many steps in a row without an experience end the run
   * (NoExperienceError) with the first failed task's error, which is what there is to fix.
   */
  private noteExperiences(step: number, runs: readonly TaskRun[], made: number): void {
    const failed = runs.filter((r) => r.failed);
    if (runs.length && failed.length === runs.length)
      this.opts.log('error', `explorer step ${step} failed: all ${runs.length} tasks failed (${failed[0].error})`);
    if (made > 0 || !runs.length) {
      this.madeAny ||= made > 0;
      this.emptySteps = 0;
      this.firstError = undefined;
      return;
    }
    this.firstError ??= failed[0]?.error ?? 'the workflows returned no experience';
    if (++this.emptySteps >= MAX_STEPS_WITHOUT_EXPERIENCE)
      throw new NoExperienceError(
        `no experience was made in ${this.emptySteps} explorer steps in a row (up to step ${step}), so nothing can be trained. The first failed task's error: ${this.firstError}`,
      );
  }

  /**
   * The taskset is done: a run shorter than MAX_STEPS_WITHOUT_EXPERIENCE whose steps all made nothing fails too
   * (NoExperienceError) rather than finishing with nothing trained. Null: no step to explore.
   */
  finish(): null {
    if (!this.madeAny && this.emptySteps > 0)
      throw new NoExperienceError(
        `no experience was made in any of the ${this.emptySteps} explorer steps, so nothing was trained. The first failed task's error: ${this.firstError}`,
      );
    return null;
  }

  /**
   * Runs every task of the eval tasksets (no experiences kept); metrics under `<prefix>/<name>/`, and the time of the
   * whole evaluation. Trinity's explorer schedules every eval taskset's tasks (batch `<step>/<name>`) on the runners
   * its training tasks use and waits for all of them (trinity/explorer/explorer.py `eval` and `_finish_eval_step`,
   * 08ab577; `time/eval` runs from the first taskset's start to the end of the last), so here they go at once as a
   * step's tasks do (see ExplorerOptions.runnersPerModel). The metrics are reduced per taskset in task order.
   */
  async evaluate(sets: readonly EvalTaskset[], step: number, prefix = 'eval'): Promise<EvalOutput> {
    if (sets.length === 0) return { metrics: {}, samples: [] };
    const started = Date.now();
    const all = await this.runTasks(
      sets.flatMap((set) =>
        set.tasks.map((t, index) => ({ task: { ...t, isEval: true }, batch: `${step}/${set.name}`, index })),
      ),
    );
    const metrics: Record<string, number> = {};
    const episodes: { taskset: string; exps: Experience[] }[] = [];
    let from = 0;
    for (const set of sets) {
      const runs = kept(all.slice(from, (from += set.tasks.length)));
      episodes.push({ taskset: set.name, exps: runs.flatMap((r) => r.exps) });
      const perTask = runs.map((r) =>
        r.failed ? r.timing : { ...evalTaskMetrics(this.release, r.runs), ...r.timing },
      );
      Object.assign(
        metrics,
        gatherEval(this.release, perTask, `${prefix}/${set.name}`, this.opts.detailedStats ?? false),
        logsFinishedTaskCount(this.release) ? { [`${prefix}/${set.name}/finished_task_count`]: runs.length } : {},
      );
    }
    metrics[evalTimeKey(this.release, prefix)] = (Date.now() - started) / 1000;
    // The records are chosen and decoded after the clock stops: `time/eval` is the runs' alone, as Trinity's.
    const decode = (ids: readonly number[]) => this.model.tokenizer.decode(ids, { skipSpecialTokens: false });
    const samples = episodes.map((e) => ({
      taskset: e.taskset,
      samples: sampleRollouts(e.exps, EVAL_SAMPLES_PER_TASKSET, { decode }),
    }));
    return { metrics, samples };
  }

  /**
   * The tasks of one step (or of an evaluation), each run with its retries, one result per task in task order: CUT
   * where over-rollout dropped it. With more than one runner they go at once (ExplorerOptions.runnersPerModel), else
   * one after another.
   *
   * With `over`, the step stops waiting `wait_after_min` seconds after `min_wait_num` of its tasks came back (failed
   * ones count), as Trinity's scheduler does (trinity/explorer/scheduler.py `get_results`, b6321d7: once
   * `completed_count >= min_num` it waits until every task is back or `wait_after_min` has passed, then
   * `_clear_timeout_tasks` cancels the batch's running tasks and drops its pending ones; the explorer takes the
   * statuses and experiences of the tasks that came back, explorer.py `_finish_explore_step`, 08ab577). Going at
   * once, a task still running at that moment ends at its next model call or decode step (its deadline becomes the
   * cut), one waiting for a runner never starts, and one that comes back after it is dropped; cancelled tasks do not
   * count toward the dynamic timeout's totals (scheduler.py `task_done_callback` returns early for them). Tasks
   * back at the same moment as the `min_wait_num`-th (their rows done at the same decode step of one engine call)
   * count with it, as Trinity's poll (every 0.1 s) finds them all back; beyond that the cut is exact.
   */
  private async runTasks(
    jobs: readonly { task: ExplorerTask; batch: number | string; index: number }[],
    over?: OverRollout,
  ): Promise<(TaskRun | typeof CUT)[]> {
    const runners = Math.max(1, this.opts.runnersPerModel ?? 1);
    if (runners === 1 || jobs.length < 2) {
      const out: (TaskRun | typeof CUT)[] = [];
      let cutoff: number | null = null;
      let back = 0;
      for (const j of jobs) {
        const run =
          cutoff !== null && performance.now() >= cutoff
            ? CUT
            : await this.runTask(j.task, j.batch, j.index, () => cutoff);
        out.push(run);
        if (run !== CUT && over && ++back === over.minWaitNum) cutoff = performance.now() + over.waitAfterMinS * 1000;
      }
      return out;
    }
    const share: StepShare = { slots: new RunSlots(runners), turns: this.turnBatcher(), cut: null };
    let back = 0;
    // One stop point for the step's first attempts: in the main thread it yields, and a yield per task would start
    // each task's first call on its own turn of the event loop (the sample batcher would send them to the engine
    // one by one). Each run then asks again, without yielding, when it gets its runner (runWorkflow).
    await this.opts.stop?.();
    // Runners pull the tasks in order (Trinity's scheduler queues them for its runners): at most `runners` tasks are
    // under way, each run of them holding one of the step's runners (a taskset of thousands is not thousands of
    // pending tasks at once).
    const out: (TaskRun | typeof CUT)[] = new Array(jobs.length);
    let next = 0;
    let failed = false;
    const runner = async (): Promise<void> => {
      while (!failed && next < jobs.length) {
        const i = next++;
        const j = jobs[i];
        const run = await this.runTask(j.task, j.batch, j.index, () => share.cut, share);
        out[i] = run;
        if (run !== CUT && over && ++back === over.minWaitNum)
          share.cut = performance.now() + over.waitAfterMinS * 1000;
      }
    };
    try {
      // A task that gives the step up (a stop) ends the pulling, and every task under way ends before the step does:
      // none is left using the model, which the run frees next. With the stop flag set they end at once (at their
      // runner, call or decode step).
      const ends = await Promise.allSettled(
        Array.from({ length: Math.min(runners, jobs.length) }, () =>
          runner().catch((e: unknown) => {
            failed = true;
            throw e;
          }),
        ),
      );
      const failure = ends.find((e) => e.status === 'rejected');
      if (failure) throw failure.reason;
      return out;
    } finally {
      share.turns.dispose();
    }
  }

  /**
   * Each attempt's timeout (Trinity's scheduler): `max_timeout` up to v0.3.2; from v0.4.0 the scheduler passes
   * `dynamic_timeout()`, which is `max_timeout × (max_retry_times + 1)`, or, with `dynamic_timeout.enable`, the smaller
   * of that and the mean time of the finished training tasks × `ratio`: up to v0.5.2 once `batch_size` of them have
   * finished, on main once `warmup_min_steps` training steps came back whole (scheduler.py, PR #530).
   */
  private attemptTimeout(): number | null {
    const t = this.opts.timeout;
    if (!t) return null;
    if (!atLeast(this.release, 'v0.4.0')) return t.maxTimeout;
    const max = t.maxTimeout * (this.opts.maxRetryTimes + 1);
    if (!t.dynamic?.enable) return max;
    const warm =
      this.release === 'main'
        ? this.totalCompletedSteps >= (t.dynamic.warmup_min_steps ?? 1) && this.totalCompletedTasks > 0
        : this.totalCompletedTasks >= (t.batchSize ?? Infinity);
    if (!warm) return max;
    return Math.min(max, (this.totalRunningTime / this.totalCompletedTasks) * t.dynamic.ratio);
  }

  /**
   * One task with its retries; CUT when over-rollout's cut (a performance.now() time, `cutAt`'s once set) came first.
   * With `share` it goes at once with the step's other tasks (see ExplorerOptions.runnersPerModel).
   */
  private async runTask(
    task: ExplorerTask,
    batch: number | string,
    index: number,
    cutAt: () => number | null,
    share?: StepShare,
  ): Promise<TaskRun | typeof CUT> {
    const isCut = (): boolean => {
      const at = cutAt();
      return at !== null && performance.now() >= at;
    };
    const keys = runMetricKeys(this.release);
    let started = performance.now();
    const version = this.model.version;
    const timeout = this.attemptTimeout();
    const partialRuns = this.release === 'main';
    let done: { exps: Experience[]; seconds: number } | undefined;
    let partial: { exps: Experience[]; seconds: number } | undefined;
    let lastError = '';
    for (let attempt = 0; attempt <= this.opts.maxRetryTimes && !done; attempt++) {
      if (!share || attempt > 0) await this.opts.stop?.();
      if (isCut()) return CUT;
      let attemptStart = performance.now();
      let timeoutAt = timeout === null ? null : attemptStart + timeout * 1000;
      const deadline = (): number | null => earliest(cutAt(), timeoutAt);
      const waitedFrom = attemptStart;
      try {
        const got = share
          ? await this.runWorkflow(task, partialRuns, {
              ...share,
              deadline,
              // Trinity times a task in its runner: the clocks start when the task's first run gets one.
              onRunner: () => {
                attemptStart = performance.now();
                if (attempt === 0) started += attemptStart - waitedFrom;
                timeoutAt = timeout === null ? null : attemptStart + timeout * 1000;
              },
            })
          : await this.model.withDeadline(deadline, () => this.runWorkflow(task, partialRuns));
        if (isCut()) return CUT;
        // A workflow that returns after its deadline had timed out too (Trinity stops waiting for it).
        if (timeoutAt !== null && performance.now() >= timeoutAt) throw new TaskTimeoutError();
        const seconds = (performance.now() - attemptStart) / 1000;
        if (got.failedRuns === 0) done = { exps: got.exps, seconds };
        else {
          lastError = `${got.exps.length > 0 ? 'some' : 'all'} runs of task ${index} of batch ${batch} failed: ${got.firstError}`;
          // The last attempt's finished runs stay (run_with_retry returns its payload); return_partial_tasks takes
          // the first attempt with any and does not retry.
          partial = got.exps.length > 0 ? { exps: got.exps, seconds } : undefined;
          if (partial && this.opts.returnPartialTasks) done = partial;
          else this.opts.log('error', lastError);
        }
      } catch (e) {
        if (e instanceof StepAbandoned) throw e;
        // A generation the run's stop ended (rollout-model.ts `stopping`) gives the step up too.
        if (e instanceof GenerationStoppedError && this.model.stopping?.()) throw new StepAbandoned();
        if (isCut()) return CUT;
        partial = undefined;
        if (e instanceof GenerationStoppedError || e instanceof TaskTimeoutError) {
          lastError = `Timeout when running task ${index} of batch ${batch} at attempt ${attempt + 1} (timeout ${timeout} s)`;
          this.opts.log('error', lastError);
        } else {
          lastError = (e as Error).message;
          this.opts.log(
            'warning',
            `Task execution attempt ${attempt + 1} failed (task ${index} of batch ${batch}): ${lastError}`,
          );
        }
      }
    }
    done ??= partial;
    const seconds = (performance.now() - started) / 1000;
    if (!task.isEval) {
      this.totalRunningTime += seconds;
      this.totalCompletedTasks++;
    }
    if (!done) {
      this.opts.log(
        'warning',
        `task ${index} of batch ${batch} failed after ${this.opts.maxRetryTimes + 1} attempt(s): ${lastError}`,
      );
      const timing = { [keys.task]: seconds };
      return { exps: [], metrics: { ...timing }, runs: [], timing, failed: true, error: lastError };
    }
    const exps = done.exps;
    // The version the task started on; main also records how far the weights moved while it ran (workflow_runner.py
    // `run_task`, PR #579: `model_version_drift`). Every release stamps `use_count: 0` beside them, the count
    // Trinity's priority queue raises as it hands an experience out again (workflow_runner.py `run_task` @1d7fae4).
    const drift = this.release === 'main' ? { model_version_drift: this.model.version - version } : {};
    for (const e of exps) {
      e.eid.batch = batch;
      e.eid.task = index;
      e.modelVersion = version;
      e.info = { ...e.info, model_version: version, ...drift, use_count: 0, task_index: task.taskIndex ?? index };
    }
    const timing = { [keys.run]: done.seconds, [keys.task]: seconds };
    return {
      exps,
      metrics: { ...averageMetrics(exps), ...timing },
      runs: runMetrics(exps),
      timing,
      failed: false,
    };
  }

  /**
   * The task's workflow runs. A failing run fails the attempt, except on main (`partialRuns`) for a workflow that
   * cannot repeat itself: there a failed run is counted and the runs stop (or, with return_partial_tasks, go on), and
   * the finished ones are kept (workflow_runner.py `_sequential_run`). A timeout always fails the attempt.
   */
  private async runWorkflow(
    task: ExplorerTask,
    partialRuns: boolean,
    share?: StepShare & { deadline: () => number | null; onRunner: () => void },
  ): Promise<Attempt> {
    const factory = workflowFactory(task.workflow);
    const turns = share?.turns ?? this.turnBatcher();
    // Alone, a task's runs go up to runner_per_model at once; with others, each run holds one of the step's runners,
    // and a run that must go alone holds them all (and so may keep the task's deadline on the model's generations).
    const slots = share?.slots ?? new RunSlots(Number.MAX_SAFE_INTEGER);
    let waiting = true;
    // A run whose generations are its own calls (alone, or a repeatable workflow's one call) keeps the task's
    // deadline on them; episodes' turns end there through the step's TurnBatcher.
    const hold = <T>(alone: boolean, ownCalls: boolean, fn: () => T | Promise<T>): Promise<T> =>
      slots.with(alone ? slots.capacity : 1, () => {
        // A run that gets its runner once the run is stopping does not start (the flag read as it is: no yield).
        if (this.model.stopping?.()) throw new StepAbandoned();
        if (waiting) share?.onRunner();
        waiting = false;
        // A run that gets its runner after its deadline (over-rollout's cut, its task's timeout) does not start.
        const due = share?.deadline() ?? null;
        if (due !== null && performance.now() >= due)
          throw new GenerationStoppedError("the task's deadline has passed");
        return share && ownCalls ? this.model.withDeadline(share.deadline, fn) : fn();
      });
    const ctx = {
      model: this.model,
      task,
      repeatTimes: task.repeatTimes,
      runIdBase: 0,
      createReward: this.opts.createReward,
      auxiliaryModels: this.opts.auxiliaryModels ?? [],
      // With the step's other tasks, an episode ends at its task's deadline (its turns share engine calls).
      turnSampler: () => turns.open(share?.deadline),
    };
    try {
      const wf = factory(ctx);
      const out: Attempt = { exps: [], failedRuns: 0 };
      // A repeatable workflow's task is one run on one runner (Trinity's default max_repeat_times_per_runner, null).
      if (wf.repeatable) out.exps = await hold(!wf.concurrentRuns, true, () => wf.run());
      else {
        const width = wf.concurrentRuns ? Math.max(1, this.opts.runnersPerModel ?? 1) : 1;
        const goOnAfterFailure = partialRuns && this.opts.returnPartialTasks === true;
        const runs = await runConcurrently(task.repeatTimes, width, goOnAfterFailure, (i) =>
          hold(!wf.concurrentRuns, !wf.concurrentRuns, () => factory({ ...ctx, repeatTimes: 1, runIdBase: i }).run()),
        );
        for (const [i, run] of runs.entries()) {
          if (!run.ok) {
            if (!partialRuns || run.error instanceof GenerationStoppedError || run.error instanceof StepAbandoned)
              throw run.error;
            out.failedRuns++;
            out.firstError ??= (run.error as Error).message;
            if (this.opts.returnPartialTasks) continue;
            break;
          }
          // Multi-turn (issue 31): the runner numbers every experience of a run, all its steps (workflow_runner.py
          // `_execute_single_run`: exp.eid.run = run_id_base + run_index).
          for (const e of run.exps) e.eid.run = i;
          out.exps.push(...run.exps);
        }
      }
      if (out.exps.length === 0 && out.failedRuns === 0) throw new Error('An empty experience is generated');
      return out;
    } finally {
      if (!share) turns.dispose();
    }
  }

  private turnBatcher(): TurnBatcher {
    return new TurnBatcher(this.model, { reuseCache: true, stop: this.opts.stop });
  }

  /** Frees the auxiliary models (the rollout model's weights belong to the caller). */
  dispose(): void {
    for (const m of this.opts.auxiliaryModels ?? []) m.dispose();
    this.opts.auxiliaryModels = [];
  }
}

/** The earlier of two deadlines (null: none). */
function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** The tasks that count: over-rollout's dropped ones left out. */
function kept(runs: readonly (TaskRun | typeof CUT)[]): TaskRun[] {
  return runs.filter((r): r is TaskRun => r !== CUT);
}

type RunResult = { ok: true; exps: Experience[] } | { ok: false; error: unknown };

/**
 * Runs 0..n−1 of a task, up to `width` at a time, in run order. After a failure no new run starts (the sequential
 * runner stops there too) unless `goOnAfterFailure`; the runs already going finish, so none is left using the model.
 */
async function runConcurrently(
  n: number,
  width: number,
  goOnAfterFailure: boolean,
  run: (i: number) => Experience[] | Promise<Experience[]>,
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < n && !failed) {
      const i = next++;
      try {
        results[i] = { ok: true, exps: await run(i) };
      } catch (error) {
        results[i] = { ok: false, error };
        failed = !goOnAfterFailure;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
  return results.slice(0, next).map((r) => r ?? { ok: false, error: new Error('run did not finish') });
}

/** Eval metrics over tasks: {mean,max,min} (< v0.5.0); from v0.5.0 `gather_eval_metrics`, the mean only unless detailed. */
function gatherEval(
  release: Release,
  perTask: readonly Record<string, number>[],
  prefix: string,
  detailed: boolean,
): Record<string, number> {
  if (evalStyle(release) !== 'at-n') return gatherMetrics(perTask, prefix);
  const sfx = evalGatherSuffixes(release, detailed);
  const cols = new Map<string, number[]>();
  for (const d of perTask)
    for (const [k, v] of Object.entries(d))
      if (typeof v === 'number' && !Number.isNaN(v)) cols.set(k, [...(cols.get(k) ?? []), v]);
  const out: Record<string, number> = {};
  for (const [k, vs] of cols) {
    const m = vs.reduce((a, b) => a + b, 0) / vs.length;
    // pandas' std is the sample std (ddof 1): NaN for a single task, which is left out here.
    const std = vs.length > 1 ? Math.sqrt(vs.reduce((a, b) => a + (b - m) ** 2, 0) / (vs.length - 1)) : NaN;
    const stat: Record<string, number> = {
      '': m,
      '/mean': m,
      '/max': Math.max(...vs),
      '/min': Math.min(...vs),
      '/std': std,
    };
    for (const s of sfx) if (!Number.isNaN(stat[s])) out[`${prefix}/${k}${s}`] = stat[s];
  }
  return out;
}

/**
 * Each metric of a task: the mean over its runs of each run's mean over its experiences (Trinity averages per task
 * before gathering). A step-wise run has an experience per step; Trinity's runner first reduces a run to one record
 * (workflow_runner.py `aggregate_run_level_metrics`, the mean of each key), so long episodes do not outweigh short
 * ones. With one experience per run (single-turn, concatenated) it is the plain mean.
 */
function averageMetrics(exps: readonly Experience[]): Record<string, number> {
  return meanOfKeys(runMetrics(exps));
}

/** One metrics record per run (eid.run) of a task: the mean of each key over the run's experiences. */
function runMetrics(exps: readonly Experience[]): Record<string, number>[] {
  const runs = new Map<number, Record<string, number>[]>();
  for (const e of exps) runs.set(e.eid.run, [...(runs.get(e.eid.run) ?? []), e.metrics ?? {}]);
  return [...runs.values()].map(meanOfKeys);
}

function meanOfKeys(records: readonly Record<string, number>[]): Record<string, number> {
  const sums = new Map<string, { total: number; n: number }>();
  for (const r of records) {
    for (const [k, v] of Object.entries(r)) {
      const s = sums.get(k) ?? { total: 0, n: 0 };
      s.total += v;
      s.n++;
      sums.set(k, s);
    }
  }
  return Object.fromEntries([...sums].map(([k, s]) => [k, s.total / s.n]));
}
