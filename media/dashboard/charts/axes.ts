/**
 * What a card's axes show: x as step, relative time (seconds since the run started) or wall time (the clock:
 * the run's start time plus the relative time, in seconds since the epoch), and TensorBoard's "ignore outliers"
 * y extent (the 5th to 95th percentile of the values in view). Pure (no DOM): the unit tests use it too.
 */

export type XAxis = 'step' | 'relative' | 'wall';

export const X_AXES: readonly XAxis[] = ['step', 'relative', 'wall'];

export function parseXAxis(v: unknown): XAxis {
  return X_AXES.includes(v as XAxis) ? (v as XAxis) : 'step';
}

export const X_AXIS_TITLES: Record<XAxis, string> = { step: 'step', relative: 'relative time', wall: 'wall time' };

/**
 * The x values of a series on `axis`. Wall time needs the run's start (seconds since the epoch); without one
 * (an old host), wall time falls back to relative time rather than drawing nothing.
 */
export function xValues(
  axis: XAxis,
  steps: readonly number[],
  times: readonly number[],
  startedAt: number | undefined,
): number[] {
  if (axis === 'step') return steps as number[];
  if (axis === 'relative' || startedAt === undefined) return times as number[];
  return times.map((t) => startedAt + t);
}

/** A wall-clock tick: `HH:MM:SS` in the local zone, the date in front when `withDate`. */
export function formatClock(epochSeconds: number, withDate = false): string {
  if (!Number.isFinite(epochSeconds)) return '';
  const d = new Date(epochSeconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return withDate ? `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}` : time;
}

/**
 * Seconds as `12s`, `3m05s`, `2h10m`. Under a minute, `spacing` (the distance between neighbouring ticks) sets the
 * decimals, so ticks 0.05 s apart read 0.05s, 0.1s, 0.15s rather than all rounding to 0.1s.
 */
export function formatSeconds(s: number, spacing?: number): string {
  if (!Number.isFinite(s)) return '';
  const a = Math.abs(s);
  const decimals =
    spacing !== undefined && spacing > 0
      ? Math.min(3, Math.max(0, Math.ceil(-Math.log10(spacing) - 1e-9)))
      : a < 10
        ? 1
        : 0;
  if (a < 60) return `${Number(s.toFixed(decimals))}s`;
  if (a < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function formatX(axis: XAxis, x: number, startedAt: number | undefined, spacing?: number): string {
  if (axis === 'step') return String(x);
  if (axis === 'wall' && startedAt !== undefined) return formatClock(x);
  return formatSeconds(x, spacing);
}

/** The q-quantile of sorted values, linearly interpolated between the nearest ranks (numpy's and d3's default). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (h - lo);
}

export interface YExtent {
  min: number;
  max: number;
}

/**
 * "Ignore outliers": the 5th and 95th percentiles of the finite values whose x lies in [xMin, xMax] (all of them
 * when the bounds are undefined), or undefined when there are none, or when they collapse to one value (then the
 * scale's own extent is better). On a log axis only positive values count.
 */
export function outlierExtent(
  columns: readonly { xs: readonly number[]; ys: readonly (number | null)[] }[],
  xMin?: number,
  xMax?: number,
  positiveOnly = false,
): YExtent | undefined {
  const vals: number[] = [];
  for (const { xs, ys } of columns) {
    for (let i = 0; i < ys.length; i++) {
      const y = ys[i];
      const x = xs[i];
      if (y === null || !Number.isFinite(y) || (positiveOnly && y <= 0)) continue;
      if ((xMin !== undefined && x < xMin) || (xMax !== undefined && x > xMax)) continue;
      vals.push(y);
    }
  }
  if (vals.length === 0) return undefined;
  vals.sort((a, b) => a - b);
  const min = quantileSorted(vals, 0.05);
  const max = quantileSorted(vals, 0.95);
  return max > min ? { min, max } : undefined;
}
