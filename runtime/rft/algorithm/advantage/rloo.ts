/**
 * `rloo` (RLOOAdvantageFn, trainer side; arXiv 2402.14740). With s_i = Σ_t r_{i,t} and a group of n ≥ 2:
 *   A_i = s_i·n/(n−1) − mean_g(s)·n/(n−1)  (= s_i − mean of the OTHER n−1 scores),
 * and a group of one keeps its raw score (A = s). Broadcast over the response mask; returns = advantages.
 */
import { groupedOutcomeAdvantage, type AdvantageBatch, type TrainerAdvantageResult } from './types';
import { mean } from './stats';

export type RlooAdvantageArgs = Record<string, never>;

export function rlooAdvantage(
  batch: AdvantageBatch,
  _args?: Partial<RlooAdvantageArgs> | null,
): TrainerAdvantageResult {
  return groupedOutcomeAdvantage(batch, 'rloo', (group) => {
    const n = group.length;
    if (n <= 1) return group;
    const m = mean(group);
    return group.map((s) => (s * n) / (n - 1) - (m * n) / (n - 1));
  });
}
