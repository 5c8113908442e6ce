/**
 * Stopping inside a step. A trainer step (its micro-batches, the reference forward) or an explorer step (its tasks,
 * an episode's turns) is seconds of synchronous work; a SIGTERM's handler runs only when the event loop turns. At
 * each boundary of that work a stop point yields to the event loop, so the handler runs, and when the run is
 * stopping throws StepAbandoned: the step is given up whole (no metrics row, no checkpoint, nothing written to the
 * buffer), and the run ends "stopped" on its last complete checkpoint, which a resume continues from. Where the flag
 * is read without a yield (the explorer's worker thread), a generation also ends at its next decode step
 * (rollout-model.ts `stopping`).
 */

/** A step's unfinished work given up because the run is stopping; nothing of it was written. */
export class StepAbandoned extends Error {
  constructor() {
    super('the step was given up: the run is stopping');
    this.name = 'StepAbandoned';
  }
}

/** Called at a boundary of a step's work: resolves to go on, or rejects with StepAbandoned. */
export type StopPoint = () => Promise<void>;

/**
 * A stop point over `stopping`. Each call yields to the event loop once (a macrotask: `setImmediate`, so signal
 * handlers and I/O callbacks run), then asks.
 */
export function stopPoint(stopping: () => boolean): StopPoint {
  return async () => {
    if (!stopping()) await new Promise<void>((r) => setImmediate(r));
    if (stopping()) throw new StepAbandoned();
  };
}

/**
 * A stop flag both mode's explorer reads in its worker thread (a SharedArrayBuffer: it crosses postMessage shared,
 * and the worker sees it set without handling a message) or in this thread: set once when `signal` aborts.
 */
export function sharedStopFlag(signal: AbortSignal): Int32Array {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const set = (): void => void Atomics.store(flag, 0, 1);
  if (signal.aborted) set();
  else signal.addEventListener('abort', set, { once: true });
  return flag;
}

/** Whether the run that owns `flag` is stopping. */
export function flagSet(flag: Int32Array): boolean {
  return Atomics.load(flag, 0) === 1;
}

/** Runs `work`; a StepAbandoned from it ends it quietly (the run is stopping, which its caller sees). */
export async function unlessAbandoned(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (e) {
    if (!(e instanceof StepAbandoned)) throw e;
  }
}
