/**
 * Scalar rows as CSV, with the header `run,tag,step,wall_time,value`: what `trinity-workbench metrics` prints and what
 * a dashboard card's CSV export saves. One writer, so both files read the same in pandas and spreadsheets.
 */

export interface CsvRow {
  run: string;
  tag: string;
  step: number;
  /** Seconds since the epoch; null when not known (an empty field). */
  wallTime: number | null;
  /** null stands for a value that was not finite on the way (JSON has no NaN). */
  value: number | null;
}

export function scalarsCsv(rows: readonly CsvRow[]): string {
  const lines = ['run,tag,step,wall_time,value'];
  for (const r of rows) {
    lines.push(
      [field(r.run), field(r.tag), String(r.step), r.wallTime === null ? '' : String(r.wallTime), number(r.value)].join(
        ',',
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** RFC 4180 quoting where a field needs it. */
function field(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Non-finite values as pandas and spreadsheets read them. */
function number(v: number | null): string {
  if (v === null || Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return String(v);
}
