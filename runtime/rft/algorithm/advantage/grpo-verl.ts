/**
 * `grpo_verl` (GRPOAdvantageFn, trainer side, deprecated): veRL's outcome GRPO on the padded batch.
 *   s_i = Σ_t r_{i,t};  A_i = (s_i − mean_g s) / (std_g s + epsilon)  (Bessel std; a group of one: mean 0, std 1)
 * broadcast over the response mask; returns = advantages.
 */
import { defaultFnArgs, withDefaults } from '../args';
import { mean, stdBessel } from './stats';
import { groupedOutcomeAdvantage, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export interface GrpoVerlAdvantageArgs {
  epsilon: number;
}

/** (s − mean_g)/(std_g + ε) over one group, with Trinity's group-of-one convention (mean 0, std 1). */
export function groupNormalized(group: readonly number[], epsilon: number): number[] {
  const m = group.length === 1 ? 0 : mean(group);
  const s = group.length === 1 ? 1 : stdBessel(group);
  return group.map((x) => (x - m) / (s + epsilon));
}

export function grpoVerlAdvantage(
  batch: AdvantageBatch,
  args?: Partial<GrpoVerlAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'grpo_verl') as unknown as GrpoVerlAdvantageArgs, args);
  return groupedOutcomeAdvantage(batch, 'grpo_verl', (group) => groupNormalized(group, a.epsilon));
}
