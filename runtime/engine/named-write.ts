/**
 * `writeFileSync` whose errors name the file. Node names it when opening fails, but a write that runs out of space
 * throws `ENOSPC: no space left on device, write` with no path; the caller then cannot say which file it was.
 * Imports nothing but Node: the job lock and the run records write through it, and a process that only takes a job
 * lock must not load TensorFlow.js (test/runtime/rft/run/job-lock.test.ts keeps it so).
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';

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

/** Writes a file by writing a sibling temp file and renaming it over the target (the temp file gone on failure). */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw withPath(e, path);
  }
}
