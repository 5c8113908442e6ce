/**
 * Chooses and initialises the process's tfjs backend, once. `auto` tries tfjs-node-gpu, tfjs-node, webgpu, wasm,
 * cpu in that order and takes the first that starts, except that a WebGPU adapter is measured against wasm and
 * kept only when its matmul is faster (webgpu-or-wasm.ts); a forced backend (option or $TRINITY_WORKBENCH_BACKEND) that
 * cannot start is an error saying why, never a silent fallback.
 */
import * as tf from '@tensorflow/tfjs-core';
import { measureMatmulGflops } from './measure';
import { watchPeakMemory } from './memory';
import { firstLine, trySetBackend } from './set-backend';
import { initTfjsNode } from './tfjs-node';
import {
  BACKEND_ENV,
  BACKEND_ORDER,
  BackendUnavailableError,
  parseBackendPreference,
  type BackendInfo,
  type BackendName,
  type BackendPreference,
  type InitBackendOptions,
  type TriedBackend,
  type WebgpuComparison,
} from './types';
import { initWasm } from './wasm';
import { initWebgpu } from './webgpu';
import { pickWebgpuOrWasm } from './webgpu-or-wasm';

type Started =
  | { ok: true; threads?: number; detail?: string; accelerators?: string[]; software?: string }
  | { ok: false; reason: string };

async function initCpu(): Promise<Started> {
  try {
    require('@tensorflow/tfjs-backend-cpu');
  } catch (e) {
    return { ok: false, reason: `@tensorflow/tfjs-backend-cpu does not load: ${firstLine((e as Error).message)}` };
  }
  const r = await trySetBackend('cpu');
  if (!r.ok) return r;
  // The cpu backend prints a "Hi, looks like you are running TensorFlow.js in Node.js" banner on its first tensor.
  const be = tf.backend() as { firstUse?: boolean };
  if (typeof be.firstUse === 'boolean') be.firstUse = false;
  return { ok: true, threads: 1, detail: 'pure JavaScript' };
}

interface Attempt {
  forced: boolean;
  threads: number | undefined;
  log: (msg: string) => void;
  /** webgpu only: start on a software adapter too (forced, or doctor measuring it). */
  acceptSoftware: boolean;
}

async function start(name: BackendName, a: Attempt): Promise<Started> {
  switch (name) {
    case 'tensorflow-gpu':
    case 'tensorflow':
      return initTfjsNode(name);
    case 'webgpu': {
      const r = await initWebgpu(a.forced, a.acceptSoftware);
      return r.ok ? { ok: true, detail: r.adapterInfo, software: r.software } : r;
    }
    case 'wasm': {
      const r = await initWasm(a.threads, a.log);
      return r.ok
        ? { ok: true, threads: r.threads, detail: r.detail, accelerators: r.accelerators }
        : { ok: false, reason: `wasm: ${r.reason}` };
    }
    case 'cpu': {
      const r = await initCpu();
      return r.ok ? r : { ok: false, reason: `cpu: ${r.reason}` };
    }
  }
}

type Measured = { ok: true; started: Extract<Started, { ok: true }>; gflops: number } | { ok: false; reason: string };

/**
 * Starts a backend (it becomes the active one) and measures its matmul throughput. A software adapter is measured
 * one product at a time whatever `batch` asks: it is never picked, and its products take 100+ ms each.
 */
async function startAndMeasure(name: BackendName, a: Attempt, batch: number): Promise<Measured> {
  const r = await start(name, a);
  if (!r.ok) return r;
  try {
    return { ok: true, started: r, gflops: await measureMatmulGflops(256, 80, r.software ? 1 : batch) };
  } catch (e) {
    return { ok: false, reason: `${name}: started, but a matmul failed: ${firstLine((e as Error).message)}` };
  }
}

/** Products queued per sample when webgpu and wasm are weighed: a GPU's read round trip is not compute time. */
const COMPARE_BATCH = 4;

function formatGflops(g: number): string {
  return g >= 10 ? g.toFixed(1) : g.toPrecision(2);
}

function chosenInfo(
  name: BackendName,
  m: Extract<Measured, { ok: true }>,
  tried: TriedBackend[],
  label: string,
  log: (msg: string) => void,
): BackendInfo {
  const r = m.started;
  const info: BackendInfo = { name, tfBackend: tf.getBackend(), gflops: m.gflops, tried };
  if (r.threads !== undefined) info.threads = r.threads;
  if (r.accelerators) info.accelerators = r.accelerators;
  const th = r.threads;
  const detail = [r.detail, th !== undefined ? `${th} thread${th === 1 ? '' : 's'}` : undefined].filter((s) => s);
  log(
    `tfjs backend: ${name}${detail.length ? ` (${detail.join(', ')})` : ''}, ${formatGflops(m.gflops)} GFLOP/s (256³ matmul)${label}`,
  );
  return info;
}

/**
 * `auto` at webgpu: starts it and, when it has an adapter, wasm too; measures both and keeps the one
 * {@link pickWebgpuOrWasm} picks active. Undefined when neither is chosen (the caller goes on down the order).
 */
async function weighWebgpu(a: Attempt, tried: TriedBackend[]): Promise<BackendInfo | undefined> {
  const fail = (name: BackendName, reason: string): undefined => {
    tried.push({ name, ok: false, reason });
    a.log(`tfjs backend ${name} unavailable: ${reason}`);
    return undefined;
  };
  const g = await startAndMeasure('webgpu', a, COMPARE_BATCH);
  if (!g.ok) return fail('webgpu', g.reason);
  const w = await startAndMeasure('wasm', { ...a, acceptSoftware: false }, COMPARE_BATCH);
  const choice = pickWebgpuOrWasm({
    webgpu: g.gflops,
    wasm: w.ok ? w.gflops : undefined,
    software: g.started.software,
  });
  const comparison: WebgpuComparison = { webgpuGflops: g.gflops, pick: choice.pick, reason: choice.reason };
  if (w.ok) comparison.wasmGflops = w.gflops;
  if (g.started.detail) comparison.adapter = g.started.detail;
  if (choice.pick === 'webgpu') {
    if (w.ok) {
      tried.push({ name: 'wasm', ok: false, reason: `wasm: started, not picked: ${choice.reason}` });
      a.log(`tfjs backend wasm not picked: ${choice.reason}`);
    } else fail('wasm', w.reason);
    const back = await trySetBackend('webgpu');
    if (!back.ok) return fail('webgpu', `webgpu: cannot be made active again: ${back.reason}`);
    tried.push({ name: 'webgpu', ok: true });
    return { ...chosenInfo('webgpu', g, tried, '', a.log), comparison };
  }
  // Dropping the backend releases its GPU device; wasm (started last) is already the active backend.
  tf.removeBackend('webgpu');
  tried.push({ name: 'webgpu', ok: false, reason: `webgpu: not picked: ${choice.reason}` });
  a.log(`tfjs backend webgpu not picked: ${choice.reason}`);
  if (!w.ok) return fail('wasm', w.reason);
  tried.push({ name: 'wasm', ok: true });
  return { ...chosenInfo('wasm', w, tried, '', a.log), comparison };
}

async function select(
  prefer: BackendPreference,
  source: string,
  opts: InitBackendOptions,
  log: (msg: string) => void,
): Promise<BackendInfo> {
  const forced = prefer !== 'auto';
  const order: readonly BackendName[] = forced ? [prefer] : BACKEND_ORDER;
  const tried: TriedBackend[] = [];
  const a: Attempt = { forced, threads: opts.threads, log, acceptSoftware: forced };
  for (const name of order) {
    if (tried.some((t) => t.name === name)) continue; // wasm, already weighed against webgpu
    if (name === 'webgpu' && !forced) {
      const info = await weighWebgpu({ ...a, acceptSoftware: opts.measureSoftwareWebgpu === true }, tried);
      if (info) return info;
      continue;
    }
    const m = await startAndMeasure(name, a, 1);
    if (!m.ok) {
      tried.push({ name, ok: false, reason: m.reason });
      if (!forced) log(`tfjs backend ${name} unavailable: ${m.reason}`);
      continue;
    }
    tried.push({ name, ok: true });
    return chosenInfo(name, m, tried, forced ? ` [${source}]` : '', log);
  }
  const message = forced
    ? `backend \`${prefer}\` (${source}) cannot start: ${tried[0]?.reason ?? 'unknown reason'}`
    : `no tfjs backend could start: ${tried.map((t) => t.reason).join('; ')}`;
  throw new BackendUnavailableError(message, tried);
}

let pending: Promise<BackendInfo> | undefined;
let chosen: BackendInfo | undefined;

/**
 * Initialises the tfjs backend for this process and reports it. Idempotent: later calls return the same info
 * without initialising again (asking then for a different, explicit backend is an error: tfjs backends are
 * process-global). A failed call leaves nothing chosen, so it may be retried with another preference.
 * @throws BackendUnavailableError when a forced backend cannot start (the message says why), or none can.
 */
export async function initBackend(opts: InitBackendOptions = {}): Promise<BackendInfo> {
  const log = opts.log ?? (() => undefined);
  const envValue = process.env[BACKEND_ENV]?.trim();
  const fromEnv = envValue !== undefined && envValue !== '';
  const source = fromEnv ? `forced by $${BACKEND_ENV}` : 'forced by the caller';
  const prefer = fromEnv
    ? parseBackendPreference(envValue, `$${BACKEND_ENV}`)
    : parseBackendPreference(String(opts.prefer ?? 'auto'), 'prefer');
  if (pending) {
    const info = await pending;
    if (prefer !== 'auto' && prefer !== info.name) {
      throw new BackendUnavailableError(
        `the tfjs backend is already initialised as \`${info.name}\` in this process; it cannot switch to \`${prefer}\``,
        info.tried,
      );
    }
    return info;
  }
  const p = select(prefer, source, opts, log);
  pending = p;
  p.then(
    (info) => {
      chosen = info;
      watchPeakMemory();
    },
    () => {
      if (pending === p) pending = undefined;
    },
  );
  return p;
}

/** The backend chosen by a completed {@link initBackend}, if any. */
export function currentBackend(): BackendInfo | undefined {
  return chosen;
}
