/**
 * `opmd` (OPMDGroupAdvantage, explorer side) and `opmd_verl` (OPMDAdvantageFn, trainer side, deprecated):
 *   A_i = r_i − baseline_g,  baseline_g = mean_g r (`opmd_baseline: mean`) or
 *   τ · (logsumexp(r/τ) − log n) (`logavgexp`, a soft maximum), and 0 for a group of one.
 * The explorer version treats any baseline name other than 'mean' as logavgexp; the trainer version raises
 * NotImplementedError for names other than 'mean'/'logavgexp' (only on groups of two or more).
 * Metrics (explorer): `group_advantages/group_baseline/*`, `group_advantages/reward_mean/*` (reward_mean is the
 * plain group mean, also for a group of one).
 */
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { gatherMetrics, logSumExp, mean } from './stats';
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

export interface OpmdAdvantageArgs {
  opmd_baseline: string;
  tau: number;
}

function softBaseline(rewards: number[], tau: number): number {
  return tau * (logSumExp(rewards.map((r) => r / tau)) - Math.log(rewards.length));
}

export function opmdAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  args?: Partial<OpmdAdvantageArgs> | null,
): GroupAdvantageResult<E> {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'opmd') as unknown as OpmdAdvantageArgs, args);
  const metricList: Record<string, number>[] = [];
  const out: WithAdvantages<E>[] = [];
  for (const group of groupBy(exps, taskId).values()) {
    const rewards = group.map((e) => e.reward);
    const rewardMean = mean(rewards);
    const baseline = group.length === 1 ? 0 : a.opmd_baseline === 'mean' ? rewardMean : softBaseline(rewards, a.tau);
    for (const e of group) out.push(withScore(e, e.reward - baseline));
    metricList.push({ group_baseline: baseline, reward_mean: rewardMean });
  }
  return { exps: out, metrics: gatherMetrics(metricList, 'group_advantages') };
}

export function opmdVerlAdvantage(
  batch: AdvantageBatch,
  args?: Partial<OpmdAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'opmd_verl') as unknown as OpmdAdvantageArgs, args);
  return groupedOutcomeAdvantage(batch, 'opmd_verl', (group) => {
    let baseline = 0;
    if (group.length > 1) {
      if (a.opmd_baseline === 'mean') baseline = mean(group);
      else if (a.opmd_baseline === 'logavgexp') baseline = softBaseline(group, a.tau);
      else
        throw new AlgorithmArgsError(
          'advantage_fn',
          'opmd_verl',
          `opmd_baseline '${a.opmd_baseline}' is not implemented (mean, logavgexp)`,
        );
    }
    return group.map((s) => s - baseline);
  });
}
