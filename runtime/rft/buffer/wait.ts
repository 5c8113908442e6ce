/** Small waiting helpers shared by the storages: abortable sleeps and an in-process change notifier. */
import { hostname } from 'node:os';
import { pidAlive } from '../../run-records';

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
}

/**
 * AbortSignal.any (in Node 20's runtime, not in this project's @types/node), with a `dispose` that removes its
 * listeners so long-lived signals do not collect one per read.
 */
export function linkSignals(...signals: (AbortSignal | undefined)[]): { signal: AbortSignal; dispose(): void } {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  const ctl = new AbortController();
  const onAbort = (ev: Event): void => {
    dispose();
    ctl.abort((ev.target as AbortSignal).reason);
  };
  const dispose = (): void => {
    for (const s of present) s.removeEventListener('abort', onAbort);
  };
  for (const s of present) {
    if (s.aborted) {
      ctl.abort(s.reason);
      return { signal: ctl.signal, dispose: () => {} };
    }
  }
  for (const s of present) s.addEventListener('abort', onAbort, { once: true });
  return { signal: ctl.signal, dispose };
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** Resolves after `ms` or when `wake` is called; rejects when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    const t = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Waiters are woken on every change (put, get, close); each re-checks its own condition. Single-threaded JS makes
 * the re-check race-free, which is all asyncio.Condition gives Trinity.
 */
export class Notifier {
  private waiters = new Set<() => void>();

  notifyAll(): void {
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves 'changed' on the next notify, 'timeout' at `deadline` (ms since epoch; Infinity = never); rejects on abort. */
  wait(deadline: number, signal?: AbortSignal): Promise<'changed' | 'timeout'> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(wake);
      };
      const wake = (): void => {
        done();
        resolve('changed');
      };
      const onAbort = (): void => {
        done();
        reject(abortReason(signal!));
      };
      this.waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(deadline)) {
        timer = setTimeout(
          () => {
            done();
            resolve('timeout');
          },
          Math.max(0, deadline - Date.now()),
        );
      }
    });
  }
}

export const HOST = hostname();

/** Whether a writer recorded with (pid, host) may still be running: other hosts are assumed alive. */
export function writerMayBeAlive(pid: number, host: string): boolean {
  if (host !== HOST) return true;
  if (pid === process.pid) return true;
  return pidAlive(pid);
}

/** A stream's writers as a reader sees them: how many ever registered, how many may still be writing, how many died. */
export interface WriterCount {
  registered: number;
  live: number;
  /** Registered, never finished, no longer running (killed or crashed), and not replaced (countWriters). */
  died: number;
}

/**
 * Counts writers given in the order they registered. A dead writer counts as died only when no writer that
 * registered after it finished: one that did took its place (a restarted explorer that completed the stream).
 */
export function countWriters(writers: readonly { finished: boolean; mayBeAlive: boolean }[]): WriterCount {
  let lastFinished = -1;
  writers.forEach((w, i) => {
    if (w.finished) lastFinished = i;
  });
  let live = 0;
  let died = 0;
  writers.forEach((w, i) => {
    if (w.finished) return;
    if (w.mayBeAlive) live++;
    else if (i > lastFinished) died++;
  });
  return { registered: writers.length, live, died };
}

/**
 * How long a stream whose last live writer died without finishing stays open for a writer to take its place: a
 * killed explorer restarted with the same config resumes the stream, and its readers wait for it rather than end.
 */
export const DEAD_WRITER_GRACE_MS = 60_000;

/**
 * When a reader's stream is over: at once when every registered writer finished; when one died unfinished, after
 * `graceMs` in which no writer was live. One per reader, kept across its reads.
 */
export class WritersGone {
  private noneLiveSince: number | undefined;
  constructor(
    readonly graceMs: number = DEAD_WRITER_GRACE_MS,
    /** Told once each time the wait for a dead writer's successor begins (a reader's log: why it waits). */
    private readonly onWait?: (what: string) => void,
  ) {}

  over(w: WriterCount, now: number = Date.now()): boolean {
    if (w.registered === 0 || w.live > 0) {
      this.noneLiveSince = undefined;
      return false;
    }
    if (w.died === 0) return true;
    if (this.noneLiveSince === undefined) {
      this.noneLiveSince = now;
      this.onWait?.(
        `${whoDied(w)} died without finishing: waiting up to ${this.graceMs / 1000} s for a writer to take its place (a restarted explorer)`,
      );
    }
    return now - this.noneLiveSince >= this.graceMs;
  }

  /** How the writers ended, for the stop message. */
  static describe(w: WriterCount, graceMs: number): string {
    if (w.died === 0) return 'all writers finished';
    return `${whoDied(w)} died without finishing and none took over within ${graceMs / 1000} s`;
  }
}

const whoDied = (w: WriterCount): string =>
  w.died === w.registered ? 'every writer' : `${w.died} of ${w.registered} writers`;

/** `max_read_timeout` (seconds) or the per-read override (ms) as milliseconds. */
export function readTimeoutMs(maxReadTimeoutS: number, override: number | undefined): number {
  if (override !== undefined) return override;
  return maxReadTimeoutS * 1000;
}

export function checkBatchSize(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`batchSize must be a positive integer, got ${n}`);
}
