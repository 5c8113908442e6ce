/**
 * TensorBoard's classic scalar smoothing (`line_chart_v2/data_transformer.ts` `classicSmoothing`): a debiased
 * exponential moving average. Non-finite values (`null` on the wire) pass through and do not count; a constant
 * series comes back unchanged (TensorBoard #786: debiasing would otherwise show rounding noise).
 */
export function smooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  const w = Math.min(1, Math.max(0, weight));
  const first = values[0];
  if (values.every((v) => v === first)) return values.slice();
  const out: (number | null)[] = new Array(values.length);
  let last = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const y = values[i];
    if (y === null || !Number.isFinite(y)) {
      out[i] = y;
      continue;
    }
    last = last * w + (1 - w) * y;
    n++;
    out[i] = last / (w === 1 ? 1 : 1 - Math.pow(w, n));
  }
  return out;
}
