/**
 * The `configs:` of a dataset directory's README.md YAML header (Hub-style datasets downloaded with
 * `huggingface-cli download --local-dir`): each subset's data_files per split and data_dir, and which one is chosen.
 */
import * as nodePath from 'node:path';
import { parseYamlDocument } from '../load/yaml-document';
import { isPlainObject } from './json-records';
import { readSmallText, SMALL_META_FILE_MAX } from './small-files';

export interface MetaConfig {
  name: string;
  dataFiles: Map<string, string[]> | null;
  dataDir: string | null;
  isDefault: boolean;
}

export async function readReadmeConfigs(dir: string): Promise<MetaConfig[] | null> {
  const readme = nodePath.join(dir, 'README.md');
  const text = await readSmallText(readme, SMALL_META_FILE_MAX);
  if (text === null) return null;
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) return null;
  let data: unknown;
  try {
    const doc = parseYamlDocument(m[1]);
    if (doc.errors.length) return null;
    data = doc.toJS();
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

/** The config `subset_name` selects, else the default one, as `datasets` picks it; or why there is none. */
export function chooseConfig(configs: MetaConfig[], subset: string | null): { config: MetaConfig } | { error: string } {
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
