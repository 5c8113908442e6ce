/**
 * What a card's exports hold: its series as rows for the CSV (the extension writes them with the `metrics` CLI's
 * writer), and the export file names. Pure (no DOM, no Chart.js): the unit tests import it.
 */
import type { ExportRow } from '../../../client/dashboard/messages';

/** A run's series as the webview holds it (chart-card.ts' SeriesData has this shape). */
export interface ExportSeries {
  run: string;
  steps: readonly number[];
  times: readonly number[];
  values: readonly (number | null)[];
}

/** A tag's rows: wall time is the run's start plus the relative time, null when the start is unknown. */
export function exportRows(tag: string, series: readonly ExportSeries[], startedAt: number | undefined): ExportRow[] {
  const rows: ExportRow[] = [];
  for (const s of series) {
    for (let i = 0; i < s.steps.length; i++) {
      rows.push({
        run: s.run,
        tag,
        step: s.steps[i],
        wallTime: startedAt === undefined ? null : startedAt + s.times[i],
        value: s.values[i],
      });
    }
  }
  return rows;
}

/** A file name for a tag's export: the tag with anything but letters, digits, `.`, `@` and `-` as `_`. */
export function exportName(tag: string, format: 'csv' | 'png'): string {
  return `${tag.replace(/[^\w.@-]+/g, '_').replace(/^\.+/, '_') || 'chart'}.${format}`;
}
