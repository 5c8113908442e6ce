/** The vocabulary of backend selection: names, preferences, what initialisation reports, its error. */

/**
 * The backends the runtime can run on, best first. `tensorflow-gpu` and `tensorflow` are the native
 * `@tensorflow/tfjs-node-gpu` / `@tensorflow/tfjs-node` packages (both register tfjs' `tensorflow` backend).
 */
export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'webgpu' | 'wasm' | 'cpu';

/** `auto`: the first of {@link BACKEND_ORDER} that starts. Anything else forces that backend. */
export type BackendPreference = 'auto' | BackendName;

/** The order `auto` tries. */
export const BACKEND_ORDER: readonly BackendName[] = ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'];

/** The environment variable that overrides `prefer` (one of {@link BackendPreference}). */
export const BACKEND_ENV = 'TRINITY_WORKBENCH_BACKEND';

export interface TriedBackend {
  name: BackendName;
  ok: boolean;
  /** Why it did not start (absent when ok). */
  reason?: string;
}

export interface BackendInfo {
  name: BackendName;
  /** What tfjs calls it (`tf.getBackend()`): `tensorflow` for both tfjs-node variants. */
  tfBackend: string;
  /** Threads the backend computes with, where that is known (wasm, cpu: 1). */
  threads?: number;
  /**
   * Native accelerators in use behind the backend: `openblas-matmul` when wasm's matmuls run on OpenBLAS
   * (native-matmul.ts). Empty or absent: none.
   */
  accelerators?: string[];
  /** Measured float32 2-D matmul throughput (GFLOP/s) right after initialisation. */
  gflops: number;
  /** When `auto` started a WebGPU adapter and weighed it against wasm: both rates and why it picked. */
  comparison?: WebgpuComparison;
  /** Every backend attempted, in order, the chosen one last. */
  tried: TriedBackend[];
}

export interface WebgpuComparison {
  /** webgpu's and wasm's float32 256³ matmul GFLOP/s (wasm's absent when it did not start). */
  webgpuGflops: number;
  wasmGflops?: number;
  /** The adapter measured (vendor / architecture / description). */
  adapter?: string;
  pick: 'webgpu' | 'wasm';
  reason: string;
}

export interface InitBackendOptions {
  /** Defaults to `auto`; `$TRINITY_WORKBENCH_BACKEND` overrides it. */
  prefer?: BackendPreference;
  /**
   * Threads wanted for wasm. Accepted but not honoured yet: stock tfjs-backend-wasm 4.22 never starts threads in
   * Node (see ../shared/reference/tfjs-runtime.md §2.1 for the five-edit patch that would), so wasm runs 1 thread.
   */
  threads?: number;
  /** Where progress and the chosen backend are reported (one line each). */
  log?: (msg: string) => void;
  /**
   * `auto` only: also start and measure a software WebGPU adapter (SwiftShader, llvmpipe), which auto then still
   * skips, so that doctor can report its rate beside wasm's. Runs otherwise never start one (it costs seconds).
   */
  measureSoftwareWebgpu?: boolean;
}

/** A forced backend that cannot start, or no backend at all. `tried` says what happened to each. */
export class BackendUnavailableError extends Error {
  constructor(
    message: string,
    readonly tried: TriedBackend[],
  ) {
    super(message);
    this.name = 'BackendUnavailableError';
  }
}

export function isBackendName(s: string): s is BackendName {
  return (BACKEND_ORDER as readonly string[]).includes(s);
}

/** Parses a preference (case-insensitive, trimmed); throws on anything unknown. */
export function parseBackendPreference(raw: string, source: string): BackendPreference {
  const s = raw.trim().toLowerCase();
  if (s === 'auto' || isBackendName(s)) return s;
  throw new BackendUnavailableError(
    `${source}: unknown backend \`${raw}\`; expected auto, ${BACKEND_ORDER.join(', ')}`,
    [],
  );
}
