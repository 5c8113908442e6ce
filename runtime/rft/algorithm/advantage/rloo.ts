/**
 * `rloo` (RLOOAdvantageFn, trainer side; arXiv 2402.14740). With s_i = Σ_t r_{i,t} and a group of n ≥ 2:
 *   A_i = s_i·n/(n−1) − mean_g(s)·n/(n−1)  (= s_i − mean of the OTHER n−1 scores),
 * and a group of one keeps its raw score (A = s). Broadcast over the response mask; returns = advantages.
 */
import { broadcastScores, requireField, rowSums, rowsByUid, type AdvantageBatch, type TrainerAdvantageResult } from './types';
import { mean } from './stats';

export type RlooAdvantageArgs = Record<string, never>;

export function rlooAdvantage(batch: AdvantageBatch, _args?: Partial<RlooAdvantageArgs> | null): TrainerAdvantageResult {
  const uid = requireField(batch.uid, 'rloo', 'uid');
  const scores = rowSums(batch.tokenLevelRewards);
  const out = [...scores];
  for (const rows of rowsByUid(uid).values()) {
    const n = rows.length;
    if (n <= 1) continue;
    const m = mean(rows.map((i) => scores[i]));
    for (const i of rows) out[i] = (scores[i] * n) / (n - 1) - (m * n) / (n - 1);
  }
  const adv = broadcastScores(out, batch.responseMask);
  return { advantages: adv, returns: adv.map((r) => [...r]), metrics: {} };
}
