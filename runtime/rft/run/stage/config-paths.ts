/** Where the paths of a config point on this machine: relative paths against the config's directory. */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Config, InferenceModelConfig } from '../../../config/types.generated';

/** A local path from the config: tried against the config's directory, then the working directory. */
export function localPath(p: string, configDir: string): string {
  const expanded = p.replace(/^~(?=\/|$)/, process.env.HOME ?? '~');
  if (isAbsolute(expanded)) return expanded;
  for (const base of [configDir, process.cwd()]) {
    const candidate = resolve(base, expanded);
    if (existsSync(candidate)) return candidate;
  }
  return resolve(configDir, expanded);
}

/** A buffer section with its `path` made absolute against the config's directory (plain paths and sqlite URLs). */
export function withAbsolutePath<T extends { path: string | null }>(section: T, configDir: string): T {
  const p = section.path;
  if (!p) return section;
  const sqlite = /^sqlite:\/\/\/(.*)$/.exec(p);
  if (sqlite) {
    const file = sqlite[1];
    return file.startsWith('/') ? section : { ...section, path: `sqlite:///${resolve(configDir, file)}` };
  }
  if (/^[a-z]+:\/\//.test(p)) return section;
  return { ...section, path: isAbsolute(p) ? p : resolve(configDir, p) };
}

/**
 * An experience buffer section with its `path` made absolute. A queue's (where it persists, `sqlite:///x.db` or a
 * JSON lines file) against the working directory in every mode, as Trinity's queue opens it (SQLAlchemy and `open`
 * take relative paths from the process's directory, trinity/buffer/storage/queue.py); the sql and file storages
 * against the config's directory.
 */
export function withAbsoluteBufferPath<T extends { path: string | null; storage_type?: string }>(
  section: T,
  configDir: string,
): T {
  return withAbsolutePath(section, isQueue(section) ? process.cwd() : configDir);
}

export function isQueue(section: { storage_type?: string }): boolean {
  return String(section.storage_type ?? 'queue').toLowerCase() === 'queue';
}

/** The config with each auxiliary model's `model_path` that names a local directory made absolute (hub ids stay). */
export function withAbsoluteAuxiliaryPaths(cfg: Config, configDir: string): Config {
  const aux = cfg.explorer.auxiliary_models;
  if (!aux.length) return cfg;
  const absolute = (m: InferenceModelConfig): InferenceModelConfig => {
    if (!m.model_path) return m;
    const p = localPath(m.model_path, configDir);
    return existsSync(p) ? { ...m, model_path: p } : m;
  };
  return { ...cfg, explorer: { ...cfg.explorer, auxiliary_models: aux.map(absolute) } };
}
