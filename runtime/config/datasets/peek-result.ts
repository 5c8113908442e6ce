/** What a dataset peek returns, what it accepts, and what one file's reader hands back to it. */

export type DatasetFormat = 'jsonl' | 'json' | 'parquet' | 'csv' | 'arrow';

export type PeekWarningCode =
  /** `datasets` would not know the requested split: Trinity fails with `Unknown split`. */
  | 'unknown-split'
  /** The splits of the directory use different formats: `datasets` refuses to load it. */
  | 'mixed-formats'
  /** A `save_to_disk` directory: `load_dataset` refuses it (it needs `load_from_disk`); rows are not peeked. */
  | 'saved-to-disk'
  /** Columns are known but (some) rows/values were not read (arrow files, unsupported codec, huge column chunk). */
  | 'rows-not-read'
  /** `<path>/<subset_name>/` was used although no README `configs:` say so (`datasets` would ignore subset_name). */
  | 'subset-dir'
  /** A JSON document whose records sit under one key: `datasets` sees a single column (Trinity passes no `field`). */
  | 'json-field'
  /** The directory has too many files to list them all; resolution used the first ones. */
  | 'listing-truncated';

export interface PeekWarning {
  code: PeekWarningCode;
  message: string;
}

export interface DatasetPeek {
  /** Resolved data files of the split (absolute), in the order `datasets` would read them. */
  files: string[];
  /** By content: a `.json` file holding JSON Lines is `jsonl`, a `.jsonl` file holding one JSON document is `json`. */
  format: DatasetFormat;
  /** First rows, at most `maxRows`. Empty for `arrow` (not peeked). Parquet int64 values are `bigint`, binary `Uint8Array`. */
  rows: Record<string, unknown>[];
  /**
   * Union of top-level keys over the rows read (first-seen order). Parquet: the schema's column names; a JSON
   * document: keys over all its records; `arrow`: the features of `dataset_info.json` ([] when unknown).
   */
  columns: string[];
  /** Things that would make Trinity's load differ from this peek or fail; absent when none. */
  warnings?: PeekWarning[];
}

export type PeekFailureReason = 'not-found' | 'no-split-file' | 'unreadable' | 'remote';

export type PeekFailure = { ok: false; reason: PeekFailureReason; message: string };

export type PeekResult = { ok: true; peek: DatasetPeek } | PeekFailure;

export interface PeekOptions {
  /** Split expression as in Trinity (`train`, `test`, `train[:100]`, `train+test`); default `train`. */
  split?: string;
  subsetName?: string | null;
  /** Directory that a relative `path` resolves against (usually the config file's directory). */
  baseDir: string;
  /** Default 20. */
  maxRows?: number;
  /** Most bytes read from a JSON Lines / CSV file (decompressed bytes for `.gz`); default 1 MiB. */
  maxBytes?: number;
  /** Largest JSON document (not JSON Lines) parsed whole; default 20 MiB. */
  maxDocumentBytes?: number;
}

/** PeekOptions' limits, filled in. */
export interface PeekLimits {
  maxRows: number;
  maxBytes: number;
  maxDocumentBytes: number;
}

/** The first rows of one data file, as a reader peeked them. */
export interface FilePeek {
  format: DatasetFormat;
  rows: Record<string, unknown>[];
  columns: string[];
  warnings: PeekWarning[];
}

export function peekFailure(reason: PeekFailureReason, message: string): PeekFailure {
  return { ok: false, reason, message };
}
