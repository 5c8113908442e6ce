/**
 * The last steps of a job's `monitor/rollouts.jsonl` (what our runtime's monitor writes: one line per explorer step,
 * `{step, samples}`), as raw lines: the dashboard turns them into what it shows, run health counts their episodes.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface RolloutLine {
  step: number;
  /** The step's records as written; each is an object, its fields unchecked. */
  samples: Record<string, unknown>[];
}

/** How much of the end of the file is read: a step of long episodes with their tokens is a long line. */
const TAIL_BYTES = 8 << 20;

/**
 * The last `maxSteps` complete, parsable lines of `<jobDir>/monitor/rollouts.jsonl` (within its last 8 MiB), in file
 * order; none when it cannot be read. A restart line (`"restart": true`, a resumed run's first step) voids the
 * earlier lines at its step or later: they are the abandoned timeline's.
 */
export function rolloutLinesOnDisk(jobDir: string, maxSteps: number): RolloutLine[] {
  const file = join(jobDir, 'monitor', 'rollouts.jsonl');
  const out: RolloutLine[] = [];
  let fd: number | undefined;
  try {
    const size = statSync(file).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = new Uint8Array(len);
    fd = openSync(file, 'r');
    readSync(fd, buf, 0, len, size - len);
    const lines = new TextDecoder().decode(buf).split('\n');
    // The last element is '' after a complete line, or a line still being written; the first may be cut.
    let restartedAt = Infinity;
    for (let i = lines.length - 2; i >= (size > len ? 1 : 0) && out.length < maxSteps; i--) {
      try {
        const o = JSON.parse(lines[i]) as { step?: unknown; samples?: unknown; restart?: unknown };
        if (typeof o.step === 'number' && o.restart === true) restartedAt = Math.min(restartedAt, o.step);
        else if (typeof o.step === 'number' && o.step < restartedAt && Array.isArray(o.samples))
          out.push({
            step: o.step,
            samples: o.samples.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object'),
          });
      } catch {
        // A damaged line: try the one before.
      }
    }
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return out.reverse();
}
