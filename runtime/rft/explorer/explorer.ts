/**
 * Trinity's explorer step (trinity/explorer/explorer.py, workflow_runner.py): read `batch_size` tasks, run each
 * task's workflow `repeat_times` times, send the experiences through the pipeline into the buffer, and log
 * `rollout/…` and `pipeline/…` metrics. Eval runs every eval taskset whole and logs `eval/<name>/…`.
 */
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
}

export interface StepOutput {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
}

interface TaskRun {
  exps: Experience[];
  metrics: Record<string, number>;
}

export class Explorer {
  constructor(
    readonly model: RolloutModel,
    private readonly opts: ExplorerOptions,
  ) {}

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
      'rollout/finished_task_count': tasks.length - failed,
      'rollout/failed_task_count': failed,
      'time/explore_step': (Date.now() - started) / 1000,
    };
    return { experiences: exps, metrics, samples: sample(all, this.opts.samplesPerStep) };
  }

  /** Runs every task of one eval taskset (no experiences kept); metrics under `eval/<name>/`. */
  evaluate(name: string, tasks: readonly ExplorerTask[], step: number, prefix = 'eval'): Record<string, number> {
    const started = Date.now();
    const runs = tasks.map((t, i) => this.runTask({ ...t, isEval: true }, `${step}/${name}`, i));
    return {
      ...gatherMetrics(
        runs.filter((r) => r.exps.length > 0).map((r) => r.metrics),
        `${prefix}/${name}`,
      ),
      [`${prefix}/${name}/finished_task_count`]: runs.filter((r) => r.exps.length > 0).length,
      [`${prefix}/total_time`]: (Date.now() - started) / 1000,
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
        // Trinity ≤ v0.5 names (the ones runtime/config/metrics.ts lists); main renamed them time/run_execution.
        return { exps, metrics: { ...averageMetrics(exps), time_per_task: elapsed, task_run_time: elapsed } };
      } catch (e) {
        const message = (e as Error).message;
        if (attempt >= this.opts.maxRetryTimes) {
          this.opts.log('warning', `task ${index} of batch ${batch} failed after ${attempt + 1} attempt(s): ${message}`);
          return { exps: [], metrics: {} };
        }
      }
    }
  }
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
