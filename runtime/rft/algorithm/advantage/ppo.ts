/**
 * `ppo` (PPOAdvantageFn, trainer side): GAE with a critic.
 *   δ_t = r_t + γ·V_{t+1} − V_t  (V_T = 0),  A_t = δ_t + γλ·A_{t+1},  returns = A + V,
 *   advantages = masked_whiten(A, response_mask).
 * As in Trinity the recursion runs over every position of the padded row (the mask is NOT consulted inside it —
 * Trinity's masked variant is commented out), and the whitened advantages are not re-masked, so positions after
 * the response carry non-zero values; the policy losses mask them. masked_whiten: Bessel variance over the mask,
 * `(A − mean)·rsqrt(var + 1e-8)`; it raises when the mask sums to 0 or 1.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { maskedWhiten } from './stats';
import { requireField, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export interface PpoAdvantageArgs {
  gamma: number;
  lam: number;
}

export function ppoAdvantage(batch: AdvantageBatch, args?: Partial<PpoAdvantageArgs> | null): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'ppo') as unknown as PpoAdvantageArgs, args);
  const values = requireField(batch.values, 'ppo', 'values');
  const raw = batch.tokenLevelRewards.map((r, i) => {
    const v = values[i];
    const T = r.length;
    const adv = new Array<number>(T);
    let last = 0;
    for (let t = T - 1; t >= 0; t--) {
      const next = t < T - 1 ? v[t + 1] : 0;
      const delta = r[t] + a.gamma * next - v[t];
      last = delta + a.gamma * a.lam * last;
      adv[t] = last;
    }
    return adv;
  });
  const returns = raw.map((row, i) => row.map((x, t) => x + values[i][t]));
  return { advantages: maskedWhiten(raw, batch.responseMask), returns, metrics: {} };
}
