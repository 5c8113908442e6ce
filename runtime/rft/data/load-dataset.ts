/**
 * Loads every row of a local dataset as Trinity's `datasets.load_dataset(path, name=subset_name, split=split)` would
 * (trinity/buffer/reader/file_reader.py), remembering where each row came from (file and line) for error messages.
 *
 * Which files make up a split is decided by runtime/config/datasets/ (peek-dataset.ts: the same resolution the
 * validator uses), and its readers read them whole (json-reader.ts, csv-reader.ts with pandas-like type inference,
 * parquet-reader.ts with int64 → number when exact; `.gz` decompressed). Split expressions with slices
 * (`train[:100]`, `train[10%:]`, `train+test`) follow `datasets`' ReadInstruction (split-expression.ts).
 * As in `datasets`, keys missing from some rows are null there (the columns are the union over all rows).
 */
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { readCsvRows } from '../../config/datasets/csv-reader';
import { DataError } from '../../config/datasets/data-error';
import { readDataText } from '../../config/datasets/file-bytes';
import { readJsonRows, type JsonRow } from '../../config/datasets/json-reader';
import { readParquetRows } from '../../config/datasets/parquet-reader';
import { peekDataset } from '../../config/datasets/peek-dataset';
import type { DatasetFormat } from '../../config/datasets/peek-result';
import { parseSplit, sliceBounds } from '../../config/datasets/split-expression';

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

/** `file:line`, or `file (row N)` when lines do not apply (parquet, dict-of-columns JSON). */
export function describeSource(s: RowSource): string {
  return s.line !== undefined ? `${s.file}:${s.line}` : `${s.file} (row ${s.record + 1})`;
}

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
      for (const item of readJsonRows(file, await readDataText(file), onInvalid)) {
        if ('skip' in item) skipped.push(skippedRow(file, item));
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
      for (const row of await readParquetRows(file)) add(row, undefined);
    } else {
      const text = await readDataText(file);
      if (peek.format === 'csv') {
        for (const { row, line } of readCsvRows(file, text)) add(row, line);
      } else {
        for (const item of readJsonRows(file, text, onInvalid)) {
          if ('skip' in item) skipped.push(skippedRow(file, item));
          else add(item.row, item.line);
        }
      }
    }
  }
  return { rows, files: peek.files, format: peek.format };
}

function skippedRow(file: string, { skip }: Extract<JsonRow, { skip: unknown }>): SkippedRow {
  return { source: { file, line: skip.line, record: skip.record }, reason: skip.reason };
}
