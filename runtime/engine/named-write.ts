/**
 * `writeFileSync` whose errors name the file. Node names it when opening fails, but a write that runs out of space
 * throws `ENOSPC: no space left on device, write` with no path; the caller then cannot say which file it was.
 */
import { writeFileSync } from 'node:fs';

export function writeFileNamed(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data);
  } catch (e) {
    throw withPath(e, path);
  }
}

/** Records `path` on a Node error that lacks one (the `path` property Node sets when it knows the file). */
export function withPath(e: unknown, path: string): unknown {
  if (e && typeof e === 'object' && typeof (e as { path?: unknown }).path !== 'string')
    (e as { path?: string }).path = path;
  return e;
}
