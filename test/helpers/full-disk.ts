/** A full disk for tests: a small tmpfs (mounting one needs root) and a file that takes every free byte of it. */
import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why a full disk cannot be made here, or undefined when it can. */
export function fullDiskUnavailable(): string | undefined {
  if (process.getuid?.() !== 0)
    return `a full disk needs a small tmpfs, which only root can mount (running as uid ${process.getuid?.()})`;
  return undefined;
}

/** Mounts a tmpfs of `size` (e.g. `8m`) on a fresh folder; returns the folder and how to unmount it. */
export function smallTmpfs(size: string): { dir: string; unmount(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'twb-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return { dir, unmount: () => execFileSync('umount', ['-l', dir]) };
}

/** Takes every free byte of the file system `path` is on. */
export function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const chunk of [1 << 16, 4096, 512, 1]) {
      const bytes = new Uint8Array(chunk);
      try {
        for (;;) writeSync(fd, bytes);
      } catch {
        // full at this granularity; try smaller pieces
      }
    }
  } finally {
    closeSync(fd);
  }
}
