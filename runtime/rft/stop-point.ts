/**
 * Stopping inside a step. A trainer step (its micro-batches, the reference forward) or an explorer step (its tasks,
 * an episode's turns) is seconds of synchronous work; at each boundary of that work a stop point asks whether the run
 * is stopping and, when it is, throws StepAbandoned: the step is given up whole (no metrics row, no checkpoint,
 * nothing written to the buffer), and the run ends "stopped" on its last complete checkpoint, which a resume
 * continues from.
 *
 * How a stop point asks fits its thread. The SIGTERM handler (and so the abort signal and the shared stop flag it
 * sets) runs in the main thread, and only when its event loop turns: there a stop point yields a macrotask first. A
 * worker thread (the explorer's) reads the shared flag as it is, without yielding, so the work it interrupts keeps its
 * shape (a step's concurrent calls still reach the sample batcher together); there a generation also ends at its next
 * decode step (rollout-model.ts `stopping`).
 */
import { isMainThread } from 'node:worker_threads';

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
 * Lets signal handlers and I/O callbacks run (a macrotask: `setImmediate`): between the steps of a run's loops, and
 * at a main-thread stop point.
 */
export function yieldToEvents(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/**
 * A stop point over `stopping`, a source this thread's own event handlers set (the abort signal): each call yields to
 * the event loop once, so the handlers run, then asks.
 */
export function stopPoint(stopping: () => boolean): StopPoint {
  return async () => {
    if (!stopping()) await yieldToEvents();
    if (stopping()) throw new StepAbandoned();
  };
}

/**
 * A stop point over the run's shared stop flag (sharedStopFlag): in the main thread, where the handler that sets it
 * runs, it yields as `stopPoint` does; in a worker thread it asks at once, without yielding.
 */
export function flagStopPoint(flag: Int32Array): StopPoint {
  if (isMainThread) return stopPoint(() => flagSet(flag));
  return async () => {
    if (flagSet(flag)) throw new StepAbandoned();
  };
}

/**
 * A generation's pause between decode steps (SharedSampling.pause) in the main thread, whose SIGTERM handler sets the
 * stop flag: a yield to the event loop once `everyMs` have passed since the last, so a stop lands within about that
 * plus one decode step. None in a worker thread, which reads the flag as it is. The yields leave what is sampled as
 * it was: the batch being decoded is already formed, and each call brings its own seed.
 */
export function decodePause(everyMs = 100): (() => Promise<void>) | undefined {
  if (!isMainThread) return undefined;
  let last = performance.now();
  return async () => {
    if (performance.now() - last < everyMs) return;
    await yieldToEvents();
    last = performance.now();
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
