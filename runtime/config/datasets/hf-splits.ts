/**
 * Which files of a directory make up each split when nothing names them, as `datasets.data_files` decides:
 * `data/<split>-NNNNN-of-NNNNN.*` shards, then split-named directories, then split-named files, else all → train.
 */
import { matchPatterns } from './fsspec-glob';

/** Split name → its files (relative POSIX paths), in the order `datasets` lists the splits. */
export type SplitMap = Map<string, string[]>;

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
export function defaultSplitMap(files: string[]): SplitMap {
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
export function lenientSplitFiles(split: string, files: string[]): string[] {
  if (!SPLIT_NAME.test(split)) return [];
  const k = split.replace(/\./g, '\\.');
  const dir = matchPatterns(dirNamePatterns(k), files);
  if (dir.length > 0) return dir;
  return matchPatterns(filenamePatterns(k), files);
}

function push(m: Map<string, string[]>, k: string, v: string): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

/** README `data_files` patterns per split → the files each matches (a split matching none is left out). */
export function resolvePatternDict(patterns: Map<string, string[]>, files: string[]): SplitMap {
  const out: SplitMap = new Map();
  for (const [split, ps] of patterns) {
    const matched = matchPatterns(ps, files);
    if (matched.length > 0) out.set(split, matched);
  }
  return out;
}
