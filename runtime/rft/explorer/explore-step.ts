/**
 * Trinity's explorer step (trinity/explorer/explorer.py, workflow_runner.py): read `batch_size` tasks, run each
 * task's workflow `repeat_times` times, send the experiences through the pipeline into the buffer, and log
 * `rollout/…` and pipeline metrics. Eval runs every eval taskset whole and logs `eval/<name>/…`. Names follow the
 * release (runtime/config/runs/metric-names.ts): per-run timing keys, eval reduction ({mean,max,min}, @k or @n) and the rest.
 *
 * A task runs as Trinity's scheduler runs it (`RunnerWrapper.run_with_retry`): each attempt may take the task timeout
 * at most, a failed or timed-out attempt is retried up to `max_retry_times`, and a task whose attempts all failed is
 * still returned — it counts in `finished_task_count`, and of its metrics only the task time remains.
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
import type { RolloutSample } from '../../protocol';
import type { SelectorFeedback } from '../data/reader';
import { gatherMetrics } from '../algorithm';
import { experienceUid, taskGroupId, type Experience } from '../experience';
import type { ExperiencePipeline } from './experience-pipeline';
import type { RolloutModel } from '../models/rollout-model';
import type { AuxiliaryModel } from '../models/auxiliary-model';
import type { RunLog } from '../monitor/run-log';
import type { RewardFactory, WorkflowTask } from '../workflows/types';
import { workflowFactory } from '../workflows/registry';
import { evalTaskMetrics } from './eval-metrics';

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
  /** `explorer.auxiliary_models`, handed to every workflow; the explorer owns them (see `dispose`). */
  auxiliaryModels?: AuxiliaryModel[];
}

export interface TaskTimeoutOptions {
  /** `explorer.max_timeout`, seconds. */
  maxTimeout: number;
  /** `explorer.dynamic_timeout` (≥ v0.4.0). */
  dynamic?: { enable: boolean; ratio: number } | null;
  /** `buffer.batch_size`: training tasks to finish before the dynamic timeout applies. */
  batchSize?: number;
}

/** A task attempt ran past its timeout (Trinity: `asyncio.wait_for` raising `TimeoutError`). */
class TaskTimeoutError extends Error {}

export interface StepOutput {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
  /** The pipeline's per-task pass rates for the taskset's selector (with `pass_rate_calculator`). */
  selectorFeedback?: SelectorFeedback[];
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
}

export class Explorer {
  private readonly release: Release;
  /** Trinity's scheduler totals for the dynamic timeout: seconds and count of finished training tasks. */
  private totalRunningTime = 0;
  private totalCompletedTasks = 0;

  constructor(
    readonly model: RolloutModel,
    private readonly opts: ExplorerOptions,
  ) {
    this.release = opts.release ?? NEWEST_RELEASE;
  }

  /** Runs one batch of training tasks; the experiences carry eid.batch = step. */
  async explore(step: number, tasks: readonly ExplorerTask[], pipeline: ExperiencePipeline): Promise<StepOutput> {
    const started = Date.now();
    const runs: TaskRun[] = [];
    for (const [i, t] of tasks.entries()) runs.push(await this.runTask(t, step, i));
    const all = runs.flatMap((r) => r.exps);
    const { exps, metrics: pipelineMetrics, selectorFeedback } = pipeline.process(all);
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
      samples: sample(all, this.opts.samplesPerStep, {
        decode: (ids) => this.model.tokenizer.decode(ids, { skipSpecialTokens: false }),
        advantages: advantagesByUid(exps),
      }),
    };
    if (selectorFeedback) out.selectorFeedback = selectorFeedback;
    return out;
  }

  /** Runs every task of one eval taskset (no experiences kept); metrics under `eval/<name>/`. */
  async evaluate(
    name: string,
    tasks: readonly ExplorerTask[],
    step: number,
    prefix = 'eval',
  ): Promise<Record<string, number>> {
    const started = Date.now();
    const runs: TaskRun[] = [];
    for (const [i, t] of tasks.entries()) runs.push(await this.runTask({ ...t, isEval: true }, `${step}/${name}`, i));
    const perTask = runs.map((r) => (r.failed ? r.timing : { ...evalTaskMetrics(this.release, r.runs), ...r.timing }));
    return {
      ...gatherEval(this.release, perTask, `${prefix}/${name}`, this.opts.detailedStats ?? false),
      ...(logsFinishedTaskCount(this.release) ? { [`${prefix}/${name}/finished_task_count`]: runs.length } : {}),
      [evalTimeKey(this.release, prefix)]: (Date.now() - started) / 1000,
    };
  }

  /**
   * Each attempt's timeout (Trinity's scheduler): `max_timeout` up to v0.3.2; from v0.4.0 the scheduler passes
   * `dynamic_timeout()`, which is `max_timeout × (max_retry_times + 1)`, or, with `dynamic_timeout.enable` once
   * `batch_size` training tasks have finished, the smaller of that and their mean time × `ratio`.
   */
  private attemptTimeout(): number | null {
    const t = this.opts.timeout;
    if (!t) return null;
    if (!atLeast(this.release, 'v0.4.0')) return t.maxTimeout;
    const max = t.maxTimeout * (this.opts.maxRetryTimes + 1);
    if (!t.dynamic?.enable || this.totalCompletedTasks < (t.batchSize ?? Infinity)) return max;
    return Math.min(max, (this.totalRunningTime / this.totalCompletedTasks) * t.dynamic.ratio);
  }

  private async runTask(task: ExplorerTask, batch: number | string, index: number): Promise<TaskRun> {
    const keys = runMetricKeys(this.release);
    const started = performance.now();
    const timeout = this.attemptTimeout();
    let done: { exps: Experience[]; seconds: number } | undefined;
    let lastError = '';
    for (let attempt = 0; attempt <= this.opts.maxRetryTimes && !done; attempt++) {
      const attemptStart = performance.now();
      const deadline = timeout === null ? null : attemptStart + timeout * 1000;
      try {
        const exps = await this.model.withDeadline(deadline, () => this.runWorkflow(task));
        // A workflow that returns after its deadline had timed out too (Trinity stops waiting for it).
        if (deadline !== null && performance.now() >= deadline) throw new TaskTimeoutError();
        done = { exps, seconds: (performance.now() - attemptStart) / 1000 };
      } catch (e) {
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
      return { exps: [], metrics: { ...timing }, runs: [], timing, failed: true };
    }
    const exps = done.exps;
    for (const e of exps) {
      e.eid.batch = batch;
      e.eid.task = index;
      e.modelVersion = this.model.version;
      e.info = { ...e.info, model_version: this.model.version, task_index: task.taskIndex ?? index };
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

  private async runWorkflow(task: ExplorerTask): Promise<Experience[]> {
    const factory = workflowFactory(task.workflow);
    const ctx = {
      model: this.model,
      task,
      repeatTimes: task.repeatTimes,
      runIdBase: 0,
      createReward: this.opts.createReward,
      auxiliaryModels: this.opts.auxiliaryModels ?? [],
    };
    const wf = factory(ctx);
    let exps: Experience[];
    if (wf.repeatable) exps = await wf.run();
    else {
      exps = [];
      for (let i = 0; i < task.repeatTimes; i++) {
        const run = await factory({ ...ctx, repeatTimes: 1, runIdBase: i }).run();
        // Multi-turn (issue 31): the runner numbers every experience of a run, all its steps (workflow_runner.py
        // `_execute_single_run`: exp.eid.run = run_id_base + run_index).
        for (const e of run) e.eid.run = i;
        exps.push(...run);
      }
    }
    if (exps.length === 0) throw new Error('An empty experience is generated');
    return exps;
  }

  /** Frees the auxiliary models (the rollout model's weights belong to the caller). */
  dispose(): void {
    for (const m of this.opts.auxiliaryModels ?? []) m.dispose();
    this.opts.auxiliaryModels = [];
  }
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

/** What a rollout record adds to an experience: token texts need the tokenizer, the advantage the pipeline's output. */
export interface RolloutSampleExtras {
  decode?: (ids: readonly number[]) => string;
  /** The advantage the pipeline gave each experience, by uid. */
  advantages?: ReadonlyMap<string, number>;
}

/**
 * A rollout record: prompt, response and reward; an episode's conversation, per-turn rewards, mask and what a
 * transcript viewer needs besides (group, outcome numbers, token texts, advantage), all optional.
 */
export function rolloutSample(e: Experience, extras: RolloutSampleExtras = {}): RolloutSample {
  const s: RolloutSample = { prompt: e.promptText ?? '', response: e.responseText ?? '', reward: e.reward ?? 0 };
  if (!e.messages) return s;
  s.messages = e.messages;
  s.run = e.eid.run;
  s.step = e.eid.step;
  s.task = taskGroupId(e.eid);
  if (e.turnRewards) s.turnRewards = e.turnRewards;
  if (e.actionMask) {
    s.responseTokens = e.tokens.slice(e.promptLength);
    s.actionMask = e.actionMask;
    const decode = extras.decode;
    if (decode) s.tokenTexts = s.responseTokens.map((id) => decode([id]));
  }
  if (e.metrics && Object.keys(e.metrics).length) s.metrics = { ...e.metrics };
  if (e.truncated) s.truncated = true;
  const advantage = extras.advantages?.get(experienceUid(e.eid));
  if (advantage !== undefined && Number.isFinite(advantage)) s.advantage = advantage;
  return s;
}

/** Each experience's advantage as one number: its value on the first trained token (GRPO broadcasts one per experience). */
export function advantagesByUid(exps: readonly Experience[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of exps) {
    if (!e.advantages?.length) continue;
    const first = e.actionMask ? e.actionMask.indexOf(1) : 0;
    out.set(experienceUid(e.eid), e.advantages[Math.max(0, first)]);
  }
  return out;
}

/**
 * Up to `n` records spread over the step. Multi-turn episodes are taken a whole task group at a time (at least one
 * group), so that a viewer can set the `repeat_times` episodes of a task side by side.
 */
function sample(exps: readonly Experience[], n: number, extras: RolloutSampleExtras): RolloutSample[] {
  if (n <= 0 || exps.length === 0) return [];
  if (exps.some((e) => e.messages)) {
    const groups = [...groupsOf(exps).values()];
    const wanted = Math.max(1, Math.round((n * groups.length) / exps.length));
    const stride = Math.max(1, Math.floor(groups.length / wanted));
    const out: RolloutSample[] = [];
    for (let i = 0; i < groups.length && out.length < n; i += stride)
      out.push(...groups[i].map((e) => rolloutSample(e, extras)));
    return out;
  }
  const stride = Math.max(1, Math.floor(exps.length / n));
  const out: RolloutSample[] = [];
  for (let i = 0; i < exps.length && out.length < n; i += stride) {
    const e = exps[i];
    out.push(rolloutSample(e, extras));
  }
  return out;
}

function groupsOf(exps: readonly Experience[]): Map<string, Experience[]> {
  const groups = new Map<string, Experience[]>();
  for (const e of exps) {
    const k = taskGroupId(e.eid);
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  return groups;
}
