/** Small files read whole without throwing: a stat, a metadata text, a metadata JSON. */
import { promises as fsp } from 'node:fs';
import { stripBom } from './file-bytes';

const MiB = 1024 * 1024;
/** The largest README.md / dataset_info.json / state.json read. */
export const SMALL_META_FILE_MAX = 4 * MiB;

export async function statOrNull(p: string) {
  try {
    return await fsp.stat(p);
  } catch {
    return null;
  }
}

export async function readSmallText(p: string, limit: number): Promise<string | null> {
  const st = await statOrNull(p);
  if (!st?.isFile() || st.size > limit) return null;
  try {
    return await fsp.readFile(p, 'utf8');
  } catch {
    return null;
  }
}

/** Parsed JSON of a small file; `undefined` when absent, too big or invalid. */
export async function readSmallJson(p: string): Promise<unknown> {
  const text = await readSmallText(p, SMALL_META_FILE_MAX);
  if (text === null) return undefined;
  try {
    return JSON.parse(stripBom(text));
  } catch {
    return undefined;
  }
}
