/**
 * What this machine offers the runtime, for `trinity-workbench doctor`: the host, each backend's availability
 * (found without loading the native packages, so tfjs-node and tfjs-node-gpu are never both loaded), and what
 * {@link initBackend} then picks, with its measured matmul throughput.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { join } from 'node:path';
import { blasThreadLimits, chooseBlasThreads } from './blas-threads';
import { initBackend } from './init';
import { engineMemory, type EngineMemory } from './memory';
import { loadNativeMatmul } from './native-matmul';
import { findSharedLib } from './shared-libs';
import { probeTfjsNode, type NativeVariant } from './tfjs-node';
import {
  BACKEND_ENV,
  BACKEND_ORDER,
  BackendUnavailableError,
  type BackendInfo,
  type BackendName,
  type TriedBackend,
  type WebgpuComparison,
} from './types';
import { wasmBinaryDir } from './wasm';
import { probeWebgpu } from './webgpu';

export interface BackendProbe {
  name: BackendName;
  /** Everything it needs was found (for tfjs-node: on disk; it is not loaded to find out). */
  available: boolean;
  /** Why not (absent when available). */
  reason?: string;
  /** Facts found on the way: versions, paths, the GPU adapter, caveats. */
  details: string[];
}

export interface MachineReport {
  node: string;
  napi: string | undefined;
  platform: NodeJS.Platform;
  arch: string;
  cpu: { model: string; cores: number; features: string[] };
  memory: { totalBytes: number; freeBytes: number };
  backends: BackendProbe[];
  /** What initBackend() chose here: `auto` unless $TRINITY_WORKBENCH_BACKEND forces one. */
  selection:
    | {
        preference: string;
        ok: true;
        name: BackendName;
        tfBackend: string;
        threads?: number;
        accelerators?: string[];
        gflops: number;
        comparison?: WebgpuComparison;
        tried: TriedBackend[];
      }
    | { preference: string; ok: false; error: string; tried: TriedBackend[] };
  /** What the chosen backend holds right after its measurement (absent when none started): GPU memory on webgpu. */
  engineMemory?: EngineMemory;
}

function packageVersion(pkg: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function probeNative(variant: NativeVariant): BackendProbe {
  const p = probeTfjsNode(variant);
  const details: string[] = [];
  if (p.version) details.push(`${p.package} ${p.version}`);
  if (p.addon) details.push(`addon ${p.addonFound ? 'found' : 'missing'}: ${p.addon}`);
  if (p.installed)
    details.push(
      p.libtensorflow.length ? `libtensorflow: ${p.libtensorflow.join(', ')}` : 'libtensorflow: missing from deps/lib',
    );
  if (variant === 'tensorflow-gpu' && !p.reason && process.platform === 'linux') {
    const missing = ['libcudart.so.11.0', 'libcudnn.so.8'].filter((l) => findSharedLib(l) === null);
    if (missing.length)
      details.push(
        `${missing.join(', ')} not found: libtensorflow 2.9.1 needs the CUDA 11.2 / cuDNN 8.1 runtime libraries, or it computes on the CPU`,
      );
  }
  return p.reason
    ? { name: variant, available: false, reason: p.reason, details }
    : { name: variant, available: true, details };
}

async function probeWebgpuBackend(): Promise<BackendProbe> {
  const p = await probeWebgpu();
  const details: string[] = [];
  const version = packageVersion('webgpu');
  details.push(p.loads ? `webgpu ${version ?? ''} loads (dawn.node)`.replace('  ', ' ') : 'webgpu does not load');
  if (p.libvulkan !== undefined)
    details.push(p.libvulkan ? `libvulkan.so.1: ${p.libvulkan}` : 'libvulkan.so.1: not found');
  if (p.adapterInfo) details.push(`adapter: ${p.adapterInfo}`);
  if (p.software) details.push(`auto skips it: ${p.software} (\`--backend webgpu\` still runs on it)`);
  const tfjs = packageVersion('@tensorflow/tfjs-backend-webgpu');
  if (!tfjs) details.push('@tensorflow/tfjs-backend-webgpu is not installed');
  if (p.adapter && !tfjs)
    return { name: 'webgpu', available: false, reason: '@tensorflow/tfjs-backend-webgpu is not installed', details };
  return p.adapter
    ? { name: 'webgpu', available: true, details }
    : { name: 'webgpu', available: false, reason: p.reason ?? 'no adapter', details };
}

function probeWasm(): BackendProbe {
  const details: string[] = [];
  const version = packageVersion('@tensorflow/tfjs-backend-wasm');
  if (!version)
    return { name: 'wasm', available: false, reason: '@tensorflow/tfjs-backend-wasm is not installed', details };
  details.push(`@tensorflow/tfjs-backend-wasm ${version}`);
  let dir: string;
  try {
    dir = wasmBinaryDir();
  } catch (e) {
    return {
      name: 'wasm',
      available: false,
      reason: `cannot locate its .wasm files: ${(e as Error).message.split('\n')[0]}`,
      details,
    };
  }
  const simd = wasmSimdSupported();
  const file = simd ? 'tfjs-backend-wasm-simd.wasm' : 'tfjs-backend-wasm.wasm';
  if (!existsSync(join(dir, file)))
    return { name: 'wasm', available: false, reason: `${file} is missing from ${dir}`, details };
  details.push(`${join(dir, file)}`);
  details.push(simd ? 'SIMD' : 'no SIMD in this runtime (about 3× slower)');
  details.push('1 thread (multithreaded wasm in Node needs the patch in tfjs-runtime.md §2.1)');
  const native = loadNativeMatmul();
  const trainAlone = chooseBlasThreads('nothing', blasThreadLimits());
  details.push(
    native.ok
      ? `matmuls on native OpenBLAS (openblas-matmul, ${native.threads} thread${native.threads === 1 ? '' : 's'}; ${trainAlone.threads} for a training step alone${trainAlone.reason === 'train only' ? '' : ` (${trainAlone.reason})`}): ${native.config}; ${native.path}`
      : `matmuls on wasm: no native OpenBLAS matmul: ${native.reason}`,
  );
  return { name: 'wasm', available: true, details };
}

/** The same WebAssembly module tfjs-backend-wasm validates to decide on SIMD. */
function wasmSimdSupported(): boolean {
  try {
    const wasm = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;
    return wasm.validate(
      new Uint8Array([
        0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0, 65, 0, 253, 15, 26, 11,
      ]),
    );
  } catch {
    return false;
  }
}

function probeCpu(): BackendProbe {
  const version = packageVersion('@tensorflow/tfjs-backend-cpu');
  return version
    ? {
        name: 'cpu',
        available: true,
        details: [
          `@tensorflow/tfjs-backend-cpu ${version}`,
          'pure JavaScript, 1 thread: for tests and as the last resort',
        ],
      }
    : { name: 'cpu', available: false, reason: '@tensorflow/tfjs-backend-cpu is not installed', details: [] };
}

/** Each backend's availability, in `auto`'s order. Loads neither tfjs-node variant, nor any tfjs backend. */
export async function probeBackends(): Promise<BackendProbe[]> {
  const out: BackendProbe[] = [];
  for (const name of BACKEND_ORDER) {
    switch (name) {
      case 'tensorflow-gpu':
      case 'tensorflow':
        out.push(probeNative(name));
        break;
      case 'webgpu':
        out.push(await probeWebgpuBackend());
        break;
      case 'wasm':
        out.push(probeWasm());
        break;
      case 'cpu':
        out.push(probeCpu());
        break;
    }
  }
  return out;
}

function cpuFeatures(): string[] {
  if (process.platform !== 'linux') return [];
  try {
    const flags = new Set(
      /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].trim().split(/\s+/) ?? [],
    );
    return ['avx', 'avx2', 'fma', 'avx512f', 'neon', 'asimd'].filter((f) => flags.has(f));
  } catch {
    return [];
  }
}

/** The host, every backend's availability, and the backend initBackend() picks (initialising it). */
export async function machineReport(): Promise<MachineReport> {
  const list = cpus();
  const backends = await probeBackends();
  const preference = process.env[BACKEND_ENV]?.trim() || 'auto';
  let selection: MachineReport['selection'];
  try {
    // A software adapter is measured too (auto still skips it), so the report can show both rates.
    const info: BackendInfo = await initBackend({ prefer: 'auto', measureSoftwareWebgpu: true });
    selection = { preference, ok: true, ...info };
  } catch (e) {
    selection = {
      preference,
      ok: false,
      error: (e as Error).message,
      tried: e instanceof BackendUnavailableError ? e.tried : [],
    };
  }
  const report: MachineReport = {
    node: process.version,
    napi: process.versions.napi,
    platform: process.platform,
    arch: process.arch,
    cpu: { model: list[0]?.model.trim() ?? 'unknown', cores: list.length, features: cpuFeatures() },
    memory: { totalBytes: totalmem(), freeBytes: freemem() },
    backends,
    selection,
  };
  if (selection.ok) report.engineMemory = engineMemory();
  return report;
}
