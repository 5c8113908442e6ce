/**
 * Finds the local data files behind a Trinity dataset `path` (+ `split`, `subset_name`) and reads the first rows
 * cheaply, so the validator can check that `prompt_key`, `response_key`, `chosen_key`, `messages_key`... exist.
 *
 * Trinity loads a local dataset with Hugging Face `datasets.load_dataset(path, name=subset_name, split=split)` (a
 * single file: `load_dataset(<json|parquet|csv>, data_files=path, ...)`), so resolution mirrors `datasets`' local
 * rules:
 *  - a file is the whole `train` split;
 *  - in a directory, the `configs:` of a `README.md` YAML header choose the files per subset and split; without
 *    them, `data/<split>-NNNNN-of-NNNNN.*` shards, then split-named directories (`train/`, `valid/`, `test_x/`...),
 *    then split-named files (`train.jsonl`, `my-test.parquet`, `dev.json`...), and finally every data file as
 *    `train`. Split keywords are those of `datasets`: train/training, validation/valid/dev/val,
 *    test/testing/eval/evaluation;
 *  - only files of the format `datasets` would pick (most common extension) are kept.
 * Where `datasets` would not find the split but a file plainly named after it exists (`eval.jsonl` for
 * `split: eval`, which `datasets` calls `test`), those files are peeked and a warning says that Trinity would fail.
 *
 * Never throws, never reads a whole large file (json-reader.ts, csv-reader.ts, parquet-reader.ts): JSON Lines and
 * CSV read at most `maxBytes`, a JSON document is parsed only below a size limit, parquet reads the footer and the
 * first rows of the first row group(s).
 */
import * as nodePath from 'node:path';
import { COMPRESSION_EXTENSIONS, HF_EXTENSIONS, inferModule, suffixesOf } from './data-file-formats';
import { errorText } from './message-text';
import { peekDirectory } from './peek-directory';
import { peekFiles } from './peek-files';
import { peekFailure, type PeekLimits, type PeekOptions, type PeekResult, type PeekWarning } from './peek-result';
import { statOrNull } from './small-files';
import { splitNames } from './split-expression';

const MiB = 1024 * 1024;
const DEFAULT_MAX_ROWS = 20;
const DEFAULT_MAX_BYTES = MiB;
const DEFAULT_MAX_DOCUMENT_BYTES = 20 * MiB;

/**
 * True when `path` reads as a Hugging Face Hub dataset id (`openai/gsm8k`, `gsm8k`): one or two name segments and
 * nothing that marks a local path (`./`, `/`, `~`, `\`, a data-file extension, a URL scheme).
 * Whether it exists locally is not checked here: `peekDataset` checks the file system first.
 */
export function looksLikeHubId(path: string): boolean {
  if (typeof path !== 'string') return false;
  const p = path.trim();
  if (p === '' || p !== path) return false;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(p)) return false; // URL scheme, drive letter, ${...} leftovers
  if (p.includes('\\') || p.startsWith('/') || p.startsWith('.') || p.startsWith('~')) return false;
  const parts = p.split('/');
  if (parts.length > 2) return false;
  const segment = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
  for (const s of parts) {
    if (s.length === 0 || s.length > 96 || !segment.test(s) || s.includes('--') || s.includes('..')) return false;
  }
  const last = parts[parts.length - 1];
  if (suffixesOf(last).some((x) => HF_EXTENSIONS.has(x) || COMPRESSION_EXTENSIONS.has(x))) return false;
  return true;
}

export async function peekDataset(path: string, opts: PeekOptions): Promise<PeekResult> {
  try {
    return await peekDatasetUnsafe(path, opts);
  } catch (e) {
    return peekFailure('unreadable', `could not peek dataset '${String(path)}': ${errorText(e)}`);
  }
}

async function peekDatasetUnsafe(rawPath: string, opts: PeekOptions): Promise<PeekResult> {
  if (typeof rawPath !== 'string' || rawPath.trim() === '') return peekFailure('not-found', 'dataset path is empty');
  const path = rawPath.trim();
  const limits: PeekLimits = {
    maxRows: positiveInt(opts.maxRows, DEFAULT_MAX_ROWS),
    maxBytes: positiveInt(opts.maxBytes, DEFAULT_MAX_BYTES),
    maxDocumentBytes: positiveInt(opts.maxDocumentBytes, DEFAULT_MAX_DOCUMENT_BYTES),
  };
  const splitExpr = typeof opts.split === 'string' && opts.split.trim() !== '' ? opts.split.trim() : 'train';
  const splits = splitNames(splitExpr);
  const subset = typeof opts.subsetName === 'string' && opts.subsetName.trim() !== '' ? opts.subsetName.trim() : null;

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(path);
  if (scheme) {
    const what = scheme[1].toLowerCase().startsWith('sqlite') ? 'a database URL' : 'a URL';
    return peekFailure('remote', `'${path}' is ${what}, not a local dataset file or directory; not peeked`);
  }
  if (path.includes('${')) {
    return peekFailure(
      'not-found',
      `'${path}' contains an unresolved \${...} interpolation; resolve it before peeking`,
    );
  }

  const abs = nodePath.resolve(opts.baseDir ?? '.', path);
  const st = await statOrNull(abs);
  if (!st) {
    if (looksLikeHubId(path)) {
      const first = path.split('/')[0];
      const firstStat = path.includes('/') ? await statOrNull(nodePath.resolve(opts.baseDir ?? '.', first)) : null;
      if (firstStat?.isDirectory()) {
        return peekFailure(
          'not-found',
          `dataset path ${abs} does not exist (${first}/ exists locally, so '${path}' is taken for a local path, ` +
            `not a Hugging Face Hub id)`,
        );
      }
      return peekFailure('remote', `'${path}' is not a local path; Trinity would load it from the Hugging Face Hub`);
    }
    return peekFailure('not-found', `dataset path ${abs} does not exist`);
  }
  if (st.isFile()) return peekSingleFile(abs, splits, limits);
  if (st.isDirectory()) return peekDirectory(abs, splits, subset, limits);
  return peekFailure('unreadable', `${abs} is neither a file nor a directory`);
}

/** A single file is the `train` split. */
async function peekSingleFile(abs: string, splits: string[], limits: PeekLimits): Promise<PeekResult> {
  const module = inferModule([nodePath.basename(abs)]);
  const warnings: PeekWarning[] = [];
  const others = splits.filter((s) => s !== 'train');
  if (others.length > 0) {
    warnings.push({
      code: 'unknown-split',
      message:
        `a single data file is the 'train' split: datasets.load_dataset(..., split='${others[0]}') fails with ` +
        `Unknown split "${others[0]}"; use split: train (or point path at a directory with ${others[0]} files)`,
    });
  }
  if (!module)
    return peekFailure(
      'unreadable',
      `${abs}: not a data file format that datasets can load (json, jsonl, parquet, csv, arrow)`,
    );
  return peekFiles([abs], module, limits, warnings);
}

function positiveInt(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : dflt;
}
