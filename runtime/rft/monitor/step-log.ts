/**
 * A job's append-only JSON-lines log keyed by step (monitor/metrics.jsonl per role, monitor/rollouts.jsonl), as one
 * run appends to it. Before the run's first line it looks at what earlier runs left:
 *
 * - a last line cut short by a writer that died mid-append (a kill, a full disk) is cut off, since readers take
 *   whole lines only and a new line appended to it would be lost with it; unless the file grows meanwhile (the other
 *   process of an asynchronous explore/train pair appending to the same file), which then finishes the line;
 * - the highest step each key (a role) reached. When the run's first step for a key is at or below it, the run
 *   resumed from an earlier checkpoint and everything the abandoned timeline logged from that step on is void: a
 *   restart line goes first, and every reader drops those lines (runtime/metrics/restarts.ts), so no step is shown
 *   with two values.
 */
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { withIo } from '../io-failure';

type Line = Record<string, unknown>;

export class StepLog {
  private highest: Map<string, number> | undefined;
  private readonly begun = new Set<string>();

  constructor(
    readonly path: string,
    /** What appending is called in an error (`metrics append`). */
    private readonly operation: string,
    /** The key of a line written earlier (its role), or undefined when it has none. */
    private readonly keyOf: (line: Line) => string | undefined,
  ) {}

  /** Appends `line` for `key` at `step`, after `restart` when it begins a new timeline over an abandoned one. */
  append(key: string, step: number, line: Line, restart: () => Line): void {
    withIo(this.operation, this.path, () => {
      let text = `${JSON.stringify(line)}\n`;
      if (!this.begun.has(key)) {
        const highest = this.earlier().get(key);
        if (highest !== undefined && highest >= step) text = `${JSON.stringify(restart())}\n${text}`;
        this.begun.add(key);
      }
      appendFileSync(this.path, text);
    });
  }

  /** The highest step per key that earlier runs left in force (read once, after cutting a torn last line). */
  private earlier(): Map<string, number> {
    if (this.highest) return this.highest;
    this.highest = new Map();
    if (!existsSync(this.path)) return this.highest;
    let text = readFileSync(this.path, 'utf8');
    if (text.length && !text.endsWith('\n') && cutTornLine(this.path, text)) text = readFileSync(this.path, 'utf8');
    for (const raw of text.split('\n')) {
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue;
      }
      const key = line && typeof line === 'object' ? this.keyOf(line) : undefined;
      if (key === undefined || typeof line.step !== 'number') continue;
      const before = this.highest.get(key) ?? -Infinity;
      this.highest.set(key, line.restart === true ? Math.min(before, line.step - 1) : Math.max(before, line.step));
    }
    return this.highest;
  }
}

/** How long a line being appended by a live process may take to finish (it is one small write). */
const LIVE_APPEND_MS = 100;

/** Truncates the file after its last newline, unless it grows meanwhile; returns whether it changed. */
function cutTornLine(path: string, text: string): boolean {
  const size = statSync(path).size;
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LIVE_APPEND_MS);
  if (statSync(path).size !== size) return true;
  truncateSync(path, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)));
  return true;
}
