/**
 * Chooses and initialises the process's tfjs backend, once. `auto` tries tfjs-node-gpu, tfjs-node, webgpu, wasm,
 * cpu in that order and takes the first that starts; a forced backend (option or $TRINITY_WORKBENCH_BACKEND) that
 * cannot start is an error saying why, never a silent fallback.
 */
import * as tf from '@tensorflow/tfjs-core';
import { measureMatmulGflops } from './measure';
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
} from './types';
import { initWasm } from './wasm';
import { initWebgpu } from './webgpu';

type Started = { ok: true; threads?: number; detail?: string; accelerators?: string[] } | { ok: false; reason: string };

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

async function start(
  name: BackendName,
  forced: boolean,
  threads: number | undefined,
  log: (msg: string) => void,
): Promise<Started> {
  switch (name) {
    case 'tensorflow-gpu':
    case 'tensorflow':
      return initTfjsNode(name);
    case 'webgpu': {
      const r = await initWebgpu(forced);
      return r.ok ? { ok: true, detail: r.adapterInfo } : r;
    }
    case 'wasm': {
      const r = await initWasm(threads, log);
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

function formatGflops(g: number): string {
  return g >= 10 ? g.toFixed(1) : g.toPrecision(2);
}

async function select(
  prefer: BackendPreference,
  source: string,
  threads: number | undefined,
  log: (msg: string) => void,
): Promise<BackendInfo> {
  const forced = prefer !== 'auto';
  const order: readonly BackendName[] = forced ? [prefer] : BACKEND_ORDER;
  const tried: TriedBackend[] = [];
  for (const name of order) {
    const r = await start(name, forced, threads, log);
    let gflops = 0;
    let reason = r.ok ? undefined : r.reason;
    if (r.ok) {
      try {
        gflops = await measureMatmulGflops();
      } catch (e) {
        reason = `${name}: started, but a matmul failed: ${firstLine((e as Error).message)}`;
      }
    }
    if (reason !== undefined) {
      tried.push({ name, ok: false, reason });
      if (!forced) log(`tfjs backend ${name} unavailable: ${reason}`);
      continue;
    }
    tried.push({ name, ok: true });
    const info: BackendInfo = { name, tfBackend: tf.getBackend(), gflops, tried };
    const th = r.ok ? r.threads : undefined;
    if (th !== undefined) info.threads = th;
    if (r.ok && r.accelerators) info.accelerators = r.accelerators;
    const detail = [
      r.ok ? r.detail : undefined,
      th !== undefined ? `${th} thread${th === 1 ? '' : 's'}` : undefined,
    ].filter((s) => s);
    log(
      `tfjs backend: ${name}${detail.length ? ` (${detail.join(', ')})` : ''}, ${formatGflops(gflops)} GFLOP/s (256³ matmul)${forced ? ` [${source}]` : ''}`,
    );
    return info;
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
  const p = select(prefer, source, opts.threads, log);
  pending = p;
  p.then(
    (info) => {
      chosen = info;
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
