/**
 * A card's CSV export, with the `metrics` CLI's header `run,tag,step,wall_time,value`, and export file names. Pure
 * (no DOM, no Chart.js): the unit tests import it.
 */

/** A run's series as the webview holds it (chart-card.ts' SeriesData has this shape). */
export interface CsvSeries {
  run: string;
  steps: readonly number[];
  times: readonly number[];
  values: readonly (number | null)[];
}

/** RFC 4180 quoting where a field needs it. */
function field(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The CSV of a tag's series: wall_time is the run's start plus the relative time (seconds since the epoch), empty
 * when the start is unknown, as the CLI leaves it empty; a non-finite value (null on the wire) is written `nan`.
 */
export function csvOf(tag: string, series: readonly CsvSeries[], startedAt: number | undefined): string {
  const lines = ['run,tag,step,wall_time,value'];
  for (const s of series) {
    for (let i = 0; i < s.steps.length; i++) {
      const v = s.values[i];
      lines.push(
        [
          field(s.run),
          field(tag),
          String(s.steps[i]),
          startedAt === undefined ? '' : String(startedAt + s.times[i]),
          v === null ? 'nan' : String(v),
        ].join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A file name for a tag's export: the tag with anything but letters, digits, `.`, `@` and `-` as `_`. */
export function exportName(tag: string, format: 'csv' | 'png'): string {
  return `${tag.replace(/[^\w.@-]+/g, '_').replace(/^\.+/, '_') || 'chart'}.${format}`;
}
