/**
 * Largest-Triangle-Three-Buckets decimation with buckets of a fixed number of points, so that a growing series is
 * decimated incrementally: the buckets already full keep their pick, and only the tail is picked again
 * (`GrowingLttb`). Chart.js' LTTB sizes its buckets by the series' length, so every appended point moves every
 * bucket and the whole series is decimated again on every update.
 *
 * The rule, for points [from, to) and a bucket size k: the first and the last point are kept; the points between
 * are cut into buckets of k (the last one may be shorter). Bucket b keeps its point of largest triangle with the
 * point kept before it and the next bucket's mean (for the last bucket: the last point). Only points with a finite y
 * are picked or averaged; a bucket with none keeps nothing. When the next bucket has no finite point (or the last
 * point's y is null) the triangle's third corner is level with the pivot, so the pick is the point farthest from
 * the pivot's y. Each pick depends only on its pivot, its bucket and the next bucket: that is what makes the
 * incremental form equal the from-scratch one. Pure (no DOM): the unit tests use it too.
 */

export interface XY {
  x: number;
  y: number | null;
}

/** The smallest power of two k whose buckets of k fit the points between the first and the last in `maxBuckets`. */
export function bucketSizeFor(count: number, maxBuckets: number): number {
  const interior = Math.max(0, count - 2);
  const most = Math.max(1, Math.floor(maxBuckets));
  let k = 1;
  while (Math.ceil(interior / k) > most) k *= 2;
  return k;
}

const finite = (y: number | null): y is number => y !== null && Number.isFinite(y);

/** The pick of points[start, end) against pivot `a` and the next bucket's points[nextStart, nextEnd) (or `last`). */
function pick(
  points: readonly XY[],
  a: XY,
  start: number,
  end: number,
  nextStart: number,
  nextEnd: number,
  last: XY | undefined,
): number {
  let cx = 0;
  let cy = 0;
  let n = 0;
  if (last) {
    cx = last.x;
    if (finite(last.y)) {
      cy = last.y;
      n = 1;
    }
  } else {
    let sx = 0;
    for (let j = nextStart; j < nextEnd; j++) {
      const p = points[j];
      sx += p.x;
      if (finite(p.y)) {
        cx += p.x;
        cy += p.y;
        n++;
      }
    }
    if (n) {
      cx /= n;
      cy /= n;
    } else cx = sx / Math.max(1, nextEnd - nextStart);
  }
  const ay = finite(a.y) ? a.y : n ? cy : 0;
  if (!n) cy = ay;
  let best = -1;
  let bestArea = -1;
  for (let j = start; j < end; j++) {
    const p = points[j];
    if (!finite(p.y)) continue;
    // Twice the triangle's area; the factor does not change the pick.
    const area = Math.abs((a.x - cx) * (p.y - ay) - (a.x - p.x) * (cy - ay));
    if (area > bestArea) {
      bestArea = area;
      best = j;
    }
  }
  return best;
}

/**
 * The picks of buckets `fromBucket` on, for points[from, to) with buckets of `size`; `pivot` is the point kept
 * before bucket `fromBucket`. A bucket that keeps nothing is -1.
 */
function pickBuckets(
  points: readonly XY[],
  from: number,
  to: number,
  size: number,
  fromBucket: number,
  pivot: number,
): number[] {
  const first = from + 1;
  const lastIndex = to - 1;
  const buckets = Math.ceil(Math.max(0, lastIndex - first) / size);
  const picks: number[] = [];
  let a = pivot;
  for (let b = fromBucket; b < buckets; b++) {
    const start = first + b * size;
    const end = Math.min(start + size, lastIndex);
    const nextEnd = Math.min(end + size, lastIndex);
    const j = pick(points, points[a], start, end, end, nextEnd, b + 1 < buckets ? undefined : points[lastIndex]);
    picks.push(j);
    if (j >= 0) a = j;
  }
  return picks;
}

/** The indices LTTB keeps of points[from, to) with buckets of `size` points, in order (all of them when to − from ≤ 2). */
export function lttbIndices(points: readonly XY[], from: number, to: number, size: number): number[] {
  if (to - from <= 2) return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
  const picks = pickBuckets(points, from, to, size, 0, from).filter((j) => j >= 0);
  return [from, ...picks, to - 1];
}

/**
 * A growing series' LTTB, kept between updates: `update` re-picks only the buckets whose pick can have changed
 * since the last call (the last full one and those after it), and gives the same points as `lttbIndices` would
 * from scratch. The series must only have grown at its end since the last call; a different array, a shorter one
 * or another bucket size starts over.
 */
export class GrowingLttb {
  /** The decimated points, changed in place (one splice per update, which Chart.js follows). */
  readonly drawn: XY[] = [];
  private points: readonly XY[] | undefined;
  private count = 0;
  private size = 0;
  /** Each bucket's pick (-1: none). */
  private picks: number[] = [];

  update(points: readonly XY[], size: number): XY[] {
    const n = points.length;
    const fresh = points !== this.points || n < this.count || size !== this.size || this.count < 3;
    // The buckets full at the last update: their contents are unchanged. The last of them is picked again (its
    // next bucket, or the last point, has changed); those before it keep their picks.
    const full = fresh ? 0 : Math.floor((this.count - 2) / size);
    const keep = Math.max(0, full - 1);
    if (!fresh && n === this.count) return this.drawn;
    this.points = points;
    this.size = size;
    this.count = n;
    if (n <= 2) {
      this.picks = [];
      this.drawn.splice(0, this.drawn.length, ...points);
      return this.drawn;
    }
    this.picks.length = keep;
    let pivot = 0;
    let kept = 1;
    for (const j of this.picks) {
      if (j >= 0) {
        pivot = j;
        kept++;
      }
    }
    const picks = pickBuckets(points, 0, n, size, keep, pivot);
    for (const j of picks) this.picks.push(j);
    const tail: XY[] = [];
    for (const j of picks) if (j >= 0) tail.push(points[j]);
    tail.push(points[n - 1]);
    if (kept === 1 && this.drawn[0] !== points[0]) this.drawn.splice(0, this.drawn.length, points[0], ...tail);
    else this.drawn.splice(kept, this.drawn.length - kept, ...tail);
    return this.drawn;
  }
}
