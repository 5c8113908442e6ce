/** A directory's files as `datasets` lists them: recursively, sorted, without hidden entries, bounded. */
import { promises as fsp, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import { statOrNull } from './small-files';

export const MAX_LISTED_FILES = 20_000;
export const MAX_LISTED_DIRS = 5_000;

export interface Listing {
  /** Relative POSIX paths, sorted, without hidden entries and `__dunder` directories. */
  files: string[];
  truncated: boolean;
}

export async function listFiles(root: string): Promise<Listing> {
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
