/**
 * Float64 statistics with Trinity's conventions: `torch.std` is Bessel-corrected (n − 1) unless `unbiased=False`;
 * masked means divide by Σ mask + 1e-8; `masked_whiten` uses a Bessel-corrected masked variance and
 * `rsqrt(var + 1e-8)`; explorer metrics are gathered per group as mean/max/min (pandas, missing keys skipped).
 */

export function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** `torch.std(x)` (unbiased): NaN for a single element, as in torch. */
export function stdBessel(xs: readonly number[]): number {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) ** 2;
  return Math.sqrt(s / (xs.length - 1));
}

/** `torch.std(x, unbiased=False)`. */
export function stdPopulation(xs: readonly number[]): number {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) ** 2;
  return Math.sqrt(s / xs.length);
}

export function logSumExp(xs: readonly number[]): number {
  const mx = Math.max(...xs);
  if (!Number.isFinite(mx)) return mx;
  let s = 0;
  for (const x of xs) s += Math.exp(x - mx);
  return mx + Math.log(s);
}

/** Trinity's `masked_mean` over a whole [B][T] array. */
export function maskedMeanAll(values: number[][], mask: number[][]): number {
  let s = 0;
  let n = 0;
  values.forEach((row, i) =>
    row.forEach((v, t) => {
      const m = mask[i][t];
      if (m !== 0) s += v * m;
      n += m;
    }),
  );
  return s / (n + 1e-8);
}

/**
 * Trinity's `masked_whiten` (shift_mean=True): (v − mean) · rsqrt(var + 1e-8) at EVERY position (masked-out ones
 * included), mean and Bessel-corrected variance over the mask. Throws as Trinity does when Σ mask is 0 or 1.
 */
export function maskedWhiten(values: number[][], mask: number[][]): number[][] {
  const mu = maskedMeanAll(values, mask);
  let n = 0;
  for (const row of mask) for (const m of row) n += m;
  if (n === 0) throw new Error('At least one element in the mask has to be 1.');
  if (n === 1) throw new Error('The sum of the mask is one, which can cause a division by zero.');
  const centered = values.map((row) => row.map((v) => (v - mu) ** 2));
  const variance = maskedMeanAll(centered, mask) * (n / (n - 1));
  const scale = 1 / Math.sqrt(variance + 1e-8);
  return values.map((row) => row.map((v) => (v - mu) * scale));
}

/**
 * Trinity's `gather_metrics(metric_list, prefix)`: for every numeric key, `<prefix>/<key>/{mean,max,min}` over
 * the dicts that have it.
 */
export function gatherMetrics(list: readonly Record<string, number>[], prefix: string): Record<string, number> {
  const cols = new Map<string, number[]>();
  for (const d of list) {
    for (const [k, v] of Object.entries(d)) {
      if (typeof v !== 'number' || Number.isNaN(v)) continue;
      const c = cols.get(k);
      if (c) c.push(v);
      else cols.set(k, [v]);
    }
  }
  const out: Record<string, number> = {};
  for (const [k, vs] of cols) {
    out[`${prefix}/${k}/mean`] = mean(vs);
    out[`${prefix}/${k}/max`] = Math.max(...vs);
    out[`${prefix}/${k}/min`] = Math.min(...vs);
  }
  return out;
}

/** Ranks 0..n−1 in ascending order (`argsort(argsort(x))`), ties broken by position. */
export function ascendingRanks(xs: readonly number[]): number[] {
  const order = xs.map((_, i) => i).sort((a, b) => xs[a] - xs[b] || a - b);
  const ranks = new Array<number>(xs.length);
  order.forEach((idx, r) => (ranks[idx] = r));
  return ranks;
}

/** A uniform integer in [0, n) from a uniform [0, 1) source. */
export function randomInt(n: number, random: () => number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}

/** The first k entries of a uniformly random permutation of 0..n−1 (`torch.randperm(n)[:k]`). */
export function randomSubset(n: number, k: number, random: () => number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = randomInt(i + 1, random);
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, k);
}
