/// <reference lib="dom" />
/**
 * A card's exports, made in the webview and posted to the extension (which saves them: webviews cannot download):
 * the card's series as CSV rows (export-rows.ts), and its chart as a PNG of the canvas' size on the card's background.
 */
import type { ExportMessage } from '../../../client/dashboard/messages';
import { exportName, exportRows, type ExportSeries } from './export-rows';

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

export function csvExport(tag: string, series: readonly ExportSeries[], startedAt: number | undefined): ExportMessage {
  return { type: 'export', format: 'csv', fileName: exportName(tag, 'csv'), rows: exportRows(tag, series, startedAt) };
}

export function pngExport(tag: string, canvas: HTMLCanvasElement, background: string): ExportMessage {
  return { type: 'export', format: 'png', fileName: exportName(tag, 'png'), data: pngOf(canvas, background) };
}
