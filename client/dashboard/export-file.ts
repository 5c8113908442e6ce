/**
 * The extension side of a card export: the bytes of the file an `export` message asks for, and writing them. No
 * `vscode` (the panel shows the save dialog and calls this), so the tests run it directly.
 */
import { writeFileSync } from 'node:fs';
import { scalarsCsv } from '../../runtime/metrics/csv';
import type { ExportMessage } from './messages';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The file's bytes: the rows as the CLI's CSV in UTF-8, or the PNG decoded from its data URL (which must be one). */
export function exportBytes(m: ExportMessage): Uint8Array {
  if (m.format === 'csv') return new TextEncoder().encode(scalarsCsv(m.rows));
  const comma = m.data.indexOf(',');
  const bytes = new Uint8Array(Buffer.from(m.data.slice(comma + 1), 'base64'));
  if (bytes.length < 24 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b))
    throw new Error('the exported image is not a PNG');
  return bytes;
}

/** A PNG's size, from its IHDR chunk. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** Writes the export to `file` (the path the save dialog returned). */
export function writeExport(file: string, m: ExportMessage): void {
  writeFileSync(file, exportBytes(m));
}

/** The save dialog's filter for the format. */
export function exportFilters(format: ExportMessage['format']): Record<string, string[]> {
  return format === 'csv' ? { 'CSV (run,tag,step,wall_time,value)': ['csv'] } : { 'PNG image': ['png'] };
}
