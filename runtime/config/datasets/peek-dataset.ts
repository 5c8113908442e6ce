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
 * Never throws, never reads a whole large file: JSON Lines and CSV read at most `maxBytes`, a JSON document is parsed
 * only below a size limit, parquet reads the footer and the first rows of the first row group(s).
 */
import { promises as fsp, createReadStream, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import * as zlib from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import type { AsyncBuffer, Compressors, FileMetaData } from 'hyparquet' with { 'resolution-mode': 'import' };

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

export type PeekResult = { ok: true; peek: DatasetPeek } | { ok: false; reason: PeekFailureReason; message: string };

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

const MiB = 1024 * 1024;
const DEFAULT_MAX_ROWS = 20;
const DEFAULT_MAX_BYTES = MiB;
const DEFAULT_MAX_DOCUMENT_BYTES = 20 * MiB;
/** A parquet column whose chunks for the first rows are bigger than this is listed but not read. */
const PARQUET_COLUMN_MAX_BYTES = 32 * MiB;
const CHUNK_SIZE = 64 * 1024;
const MAX_LISTED_FILES = 20_000;
const MAX_LISTED_DIRS = 5_000;
const MAX_FILES_READ = 8;
const SMALL_META_FILE_MAX = 4 * MiB;

// ---------------------------------------------------------------------------------------------------------------
// Public API

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
    return fail('unreadable', `could not peek dataset '${String(path)}': ${errorText(e)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Driver

interface Limits {
  maxRows: number;
  maxBytes: number;
  maxDocumentBytes: number;
}

type Failure = { ok: false; reason: PeekFailureReason; message: string };

function fail(reason: PeekFailureReason, message: string): Failure {
  return { ok: false, reason, message };
}

async function peekDatasetUnsafe(rawPath: string, opts: PeekOptions): Promise<PeekResult> {
  if (typeof rawPath !== 'string' || rawPath.trim() === '') return fail('not-found', 'dataset path is empty');
  const path = rawPath.trim();
  const limits: Limits = {
    maxRows: positiveInt(opts.maxRows, DEFAULT_MAX_ROWS),
    maxBytes: positiveInt(opts.maxBytes, DEFAULT_MAX_BYTES),
    maxDocumentBytes: positiveInt(opts.maxDocumentBytes, DEFAULT_MAX_DOCUMENT_BYTES),
  };
  const splitExpr = typeof opts.split === 'string' && opts.split.trim() !== '' ? opts.split.trim() : 'train';
  const splits = parseSplitExpression(splitExpr);
  const subset = typeof opts.subsetName === 'string' && opts.subsetName.trim() !== '' ? opts.subsetName.trim() : null;

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(path);
  if (scheme) {
    const what = scheme[1].toLowerCase().startsWith('sqlite') ? 'a database URL' : 'a URL';
    return fail('remote', `'${path}' is ${what}, not a local dataset file or directory; not peeked`);
  }
  if (path.includes('${')) {
    return fail('not-found', `'${path}' contains an unresolved \${...} interpolation; resolve it before peeking`);
  }

  const abs = nodePath.resolve(opts.baseDir ?? '.', path);
  const st = await statOrNull(abs);
  if (!st) {
    if (looksLikeHubId(path)) {
      const first = path.split('/')[0];
      const firstStat = path.includes('/') ? await statOrNull(nodePath.resolve(opts.baseDir ?? '.', first)) : null;
      if (firstStat?.isDirectory()) {
        return fail(
          'not-found',
          `dataset path ${abs} does not exist (${first}/ exists locally, so '${path}' is taken for a local path, ` +
            `not a Hugging Face Hub id)`,
        );
      }
      return fail('remote', `'${path}' is not a local path; Trinity would load it from the Hugging Face Hub`);
    }
    return fail('not-found', `dataset path ${abs} does not exist`);
  }
  if (st.isFile()) return peekSingleFile(abs, splits, limits);
  if (st.isDirectory()) return peekDirectory(abs, splits, subset, limits);
  return fail('unreadable', `${abs} is neither a file nor a directory`);
}

// ---------------------------------------------------------------------------------------------------------------
// Split expressions: `train`, `train[:100]`, `train[10%:]`, `train+test`

function parseSplitExpression(expr: string): string[] {
  const names = expr
    .split('+')
    .map((p) => p.replace(/\[[^\]]*\]\s*$/, '').trim())
    .filter((p) => p !== '');
  return names.length > 0 ? [...new Set(names)] : ['train'];
}

// ---------------------------------------------------------------------------------------------------------------
// Extensions, as `datasets` maps them to builder modules

type Module =
  | 'json'
  | 'parquet'
  | 'csv'
  | 'arrow'
  | 'text'
  | 'imagefolder'
  | 'audiofolder'
  | 'videofolder'
  | 'pdffolder'
  | 'xml'
  | 'webdataset'
  | 'hdf5'
  | 'lance';

const EXTENSION_TO_MODULE: Record<string, Module> = {
  '.json': 'json',
  '.jsonl': 'json',
  '.parquet': 'parquet',
  '.geoparquet': 'parquet',
  '.gpq': 'parquet',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.arrow': 'arrow',
  '.txt': 'text',
  '.xml': 'xml',
  '.tar': 'webdataset',
  '.h5': 'hdf5',
  '.hdf5': 'hdf5',
  '.lance': 'lance',
  '.pdf': 'pdffolder',
};
for (const e of ['.png', '.jpg', '.jpeg', '.gif', '.bmp', '.webp', '.tif', '.tiff', '.ico', '.jp2', '.avif', '.heic']) {
  EXTENSION_TO_MODULE[e] = 'imagefolder';
}
for (const e of ['.wav', '.mp3', '.flac', '.ogg', '.opus', '.m4a', '.aiff', '.aif', '.au', '.wma']) {
  EXTENSION_TO_MODULE[e] = 'audiofolder';
}
for (const e of ['.mp4', '.avi', '.mov', '.mkv', '.webm', '.flv', '.wmv', '.mpeg', '.mpg']) {
  EXTENSION_TO_MODULE[e] = 'videofolder';
}
const HF_EXTENSIONS = new Set([...Object.keys(EXTENSION_TO_MODULE), '.zip']);
const COMPRESSION_EXTENSIONS = new Set(['.gz', '.bz2', '.xz', '.zst', '.lz4', '.zip']);
/** Files `datasets` never takes as data. */
const FILES_TO_IGNORE = new Set([
  'README.md',
  'config.json',
  'dataset_info.json',
  'dataset_infos.json',
  'dummy_data.zip',
  'dataset_dict.json',
]);

function suffixesOf(name: string): string[] {
  const base = name.split('/').pop() ?? name;
  return base
    .split('.')
    .slice(1)
    .map((s) => '.' + s.toLowerCase());
}

function isAllowedDataFile(rel: string): boolean {
  const base = rel.split('/').pop() ?? rel;
  if (FILES_TO_IGNORE.has(base)) return false;
  return suffixesOf(base).some((s) => HF_EXTENSIONS.has(s));
}

/** `datasets`' `infer_module_for_data_files_list`: the most common extension wins; parquet, jsonl, json, csv break ties. */
function inferModule(files: string[]): Module | null {
  const counts = new Map<string, number>();
  for (const f of files.slice(0, 200)) for (const s of suffixesOf(f)) counts.set(s, (counts.get(s) ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => {
    const key = ([ext, n]: [string, number]) => [
      n,
      ext === '.parquet' ? 1 : 0,
      ext === '.jsonl' ? 1 : 0,
      ext === '.json' ? 1 : 0,
      ext === '.csv' ? 1 : 0,
    ];
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return kb[i] - ka[i];
    return a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0;
  });
  for (const [ext] of ranked) {
    const m = EXTENSION_TO_MODULE[ext];
    if (m) return m;
  }
  return null;
}

function fileHasModule(file: string, module: Module): boolean {
  return suffixesOf(file).some((s) => EXTENSION_TO_MODULE[s] === module);
}

// ---------------------------------------------------------------------------------------------------------------
// A single file: the `train` split

async function peekSingleFile(abs: string, splits: string[], limits: Limits): Promise<PeekResult> {
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
    return fail(
      'unreadable',
      `${abs}: not a data file format that datasets can load (json, jsonl, parquet, csv, arrow)`,
    );
  return readFiles([abs], module, limits, warnings);
}

// ---------------------------------------------------------------------------------------------------------------
// A directory

async function peekDirectory(
  dir: string,
  splits: string[],
  subset: string | null,
  limits: Limits,
): Promise<PeekResult> {
  const saved = await peekSavedToDisk(dir, splits);
  if (saved) return saved;

  const warnings: PeekWarning[] = [];
  const listing = await listFiles(dir);
  if (listing.truncated) {
    warnings.push({
      code: 'listing-truncated',
      message:
        `${dir} holds more than ${MAX_LISTED_FILES} files or ${MAX_LISTED_DIRS} directories; ` +
        `split files were looked for among the first ones listed`,
    });
  }
  const dataFiles = listing.files.filter(isAllowedDataFile);

  // The files datasets would consider: all of them, or those under a README config's data_dir / the subset dir.
  let scope = { prefix: '', files: dataFiles };
  const within = (prefix: string) => ({
    prefix,
    files: dataFiles.filter((f) => f.startsWith(prefix + '/')).map((f) => f.slice(prefix.length + 1)),
  });
  let splitMap: SplitMap;
  let scopeLabel = dir;
  /** Explicit README data_files are authoritative: no looking for other files named after the split. */
  let explicitFiles = false;
  const meta = await readReadmeConfigs(dir);
  if (meta && meta.length > 0) {
    const chosen = chooseConfig(meta, subset);
    if ('error' in chosen) return fail('no-split-file', `${dir}: ${chosen.error}`);
    const cfg = chosen.config;
    if (cfg.dataDir && normalizeRel(cfg.dataDir)) scope = within(normalizeRel(cfg.dataDir));
    explicitFiles = cfg.dataFiles !== null;
    splitMap = cfg.dataFiles ? resolvePatternDict(cfg.dataFiles, scope.files) : defaultSplitMap(scope.files);
    scopeLabel = `${dir} (README.md config '${cfg.name}'${cfg.dataDir ? `, data_dir ${cfg.dataDir}` : ''})`;
  } else {
    if (subset !== null) {
      const sub = within(normalizeRel(subset));
      if (sub.prefix && sub.files.length > 0) {
        scope = sub;
        scopeLabel = `${dir}/${sub.prefix}`;
        warnings.push({
          code: 'subset-dir',
          message:
            `used ${sub.prefix}/ for subset_name '${subset}', but ${dir} has no README.md 'configs:' naming it: ` +
            `datasets.load_dataset ignores subset_name here and would read matching files of every subdirectory`,
        });
      }
    }
    splitMap = defaultSplitMap(scope.files);
  }
  const toDirRel = (f: string) => (scope.prefix ? `${scope.prefix}/${f}` : f);

  if (scope.files.length === 0) {
    return fail('no-split-file', `${scopeLabel} contains no data files (json, jsonl, parquet, csv, arrow)`);
  }
  if (splitMap.size === 0)
    return fail('no-split-file', `${scopeLabel}: no data files match the README.md data_files patterns`);

  // The format datasets infers, per split; all splits must agree.
  const modules = new Map<string, Module | null>();
  for (const [name, files] of splitMap) modules.set(name, inferModule(files));
  const distinct = [...new Set([...modules.values()].map((m) => m ?? 'none'))];
  if (distinct.length > 1) {
    warnings.push({
      code: 'mixed-formats',
      message:
        `splits of ${scopeLabel} use different formats (${[...modules].map(([s, m]) => `${s}: ${m ?? 'none'}`).join(', ')}); ` +
        `datasets.load_dataset refuses this ("Couldn't infer the same data file format for all splits")`,
    });
  }

  const files: string[] = [];
  let module: Module | null = null;
  for (const split of splits) {
    const known = splitMap.get(split);
    let found: string[] | undefined = known;
    if (!found) {
      const lenient = explicitFiles ? [] : lenientSplitFiles(split, scope.files);
      if (lenient.length === 0) {
        const available = [...splitMap.keys()].join(', ');
        return fail(
          'no-split-file',
          `${scopeLabel} has no files for split '${split}' (datasets sees split${splitMap.size === 1 ? '' : 's'}: ${available})`,
        );
      }
      const hfSplits = [...splitMap].filter(([, fs]) => lenient.some((f) => fs.includes(f))).map(([s]) => s);
      warnings.push({
        code: 'unknown-split',
        message:
          `datasets.load_dataset(split='${split}') fails with Unknown split: it reads ${scopeLabel} as split` +
          `${splitMap.size === 1 ? '' : 's'} ${[...splitMap.keys()].join(', ')}` +
          (hfSplits.length > 0 ? ` (the ${split} files belong to split '${hfSplits[0]}')` : '') +
          `; peeked ${lenient.slice(0, 3).join(', ')}${lenient.length > 3 ? ', ...' : ''}`,
      });
      found = lenient;
    }
    const m = modules.get(split) ?? inferModule(found);
    if (!m)
      return fail('unreadable', `${scopeLabel}: the files of split '${split}' are in no format that datasets can load`);
    module = module ?? m;
    for (const f of found) if (fileHasModule(f, module) && !files.includes(f)) files.push(f);
  }
  if (!module || files.length === 0)
    return fail('no-split-file', `${scopeLabel} has no data files for split '${splits.join('+')}'`);
  return readFiles(
    files.map((f) => nodePath.join(dir, ...toDirRel(f).split('/'))),
    module,
    limits,
    warnings,
  );
}

function normalizeRel(p: string): string {
  return p
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------------------------
// Directory listing

interface Listing {
  /** Relative POSIX paths, sorted, without hidden entries and `__dunder` directories. */
  files: string[];
  truncated: boolean;
}

async function listFiles(root: string): Promise<Listing> {
  const files: string[] = [];
  let truncated = false;
  const visited = new Set<string>();
  const walk = async (abs: string, rel: string): Promise<void> => {
    if (truncated) return;
    let real: string;
    try {
      real = await fsp.realpath(abs);
    } catch {
      return;
    }
    if (visited.has(real)) return;
    if (visited.size >= MAX_LISTED_DIRS) {
      truncated = true;
      return;
    }
    visited.add(real);
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(abs, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: [string, string][] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const childAbs = nodePath.join(abs, e.name);
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        const s = await statOrNull(childAbs);
        isDir = !!s?.isDirectory();
        isFile = !!s?.isFile();
      }
      if (isFile) {
        if (files.length >= MAX_LISTED_FILES) {
          truncated = true;
          return;
        }
        files.push(childRel);
      } else if (isDir && !e.name.startsWith('__')) {
        subdirs.push([childAbs, childRel]);
      }
    }
    for (const [a, r] of subdirs) await walk(a, r);
  };
  await walk(root, '');
  files.sort();
  return { files, truncated };
}

// ---------------------------------------------------------------------------------------------------------------
// Split resolution as in `datasets.data_files`

type SplitMap = Map<string, string[]>;

const SPLIT_KEYWORDS: [string, string[]][] = [
  ['train', ['train', 'training']],
  ['validation', ['validation', 'valid', 'dev', 'val']],
  ['test', ['test', 'testing', 'eval', 'evaluation']],
];
const SEP = '[-._ 0-9]';
const filenamePatterns = (k: string) => [`**/${k}${SEP}*`, `**/*${SEP}${k}${SEP}*`];
const dirNamePatterns = (k: string) => [
  `**/${k}/**`,
  `**/${k}${SEP}*/**`,
  `**/*${SEP}${k}/**`,
  `**/*${SEP}${k}${SEP}*/**`,
];
const SHARDED = /^data\/([^/]+?)-[0-9]{5}-of-[0-9]{5}[^/]*\.[^/]*$/;
const SPLIT_NAME = /^\w+(\.\w+)*$/;

/** `get_data_patterns` + resolution: sharded `data/` files, else split dirs, else split file names, else all → train. */
function defaultSplitMap(files: string[]): SplitMap {
  const sharded = new Map<string, string[]>();
  for (const f of files) {
    const m = SHARDED.exec(f);
    if (m && SPLIT_NAME.test(m[1])) push(sharded, m[1], f);
  }
  if (sharded.size > 0) {
    const order = ['train', 'validation', 'test'];
    const names = [
      ...order.filter((s) => sharded.has(s)),
      ...[...sharded.keys()].filter((s) => !order.includes(s)).sort(),
    ];
    return new Map(names.map((s) => [s, sharded.get(s)!]));
  }
  for (const patternsFor of [dirNamePatterns, filenamePatterns]) {
    const map: SplitMap = new Map();
    for (const [split, keywords] of SPLIT_KEYWORDS) {
      const matched = matchPatterns(
        keywords.flatMap((k) => patternsFor(k)),
        files,
      );
      if (matched.length > 0) map.set(split, matched);
    }
    if (map.size > 0) return map;
  }
  return files.length > 0 ? new Map([['train', [...files]]]) : new Map();
}

/** Files plainly named after a non-standard split (`eval.jsonl`, `data/eval-0000.parquet`, `eval/part.json`...). */
function lenientSplitFiles(split: string, files: string[]): string[] {
  if (!SPLIT_NAME.test(split)) return [];
  const k = split.replace(/\./g, '\\.');
  const dir = matchPatterns(dirNamePatterns(k), files);
  if (dir.length > 0) return dir;
  return matchPatterns(filenamePatterns(k), files);
}

function matchPatterns(patterns: string[], files: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of patterns) {
    const re = globToRegExp(p);
    for (const f of files) {
      if (!seen.has(f) && re.test(f)) {
        seen.add(f);
        out.push(f);
      }
    }
  }
  return out;
}

/** fsspec-style glob: `**\/` any directories (or none), `/**` anything below, `*` and `?` within a name, `[...]` classes. */
function globToRegExp(pattern: string): RegExp {
  const p = normalizeRel(pattern);
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        if (atStart && p[i + 2] === '/') {
          re += '(?:[^/]+/)*';
          i += 2;
        } else if (atStart && i + 2 === p.length) {
          re += '.*';
          i += 1;
        } else {
          re += '.*';
          i += 1;
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
      } else {
        let body = p.slice(i + 1, end);
        if (body.startsWith('!')) body = '^' + body.slice(1);
        re += '[' + body.replace(/\\/g, '\\\\') + ']';
        i = end;
      }
    } else if (c === '\\' && i + 1 < p.length) {
      re += '\\' + p[++i];
    } else {
      re += /[.+^${}()|\]\\]/.test(c) ? '\\' + c : c;
    }
  }
  try {
    return new RegExp('^' + re + '$');
  } catch {
    return /(?!)/;
  }
}

function push(m: Map<string, string[]>, k: string, v: string): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

// ---------------------------------------------------------------------------------------------------------------
// README.md `configs:` (Hub-style datasets downloaded with `huggingface-cli download --local-dir`)

interface MetaConfig {
  name: string;
  dataFiles: Map<string, string[]> | null;
  dataDir: string | null;
  isDefault: boolean;
}

async function readReadmeConfigs(dir: string): Promise<MetaConfig[] | null> {
  const readme = nodePath.join(dir, 'README.md');
  const text = await readSmallText(readme, SMALL_META_FILE_MAX);
  if (text === null) return null;
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return null;
  let data: unknown;
  try {
    data = parseYaml(m[1]);
  } catch {
    return null;
  }
  if (!isPlainObject(data) || !Array.isArray(data.configs)) return null;
  const out: MetaConfig[] = [];
  for (const c of data.configs) {
    if (!isPlainObject(c)) continue;
    const name = typeof c.config_name === 'string' ? c.config_name : 'default';
    out.push({
      name,
      dataFiles: c.data_files === undefined || c.data_files === null ? null : sanitizePatterns(c.data_files),
      dataDir: typeof c.data_dir === 'string' ? c.data_dir : null,
      isDefault: c.default === true,
    });
  }
  return out;
}

/** `datasets.data_files.sanitize_patterns`: a string or list → train; a list of {split, path}; a dict split → paths. */
function sanitizePatterns(v: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const asList = (x: unknown): string[] =>
    typeof x === 'string' ? [x] : Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : [];
  if (typeof v === 'string') out.set('train', [v]);
  else if (Array.isArray(v)) {
    if (v.every((x) => isPlainObject(x))) {
      for (const x of v as Record<string, unknown>[]) {
        const split = typeof x.split === 'string' ? x.split : 'train';
        out.set(split, [...(out.get(split) ?? []), ...asList(x.path)]);
      }
    } else out.set('train', asList(v));
  } else if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) out.set(k, asList(x));
  }
  return out;
}

function resolvePatternDict(patterns: Map<string, string[]>, files: string[]): SplitMap {
  const out: SplitMap = new Map();
  for (const [split, ps] of patterns) {
    const matched = matchPatterns(ps, files);
    if (matched.length > 0) out.set(split, matched);
  }
  return out;
}

function chooseConfig(configs: MetaConfig[], subset: string | null): { config: MetaConfig } | { error: string } {
  const names = configs.map((c) => c.name);
  if (subset !== null) {
    const c = configs.find((x) => x.name === subset);
    if (!c)
      return {
        error: `subset_name '${subset}' is not a config of this dataset (README.md configs: ${names.join(', ')})`,
      };
    return { config: c };
  }
  const defaults = configs.filter((c) => c.isDefault || c.name === 'default');
  if (defaults.length === 1) return { config: defaults[0] };
  if (defaults.length > 1)
    return { error: `README.md marks several configs as default (${defaults.map((c) => c.name).join(', ')})` };
  if (configs.length === 1) return { config: configs[0] };
  return { error: `subset_name is missing: datasets needs one of the README.md configs (${names.join(', ')})` };
}

// ---------------------------------------------------------------------------------------------------------------
// `save_to_disk` directories

async function peekSavedToDisk(dir: string, splits: string[]): Promise<PeekResult | null> {
  const dictJson = await readSmallJson(nodePath.join(dir, 'dataset_dict.json'));
  if (dictJson !== undefined) {
    const names =
      isPlainObject(dictJson) && Array.isArray(dictJson.splits)
        ? dictJson.splits.filter((s): s is string => typeof s === 'string')
        : [];
    const split = splits[0];
    if (!names.includes(split) || !(await statOrNull(nodePath.join(dir, split)))?.isDirectory()) {
      return fail(
        'no-split-file',
        `${dir} was written by datasets' save_to_disk (a DatasetDict) and has no split '${split}' (splits: ${names.join(', ') || 'none'})`,
      );
    }
    return savedToDiskPeek(nodePath.join(dir, split), `${dir} (split '${split}')`);
  }
  const hasInfo = !!(await statOrNull(nodePath.join(dir, 'dataset_info.json')))?.isFile();
  const hasState = !!(await statOrNull(nodePath.join(dir, 'state.json')))?.isFile();
  if (!hasInfo && !hasState) return null;
  let arrow = false;
  try {
    arrow = (await fsp.readdir(dir)).some((n) => n.toLowerCase().endsWith('.arrow'));
  } catch {
    arrow = false;
  }
  if (!arrow) return null;
  return savedToDiskPeek(dir, dir);
}

async function savedToDiskPeek(dir: string, label: string): Promise<PeekResult> {
  const info = await readSmallJson(nodePath.join(dir, 'dataset_info.json'));
  const state = await readSmallJson(nodePath.join(dir, 'state.json'));
  const columns = isPlainObject(info) && isPlainObject(info.features) ? Object.keys(info.features) : [];
  let files: string[] = [];
  if (isPlainObject(state) && Array.isArray(state._data_files)) {
    files = state._data_files
      .map((f) => (isPlainObject(f) && typeof f.filename === 'string' ? nodePath.join(dir, f.filename) : null))
      .filter((f): f is string => f !== null);
  }
  if (files.length === 0) {
    try {
      files = (await fsp.readdir(dir))
        .filter((n) => n.toLowerCase().endsWith('.arrow'))
        .sort()
        .map((n) => nodePath.join(dir, n));
    } catch {
      files = [];
    }
  }
  return {
    ok: true,
    peek: {
      files,
      format: 'arrow',
      rows: [],
      columns,
      warnings: [
        {
          code: 'saved-to-disk',
          message:
            `arrow, not peeked: ${label} was written by datasets' save_to_disk; ` +
            `datasets.load_dataset (which Trinity uses) cannot load it, it needs load_from_disk` +
            (columns.length > 0 ? '; columns come from dataset_info.json' : ''),
        },
      ],
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading rows

async function readFiles(
  files: string[],
  module: Module,
  limits: Limits,
  warnings: PeekWarning[],
): Promise<PeekResult> {
  const done = (peek: Omit<DatasetPeek, 'warnings'>): PeekResult => ({
    ok: true,
    peek: warnings.length > 0 ? { ...peek, warnings } : peek,
  });
  if (module === 'arrow') {
    warnings.push({
      code: 'rows-not-read',
      message: 'arrow, not peeked: rows and columns of .arrow files are not read',
    });
    return done({ files, format: 'arrow', rows: [], columns: [] });
  }
  if (module !== 'json' && module !== 'parquet' && module !== 'csv') {
    return fail(
      'unreadable',
      `${files[0]}: datasets would load these files with its '${module}' builder; peeking supports json, jsonl, parquet and csv`,
    );
  }

  const rows: Record<string, unknown>[] = [];
  const columns: string[] = [];
  const addColumns = (cs: Iterable<string>) => {
    for (const c of cs) if (!columns.includes(c)) columns.push(c);
  };
  let format: DatasetFormat | null = null;
  for (const file of files.slice(0, MAX_FILES_READ)) {
    const want = limits.maxRows - rows.length;
    const compression = compressionOf(file);
    if (compression && compression !== '.gz') {
      return fail('unreadable', `${file}: ${compression}-compressed files are not peeked (only .gz)`);
    }
    let r: FileRead | Failure;
    if (module === 'parquet') r = await readParquet(file, want);
    else if (module === 'csv') r = await readCsv(file, want, limits, suffixesOf(file).includes('.tsv') ? '\t' : ',');
    else r = await readJsonFile(file, want, limits);
    if ('ok' in r) return r;
    format = format ?? r.format;
    rows.push(...r.rows.slice(0, want));
    addColumns(r.columns);
    warnings.push(...r.warnings);
    if (rows.length >= limits.maxRows) break;
  }
  return done({ files, format: format ?? (module === 'json' ? 'jsonl' : module), rows, columns });
}

interface FileRead {
  format: DatasetFormat;
  rows: Record<string, unknown>[];
  columns: string[];
  warnings: PeekWarning[];
}

function compressionOf(file: string): string | null {
  const s = suffixesOf(file);
  const last = s[s.length - 1];
  return last && COMPRESSION_EXTENSIONS.has(last) ? last : null;
}

// --- byte source: plain file or gunzip stream, read in chunks ---

interface ChunkSource {
  next(): Promise<Uint8Array | null>;
  close(): Promise<void>;
}

async function openSource(file: string): Promise<ChunkSource> {
  if (compressionOf(file) === '.gz') {
    const stream = createReadStream(file).pipe(zlib.createGunzip());
    const it = stream[Symbol.asyncIterator]();
    return {
      async next() {
        const r = await it.next();
        return r.done ? null : asBytes(r.value as Buffer);
      },
      async close() {
        stream.destroy();
      },
    };
  }
  const fh = await fsp.open(file, 'r');
  let pos = 0;
  return {
    async next() {
      const buf = new Uint8Array(CHUNK_SIZE);
      const { bytesRead } = await fh.read(buf, 0, CHUNK_SIZE, pos);
      if (bytesRead === 0) return null;
      pos += bytesRead;
      return buf.subarray(0, bytesRead);
    },
    async close() {
      await fh.close();
    },
  };
}

/** Reads whole (decompressed) content if it is at most `limit` bytes; otherwise null. */
async function readWhole(file: string, limit: number): Promise<Uint8Array | null> {
  const src = await openSource(file);
  try {
    const parts: Uint8Array[] = [];
    let n = 0;
    for (let c = await src.next(); c; c = await src.next()) {
      n += c.length;
      if (n > limit) return null;
      parts.push(c);
    }
    return concatBytes(parts);
  } finally {
    await src.close();
  }
}

/** A Buffer seen as a plain Uint8Array (same memory). */
function asBytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

const utf8Decoder = new TextDecoder('utf-8');
function decodeUtf8(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return utf8Decoder.decode(bytes.subarray(start, end));
}

/** Whether the first non-blank character (after a BOM) is `[`; false while only blanks have been seen. */
function startsWithBracket(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return i < bytes.length && bytes[i] === 0x5b;
}

function stripBom(s: string): string {
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

// --- JSON / JSON Lines ---

/**
 * As `datasets`' json builder: content is read as JSON Lines (one object per line); when that fails at the first line,
 * as one JSON document (a list of records, or a dict of columns, as pandas.read_json does).
 */
async function readJsonFile(file: string, want: number, limits: Limits): Promise<FileRead | Failure> {
  let src: ChunkSource;
  try {
    src = await openSource(file);
  } catch (e) {
    return fail('unreadable', `${file}: ${errorText(e)}`);
  }
  const rows: Record<string, unknown>[] = [];
  const columns: string[] = [];
  // An object, so that TypeScript does not narrow it across the takeLine closure.
  const state: { mode: 'unknown' | 'lines' | 'document' } = { mode: 'unknown' };
  let pending: Uint8Array = new Uint8Array(0);
  let total = 0;
  let lineNo = 0;
  let eof = false;
  let lineError: Failure | null = null;
  let firstLineProblem = '';
  const firstLineCap = Math.max(limits.maxBytes, limits.maxDocumentBytes);

  const takeLine = (line: string): 'continue' | 'stop' => {
    lineNo++;
    const text = (lineNo === 1 ? stripBom(line) : line).replace(/\r$/, '');
    if (text.trim() === '') return 'continue';
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      if (state.mode === 'unknown') {
        state.mode = 'document';
        firstLineProblem = `line ${lineNo} is not valid JSON: ${jsonErrorText(e)}`;
        return 'stop';
      }
      lineError = fail('unreadable', `${file}: line ${lineNo} is not valid JSON: ${jsonErrorText(e)}`);
      return 'stop';
    }
    if (!isPlainObject(v)) {
      if (state.mode === 'unknown') {
        state.mode = 'document';
        firstLineProblem = `line ${lineNo} is ${Array.isArray(v) ? 'an array' : 'not'} a JSON object`;
        return 'stop';
      }
      lineError = fail(
        'unreadable',
        `${file}: line ${lineNo} is not a JSON object (JSON Lines need one object per line)`,
      );
      return 'stop';
    }
    state.mode = 'lines';
    rows.push(v);
    for (const k of Object.keys(v)) if (!columns.includes(k)) columns.push(k);
    return rows.length >= want ? 'stop' : 'continue';
  };

  try {
    outer: while (true) {
      const chunk = await src.next();
      if (chunk === null) eof = true;
      else {
        total += chunk.length;
        pending = pending.length === 0 ? chunk : concatBytes([pending, chunk]);
      }
      if (state.mode === 'unknown' && startsWithBracket(pending)) {
        // A top-level array: never JSON Lines (whose lines are objects), so it is one document.
        state.mode = 'document';
        firstLineProblem = 'the file starts with [';
        break;
      }
      let start = 0;
      for (let nl = pending.indexOf(10, start); nl >= 0; nl = pending.indexOf(10, start)) {
        const r = takeLine(decodeUtf8(pending, start, nl));
        start = nl + 1;
        if (r === 'stop') break outer;
      }
      pending = pending.subarray(start);
      if (eof) {
        if (pending.length > 0) takeLine(decodeUtf8(pending));
        pending = new Uint8Array(0);
        break;
      }
      if (state.mode === 'lines' && total >= limits.maxBytes) break;
      if (state.mode === 'unknown' && total >= firstLineCap) break;
    }
  } catch (e) {
    return fail('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await src.close();
  }
  if (lineError) return lineError;
  if (state.mode === 'lines') return { format: 'jsonl', rows, columns, warnings: [] };
  if (state.mode === 'unknown') {
    if (eof) return { format: 'jsonl', rows: [], columns: [], warnings: [] }; // empty file
    return fail('unreadable', `${file}: the first line is longer than ${formatBytes(firstLineCap)}; not peeked`);
  }
  return readJsonDocument(file, want, limits, firstLineProblem);
}

/** The whole file as one JSON document, as pandas.read_json reads it when JSON Lines parsing fails. */
async function readJsonDocument(
  file: string,
  want: number,
  limits: Limits,
  firstLineProblem: string,
): Promise<FileRead | Failure> {
  let buf: Uint8Array | null;
  try {
    buf = await readWhole(file, limits.maxDocumentBytes);
  } catch (e) {
    return fail('unreadable', `${file}: ${errorText(e)}`);
  }
  if (buf === null) {
    return fail(
      'unreadable',
      `${file}: not JSON Lines (${firstLineProblem}), so it must be one JSON document, and it is larger than the ` +
        `${formatBytes(limits.maxDocumentBytes)} peek limit for parsing a document whole; ` +
        `JSON Lines (one object per line) can be peeked at any size`,
    );
  }
  const text = stripBom(decodeUtf8(buf));
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail(
      'unreadable',
      `${file}: not JSON Lines (${firstLineProblem}) and not one JSON document either (${jsonErrorText(e, text)})`,
    );
  }
  const warnings: PeekWarning[] = [];
  let records: Record<string, unknown>[];
  if (Array.isArray(doc)) {
    if (doc.every(isPlainObject)) records = doc as Record<string, unknown>[];
    else if (doc.every((x) => x === null || typeof x !== 'object')) records = doc.map((x) => ({ text: x }));
    else return fail('unreadable', `${file}: a top-level JSON array must hold objects (one per record)`);
  } else if (isPlainObject(doc)) {
    const cols = dictOfColumnsToRecords(doc);
    if (!cols) {
      return fail(
        'unreadable',
        `${file}: a top-level JSON object must map column names to equally long arrays (or use JSON Lines)`,
      );
    }
    records = cols;
    const keys = Object.keys(doc);
    const only = keys.length === 1 ? doc[keys[0]] : undefined;
    if (Array.isArray(only) && only.length > 0 && only.every(isPlainObject)) {
      warnings.push({
        code: 'json-field',
        message:
          `${file} holds its records under "${keys[0]}": datasets reads this as a single column '${keys[0]}' ` +
          `(Trinity passes no field= option); write the records as a top-level array or JSON Lines`,
      });
    }
  } else {
    return fail('unreadable', `${file}: a JSON document must be an array of records or an object of columns`);
  }
  const columns: string[] = [];
  for (const r of records) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return { format: 'json', rows: records.slice(0, want), columns, warnings };
}

/** pandas.read_json on an object: `{col: [..]}` (scalars broadcast) or `{col: {index: value}}`. */
export function dictOfColumnsToRecords(doc: Record<string, unknown>): Record<string, unknown>[] | null {
  const keys = Object.keys(doc);
  if (keys.length === 0) return [];
  const values = keys.map((k) => doc[k]);
  if (values.every(isPlainObject)) {
    const index: string[] = [];
    for (const v of values) for (const i of Object.keys(v as object)) if (!index.includes(i)) index.push(i);
    return index.map((i) => Object.fromEntries(keys.map((k) => [k, (doc[k] as Record<string, unknown>)[i] ?? null])));
  }
  const arrays = values.filter(Array.isArray) as unknown[][];
  if (arrays.length === 0 || values.some(isPlainObject)) return null;
  const n = arrays[0].length;
  if (arrays.some((a) => a.length !== n)) return null;
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++)
    out.push(Object.fromEntries(keys.map((k) => [k, Array.isArray(doc[k]) ? (doc[k] as unknown[])[i] : doc[k]])));
  return out;
}

// --- CSV ---

async function readCsv(file: string, want: number, limits: Limits, sep: string): Promise<FileRead | Failure> {
  let src: ChunkSource;
  try {
    src = await openSource(file);
  } catch (e) {
    return fail('unreadable', `${file}: ${errorText(e)}`);
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
    return fail('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await src.close();
  }
  const cut = eof ? buf.length : buf.lastIndexOf(10) + 1;
  const text = stripBom(decodeUtf8(buf, 0, Math.max(cut, 0)));
  const records = parseCsv(text, sep, eof);
  if (records.length === 0) return { format: 'csv', rows: [], columns: [], warnings: [] };
  const header = records[0].map((h, i) => (h.trim() === '' ? `Unnamed: ${i}` : h));
  const rows = records.slice(1, want + 1).map((rec) => Object.fromEntries(header.map((h, i) => [h, rec[i] ?? null])));
  return { format: 'csv', rows, columns: header, warnings: [] };
}

/**
 * RFC 4180 records; blank lines skipped; a record cut off by the end of a partial read is dropped.
 * `recordLines`, when given, receives the 1-based line on which each returned record starts.
 */
export function parseCsv(text: string, sep: string, complete: boolean, recordLines?: number[]): string[][] {
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

// --- Parquet ---

type Hyparquet = typeof import('hyparquet', { with: { 'resolution-mode': 'import' } });
let hyparquetModule: Promise<Hyparquet> | null = null;
function loadHyparquet(): Promise<Hyparquet> {
  hyparquetModule ??= import('hyparquet');
  return hyparquetModule;
}

/** Decompressors for hyparquet beyond its built-in snappy: gzip, brotli and (where Node has it) zstd. */
export function compressors(): Compressors {
  const c: Compressors = {
    GZIP: (input) => asBytes(zlib.gunzipSync(input)),
    BROTLI: (input) => asBytes(zlib.brotliDecompressSync(input)),
  };
  const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Uint8Array) => Buffer }).zstdDecompressSync;
  if (typeof zstd === 'function') c.ZSTD = (input) => asBytes(zstd(input));
  return c;
}

async function readParquet(file: string, want: number): Promise<FileRead | Failure> {
  let fh: Awaited<ReturnType<typeof fsp.open>> | null = null;
  try {
    const hp = await loadHyparquet();
    fh = await fsp.open(file, 'r');
    const handle = fh;
    const size = (await handle.stat()).size;
    if (size < 12) return fail('unreadable', `${file} is not a parquet file (${size} bytes)`);
    const asyncBuffer: AsyncBuffer = {
      byteLength: size,
      async slice(start: number, end?: number): Promise<ArrayBuffer> {
        const stop = Math.min(end ?? size, size);
        const len = Math.max(0, stop - start);
        const ab = new ArrayBuffer(len);
        let off = 0;
        while (off < len) {
          const { bytesRead } = await handle.read(new Uint8Array(ab, off, len - off), 0, len - off, start + off);
          if (bytesRead === 0) break;
          off += bytesRead;
        }
        return ab;
      },
    };
    let metadata: FileMetaData;
    try {
      metadata = await hp.parquetMetadataAsync(asyncBuffer, { initialFetchSize: Math.min(size, 64 * 1024) });
    } catch (e) {
      return fail('unreadable', `${file} is not a readable parquet file: ${errorText(e)}`);
    }
    const columns = hp.parquetSchema(metadata).children.map((c) => c.element.name);
    const warnings: PeekWarning[] = [];
    const rowEnd = Math.min(want, Number(metadata.num_rows));
    if (rowEnd <= 0) return { format: 'parquet', rows: [], columns, warnings };

    // Size and codec of each top-level column over the row groups holding the first rows.
    const supported = new Set(['UNCOMPRESSED', 'SNAPPY', ...Object.keys(compressors())]);
    const bytes = new Map<string, number>();
    const badCodec = new Map<string, string>();
    let start = 0;
    for (const rg of metadata.row_groups) {
      if (start >= rowEnd) break;
      start += Number(rg.num_rows);
      for (const chunk of rg.columns) {
        const md = chunk.meta_data;
        if (!md) continue;
        const top = md.path_in_schema[0];
        bytes.set(top, (bytes.get(top) ?? 0) + Number(md.total_compressed_size));
        if (!supported.has(md.codec)) badCodec.set(top, md.codec);
      }
    }
    const tooBig = columns.filter((c) => (bytes.get(c) ?? 0) > PARQUET_COLUMN_MAX_BYTES);
    const readable = columns.filter((c) => !tooBig.includes(c) && !badCodec.has(c));
    if (badCodec.size > 0) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: values of ${[...badCodec].map(([c, k]) => `'${c}' (${k})`).join(', ')} not read: compression codec not supported here`,
      });
    }
    if (tooBig.length > 0) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: values of ${tooBig.map((c) => `'${c}'`).join(', ')} not read: column chunks over ${formatBytes(PARQUET_COLUMN_MAX_BYTES)}`,
      });
    }
    if (readable.length === 0) return { format: 'parquet', rows: [], columns, warnings };
    let rows: Record<string, unknown>[];
    try {
      rows = await hp.parquetReadObjects({
        file: asyncBuffer,
        metadata,
        columns: readable.length === columns.length ? undefined : readable,
        rowStart: 0,
        rowEnd,
        utf8: false,
        compressors: compressors(),
        useOffsetIndex: true,
      });
    } catch (e) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: rows not read (${errorText(e)}); columns come from the schema`,
      });
      rows = [];
    }
    return { format: 'parquet', rows: rows.map((r) => ({ ...r })), columns, warnings };
  } catch (e) {
    return fail('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers

function positiveInt(v: number | undefined, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.floor(v) : dflt;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function statOrNull(p: string) {
  try {
    return await fsp.stat(p);
  } catch {
    return null;
  }
}

async function readSmallText(p: string, limit: number): Promise<string | null> {
  const st = await statOrNull(p);
  if (!st?.isFile() || st.size > limit) return null;
  try {
    return await fsp.readFile(p, 'utf8');
  } catch {
    return null;
  }
}

/** Parsed JSON of a small file; `undefined` when absent, too big or invalid. */
async function readSmallJson(p: string): Promise<unknown> {
  const text = await readSmallText(p, SMALL_META_FILE_MAX);
  if (text === null) return undefined;
  try {
    return JSON.parse(stripBom(text));
  } catch {
    return undefined;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** JSON.parse's message, with "at position N" turned into a line:column when the text is at hand. */
function jsonErrorText(e: unknown, text?: string): string {
  const msg = errorText(e);
  const m = /at position (\d+)/.exec(msg);
  if (!m || text === undefined) return msg;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `${msg} (line ${line}, column ${col})`;
}

function formatBytes(n: number): string {
  return n >= MiB ? `${Math.round((n / MiB) * 10) / 10} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}
