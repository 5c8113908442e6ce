/**
 * `grpo_verl` (GRPOAdvantageFn, trainer side, deprecated): veRL's outcome GRPO on the padded batch.
 *   s_i = Σ_t r_{i,t};  A_i = (s_i − mean_g s) / (std_g s + epsilon)  (Bessel std; a group of one: mean 0, std 1)
 * broadcast over the response mask; returns = advantages.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { mean, stdBessel } from './stats';
import { broadcastScores, requireField, rowSums, rowsByUid, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export interface GrpoVerlAdvantageArgs {
  epsilon: number;
}

/** Per-row (s − mean_g)/(std_g + ε) with Trinity's group-of-one convention. */
export function groupNormalizedScores(scores: readonly number[], uid: readonly (string | number)[], epsilon: number): number[] {
  const out = [...scores];
  for (const rows of rowsByUid(uid).values()) {
    const group = rows.map((i) => scores[i]);
    const m = rows.length === 1 ? 0 : mean(group);
    const s = rows.length === 1 ? 1 : stdBessel(group);
    for (const i of rows) out[i] = (scores[i] - m) / (s + epsilon);
  }
  return out;
}

export function grpoVerlAdvantage(batch: AdvantageBatch, args?: Partial<GrpoVerlAdvantageArgs> | null): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'grpo_verl') as unknown as GrpoVerlAdvantageArgs, args);
  const uid = requireField(batch.uid, 'grpo_verl', 'uid');
  const adv = broadcastScores(groupNormalizedScores(rowSums(batch.tokenLevelRewards), uid, a.epsilon), batch.responseMask);
  return { advantages: adv, returns: adv.map((r) => [...r]), metrics: {} };
}
