/**
 * `remax` (REMAXAdvantageFn, trainer side; ReMax, arXiv 2310.10505):
 *   returns_t = Σ_{t' ≥ t} r_{t'}·m_{t'}  (reverse cumulative sum of the masked rewards),
 *   advantages_t = returns_t − baseline_i·m_t  (baseline: `reward_baselines`, the greedy rollout's reward).
 */
import { requireField, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export type RemaxAdvantageArgs = Record<string, never>;

export function remaxAdvantage(
  batch: AdvantageBatch,
  _args?: Partial<RemaxAdvantageArgs> | null,
): TrainerAdvantageResult {
  const baselines = requireField(batch.rewardBaselines, 'remax', 'rewardBaselines');
  const mask = batch.responseMask;
  const returns = batch.tokenLevelRewards.map((r, i) => {
    const g = new Array<number>(r.length);
    let acc = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      acc += r[t] * mask[i][t];
      g[t] = acc;
    }
    return g;
  });
  const advantages = returns.map((row, i) => row.map((g, t) => g - baselines[i] * mask[i][t]));
  return { advantages, returns, metrics: {} };
}
