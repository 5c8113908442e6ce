/**
 * Trinity's explorer step (trinity/explorer/explorer.py, workflow_runner.py): read `batch_size` tasks, run each
 * task's workflow `repeat_times` times, send the experiences through the pipeline into the buffer, and log
 * `rollout/…` and pipeline metrics. Eval runs every eval taskset whole and logs `eval/<name>/…`. Names follow the
 * release (runtime/config/metrics.ts): per-run timing keys, eval reduction ({mean,max,min}, @k or @n) and the rest.
 */
import { evalGatherSuffixes, evalKs, evalStyle, evalTimeKey, logsFinishedTaskCount, runMetricKeys } from '../../config/metrics';
import { NEWEST_RELEASE, type Release } from '../../config/releases';
import type { RolloutSample } from '../../protocol';
import { gatherMetrics } from '../algorithm';
import type { Experience } from '../experience';
import type { ExperiencePipeline } from './pipeline';
import type { RolloutModel } from './rollout-model';
import type { RewardFactory, WorkflowTask } from '../workflows/types';
import { workflowFactory } from '../workflows/registry';

export interface ExplorerTask extends WorkflowTask {
  workflow: string;
  repeatTimes: number;
}

export interface ExplorerOptions {
  maxRetryTimes: number;
  createReward: RewardFactory;
  /** Rollout samples reported per step (prompt, response, reward). */
  samplesPerStep: number;
  log: (level: 'info' | 'warning' | 'error', message: string) => void;
  /** The Trinity release whose metric names are logged (default: the newest). */
  release?: Release;
  /** `monitor.detailed_stats` (≥ v0.5.0): eval metrics gathered as {mean,max,min,std} instead of the mean only. */
  detailedStats?: boolean;
}

export interface StepOutput {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
}

interface TaskRun {
  exps: Experience[];
  /** The task's metrics: each run's (one per experience) mean, plus the release's timing keys. */
  metrics: Record<string, number>;
  /** One record per run (experience) of the task, for eval's per-task reduction. */
  runs: Record<string, number>[];
  /** The release's timing keys (run, task) with the task's seconds. */
  timing: Record<string, number>;
}

export class Explorer {
  private readonly release: Release;

  constructor(
    readonly model: RolloutModel,
    private readonly opts: ExplorerOptions,
  ) {
    this.release = opts.release ?? NEWEST_RELEASE;
  }

  /** Runs one batch of training tasks; the experiences carry eid.batch = step. */
  explore(step: number, tasks: readonly ExplorerTask[], pipeline: ExperiencePipeline): StepOutput {
    const started = Date.now();
    const runs = tasks.map((t, i) => this.runTask(t, step, i));
    const all = runs.flatMap((r) => r.exps);
    const { exps, metrics: pipelineMetrics } = pipeline.process(all);
    const failed = runs.filter((r) => r.exps.length === 0).length;
    const metrics: Record<string, number> = {
      'rollout/model_version': this.model.version,
      ...gatherMetrics(
        runs.filter((r) => r.exps.length > 0).map((r) => r.metrics),
        'rollout',
      ),
      ...pipelineMetrics,
      ...(logsFinishedTaskCount(this.release) ? { 'rollout/finished_task_count': tasks.length - failed } : {}),
      'time/explore_step': (Date.now() - started) / 1000,
    };
    return { experiences: exps, metrics, samples: sample(all, this.opts.samplesPerStep) };
  }

  /** Runs every task of one eval taskset (no experiences kept); metrics under `eval/<name>/`. */
  evaluate(name: string, tasks: readonly ExplorerTask[], step: number, prefix = 'eval'): Record<string, number> {
    const started = Date.now();
    const runs = tasks.map((t, i) => this.runTask({ ...t, isEval: true }, `${step}/${name}`, i));
    const done = runs.filter((r) => r.exps.length > 0);
    const perTask = done.map((r) => ({ ...evalTaskMetrics(this.release, r.runs), ...r.timing }));
    return {
      ...gatherEval(this.release, perTask, `${prefix}/${name}`, this.opts.detailedStats ?? false),
      ...(logsFinishedTaskCount(this.release) ? { [`${prefix}/${name}/finished_task_count`]: done.length } : {}),
      [evalTimeKey(this.release, prefix)]: (Date.now() - started) / 1000,
    };
  }

  private runTask(task: ExplorerTask, batch: number | string, index: number): TaskRun {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        const factory = workflowFactory(task.workflow);
        const ctx = { model: this.model, task, repeatTimes: task.repeatTimes, runIdBase: 0, createReward: this.opts.createReward };
        const wf = factory(ctx);
        let exps: Experience[];
        if (wf.repeatable) exps = wf.run();
        else {
          exps = [];
          for (let i = 0; i < task.repeatTimes; i++) exps.push(...factory({ ...ctx, repeatTimes: 1, runIdBase: i }).run());
        }
        if (exps.length === 0) throw new Error('An empty experience is generated');
        for (const e of exps) {
          e.eid.batch = batch;
          e.eid.task = index;
          e.modelVersion = this.model.version;
          e.info = { ...e.info, model_version: this.model.version, task_index: index };
        }
        const elapsed = (Date.now() - started) / 1000;
        const keys = runMetricKeys(this.release);
        const timing = { [keys.run]: elapsed, [keys.task]: elapsed };
        return { exps, metrics: { ...averageMetrics(exps), ...timing }, runs: exps.map((e) => ({ ...(e.metrics ?? {}) })), timing };
      } catch (e) {
        const message = (e as Error).message;
        if (attempt >= this.opts.maxRetryTimes) {
          this.opts.log('warning', `task ${index} of batch ${batch} failed after ${attempt + 1} attempt(s): ${message}`);
          return { exps: [], metrics: {}, runs: [], timing: {} };
        }
      }
    }
  }
}

/**
 * One eval task's metrics from its runs, as Trinity's `calculate_task_level_metrics(is_eval=True)`: the mean
 * (≤ v0.3.2); `<key>/{mean,best,worst}@k` over the first k runs (v0.4.0); `<key>/mean@n` and `<key>/std@n`
 * (population std) from v0.5.0. Main's bootstrapped best@k/worst@k (numpy RNG) are not computed locally.
 */
function evalTaskMetrics(release: Release, runs: readonly Record<string, number>[]): Record<string, number> {
  const style = evalStyle(release);
  const cols = new Map<string, number[]>();
  for (const r of runs) for (const [k, v] of Object.entries(r)) if (typeof v === 'number') cols.set(k, [...(cols.get(k) ?? []), v]);
  const out: Record<string, number> = {};
  for (const [key, vs] of cols) {
    const m = vs.reduce((a, b) => a + b, 0) / vs.length;
    if (style === 'stats') out[key] = m;
    else if (style === 'at-k') {
      for (const k of evalKs(vs.length)) {
        const head = vs.slice(0, k);
        out[`${key}/mean@${k}`] = head.reduce((a, b) => a + b, 0) / k;
        out[`${key}/best@${k}`] = Math.max(...head);
        out[`${key}/worst@${k}`] = Math.min(...head);
      }
    } else {
      out[`${key}/mean@${vs.length}`] = m;
      out[`${key}/std@${vs.length}`] = Math.sqrt(vs.reduce((a, b) => a + (b - m) ** 2, 0) / vs.length);
    }
  }
  return out;
}

/** Eval metrics over tasks: {mean,max,min} (< v0.5.0); from v0.5.0 `gather_eval_metrics`, the mean only unless detailed. */
function gatherEval(release: Release, perTask: readonly Record<string, number>[], prefix: string, detailed: boolean): Record<string, number> {
  if (evalStyle(release) !== 'at-n') return gatherMetrics(perTask, prefix);
  const sfx = evalGatherSuffixes(release, detailed);
  const cols = new Map<string, number[]>();
  for (const d of perTask) for (const [k, v] of Object.entries(d)) if (typeof v === 'number' && !Number.isNaN(v)) cols.set(k, [...(cols.get(k) ?? []), v]);
  const out: Record<string, number> = {};
  for (const [k, vs] of cols) {
    const m = vs.reduce((a, b) => a + b, 0) / vs.length;
    // pandas' std is the sample std (ddof 1): NaN for a single task, which is left out here.
    const std = vs.length > 1 ? Math.sqrt(vs.reduce((a, b) => a + (b - m) ** 2, 0) / (vs.length - 1)) : NaN;
    const stat: Record<string, number> = { '': m, '/mean': m, '/max': Math.max(...vs), '/min': Math.min(...vs), '/std': std };
    for (const s of sfx) if (!Number.isNaN(stat[s])) out[`${prefix}/${k}${s}`] = stat[s];
  }
  return out;
}

/** Each metric of a task: the mean over its experiences (Trinity averages per task before gathering). */
function averageMetrics(exps: readonly Experience[]): Record<string, number> {
  const sums = new Map<string, { total: number; n: number }>();
  for (const e of exps) {
    for (const [k, v] of Object.entries(e.metrics ?? {})) {
      const s = sums.get(k) ?? { total: 0, n: 0 };
      s.total += v;
      s.n++;
      sums.set(k, s);
    }
  }
  return Object.fromEntries([...sums].map(([k, s]) => [k, s.total / s.n]));
}

function sample(exps: readonly Experience[], n: number): RolloutSample[] {
  if (n <= 0 || exps.length === 0) return [];
  const stride = Math.max(1, Math.floor(exps.length / n));
  const out: RolloutSample[] = [];
  for (let i = 0; i < exps.length && out.length < n; i += stride) {
    const e = exps[i];
    out.push({ prompt: e.promptText ?? '', response: e.responseText ?? '', reward: e.reward ?? 0 });
  }
  return out;
}
