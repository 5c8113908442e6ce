/**
 * `asymre` (ASYMREGroupAdvantage, explorer side) and `asymre_verl` (trainer side, deprecated):
 *   A_i = r_i − (mean_g r + baseline_shift),  baseline 0 for a group of one.
 * Metrics (explorer): `group_advantages/group_baseline/*` and `group_advantages/reward_mean/*`, where reward_mean
 * is reported as baseline − shift — for a group of one that is −shift (0.1 by default), not the reward.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { gatherMetrics, mean } from './stats';
import {
  groupBy,
  taskId,
  withScore,
  groupedOutcomeAdvantage,
  type AdvantageBatch,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
  type TrainerAdvantageResult,
} from './types';

export interface AsymreAdvantageArgs {
  baseline_shift: number;
}

export function asymreAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  args?: Partial<AsymreAdvantageArgs> | null,
): GroupAdvantageResult<E> {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'asymre') as unknown as AsymreAdvantageArgs, args);
  const metricList: Record<string, number>[] = [];
  const out: WithAdvantages<E>[] = [];
  for (const group of groupBy(exps, taskId).values()) {
    const baseline = group.length === 1 ? 0 : mean(group.map((e) => e.reward)) + a.baseline_shift;
    for (const e of group) out.push(withScore(e, e.reward - baseline));
    metricList.push({ group_baseline: baseline, reward_mean: baseline - a.baseline_shift });
  }
  return { exps: out, metrics: gatherMetrics(metricList, 'group_advantages') };
}

export function asymreVerlAdvantage(
  batch: AdvantageBatch,
  args?: Partial<AsymreAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'asymre_verl') as unknown as AsymreAdvantageArgs, args);
  return groupedOutcomeAdvantage(batch, 'asymre_verl', (group) => {
    const baseline = group.length > 1 ? mean(group) + a.baseline_shift : 0;
    return group.map((s) => s - baseline);
  });
}
