/**
 * Trinity-RFT's trinity/algorithm/utils.py at 10796ed on dual numbers: `masked_sum`, `masked_mean` and
 * `aggregate_loss` over a [B][T] array and its 0/1 mask.
 */
import { add, average, div, Dual, mul, total, where } from './dual';

type Grid = readonly (readonly Dual[])[];
type Mask = readonly (readonly number[])[];

const masked = (values: Grid, mask: Mask): Dual[][] =>
  values.map((row, i) => row.map((v, t) => mul(where(mask[i][t] !== 0, v, 0), mask[i][t])));

/** `masked_sum(values, mask)`: Σ where(mask, v, 0)·mask. */
export const maskedSum = (values: Grid, mask: Mask): Dual => total(masked(values, mask).flat());

/** `masked_sum(values, mask, axis=-1)`: one per row. */
const maskedSums = (values: Grid, mask: Mask): Dual[] => masked(values, mask).map(total);

/** `masked_mean(values, mask)` over everything: Σ / (Σ mask + 1e-8). */
export function maskedMean(values: Grid, mask: Mask): Dual {
  return div(maskedSum(values, mask), add(total(mask.flat()), 1e-8));
}

/** `masked_mean(values, mask, axis=-1)`: one per row. */
export function rowMaskedMeans(values: Grid, mask: Mask): Dual[] {
  return maskedSums(values, mask).map((s, i) => div(s, add(total(mask[i]), 1e-8)));
}

/** `aggregate_loss(values, mask, loss_agg_mode)`. */
export function aggregateLoss(values: Grid, mask: Mask, mode: string): Dual {
  switch (mode) {
    case 'token-mean':
      return maskedMean(values, mask);
    case 'seq-mean-token-sum':
      return average(maskedSums(values, mask));
    case 'seq-mean-token-mean':
      return average(rowMaskedMeans(values, mask));
    case 'seq-mean-token-sum-norm':
      return div(maskedSum(values, mask), mask[0].length + 1e-8);
    default:
      throw new Error(`Invalid loss_agg_mode: ${mode}`);
  }
}
