/**
 * The experience pipeline Trinity runs on each explorer step's experiences (trinity/buffer/pipelines,
 * trinity/buffer/operators): the configured operators in order, then the algorithm's group advantage function.
 * Metrics come back named as the release names them (runtime/config/runs/metric-names.ts `pipelineMetricKey`): `pipeline/…`
 * up to v0.3.1, `experience_pipeline/…` from v0.3.2 (always with `…/experience_count`), and from v0.3.2 the
 * pipeline's timers `time/experience_pipeline/operator/<i>_<class>`, `…/write` and `…/total` (seconds).
 */
import { logsPipelineTimes, pipelineMetricKey, pipelineOperatorTimeKey } from '../../config/runs/metric-names';
import { NEWEST_RELEASE, type Release } from '../../config/releases';
import type { GroupAdvantageFn } from '../algorithm';
import type { SelectorFeedback } from '../data/reader';
import type { Experience } from '../experience';
import { groupByTask } from '../experience';
import { npMean } from '../numpy/numpy-stats';
import { dapoDynamicSampling, maskResponseTruncated } from './dapo-operators';

export interface OperatorSpec {
  name: string;
  args: Record<string, unknown>;
}

type Operator = (exps: Experience[]) => {
  exps: Experience[];
  metrics: Record<string, number>;
  selectorFeedback?: SelectorFeedback[];
};

export class UnknownOperatorError extends Error {}

const num = (args: Record<string, unknown>, key: string, fallback: number): number =>
  typeof args[key] === 'number' ? (args[key] as number) : fallback;

function rewardFilter(args: Record<string, unknown>): Operator {
  const threshold = num(args, 'threshold', 0);
  return (exps) => {
    const kept = exps.filter((e) => (e.reward ?? 0) >= threshold);
    return { exps: kept, metrics: { filtered_count: exps.length - kept.length } };
  };
}

/** Drops groups of fewer than 2 experiences or whose population std of rewards is ≤ threshold. */
function rewardStdFilter(args: Record<string, unknown>): Operator {
  const threshold = num(args, 'threshold', 0);
  return (exps) => {
    const groups = groupByTask(exps);
    const kept: Experience[] = [];
    for (const g of groups.values()) {
      if (g.length < 2) continue;
      const rs = g.map((e) => e.reward ?? 0);
      const mean = rs.reduce((a, b) => a + b, 0) / rs.length;
      const std = Math.sqrt(rs.reduce((a, b) => a + (b - mean) ** 2, 0) / rs.length);
      if (std > threshold) kept.push(...g);
    }
    return { exps: kept, metrics: { filtered_count: exps.length - kept.length } };
  };
}

function invalidRewardFilter(): Operator {
  return (exps) => {
    const kept = exps.filter((e) => e.reward !== undefined && !Number.isNaN(e.reward));
    return { exps: kept, metrics: { filtered_count: exps.length - kept.length } };
  };
}

/** reward (op)= weight · info[stats_key] for each shaping config, in order (DIV by 0 is skipped). */
function rewardShapingMapper(args: Record<string, unknown>): Operator {
  const configs = (Array.isArray(args.reward_shaping_configs) ? args.reward_shaping_configs : []) as Record<
    string,
    unknown
  >[];
  return (exps) => {
    const diffs: number[] = [];
    const out = exps.map((e) => {
      if (e.reward === undefined) {
        diffs.push(0);
        return e;
      }
      let reward = e.reward;
      for (const c of configs) {
        const stat = (e.info ?? {})[String(c.stats_key)];
        if (typeof stat !== 'number') continue;
        const w = typeof c.weight === 'number' ? c.weight : 1;
        const op = String(c.op_type ?? 'ADD').toUpperCase();
        if (op === 'ADD') reward += w * stat;
        else if (op === 'SUB') reward -= w * stat;
        else if (op === 'MUL') reward *= w * stat;
        else if (op === 'DIV' && w * stat !== 0) reward /= w * stat;
      }
      diffs.push(reward - e.reward);
      return { ...e, reward };
    });
    const mean = diffs.length ? diffs.reduce((a, b) => a + b, 0) / diffs.length : 0;
    return {
      exps: out,
      metrics: {
        'reward_diff/mean': mean,
        'reward_diff/min': diffs.length ? Math.min(...diffs) : 0,
        'reward_diff/max': diffs.length ? Math.max(...diffs) : 0,
      },
    };
  };
}

/**
 * Trinity's PassRateCalculator: each task's mean reward, per taskset (in order of first appearance), handed back to
 * the taskset's selector (`selector_metric`), and how many of those pass rates lie strictly inside (0, 1) and
 * friends. It needs every experience's `task_index` to name its taskset, which Trinity's TasksetScheduler adds (a
 * non-sequential `data_selector` or several tasksets); without it Trinity fails on an assertion, and so does this.
 */
function passRateCalculator(): Operator {
  return (exps) => {
    const byTaskset = new Map<number, Map<number, number[]>>();
    for (const e of exps) {
      const ix = e.info?.task_index as { index?: unknown; taskset_id?: unknown } | undefined;
      if (typeof ix?.taskset_id !== 'number' || typeof ix.index !== 'number') {
        throw new Error(
          "pass_rate_calculator: the experience's task_index has no taskset_id (Trinity asserts it; tasks carry one when the taskset has a data_selector other than sequential, or there are several tasksets)",
        );
      }
      const tasks = byTaskset.get(ix.taskset_id) ?? new Map<number, number[]>();
      byTaskset.set(ix.taskset_id, tasks);
      tasks.set(ix.index, [...(tasks.get(ix.index) ?? []), e.reward ?? NaN]);
    }
    const selectorFeedback: SelectorFeedback[] = [];
    const rates: number[] = [];
    for (const [tasksetId, tasks] of byTaskset) {
      const values = [...tasks.values()].map(npMean);
      selectorFeedback.push({ tasksetId, indices: [...tasks.keys()], values });
      rates.push(...values);
    }
    const ratio = (test: (r: number) => boolean) => npMean(rates.map((r) => (test(r) ? 1 : 0)));
    const metrics = {
      'selection/valid_ratio': ratio((r) => 0 < r && r < 1),
      'selection/strict_valid_ratio': ratio((r) => 1 / 16 + 1e-3 < r && r < 15 / 16 - 1e-3),
      'selection/<1_ratio': ratio((r) => r < 1),
      'selection/>0_ratio': ratio((r) => r > 0),
      'selection/<15_16_ratio': ratio((r) => r < 15 / 16 - 1e-3),
      'selection/>1_16_ratio': ratio((r) => r > 1 / 16 + 1e-3),
    };
    return { exps, metrics, selectorFeedback };
  };
}

const OPERATORS: Record<string, (args: Record<string, unknown>) => Operator> = {
  reward_filter: rewardFilter,
  reward_std_filter: rewardStdFilter,
  invalid_reward_filter: invalidRewardFilter,
  reward_shaping_mapper: rewardShapingMapper,
  pass_rate_calculator: passRateCalculator,
  dapo_dynamic_sampling: dapoDynamicSampling,
  mask_response_truncated: maskResponseTruncated,
};

/** The experience operators this runtime implements (Trinity's names). */
export function experienceOperatorNames(): string[] {
  return Object.keys(OPERATORS);
}

export class ExperiencePipeline {
  private readonly operators: { name: string; run: Operator; timeKey?: string }[];
  private readonly advantageTimeKey?: string;

  /**
   * `saveInput` receives each step's experiences as they come in, before any operator: Trinity's `input_store`
   * (`data_processor.experience_pipeline.save_input`), written inside the pipeline's total time.
   */
  constructor(
    specs: readonly OperatorSpec[],
    private readonly advantage: GroupAdvantageFn | undefined,
    private readonly release: Release = NEWEST_RELEASE,
    private readonly saveInput?: (exps: Experience[]) => void,
  ) {
    this.operators = specs.map((s, i) => {
      const make = OPERATORS[s.name];
      if (!make) {
        const hint =
          s.name === 'data_juicer' ? ' (it needs a Data-Juicer service, which the local runtime does not run)' : '';
        throw new UnknownOperatorError(
          `experience operator "${s.name}" is not available locally${hint} (known: ${Object.keys(OPERATORS).join(', ')})`,
        );
      }
      return {
        name: s.name,
        run: make(s.args ?? {}),
        timeKey: pipelineOperatorTimeKey(release, i, s.name, 'operator'),
      };
    });
    if (advantage)
      this.advantageTimeKey = pipelineOperatorTimeKey(release, this.operators.length, advantage.name, 'advantage');
  }

  /**
   * Runs the operators and the advantage on one step's experiences. `write` (optional) is the hand-off to the buffer
   * that Trinity's pipeline makes itself and times as `time/experience_pipeline/write`; here the callers write the
   * returned experiences, so without it that key times only the hand-off of the list.
   */
  process(
    input: Experience[],
    write?: (exps: Experience[]) => void,
  ): { exps: Experience[]; metrics: Record<string, number>; selectorFeedback?: SelectorFeedback[] } {
    const started = performance.now();
    const timed = logsPipelineTimes(this.release);
    const since = (t: number) => (performance.now() - t) / 1000;
    this.saveInput?.(input);
    let exps = input;
    const metrics: Record<string, number> = {};
    let selectorFeedback: SelectorFeedback[] | undefined;
    for (const op of this.operators) {
      const t = performance.now();
      const r = op.run(exps);
      exps = r.exps;
      if (r.selectorFeedback) selectorFeedback = r.selectorFeedback;
      // Later operators replace earlier metrics of the same name, as Trinity's `metrics.update` does.
      for (const [k, v] of Object.entries(r.metrics)) metrics[pipelineMetricKey(this.release, k)] = v;
      if (op.timeKey) metrics[op.timeKey] = since(t);
    }
    if (this.advantage) {
      const t = performance.now();
      const r = this.advantage.process(
        exps.map((e) => ({
          ...e,
          reward: e.reward ?? 0,
          actionMask: e.actionMask ?? new Array<number>(e.tokens.length - e.promptLength).fill(1),
        })),
      );
      exps = r.exps;
      for (const [k, v] of Object.entries(r.metrics)) metrics[pipelineMetricKey(this.release, k)] = v;
      if (this.advantageTimeKey) metrics[this.advantageTimeKey] = since(t);
    }
    metrics[pipelineMetricKey(this.release, 'experience_count')] = exps.length;
    const t = performance.now();
    write?.(exps);
    if (timed) {
      metrics['time/experience_pipeline/write'] = since(t);
      metrics['time/experience_pipeline/total'] = since(started);
    }
    return selectorFeedback ? { exps, metrics, selectorFeedback } : { exps, metrics };
  }
}
