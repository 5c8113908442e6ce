/**
 * The last steps of a job's rollout records, as raw lines: `monitor/rollouts.jsonl` (what our runtime's monitor writes:
 * one line per explorer step, `{step, samples}`) and `monitor/eval-rollouts.jsonl` (one line per evaluation and eval
 * taskset, `{step, role, eval, samples}`). The dashboard turns them into what it shows, run health counts the
 * explorer's episodes.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface RolloutLine {
  step: number;
  /** The step's records as written; each is an object, its fields unchecked. */
  samples: Record<string, unknown>[];
}

/** An evaluation's records of one eval taskset: the role whose metrics hold its numbers, and the taskset's name. */
export interface EvalRolloutLine extends RolloutLine {
  role: string;
  eval: string;
}

/** How much of the end of a file is read: a step of long episodes with their tokens is a long line. */
const TAIL_BYTES = 8 << 20;

/**
 * The last `maxSteps` complete, parsable lines of `<jobDir>/monitor/rollouts.jsonl` (within its last 8 MiB), in file
 * order; none when it cannot be read. A restart line (`"restart": true`, a resumed run's first step) voids the
 * earlier lines at its step or later: they are the abandoned timeline's.
 */
export function rolloutLinesOnDisk(jobDir: string, maxSteps: number): RolloutLine[] {
  return linesOf(
    join(jobDir, 'monitor', 'rollouts.jsonl'),
    maxSteps,
    () => '',
    (o, samples) => ({ step: o.step, samples }),
  );
}

/**
 * The last `maxLines` evaluations' lines of `<jobDir>/monitor/eval-rollouts.jsonl`, in file order. Each role and
 * taskset is a timeline of its own: its restart line voids only that timeline's earlier lines at its step or later.
 */
export function evalRolloutLinesOnDisk(jobDir: string, maxLines: number): EvalRolloutLine[] {
  return linesOf(join(jobDir, 'monitor', 'eval-rollouts.jsonl'), maxLines, evalRolloutTimeline, (o, samples) => ({
    step: o.step,
    role: String(o.role),
    eval: String(o.eval),
    samples,
  }));
}

/** An eval-rollouts line's timeline, `<role>/<taskset>` (the monitor writes by it, readers void by it); else undefined. */
export function evalRolloutTimeline(line: Record<string, unknown>): string | undefined {
  return typeof line.role === 'string' && typeof line.eval === 'string' ? `${line.role}/${line.eval}` : undefined;
}

interface RawLine {
  step: number;
  samples?: unknown;
  restart?: unknown;
  [key: string]: unknown;
}

/**
 * The last `max` lines of a step log (within its last 8 MiB) that hold samples and are not voided by a later restart
 * line of their timeline (`timeline`; undefined: the line is not one of this log's).
 */
function linesOf<T>(
  file: string,
  max: number,
  timeline: (o: RawLine) => string | undefined,
  make: (o: RawLine, samples: Record<string, unknown>[]) => T,
): T[] {
  const out: T[] = [];
  let fd: number | undefined;
  try {
    const size = statSync(file).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = new Uint8Array(len);
    fd = openSync(file, 'r');
    readSync(fd, buf, 0, len, size - len);
    const lines = new TextDecoder().decode(buf).split('\n');
    // The last element is '' after a complete line, or a line still being written; the first may be cut.
    const restartedAt = new Map<string, number>();
    for (let i = lines.length - 2; i >= (size > len ? 1 : 0) && out.length < max; i--) {
      try {
        const o = JSON.parse(lines[i]) as RawLine;
        if (typeof o?.step !== 'number') continue;
        const key = timeline(o);
        if (key === undefined) continue;
        if (o.restart === true) restartedAt.set(key, Math.min(restartedAt.get(key) ?? Infinity, o.step));
        else if (o.step < (restartedAt.get(key) ?? Infinity) && Array.isArray(o.samples))
          out.push(
            make(
              o,
              o.samples.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object'),
            ),
          );
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
