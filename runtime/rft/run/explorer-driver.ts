/**
 * The explorer side of `both` mode behind one interface, run either in this thread or in a worker thread. In a
 * worker it computes on the second core while the trainer trains, which is what one-step off-policy
 * (`sync_offset: 1`) and interval sync (`sync_interval > 1`) are for; on-policy runs (offset 0, interval 1) gain
 * nothing from it, since each side waits for the other.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/types.generated';
import type { Release } from '../../config/releases';
import type { RolloutSample } from '../../protocol';
import type { CausalLM } from '../../engine/lm/transformer';
import * as tf from '@tensorflow/tfjs-core';
import { currentBackend, initBackend, type BackendPreference } from '../../engine/backend';
import type { Experience } from '../experience';
import type { Explorer, ExplorerTask } from '../explorer/explorer';
import { attachReferenceLogprobs } from '../trainer/reference-logprobs';
import type { ExperiencePipeline } from '../explorer/experience-pipeline';
import {
  algorithmSetup,
  createExplorer,
  evaluateAll,
  experiencePipeline,
  explorerTotalSteps,
  loadModelFor,
  taskReader,
  tasksOf,
  type RunLog,
  type TaskReader,
} from './setup';

export interface ExplorerStepResult {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
  /** Rows the task reader has served after this step (what a checkpoint records). */
  readerOffset: number;
}

export interface ExplorerDriver {
  /** Runs the next explorer step as step number `step`; null when the taskset is exhausted. */
  step(step: number): Promise<ExplorerStepResult | null>;
  evaluate(step: number): Promise<Record<string, number>>;
  /** Replaces the rollout weights (in `variables()` order) and records the model version. */
  setWeights(weights: Float32Array[], version: number): Promise<void>;
  readonly hasEvals: boolean;
  /** Total explorer steps the taskset allows, when known. */
  readonly totalSteps: number | undefined;
  /** Rows the task reader had served when the driver started (after `skipBatches`). */
  readonly startOffset: number;
  close(): Promise<void>;
}

/** Everything the explorer side needs, as plain data (it crosses to a worker as is). */
export interface ExplorerInit {
  cfg: Config;
  release: Release;
  configDir: string;
  modelPath?: string;
  seed: number;
  readerOffset: number;
  /** Batches to pass over first (steps already in the experience buffer when resuming). */
  skipBatches?: number;
  version: number;
  backend: string;
  /**
   * Set when the explorer also computes the experiences' reference log-probs (runs whose trainer reads them, with the
   * explorer in a worker and experiences passed in memory): the reference weights and how the trainer scores.
   */
  reference?: ExplorerReference;
}

export interface ExplorerReference {
  /** The initial weights (not a resumed checkpoint's). */
  modelPath?: string;
  temperature: number;
  padTokenId: number;
  microBatchSize?: number;
}

interface ExplorerParts {
  explorer: Explorer;
  pipeline: ExperiencePipeline;
  reader: TaskReader;
  evalSets: { name: string; tasks: ExplorerTask[] }[];
  model: CausalLM;
  /** The frozen reference model, when init.reference is set. */
  reference?: { model: CausalLM; opts: ExplorerReference };
  warnings: string[];
}

/** Builds the explorer side from the resolved config (used in both threads). */
export async function buildExplorer(init: ExplorerInit, log: RunLog): Promise<ExplorerParts> {
  const { cfg } = init;
  const alg = algorithmSetup(cfg, init.release);
  const p = loadModelFor(cfg, init.configDir, init.modelPath);
  const trainSets = await tasksOf(cfg, init.configDir, 'train');
  const evalSets = await tasksOf(cfg, init.configDir, 'eval');
  const tasks = trainSets.flatMap((s) => s.tasks);
  const reader = taskReader(cfg, tasks, init.readerOffset);
  for (let i = 0; i < (init.skipBatches ?? 0); i++) reader.next();
  let explorer: Explorer;
  try {
    explorer = createExplorer(cfg, init.release, p, init.seed, log, init.configDir);
  } catch (e) {
    p.model.dispose();
    throw e;
  }
  explorer.model.version = init.version;
  const reference = init.reference
    ? { model: loadModelFor(cfg, init.configDir, init.reference.modelPath).model, opts: init.reference }
    : undefined;
  return {
    explorer,
    pipeline: experiencePipeline(cfg, alg.groupAdvantage, init.release),
    reader,
    evalSets,
    model: p.model,
    reference,
    warnings: [...trainSets, ...evalSets].flatMap((s) => s.warnings),
  };
}

function closeParts(parts: ExplorerParts): void {
  parts.explorer.dispose();
  parts.model.dispose();
  parts.reference?.model.dispose();
}

export async function stepWith(parts: ExplorerParts, step: number): Promise<ExplorerStepResult | null> {
  const batch = parts.reader.next();
  if (!batch) return parts.explorer.finish();
  const out = await parts.explorer.explore(step, batch.items, parts.pipeline);
  parts.reader.afterStep(step, out.selectorFeedback);
  if (parts.reference) await attachReferenceLogprobs(parts.reference.model, out.experiences, parts.reference.opts);
  return { ...out, readerOffset: parts.reader.currentOffset };
}

export function evaluateWith(parts: ExplorerParts, step: number): Promise<Record<string, number>> {
  return evaluateAll(parts.explorer, parts.evalSets, step);
}

export function assignWeights(model: CausalLM, weights: Float32Array[]): void {
  const vars = model.variables();
  if (vars.length !== weights.length)
    throw new Error(`weight sync: ${weights.length} tensors for ${vars.length} variables`);
  tf.tidy(() => vars.forEach((v, i) => v.assign(tf.tensor(weights[i], v.shape, 'float32'))));
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
  const parts = await buildExplorer(init, log);
  for (const w of parts.warnings) log('warning', w);
  return {
    step: (step) => awaitedLater(stepWith(parts, step)),
    evaluate: async (step) => evaluateWith(parts, step),
    setWeights: async (weights, version) => {
      assignWeights(parts.model, weights);
      parts.explorer.model.version = version;
    },
    hasEvals: parts.evalSets.length > 0,
    totalSteps: explorerTotalSteps(init.cfg, parts.reader.size),
    startOffset: parts.reader.currentOffset,
    close: async () => closeParts(parts),
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
  | { kind: 'ready'; hasEvals: boolean; totalSteps: number; startOffset: number; warnings: string[] }
  | { kind: 'failed'; message: string }
  | { kind: 'result'; id: number; value: unknown }
  | { kind: 'error'; id: number; message: string }
  | { kind: 'log'; level: 'info' | 'warning' | 'error'; message: string };

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** The worker's entry file: the bundled dist/explorer-worker.js, or the TypeScript source under tsx. */
function workerEntry(): { file: string; execArgv: string[] } {
  const bundled = join(__dirname, 'explorer-worker.js');
  if (existsSync(bundled)) return { file: bundled, execArgv: [] };
  // Running from source (tests, benches under tsx): the worker needs tsx's require hook (`--import tsx` does not
  // reach worker threads).
  const source = join(__dirname, 'explorer-worker.ts');
  if (existsSync(source)) return { file: source, execArgv: ['--require', require.resolve('tsx/cjs')] };
  throw new Error(`the explorer worker script is missing (looked for ${bundled} and ${source})`);
}

/** The explorer in a worker thread, so its steps run on another core while the trainer trains. */
export async function workerExplorer(init: ExplorerInit, log: RunLog): Promise<ExplorerDriver> {
  const entry = workerEntry();
  const worker = new Worker(entry.file, { execArgv: entry.execArgv });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const ready = new Promise<{ hasEvals: boolean; totalSteps: number; startOffset: number }>((resolve, reject) => {
    worker.on('message', (m: FromWorker) => {
      if (m.kind === 'ready') {
        for (const w of m.warnings) log('warning', w);
        resolve({ hasEvals: m.hasEvals, totalSteps: m.totalSteps, startOffset: m.startOffset });
      } else if (m.kind === 'failed') {
        failure = new Error(m.message);
        reject(failure);
      } else if (m.kind === 'log') log(m.level, m.message);
      else {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.kind === 'result') p?.resolve(m.value);
        else p?.reject(new Error(m.message));
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
    evaluate: (step) => call<Record<string, number>>({ kind: 'evaluate', step }),
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
  let parts: ExplorerParts | undefined;
  const log = (level: 'info' | 'warning' | 'error', message: string): void =>
    port.postMessage({ kind: 'log', level, message });
  port.on('message', (m) => {
    void (async () => {
      if (m.kind === 'init') {
        try {
          await initBackend({ prefer: m.init.backend as BackendPreference });
          parts = await buildExplorer(m.init, log);
          port.postMessage({
            kind: 'ready',
            hasEvals: parts.evalSets.length > 0,
            totalSteps: explorerTotalSteps(m.init.cfg, parts.reader.size),
            startOffset: parts.reader.currentOffset,
            warnings: parts.warnings,
          });
        } catch (e) {
          port.postMessage({ kind: 'failed', message: (e as Error).message });
        }
        return;
      }
      try {
        let value: unknown;
        if (m.kind === 'step') value = await stepWith(parts!, m.step);
        else if (m.kind === 'evaluate') value = await evaluateWith(parts!, m.step);
        else if (m.kind === 'weights') {
          assignWeights(parts!.model, m.weights);
          parts!.explorer.model.version = m.version;
        } else if (m.kind === 'close' && parts) closeParts(parts);
        port.postMessage({ kind: 'result', id: m.id, value });
      } catch (e) {
        port.postMessage({ kind: 'error', id: m.id, message: (e as Error).stack ?? (e as Error).message });
      }
    })().catch((e: Error) => log('error', `explorer worker: ${e.stack ?? e.message}`));
  });
}

/** A copy of the trainer's weights to send to the explorer (transferable buffers). */
export async function exportWeights(model: CausalLM): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const v of model.variables()) out.push(Float32Array.from((await v.data()) as Float32Array));
  return out;
}
