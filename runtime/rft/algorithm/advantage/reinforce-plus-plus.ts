/**
 * `reinforceplusplus` (REINFORCEPLUSPLUSAdvantageFn, trainer side; REINFORCE++, arXiv 2501.03262):
 *   G_t = r_t + γ·G_{t+1} over the whole padded row (no mask inside),
 *   advantages = masked_whiten(G, mask) · mask (whitened over the batch, Bessel variance), returns = G.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { maskedWhiten } from './stats';
import type { AdvantageBatch, TrainerAdvantageResult } from './types';

export interface ReinforcePlusPlusAdvantageArgs {
  gamma: number;
}

export function reinforcePlusPlusAdvantage(
  batch: AdvantageBatch,
  args?: Partial<ReinforcePlusPlusAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(
    defaultFnArgs('advantage_fn', 'reinforceplusplus') as unknown as ReinforcePlusPlusAdvantageArgs,
    args,
  );
  const returns = batch.tokenLevelRewards.map((r) => {
    const g = new Array<number>(r.length);
    let running = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      running = r[t] + a.gamma * running;
      g[t] = running;
    }
    return g;
  });
  const white = maskedWhiten(returns, batch.responseMask);
  const advantages = white.map((row, i) => row.map((x, t) => x * batch.responseMask[i][t]));
  return { advantages, returns, metrics: {} };
}
