/**
 * Loads every row of a local dataset as Trinity's `datasets.load_dataset(path, name=subset_name, split=split)` would
 * (trinity/buffer/reader/file_reader.py), remembering where each row came from (file and line) for error messages.
 *
 * Which files make up a split is decided by runtime/config/datasets/ (peek-dataset.ts) (the same resolution the validator uses);
 * this module reads those files whole:
 *  - JSON Lines (also `.json` files holding JSON Lines), a JSON document (array of records, or dict of columns);
 *  - CSV/TSV with pandas-like type inference (ints, floats, booleans, NA markers → null), as `datasets`' csv builder;
 *  - parquet through hyparquet (int64 → number when exact, bytes stay Uint8Array);
 *  - `.gz` files decompressed.
 * Split expressions with slices (`train[:100]`, `train[10%:]`, `train+test`) follow `datasets`' ReadInstruction
 * (percent boundaries rounded to the closest row, Python rounding).
 * As in `datasets`, keys missing from some rows are null there (the columns are the union over all rows).
 */
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import * as zlib from 'node:zlib';
import type { AsyncBuffer } from 'hyparquet' with { 'resolution-mode': 'import' };
import {
  compressors,
  dictOfColumnsToRecords,
  parseCsv,
  peekDataset,
  type DatasetFormat,
} from '../../config/datasets/peek-dataset';
import { pythonRound } from '../numpy/python-round';

/** Where a row came from. `line` is 1-based (JSON Lines, CSV, JSON arrays); `record` is the 0-based row of its file. */
export interface RowSource {
  file: string;
  line?: number;
  record: number;
}

export interface LoadedRow {
  row: Record<string, unknown>;
  source: RowSource;
}

/** A row that was not loaded (malformed line) or not used (missing key...), when the caller asked to skip such rows. */
export interface SkippedRow {
  source: RowSource;
  /** The key at fault, if any. */
  key?: string;
  reason: string;
}

export interface LoadedDataset {
  rows: LoadedRow[];
  /** Union of the rows' keys, first-seen order. */
  columns: string[];
  files: string[];
  format: DatasetFormat;
  /** Malformed rows skipped (only with `onInvalidRow: 'skip'`). */
  skipped: SkippedRow[];
  warnings: string[];
}

export interface DatasetLocation {
  path?: string | null;
  split?: string | null;
  subset_name?: string | null;
  storage_type?: string | null;
  /** For messages: `<kind> '<name>'`, e.g. taskset 'gsm8k'. */
  name?: string | null;
  kind?: string;
}

export interface LoadOptions {
  /** Directory that a relative `path` resolves against (usually the config file's directory). */
  baseDir: string;
  /** `error` (default; what Trinity does: `load_dataset` fails on a malformed line) or `skip` (count it in `skipped`). */
  onInvalidRow?: 'error' | 'skip';
}

/** An error about the data; `file`/`line`/`key` say where when known. */
export class DataError extends Error {
  override name = 'DataError';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly key?: string,
  ) {
    super(message);
  }
}

/** `file:line`, or `file (row N)` when lines do not apply (parquet, dict-of-columns JSON). */
export function describeSource(s: RowSource): string {
  return s.line !== undefined ? `${s.file}:${s.line}` : `${s.file} (row ${s.record + 1})`;
}

// ---------------------------------------------------------------------------------------------------------------
// Split expressions

interface SplitPart {
  split: string;
  from?: number;
  to?: number;
  unit: 'abs' | '%';
}

const SUB_SPEC = /^([\w-]+(?:\.[\w-]+)*)(?:\[(?:(-?\d+)(%)?)?:(?:(-?\d+)(%)?)?\])?$/;

/** `datasets`' split grammar: `name`, `name[from:to]` (rows or percent), joined with `+`. */
export function parseSplit(expr: string): SplitPart[] {
  const parts = expr.split('+').map((p) => p.trim());
  return parts.map((p) => {
    const m = SUB_SPEC.exec(p);
    if (!m)
      throw new DataError(`split '${expr}': '${p}' is not a split expression (name, name[from:to], name[from%:to%])`);
    const [, split, from, fromPct, to, toPct] = m;
    if (from !== undefined && to !== undefined && !!fromPct !== !!toPct) {
      throw new DataError(`split '${expr}': from and to of '${p}' must use the same unit (rows or %)`);
    }
    const unit = fromPct || toPct ? '%' : 'abs';
    const part: SplitPart = { split, unit };
    if (from !== undefined) part.from = Number(from);
    if (to !== undefined) part.to = Number(to);
    if (unit === '%') {
      for (const b of [part.from, part.to]) {
        if (b !== undefined && Math.abs(b) > 100)
          throw new DataError(`split '${expr}': percent boundaries must be within [-100, 100]`);
      }
    }
    return part;
  });
}

function sliceBounds(part: SplitPart, n: number): [number, number] {
  let from: number;
  let to: number;
  if (part.unit === '%') {
    from = part.from === undefined ? 0 : pythonRound((part.from * n) / 100);
    to = part.to === undefined ? n : pythonRound((part.to * n) / 100);
  } else {
    from = part.from ?? 0;
    to = part.to ?? n;
  }
  if (from < 0) from = Math.max(n + from, 0);
  if (to < 0) to = Math.max(n + to, 0);
  return [Math.min(from, n), Math.min(to, n)];
}

// ---------------------------------------------------------------------------------------------------------------
// Entry point

export async function loadDatasetRows(loc: DatasetLocation, opts: LoadOptions): Promise<LoadedDataset> {
  const label = loc.name ? `${loc.kind ?? 'dataset'} '${loc.name}'` : (loc.kind ?? 'dataset');
  const storage = (loc.storage_type ?? 'file').toLowerCase();
  if (storage !== 'file') {
    throw new DataError(
      `${label}: storage_type '${loc.storage_type}' is not read here; only 'file' datasets (json, jsonl, parquet, csv) are`,
    );
  }
  const path = typeof loc.path === 'string' ? loc.path.trim() : '';
  if (path === '') throw new DataError(`${label}: path is not configured`);
  const splitExpr = typeof loc.split === 'string' && loc.split.trim() !== '' ? loc.split.trim() : 'train';
  const parts = parseSplit(splitExpr);
  const subsetName = typeof loc.subset_name === 'string' && loc.subset_name.trim() !== '' ? loc.subset_name : null;
  const onInvalid = opts.onInvalidRow ?? 'error';

  const rows: LoadedRow[] = [];
  const files: string[] = [];
  const warnings: string[] = [];
  const skipped: SkippedRow[] = [];
  let format: DatasetFormat | null = null;
  const bySplit = new Map<string, { rows: LoadedRow[]; files: string[]; format: DatasetFormat }>();
  for (const part of parts) {
    let loaded = bySplit.get(part.split);
    if (!loaded) {
      loaded = await loadSplit(label, path, part.split, subsetName, opts.baseDir, onInvalid, warnings, skipped);
      bySplit.set(part.split, loaded);
    }
    const [from, to] = sliceBounds(part, loaded.rows.length);
    rows.push(...loaded.rows.slice(from, Math.max(from, to)));
    for (const f of loaded.files) if (!files.includes(f)) files.push(f);
    format ??= loaded.format;
  }
  // The columns are the union over all rows; a row lacking one holds null there, as in an Arrow table.
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const { row } of rows) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
  }
  for (const { row } of rows) for (const c of columns) if (!(c in row)) row[c] = null;
  return { rows, columns, files, format: format ?? 'jsonl', skipped, warnings };
}

async function loadSplit(
  label: string,
  path: string,
  split: string,
  subsetName: string | null,
  baseDir: string,
  onInvalid: 'error' | 'skip',
  warnings: string[],
  skipped: SkippedRow[],
): Promise<{ rows: LoadedRow[]; files: string[]; format: DatasetFormat }> {
  const r = await peekDataset(path, { baseDir, split, subsetName, maxRows: 1 });
  if (!r.ok && r.reason === 'unreadable' && split === 'train' && /\.jsonl?(\.gz)?$/i.test(path)) {
    // The peek could not read the first record of this one JSON file: read it here, which names the bad line
    // (and can skip it).
    const file = nodePath.resolve(baseDir, path);
    if ((await fsp.stat(file).catch(() => null))?.isFile()) {
      const rows: LoadedRow[] = [];
      for (const item of jsonRows(file, await readText(file), onInvalid)) {
        if ('skip' in item) skipped.push(item.skip);
        else
          rows.push({
            row: item.row,
            source:
              item.line !== undefined ? { file, line: item.line, record: rows.length } : { file, record: rows.length },
          });
      }
      return { rows, files: [file], format: 'jsonl' };
    }
  }
  if (!r.ok) {
    if (r.reason === 'remote') {
      throw new DataError(
        `${label}: '${path}' is not a local file or directory, so Trinity would download it from the Hugging Face Hub; ` +
          `it is not read from the network here. Download it first (e.g. \`huggingface-cli download --repo-type dataset ${path} --local-dir <dir>\`) ` +
          `and set path to that directory (${r.message})`,
      );
    }
    throw new DataError(`${label}: ${r.message}`);
  }
  const peek = r.peek;
  for (const w of peek.warnings ?? []) {
    // What makes `datasets.load_dataset` fail makes Trinity fail: so it fails here too.
    if (w.code === 'unknown-split' || w.code === 'mixed-formats' || w.code === 'saved-to-disk')
      throw new DataError(`${label}: ${w.message}`);
    if (w.code !== 'rows-not-read') warnings.push(w.message);
  }
  if (peek.format === 'arrow')
    throw new DataError(
      `${label}: ${peek.files[0] ?? path}: .arrow data files are not read here (use json, jsonl, parquet or csv)`,
    );
  const rows: LoadedRow[] = [];
  for (const file of peek.files) {
    let record = 0;
    const add = (row: Record<string, unknown>, line: number | undefined) => {
      const source: RowSource = { file, record: record++ };
      if (line !== undefined) source.line = line;
      rows.push({ row, source });
    };
    if (peek.format === 'parquet') {
      for (const row of await readParquetFile(file)) add(row, undefined);
    } else {
      const text = await readText(file);
      if (peek.format === 'csv') {
        for (const { row, line } of csvRows(file, text, /\.tsv(\.gz)?$/i.test(file) ? '\t' : ',')) add(row, line);
      } else {
        for (const item of jsonRows(file, text, onInvalid)) {
          if ('skip' in item) skipped.push(item.skip);
          else add(item.row, item.line);
        }
      }
    }
  }
  return { rows, files: peek.files, format: peek.format };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading files

async function readText(file: string): Promise<string> {
  let buf: Buffer;
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    throw new DataError(`${file}: ${(e as Error).message}`, file);
  }
  const lower = file.toLowerCase();
  if (lower.endsWith('.gz')) buf = zlib.gunzipSync(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
  else if (/\.(bz2|xz|zst|lz4|zip)$/.test(lower))
    throw new DataError(`${file}: only .gz compression is read here`, file);
  const text = buf.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type JsonItem = { row: Record<string, unknown>; line?: number } | { skip: SkippedRow };

/** JSON Lines, or (when the first line is not a JSON object) one JSON document, as `datasets`' json builder. */
function jsonRows(file: string, text: string, onInvalid: 'error' | 'skip', asLines = false): JsonItem[] {
  if (!asLines && /^\s*\[/.test(text)) return jsonDocumentRows(file, text);
  const lines = text.split('\n');
  const out: JsonItem[] = [];
  let first = !asLines;
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].replace(/\r$/, '');
    if (t.trim() === '') continue;
    let v: unknown;
    let problem: string | null = null;
    try {
      v = JSON.parse(t);
      if (!isPlainObject(v))
        problem = `is ${Array.isArray(v) ? 'an array' : 'not a JSON object'} (JSON Lines need one object per line)`;
    } catch (e) {
      problem = `is not valid JSON: ${(e as Error).message}`;
    }
    if (problem !== null && first) {
      try {
        return jsonDocumentRows(file, text, `line ${i + 1} ${problem}`);
      } catch (e) {
        // Not a document either: in skip mode, a JSON Lines file whose first line is broken.
        if (onInvalid === 'skip' && lines.length > 1) return jsonRows(file, text, onInvalid, true);
        throw e;
      }
    }
    first = false;
    if (problem !== null) {
      const message = `${file}:${i + 1}: line ${problem}`;
      if (onInvalid === 'error') throw new DataError(message, file, i + 1);
      out.push({
        skip: { source: { file, line: i + 1, record: out.filter((x) => 'row' in x).length }, reason: message },
      });
      continue;
    }
    out.push({ row: v as Record<string, unknown>, line: i + 1 });
  }
  return out;
}

function jsonDocumentRows(file: string, text: string, notLines?: string): JsonItem[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const pos = /at position (\d+)/.exec((e as Error).message);
    const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined;
    throw new DataError(
      `${file}${line !== undefined ? `:${line}` : ''}: ${notLines ? `not JSON Lines (${notLines}) and ` : ''}not a JSON document either: ${(e as Error).message}`,
      file,
      line,
    );
  }
  if (Array.isArray(doc)) {
    const lines = arrayElementLines(text);
    if (doc.every(isPlainObject)) return doc.map((row, i) => ({ row: row as Record<string, unknown>, line: lines[i] }));
    if (doc.every((x) => x === null || typeof x !== 'object'))
      return doc.map((x, i) => ({ row: { text: x }, line: lines[i] }));
    throw new DataError(`${file}: a top-level JSON array must hold objects (one per record)`, file);
  }
  if (isPlainObject(doc)) {
    const records = dictOfColumnsToRecords(doc);
    if (!records)
      throw new DataError(
        `${file}: a top-level JSON object must map column names to equally long arrays (or use JSON Lines)`,
        file,
      );
    return records.map((row) => ({ row }));
  }
  throw new DataError(`${file}: a JSON document must be an array of records or an object of columns`, file);
}

/** The 1-based line on which each element of a top-level JSON array starts. */
function arrayElementLines(text: string): number[] {
  const out: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue;
    if (depth === 1 && expectElement && c !== ']') {
      out.push(line);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expectElement = true;
  }
  return out;
}

// --- CSV, as pandas.read_csv with default options ---

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

function csvRows(file: string, text: string, sep: string): { row: Record<string, unknown>; line: number }[] {
  const lines: number[] = [];
  const records = parseCsv(text, sep, true, lines);
  if (records.length === 0) return [];
  // Header: blank names become "Unnamed: i", duplicates "a.1", "a.2" (pandas' mangle_dupe_cols).
  const header: string[] = [];
  for (let i = 0; i < records[0].length; i++) {
    let h = records[0][i].trim() === '' ? `Unnamed: ${i}` : records[0][i];
    if (header.includes(h)) {
      let k = 1;
      while (header.includes(`${h}.${k}`)) k++;
      h = `${h}.${k}`;
    }
    header.push(h);
  }
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

// --- Parquet ---

type Hyparquet = typeof import('hyparquet', { with: { 'resolution-mode': 'import' } });
let hyparquet: Promise<Hyparquet> | null = null;

async function readParquetFile(file: string): Promise<Record<string, unknown>[]> {
  hyparquet ??= import('hyparquet');
  const hp = await hyparquet;
  let buf: Buffer;
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    throw new DataError(`${file}: ${(e as Error).message}`, file);
  }
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  const asyncBuffer: AsyncBuffer = { byteLength: ab.byteLength, slice: (s: number, e?: number) => ab.slice(s, e) };
  try {
    const rows = await hp.parquetReadObjects({ file: asyncBuffer, compressors: compressors(), utf8: false });
    return rows.map((r) => normalizeParquetValue({ ...r }) as Record<string, unknown>);
  } catch (e) {
    throw new DataError(`${file}: not a readable parquet file: ${(e as Error).message}`, file);
  }
}

/** int64 (bigint) → number where exact, recursively; bytes, dates and other values unchanged. */
function normalizeParquetValue(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalizeParquetValue);
  if (isPlainObject(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = normalizeParquetValue(x);
    return o;
  }
  return v;
}
