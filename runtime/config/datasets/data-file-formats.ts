/** File extensions as `datasets` maps them to its builder modules, and which files of a directory count as data. */

export type BuilderModule =
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

const EXTENSION_TO_MODULE: Record<string, BuilderModule> = {
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
export const HF_EXTENSIONS = new Set([...Object.keys(EXTENSION_TO_MODULE), '.zip']);
export const COMPRESSION_EXTENSIONS = new Set(['.gz', '.bz2', '.xz', '.zst', '.lz4', '.zip']);
/** Files `datasets` never takes as data. */
const FILES_TO_IGNORE = new Set([
  'README.md',
  'config.json',
  'dataset_info.json',
  'dataset_infos.json',
  'dummy_data.zip',
  'dataset_dict.json',
]);

export function suffixesOf(name: string): string[] {
  const base = name.split('/').pop() ?? name;
  return base
    .split('.')
    .slice(1)
    .map((s) => '.' + s.toLowerCase());
}

export function isAllowedDataFile(rel: string): boolean {
  const base = rel.split('/').pop() ?? rel;
  if (FILES_TO_IGNORE.has(base)) return false;
  return suffixesOf(base).some((s) => HF_EXTENSIONS.has(s));
}

/** `datasets`' `infer_module_for_data_files_list`: the most common extension wins; parquet, jsonl, json, csv break ties. */
export function inferModule(files: string[]): BuilderModule | null {
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

export function fileHasModule(file: string, module: BuilderModule): boolean {
  return suffixesOf(file).some((s) => EXTENSION_TO_MODULE[s] === module);
}

/** The compression suffix (`.gz`, `.zst`, ...) a file name ends with, or null. */
export function compressionOf(file: string): string | null {
  const s = suffixesOf(file);
  const last = s[s.length - 1];
  return last && COMPRESSION_EXTENSIONS.has(last) ? last : null;
}
