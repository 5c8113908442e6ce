/** The Rollouts tab's reward histogram bins. Pure (no DOM). */

export interface Histogram {
  /** bins + 1 edges, ascending; bin i is [edges[i], edges[i+1]), the last one closed. */
  edges: number[];
  counts: number[];
  /** Values left out: null or not finite. */
  missing: number;
}

/**
 * Equal-width bins over [min, max] of the finite values, Sturges' count (⌈log2 n⌉ + 1) capped at `maxBins`. All
 * values equal: one bin around them. Edges are `min + (max − min)·i / bins` (exact at the ends) and a value is put
 * by comparing it with those edges, so a value on an edge always lands in the bin that edge starts.
 */
export function rewardHistogram(values: readonly (number | null)[], maxBins = 20): Histogram {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const missing = values.length - xs.length;
  if (xs.length === 0) return { edges: [], counts: [], missing };
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  if (lo === hi) return { edges: [lo - 0.5, hi + 0.5], counts: [xs.length], missing };
  const bins = Math.max(1, Math.min(maxBins, Math.ceil(Math.log2(xs.length)) + 1));
  const edges = Array.from({ length: bins + 1 }, (_, i) => (i === bins ? hi : lo + ((hi - lo) * i) / bins));
  const counts = new Array<number>(bins).fill(0);
  for (const x of xs) {
    let i = Math.min(bins - 1, Math.floor(((x - lo) / (hi - lo)) * bins));
    while (i < bins - 1 && x >= edges[i + 1]) i++;
    while (i > 0 && x < edges[i]) i--;
    counts[i]++;
  }
  return { edges, counts, missing };
}
