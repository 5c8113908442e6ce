/**
 * The wasm backend (@tensorflow/tfjs-backend-wasm, SIMD, XNNPACK): the fast backend that installs from npm alone.
 *
 * Threads: stock tfjs-backend-wasm 4.22 never starts worker threads in Node (its multithread flag is false under
 * Node, the pthread worker comes from a `blob:` URL Node refuses, and the pool is capped at cores/2). Running it
 * multithreaded needs the five-edit patch described in ../shared/reference/tfjs-runtime.md §2.1, which is not
 * applied, so wasm always computes on 1 thread whatever `threads` asks for.
 */
import { dirname } from 'node:path';
import { installNativeMatmul, NATIVE_MATMUL_ACCELERATOR } from './native-matmul';
import { registerWasmKernels } from './wasm-kernels';
import { trySetBackend } from './set-backend';

type WasmModule = typeof import('@tensorflow/tfjs-backend-wasm');

/**
 * The directory holding the package's `.wasm` binaries, with a trailing slash (the form `setWasmPaths` wants).
 * Resolved through Node's module resolution, so it is right from the sources and from the esbuild bundle alike.
 */
export function wasmBinaryDir(): string {
  return `${dirname(require.resolve('@tensorflow/tfjs-backend-wasm'))}/`;
}

export type WasmInit =
  | { ok: true; threads: number; accelerators: string[]; detail: string }
  | { ok: false; reason: string };

/**
 * Loads the wasm backend, points it at its binaries, registers the missing kernels and makes it active; then puts
 * its matmuls on native OpenBLAS when that addon is built (native-matmul.ts; `$TRINITY_WORKBENCH_NATIVE_MATMUL=0`
 * disables it).
 */
export async function initWasm(threads: number | undefined, log: (msg: string) => void): Promise<WasmInit> {
  let wasm: WasmModule;
  try {
    wasm = require('@tensorflow/tfjs-backend-wasm') as WasmModule;
  } catch (e) {
    return { ok: false, reason: `@tensorflow/tfjs-backend-wasm does not load: ${(e as Error).message.split('\n')[0]}` };
  }
  let dir: string;
  try {
    dir = wasmBinaryDir();
  } catch (e) {
    return {
      ok: false,
      reason: `cannot locate the .wasm files of @tensorflow/tfjs-backend-wasm: ${(e as Error).message.split('\n')[0]}`,
    };
  }
  if (threads !== undefined && threads > 1) {
    log(
      `wasm: ${threads} threads asked for, running 1 (multithreaded wasm in Node needs the patch in tfjs-runtime.md §2.1)`,
    );
  }
  wasm.setWasmPaths(dir);
  registerWasmKernels();
  // Emscripten's Node glue adds process-wide uncaughtException/unhandledRejection listeners that rethrow; they
  // change how the host process fails (exit code 7) and serve nothing here, so they are removed again.
  const events = ['uncaughtException', 'unhandledRejection'] as const;
  const listeners = (event: (typeof events)[number]): Function[] => process.listeners(event as 'uncaughtException');
  const before = events.map(listeners);
  const r = await trySetBackend('wasm');
  events.forEach((event, i) => {
    for (const l of listeners(event))
      if (!before[i].includes(l)) process.removeListener(event, l as (...args: unknown[]) => void);
  });
  if (!r.ok) return { ok: false, reason: `${r.reason} (.wasm files looked for in ${dir})` };
  const native = installNativeMatmul();
  if (native.installed) {
    return {
      ok: true,
      threads: wasm.getThreadsCount(),
      accelerators: [NATIVE_MATMUL_ACCELERATOR],
      detail: `SIMD, OpenBLAS matmul${native.threads === 1 ? '' : ` on ${native.threads} threads`}`,
    };
  }
  if (!native.disabled)
    log(`wasm: no native OpenBLAS matmul (${native.reason}); matmuls run on wasm, 1.4–2.4x slower training`);
  return { ok: true, threads: wasm.getThreadsCount(), accelerators: [], detail: 'SIMD' };
}
