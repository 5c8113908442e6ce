/**
 * What a card draws of a long series: a Chart.js plugin of our own in place of Chart.js' decimation. A dataset
 * gives every point as `allPoints` (streaming extends that array); before each update the plugin sets its `data`,
 * what Chart.js draws, to:
 * - every point, when there are few (no more than 4 per CSS pixel of the chart's width, Chart.js' threshold);
 * - else the series' incremental LTTB (lttb.ts), whose buckets are a power of two in size and number between one
 *   and two a pixel, so a streamed point re-picks only the last buckets instead of the whole series;
 * - when zoomed (x min/max set): the points in view and one either side, all of them when few (full detail),
 *   else their LTTB from scratch.
 */
import { bucketSizeFor, GrowingLttb, lttbIndices, type XY } from './lttb';

/** A dataset the plugin decimates. */
export interface DecimatedDataset {
  /** Every point, sorted by x. */
  allPoints?: XY[];
  data: XY[];
}

/** Points per CSS pixel above which a series is decimated. */
const DECIMATE_ABOVE_PER_PX = 4;
/** Buckets per CSS pixel at most: with power-of-two bucket sizes, a series keeps 1 to 2 points a pixel. */
const BUCKETS_PER_PX = 2;

const growing = new WeakMap<object, GrowingLttb>();

/** The first index whose x is at least `x` (points sorted by x). */
function firstAtOrAfter(points: readonly XY[], x: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].x < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose x is past `x`. */
function firstAfter(points: readonly XY[], x: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid].x <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The points to draw of `all` on a chart `width` CSS pixels wide showing x in [min, max] (undefined: unbounded);
 * `owner` keys the incremental state (the dataset).
 */
export function drawnPoints(owner: object, all: XY[], width: number, min?: number, max?: number): XY[] {
  const px = Math.max(1, width);
  const threshold = DECIMATE_ABOVE_PER_PX * px;
  const maxBuckets = BUCKETS_PER_PX * px;
  if (min !== undefined || max !== undefined) {
    const from = min === undefined ? 0 : Math.max(0, firstAtOrAfter(all, min) - 1);
    const to = max === undefined ? all.length : Math.min(all.length, firstAfter(all, max) + 1);
    if (to - from <= threshold) return from === 0 && to === all.length ? all : all.slice(from, to);
    return lttbIndices(all, from, to, bucketSizeFor(to - from, maxBuckets)).map((j) => all[j]);
  }
  if (all.length <= threshold) return all;
  let g = growing.get(owner);
  if (!g) growing.set(owner, (g = new GrowingLttb()));
  return g.update(all, bucketSizeFor(all.length, maxBuckets));
}

/** What the plugin reads of a Chart.js chart (typed here so that this module stays free of Chart.js for the tests). */
interface DecimatedChart {
  width: number;
  options: { scales?: { x?: { min?: unknown; max?: unknown } } };
  data: { datasets: object[] };
}

/** Registered per chart (`plugins: [decimationPlugin]`); the datasets without `allPoints` are left alone. */
export const decimationPlugin = {
  id: 'growingLttb',
  beforeElementsUpdate(chart: DecimatedChart): void {
    const x = chart.options.scales?.x;
    const min = typeof x?.min === 'number' ? x.min : undefined;
    const max = typeof x?.max === 'number' ? x.max : undefined;
    for (const ds of chart.data.datasets as DecimatedDataset[]) {
      if (ds.allPoints) ds.data = drawnPoints(ds, ds.allPoints, chart.width, min, max);
    }
  },
};
