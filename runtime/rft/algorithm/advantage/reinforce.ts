/**
 * `reinforce` (REINFORCEGroupAdvantage, explorer side): the raw reward is the advantage, no baseline
 * (A_i = r_i · action_mask). Metric: `group_advantages/reward_mean/*` (the group mean reward).
 */
import { gatherMetrics, mean } from './stats';
import {
  groupBy,
  taskId,
  withScore,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
} from './types';

export type ReinforceAdvantageArgs = Record<string, never>;

export function reinforceAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  _args?: Partial<ReinforceAdvantageArgs> | null,
): GroupAdvantageResult<E> {
  const metricList: Record<string, number>[] = [];
  const out: WithAdvantages<E>[] = [];
  for (const group of groupBy(exps, taskId).values()) {
    for (const e of group) out.push(withScore(e, e.reward));
    metricList.push({ reward_mean: mean(group.map((e) => e.reward)) });
  }
  return { exps: out, metrics: gatherMetrics(metricList, 'group_advantages') };
}
