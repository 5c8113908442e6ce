/**
 * CSV/TSV files as `datasets`' csv builder (pandas.read_csv, default options) reads them. The peek reads the
 * header and the first rows as strings within a byte limit and never throws; the runtime reads every row with
 * pandas' type inference and throws DataError.
 */
import { DataError } from './data-error';
import { concatBytes, decodeUtf8, openSource, stripBom, type ChunkSource } from './file-bytes';
import { errorText } from './message-text';
import { peekFailure, type FilePeek, type PeekFailure, type PeekLimits } from './peek-result';

/** The header and the first `want` rows (values as written), reading at most `maxBytes`. */
export async function peekCsvFile(file: string, want: number, limits: PeekLimits): Promise<FilePeek | PeekFailure> {
  let src: ChunkSource;
  try {
    src = await openSource(file);
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  }
  let buf: Uint8Array = new Uint8Array(0);
  let eof = false;
  try {
    while (buf.length < limits.maxBytes) {
      const c = await src.next();
      if (c === null) {
        eof = true;
        break;
      }
      buf = concatBytes([buf, c]);
      // Enough lines for the header and `want` rows (quoted newlines make this an estimate; parsing decides).
      let lines = 0;
      for (let i = buf.indexOf(10); i >= 0 && lines <= want + 1; i = buf.indexOf(10, i + 1)) lines++;
      if (lines > want + 1) break;
    }
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await src.close();
  }
  const cut = eof ? buf.length : buf.lastIndexOf(10) + 1;
  const text = stripBom(decodeUtf8(buf, 0, Math.max(cut, 0)));
  const records = parseCsv(text, csvSeparator(file), eof);
  if (records.length === 0) return { format: 'csv', rows: [], columns: [], warnings: [] };
  const header = csvHeader(records[0]);
  const rows = records.slice(1, want + 1).map((rec) => Object.fromEntries(header.map((h, i) => [h, rec[i] ?? null])));
  return { format: 'csv', rows, columns: header, warnings: [] };
}

/**
 * RFC 4180 records; blank lines skipped; a record cut off by the end of a partial read is dropped.
 * `recordLines`, when given, receives the 1-based line on which each returned record starts.
 */
function parseCsv(text: string, sep: string, complete: boolean, recordLines?: number[]): string[][] {
  const out: string[][] = [];
  let rec: string[] = [];
  let field = '';
  let inQuotes = false;
  let fieldStarted = false;
  let line = 1;
  let recordLine = 1;
  const endRecord = () => {
    rec.push(field);
    if (!(rec.length === 1 && rec[0] === '' && !fieldStarted)) {
      out.push(rec);
      recordLines?.push(recordLine);
    }
    rec = [];
    field = '';
    fieldStarted = false;
    recordLine = line;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) line++;
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else inQuotes = false;
      } else field += c;
    } else if (c === '"' && field === '') {
      inQuotes = true;
      fieldStarted = true;
    } else if (c === sep) {
      rec.push(field);
      field = '';
      fieldStarted = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i++;
        line++;
      }
      endRecord();
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (complete && !inQuotes && (field !== '' || rec.length > 0 || fieldStarted)) endRecord();
  return out;
}

/** `.tsv` (and `.tsv.gz`) files are tab-separated, as `datasets` reads them. */
function csvSeparator(file: string): string {
  return /\.tsv(\.gz)?$/i.test(file) ? '\t' : ',';
}

/** pandas' header: blank names become "Unnamed: i", duplicates "a.1", "a.2" (mangle_dupe_cols). */
function csvHeader(names: string[]): string[] {
  const header: string[] = [];
  for (let i = 0; i < names.length; i++) {
    let h = names[i].trim() === '' ? `Unnamed: ${i}` : names[i];
    if (header.includes(h)) {
      let k = 1;
      while (header.includes(`${h}.${k}`)) k++;
      h = `${h}.${k}`;
    }
    header.push(h);
  }
  return header;
}

/** pandas' default NA markers. */
const NA_VALUES = new Set([
  '',
  '#N/A',
  '#N/A N/A',
  '#NA',
  '-1.#IND',
  '-1.#QNAN',
  '-NaN',
  '-nan',
  '1.#IND',
  '1.#QNAN',
  '<NA>',
  'N/A',
  'NA',
  'NULL',
  'NaN',
  'None',
  'n/a',
  'nan',
  'null',
]);
const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|Infinity)$/i;
const TRUE_VALUES = new Set(['True', 'TRUE', 'true']);
const FALSE_VALUES = new Set(['False', 'FALSE', 'false']);

/** Every row, with the line it starts on; a column is ints, floats or booleans when all its non-NA values are. */
export function readCsvRows(file: string, text: string): { row: Record<string, unknown>; line: number }[] {
  const lines: number[] = [];
  const records = parseCsv(text, csvSeparator(file), true, lines);
  if (records.length === 0) return [];
  const header = csvHeader(records[0]);
  const body = records.slice(1);
  for (let r = 0; r < body.length; r++) {
    if (body[r].length > header.length) {
      throw new DataError(
        `${file}:${lines[r + 1]}: expected ${header.length} fields, saw ${body[r].length} (pandas: "Error tokenizing data")`,
        file,
        lines[r + 1],
      );
    }
  }
  // Per column: ints, floats or booleans when every non-NA value is one; NA markers become null.
  const convert: ((s: string) => unknown)[] = header.map((_, c) => {
    const values = body.map((rec) => rec[c]).filter((v): v is string => v !== undefined && !NA_VALUES.has(v));
    if (values.length > 0 && values.every((v) => INT_RE.test(v.trim()))) return (s) => Number(s.trim());
    if (values.length > 0 && values.every((v) => FLOAT_RE.test(v.trim()))) {
      return (s) => {
        const t = s
          .trim()
          .toLowerCase()
          .replace(/^([+-]?)infinity$/, '$1inf');
        return t.endsWith('inf') ? (t.startsWith('-') ? -Infinity : Infinity) : Number(t);
      };
    }
    if (values.length > 0 && values.every((v) => TRUE_VALUES.has(v) || FALSE_VALUES.has(v)))
      return (s) => TRUE_VALUES.has(s);
    return (s) => s;
  });
  return body.map((rec, r) => {
    const row: Record<string, unknown> = {};
    header.forEach((h, c) => {
      const v = rec[c];
      row[h] = v === undefined || NA_VALUES.has(v) ? null : convert[c](v);
    });
    return { row, line: lines[r + 1] };
  });
}
