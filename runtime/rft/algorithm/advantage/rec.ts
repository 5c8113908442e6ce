/**
 * `rec` (RECGroupedAdvantage, explorer side). Per task group of n ≥ 2:
 *  - positives are r_i ≥ mean(r) (full-group mean);
 *  - `drop: balance`: when negatives outnumber positives, that surplus of randomly chosen negatives is dropped
 *    (their advantage is 0, the experiences stay); metric `drop_balance` = dropped / n;
 *  - over the kept rewards: mean and POPULATION std (`unbiased=False`, unlike grpo); with ≤ 1 kept: mean 0, std 1;
 *  - A_i = r_i − mean, or (r_i − mean)/(std + epsilon) with `std_normalize`.
 * Metrics: `group_advantages/{drop_balance,reward_mean,reward_std}/*`.
 * A group of ONE crashes Trinity (UnboundLocalError on `rewards`); this raises too, with an explanation.
 */
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import type { GroupAdvantageOptions } from './grpo';
import { gatherMetrics, mean, randomSubset, stdPopulation } from './stats';
import {
  groupBy,
  taskId,
  withScore,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
} from './types';

export interface RecAdvantageArgs {
  epsilon: number;
  std_normalize: boolean | null;
  drop: 'balance' | null;
}

export function recAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  args?: Partial<RecAdvantageArgs> | null,
  options: GroupAdvantageOptions = {},
): GroupAdvantageResult<E> {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'rec') as unknown as RecAdvantageArgs, args);
  if (a.drop != null && a.drop !== 'balance')
    throw new AlgorithmArgsError('advantage_fn', 'rec', `Invalid drop: ${String(a.drop)}`);
  const random = options.random ?? Math.random;
  const metricList: Record<string, number>[] = [];
  const out: WithAdvantages<E>[] = [];
  for (const [gid, group] of groupBy(exps, taskId)) {
    const n = group.length;
    if (n === 1) {
      throw new AlgorithmArgsError(
        'advantage_fn',
        'rec',
        `task group '${gid}' has a single experience; Trinity's REC advantage fails on it (UnboundLocalError) — use repeat_times > 1`,
      );
    }
    const rewards = group.map((e) => e.reward);
    const fullMean = mean(rewards);
    const isPos = rewards.map((r) => r >= fullMean);
    const pos = isPos.filter(Boolean).length;
    const neg = n - pos;
    const keep = rewards.map(() => true);
    let dropFrac = 0;
    if (a.drop === 'balance' && neg > pos) {
      const extra = neg - pos;
      const negIdx = isPos.flatMap((p, i) => (p ? [] : [i]));
      for (const j of randomSubset(negIdx.length, extra, random)) keep[negIdx[j]] = false;
      dropFrac = extra / Math.max(n, 1);
    }
    const kept = rewards.filter((_, i) => keep[i]);
    const m = kept.length <= 1 ? 0 : mean(kept);
    const s = kept.length <= 1 ? 1 : stdPopulation(kept);
    group.forEach((e, i) => {
      const adv = !keep[i] ? 0 : a.std_normalize ? (rewards[i] - m) / (s + a.epsilon) : rewards[i] - m;
      out.push(withScore(e, adv));
    });
    metricList.push({ drop_balance: dropFrac, reward_mean: m, reward_std: s });
  }
  return { exps: out, metrics: gatherMetrics(metricList, 'group_advantages') };
}
