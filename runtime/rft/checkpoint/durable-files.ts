/**
 * Writes that survive a crash of the machine, not only of the process: a rename is atomic, but until the file's data
 * and its directory entry are flushed (fsync) the kernel may lose either, leaving a pointer to a file whose blocks
 * never reached the disk. The order used: write, fsync the file, rename, fsync the directory.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { withPath } from '../../engine/named-write';

/** Flushes a file's or a directory's contents (a directory: its entries, i.e. renames into it) to the disk. */
export function fsyncPath(path: string): void {
  withFd(path, 'r', (fd) => fsyncSync(fd));
}

/** Writes `data` to `path` and flushes it before returning (the file is created or replaced in place). */
export function writeFileSynced(path: string, data: string | Uint8Array): void {
  withFd(path, 'w', (fd) => {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  });
}

/** Opens `path`, hands its descriptor to `use` and closes it; an error names the file. */
function withFd(path: string, flags: string, use: (fd: number) => void): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, flags);
    use(fd);
  } catch (e) {
    throw withPath(e, path);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Replaces `path` atomically and durably: a synced sibling temp file renamed over it, then the directory synced. */
export function replaceFileDurably(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSynced(tmp, data);
  renameSync(tmp, path);
  fsyncPath(dirname(path));
}
