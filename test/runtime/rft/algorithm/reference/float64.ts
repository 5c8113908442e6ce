/**
 * Float64 reductions in the order PyTorch's CPU kernels take them, so the references reproduce Trinity's numbers to
 * the last bit. Nothing here comes from runtime/.
 */

/**
 * `torch.sum` of a contiguous float64 tensor on an AVX2 CPU (ATen's cascade_sum on tensors this small): four-lane
 * vectors summed into four interleaved vector accumulators, the leftover elements added first, then the lanes in
 * order; under four elements, four interleaved scalar accumulators. Up to four elements this is a left-to-right sum.
 */
export function sum(xs: readonly number[]): number {
  const LANES = 4;
  const n = xs.length;
  if (n < LANES) return xs.reduce((s, x) => s + x, 0);
  const vectors = Math.floor(n / LANES);
  const acc = Array.from({ length: 4 }, () => new Array<number>(LANES).fill(0));
  const ilpRows = Math.floor(vectors / 4);
  for (let j = 0; j < vectors; j++) {
    const into = j < ilpRows * 4 ? acc[j % 4] : acc[0];
    for (let l = 0; l < LANES; l++) into[l] += xs[j * LANES + l];
  }
  for (let k = 1; k < 4; k++) for (let l = 0; l < LANES; l++) acc[0][l] += acc[k][l];
  let total = 0;
  for (let i = vectors * LANES; i < n; i++) total += xs[i];
  for (let l = 0; l < LANES; l++) total += acc[0][l];
  return total;
}

/** `torch.mean` / `Series.mean`. */
export function mean(xs: readonly number[]): number {
  return sum(xs) / xs.length;
}

/** `torch.std(x)` (Bessel, n − 1) or `torch.std(x, unbiased=False)`: two passes, mean first. */
export function std(xs: readonly number[], unbiased = true): number {
  const m = mean(xs);
  return Math.sqrt(sum(xs.map((x) => (x - m) ** 2)) / (xs.length - (unbiased ? 1 : 0)));
}

/** `torch.logsumexp`: shifted by the maximum. */
export function logSumExp(xs: readonly number[]): number {
  const mx = Math.max(...xs);
  return mx + Math.log(sum(xs.map((x) => Math.exp(x - mx))));
}

/** Trinity's `masked_mean(values, mask)` over a whole [B][T] array: Σ v·m / (Σ m + 1e-8). */
export function maskedMean(values: number[][], mask: number[][]): number {
  return sum(values.flatMap((row, i) => row.map((v, t) => v * mask[i][t]))) / (sum(mask.flat()) + 1e-8);
}

/** Trinity's `masked_whiten` (shift_mean): (v − mean)·rsqrt(Bessel masked variance + 1e-8), at every position. */
export function maskedWhiten(values: number[][], mask: number[][]): number[][] {
  const mu = maskedMean(values, mask);
  const n = sum(mask.flat());
  const variance = maskedMean(
    values.map((row) => row.map((v) => (v - mu) ** 2)),
    mask,
  );
  const scale = 1 / Math.sqrt(variance * (n / (n - 1)) + 1e-8);
  return values.map((row) => row.map((v) => (v - mu) * scale));
}

/** Trinity's `gather_metrics(list, prefix)`: `<prefix>/<key>/{mean,max,min}` over the dicts holding each key. */
export function gatherMetrics(list: readonly Record<string, number>[], prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of [...new Set(list.flatMap((d) => Object.keys(d)))]) {
    const vs = list.filter((d) => key in d).map((d) => d[key]);
    out[`${prefix}/${key}/mean`] = mean(vs);
    out[`${prefix}/${key}/max`] = Math.max(...vs);
    out[`${prefix}/${key}/min`] = Math.min(...vs);
  }
  return out;
}

/** Items grouped by key, groups and items in first-seen order (Trinity's `group_by`, veRL's uid dicts). */
export function groupedBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return [...groups.values()];
}
