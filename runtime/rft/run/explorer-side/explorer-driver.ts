/**
 * Both mode's explorer side behind one interface, run either in this thread or in a worker thread. In a worker it
 * computes on the second core while the trainer trains, which is what one-step off-policy (`sync_offset: 1`) and
 * interval sync (`sync_interval > 1`) are for; on-policy runs (offset 0, interval 1) gain nothing from it, since each
 * side waits for the other. Either way the side is explorer-side.ts's, built from the same plain-data spec.
 */
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../../../worker-entry';
import { currentBackend, initBackend, type BackendPreference } from '../../../engine/backend';
import type { LogLevel, RunLog } from '../../monitor/run-log';
import { loadRuntimePlugins } from '../../plugins';
import { mergePhaseTimes, phaseTimesOn, takePhaseTimes, timed, type PhaseTimes } from '../../monitor/phase-times';
import { ioFailureData, ioFailureFrom, type IoFailureData } from '../../io-failure';
import { ExplorerRequests } from './explorer-requests';
import type { EvalOutput } from '../../explorer/explore-step';
import { StepAbandoned } from '../../stop-point';
import { ExplorerSide, type ExplorerSideSpec, type ExplorerStepResult } from './explorer-side';

export interface ExplorerDriver {
  /**
   * Runs the next explorer step as step number `step`; null when the taskset is exhausted. Requests queue: a step
   * asked for while another runs starts when it ends (explorer-requests.ts).
   */
  step(step: number): Promise<ExplorerStepResult | null>;
  evaluate(step: number): Promise<EvalOutput>;
  /**
   * Replaces the rollout weights (in `variables()` order) and records the model version: at once when the side is
   * idle, else before its next queued request. Resolves when applied.
   */
  setWeights(weights: Float32Array[], version: number): Promise<void>;
  readonly hasEvals: boolean;
  /** Total explorer steps the taskset allows. */
  readonly totalSteps: number;
  /** Rows the task reader had served when the driver started (after `skipBatches`). */
  readonly startOffset: number;
  close(): Promise<void>;
}

/** Both mode's explorer side as plain data: its spec, the batches to pass over first, the backend to start. */
export interface ExplorerInit extends ExplorerSideSpec {
  work: 'explore';
  /** Batches to pass over first (steps already in the experience buffer when resuming). */
  skipBatches: number;
  backend: string;
}

async function startSide(init: ExplorerInit, log: RunLog): Promise<ExplorerSide> {
  const side = await ExplorerSide.build(init, log);
  side.skip(init.skipBatches);
  return side;
}

/**
 * A step's promise is awaited after the trainer's turn: marked handled now, a step that fails meanwhile is not an
 * unhandled rejection (which ends the process); awaiting it still throws.
 */
function awaitedLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/** The explorer in this thread: steps run when called, so nothing overlaps with training. */
export async function inThreadExplorer(init: ExplorerInit, log: RunLog): Promise<ExplorerDriver> {
  const side = await startSide(init, log);
  const requests = new ExplorerRequests(side);
  return {
    step: (step) => awaitedLater(requests.step(step)),
    evaluate: (step) => requests.evaluate(step),
    setWeights: (weights, version) => requests.setWeights(weights, version),
    hasEvals: side.hasEvals,
    totalSteps: side.totalSteps,
    startOffset: side.readerOffset,
    close: () => requests.close(),
  };
}

/** Messages between the trainer's thread and the explorer worker. */
export type ToWorker =
  | { kind: 'init'; init: ExplorerInit }
  | { kind: 'step'; id: number; step: number }
  | { kind: 'evaluate'; id: number; step: number }
  | { kind: 'weights'; id: number; weights: Float32Array[]; version: number }
  | { kind: 'close'; id: number };

export type FromWorker =
  | { kind: 'ready'; hasEvals: boolean; totalSteps: number; startOffset: number }
  | { kind: 'failed'; message: string }
  | { kind: 'result'; id: number; value: unknown; phases?: PhaseTimes }
  | { kind: 'error'; id: number; message: string; io?: IoFailureData; abandoned?: boolean }
  | { kind: 'log'; level: LogLevel; message: string };

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** The explorer in a worker thread, so its steps run on another core while the trainer trains. */
export async function workerExplorer(init: ExplorerInit, log: RunLog): Promise<ExplorerDriver> {
  const entry = workerEntry(__dirname, 'explorer-worker');
  const worker = new Worker(entry.file, { execArgv: entry.execArgv });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const ready = new Promise<{ hasEvals: boolean; totalSteps: number; startOffset: number }>((resolve, reject) => {
    worker.on('message', (m: FromWorker) => {
      if (m.kind === 'ready') {
        resolve({ hasEvals: m.hasEvals, totalSteps: m.totalSteps, startOffset: m.startOffset });
      } else if (m.kind === 'failed') {
        failure = new Error(m.message);
        reject(failure);
      } else if (m.kind === 'log') log(m.level, m.message);
      else {
        if (m.kind === 'result' && m.phases) mergePhaseTimes(m.phases);
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.kind === 'result') p?.resolve(m.value);
        else p?.reject(m.abandoned ? new StepAbandoned() : m.io ? ioFailureFrom(m.io) : new Error(m.message));
      }
    });
    const fail = (e: Error): void => {
      failure = e;
      reject(e);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the explorer worker exited (code ${code})`)));
  });
  const call = <T>(msg: WithoutId<Extract<ToWorker, { id: number }>>, transfer: ArrayBuffer[] = []): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...msg, id }, transfer);
    });
  };
  worker.postMessage({
    kind: 'init',
    init: { ...init, backend: currentBackend()?.name ?? init.backend },
  } satisfies ToWorker);
  let info: Awaited<typeof ready>;
  try {
    info = await ready;
  } catch (e) {
    // A worker that failed to start is still alive (its port keeps it): end it, or the process never exits.
    worker.removeAllListeners('exit');
    await worker.terminate();
    throw e;
  }
  return {
    step: (step) => awaitedLater(call<ExplorerStepResult | null>({ kind: 'step', step })),
    evaluate: (step) => call<EvalOutput>({ kind: 'evaluate', step }),
    setWeights: (weights, version) =>
      call<void>(
        { kind: 'weights', weights, version },
        weights.map((w) => w.buffer as ArrayBuffer),
      ),
    hasEvals: info.hasEvals,
    totalSteps: info.totalSteps,
    startOffset: info.startOffset,
    close: async () => {
      if (!failure) await call<void>({ kind: 'close' }).catch(() => undefined);
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}

/** Runs inside the worker thread. */
export function serveExplorer(port: {
  on(e: 'message', f: (m: ToWorker) => void): void;
  postMessage(m: FromWorker): void;
}): void {
  let requests: ExplorerRequests | undefined;
  const log: RunLog = (level, message) => port.postMessage({ kind: 'log', level, message });
  port.on('message', (m) => {
    void (async () => {
      if (m.kind === 'init') {
        try {
          await initBackend({ prefer: m.init.backend as BackendPreference });
          if (m.init.pluginDirs?.length) await loadRuntimePlugins(m.init.pluginDirs);
          const side = await startSide(m.init, log);
          requests = new ExplorerRequests(side);
          port.postMessage({
            kind: 'ready',
            hasEvals: side.hasEvals,
            totalSteps: side.totalSteps,
            startOffset: side.readerOffset,
          });
        } catch (e) {
          port.postMessage({ kind: 'failed', message: (e as Error).message });
        }
        return;
      }
      try {
        let value: unknown;
        if (m.kind === 'step') value = await requests!.step(m.step);
        else if (m.kind === 'evaluate') value = await requests!.evaluate(m.step);
        else if (m.kind === 'weights') await requests!.setWeights(m.weights, m.version);
        else if (m.kind === 'close') await requests?.close();
        const phases = phaseTimesOn() ? takePhaseTimes() : undefined;
        timed('explorer: post result to the trainer thread', () =>
          port.postMessage({ kind: 'result', id: m.id, value, phases }),
        );
      } catch (e) {
        port.postMessage({
          kind: 'error',
          id: m.id,
          message: (e as Error).stack ?? (e as Error).message,
          io: ioFailureData(e),
          abandoned: e instanceof StepAbandoned || undefined,
        });
      }
    })().catch((e: Error) => log('error', `explorer worker: ${e.stack ?? e.message}`));
  });
}
