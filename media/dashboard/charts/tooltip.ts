/// <reference lib="dom" />
/**
 * Tooltips with every run at the hovered x: an interaction mode of our own (`runsAtX`) that picks, for each run's
 * smoothed line, the drawn point nearest the pointer along x (Chart.js' `index` mode assumes all datasets share
 * their x values, which explorer and trainer series do not). The labels show the smoothed and the raw value, read
 * from the card's full series (drawn points are decimated).
 */
import { Interaction, type ActiveElement, type Chart, type ChartEvent, type InteractionItem } from 'chart.js';

declare module 'chart.js' {
  interface InteractionModeMap {
    runsAtX: (chart: Chart, e: ChartEvent, options: unknown, useFinalPosition?: boolean) => InteractionItem[];
  }
}

/** The dataset fields the cards add. */
export interface RunDataset {
  run?: string;
  raw?: boolean;
}

/** Index of the element whose x pixel is nearest `x` among elements sorted by x (skipping gaps). */
function nearest(elements: readonly { x: number; skip?: boolean }[], x: number): number {
  let lo = 0;
  let hi = elements.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (elements[mid].x < x) lo = mid + 1;
    else hi = mid;
  }
  let best = -1;
  let bestD = Infinity;
  // The neighbours on both sides, walking past skipped (null) points.
  for (const dir of [-1, 1]) {
    for (let i = dir < 0 ? lo - 1 : lo; i >= 0 && i < elements.length; i += dir) {
      if (elements[i].skip) continue;
      const d = Math.abs(elements[i].x - x);
      if (d < bestD) {
        bestD = d;
        best = i;
      }
      break;
    }
  }
  return best;
}

Interaction.modes.runsAtX = (chart: Chart, e: ChartEvent) => {
  const items: InteractionItem[] = [];
  if (e.x === null) return items;
  const area = chart.chartArea;
  if (e.x < area.left || e.x > area.right || e.y === null || e.y < area.top || e.y > area.bottom) return items;
  chart.data.datasets.forEach((ds, i) => {
    if ((ds as RunDataset).raw !== false || !chart.isDatasetVisible(i)) return;
    const elements = chart.getDatasetMeta(i).data as unknown as ({
      x: number;
      skip?: boolean;
    } & ActiveElement['element'])[];
    const j = nearest(elements, e.x!);
    if (j >= 0) items.push({ element: elements[j], datasetIndex: i, index: j });
  });
  return items;
};

/** Index of `x` in the sorted `xs` (the last of equal ones), or the nearest below it; -1 before the first. */
export function indexAtOrBefore(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

export function formatValue(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
}
