/**
 * `step_wise_grpo` (StepWiseGRPOAdvantageFn, explorer side; the `multi_step_grpo` algorithm's advantage).
 * Experiences are grouped by task, then by run (`eid.rid`); the LAST experience of each run (list order) carries
 * the run's reward. Per task: GRPO over those last-step rewards (Bessel std, epsilon; a task with one run: mean 0,
 * std 1; `std_cal_level: batch`: std over the last-step rewards of the whole batch, 1.0 with ≤ 1 of them), and
 * every step of a run gets its run's score · action_mask (divided by the run's number of steps with
 * `enable_step_norm`).
 * `std_threshold`: tasks with one run or std ≤ threshold are dropped.
 * Metrics: `group_advantages/{reward_mean,reward_std}/*` (skipped tasks included), `experience_count` (kept),
 * `filtered_count` (dropped experiences), `skipped_group_ratio`.
 */
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { gatherMetrics, mean, stdBessel } from './stats';
import {
  groupBy,
  runId,
  taskId,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
} from './types';

export interface StepWiseGrpoAdvantageArgs {
  epsilon: number;
  enable_step_norm: boolean;
  std_cal_level: 'group' | 'batch';
  std_threshold: number | null;
}

export function stepWiseGrpoAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  args?: Partial<StepWiseGrpoAdvantageArgs> | null,
): GroupAdvantageResult<E> {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'step_wise_grpo') as unknown as StepWiseGrpoAdvantageArgs, args);
  if (a.std_cal_level !== 'group' && a.std_cal_level !== 'batch') {
    throw new AlgorithmArgsError('advantage_fn', 'step_wise_grpo', "std_cal_level must be either 'group' or 'batch'");
  }
  if (exps.length === 0) return { exps: [], metrics: {} };
  const tasks = groupBy(exps, taskId);
  let batchStd: number | undefined;
  if (a.std_cal_level === 'batch') {
    const last: number[] = [];
    for (const t of tasks.values()) for (const run of groupBy(t, runId).values()) last.push(run[run.length - 1].reward);
    batchStd = last.length <= 1 ? 1 : stdBessel(last);
  }
  const out: WithAdvantages<E>[] = [];
  const metricList: Record<string, number>[] = [];
  let filtered = 0;
  let skippedTasks = 0;
  for (const t of tasks.values()) {
    const runs = [...groupBy(t, runId).values()];
    const lastRewards = runs.map((r) => r[r.length - 1].reward);
    const m = runs.length === 1 ? 0 : mean(lastRewards);
    const s = runs.length === 1 ? 1 : stdBessel(lastRewards);
    metricList.push({ reward_mean: m, reward_std: s });
    if (a.std_threshold != null && (runs.length === 1 || s <= a.std_threshold)) {
      filtered += t.length;
      skippedTasks += 1;
      continue;
    }
    const denom = (a.std_cal_level === 'batch' && batchStd !== undefined ? batchStd : s) + a.epsilon;
    runs.forEach((run, k) => {
      const score = (lastRewards[k] - m) / denom;
      for (const e of run) {
        const advantages = Array.from(e.actionMask, (mk) =>
          a.enable_step_norm ? (mk * score) / run.length : mk * score,
        );
        out.push({ ...e, advantages, returns: [...advantages] });
      }
    });
  }
  return {
    exps: out,
    metrics: {
      ...gatherMetrics(metricList, 'group_advantages'),
      experience_count: out.length,
      filtered_count: filtered,
      skipped_group_ratio: tasks.size > 0 ? skippedTasks / tasks.size : 0,
    },
  };
}
