/// <reference lib="dom" />
/**
 * A card's exports, made in the webview and posted to the extension (which saves them: webviews cannot download):
 * the card's series as CSV with the `metrics` CLI's header `run,tag,step,wall_time,value`, and its chart as a PNG
 * of the canvas' size on the theme's background.
 */
import type { ExportMessage } from '../../client/dashboard/messages';
import type { SeriesData } from './chart-card';

/** RFC 4180 quoting where a field needs it. */
function field(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The CSV of a tag's series: wall_time is the run's start plus the relative time (seconds since the epoch), empty
 * when the start is unknown, as the CLI leaves it empty; a non-finite value (null on the wire) is written `nan`.
 */
export function csvOf(tag: string, series: readonly SeriesData[], startedAt: number | undefined): string {
  const lines = ['run,tag,step,wall_time,value'];
  for (const s of series) {
    for (let i = 0; i < s.steps.length; i++) {
      const v = s.values[i];
      lines.push([field(s.run), field(tag), String(s.steps[i]), startedAt === undefined ? '' : String(startedAt + s.times[i]), v === null ? 'nan' : String(v)].join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A file name for a tag's export: the tag with anything but letters, digits, `.`, `@` and `-` as `_`. */
export function exportName(tag: string, format: ExportMessage['format']): string {
  return `${tag.replace(/[^\w.@-]+/g, '_').replace(/^\.+/, '_') || 'chart'}.${format}`;
}

/** The canvas as a PNG data URL, on `background` (the canvas itself is transparent). */
export function pngOf(canvas: HTMLCanvasElement, background: string): string {
  const out = document.createElement('canvas');
  out.width = canvas.width;
  out.height = canvas.height;
  const g = out.getContext('2d')!;
  g.fillStyle = background;
  g.fillRect(0, 0, out.width, out.height);
  g.drawImage(canvas, 0, 0);
  return out.toDataURL('image/png');
}

export function csvExport(tag: string, series: readonly SeriesData[], startedAt: number | undefined): ExportMessage {
  return { type: 'export', format: 'csv', fileName: exportName(tag, 'csv'), data: csvOf(tag, series, startedAt) };
}

export function pngExport(tag: string, canvas: HTMLCanvasElement, background: string): ExportMessage {
  return { type: 'export', format: 'png', fileName: exportName(tag, 'png'), data: pngOf(canvas, background) };
}
