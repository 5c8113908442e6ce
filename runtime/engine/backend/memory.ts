/**
 * Memory the engine holds, on any backend, and as run metrics under veRL's names (`perf/max_memory_allocated_gb`,
 * `perf/max_memory_reserved_gb`, `perf/cpu_memory_used_gb`, which veRL's actor update logs from torch.cuda's peak
 * allocator counters and psutil). What each means here:
 *
 * - allocated: bytes of live tfjs tensors. On webgpu the GPU buffers in use (tfjs-backend-webgpu's buffer manager,
 *   `numBytesInGPU`); elsewhere tfjs' own count (`tf.memory().numBytes`: in the wasm heap, or host memory for
 *   cpu / tfjs-node). The `max_` figure is the peak since {@link watchPeakMemory} was installed, sampled at every
 *   new tensor, so it includes a step's activations.
 * - reserved: what the backend holds for tensors, in use or pooled: on webgpu every GPU buffer it has created
 *   (`numBytesAllocatedInGPU`, the free ones kept for reuse included); on wasm the WebAssembly heap (it grows and
 *   never shrinks, 4 GiB at most). cpu and tfjs-node have no such pool: no reserved figure.
 * - cpu_memory_used: as veRL, the machine's memory in use (total − available), not this process's. The process's
 *   own peak resident set is `perf/max_rss_gb` (a name of ours).
 */
import * as tf from '@tensorflow/tfjs-core';
import { freemem, totalmem } from 'node:os';

export interface EngineMemory {
  /** `tf.getBackend()` when read. */
  backend: string;
  /** Bytes of live tensors now, and their peak since the watch was installed (now, if it was not). */
  allocatedBytes: number;
  peakAllocatedBytes: number;
  /** Bytes the backend reserves (webgpu: all its GPU buffers; wasm: its heap), peak of the samples; absent: none. */
  reservedBytes?: number;
  peakReservedBytes?: number;
  /** webgpu only: GPU buffer bytes in use and created (tf.memory()'s numBytesInGPU / numBytesAllocatedInGPU). */
  gpu?: { bytesInUse: number; bytesAllocated: number };
  /** This process's resident set now and its peak (the kernel's maxrss). */
  rssBytes: number;
  maxRssBytes: number;
  /** The machine's memory in use (total − available). */
  machineUsedBytes: number;
  machineTotalBytes: number;
}

interface WebgpuLike {
  bufferManager?: { numBytesUsed?: number; numBytesAllocated?: number };
}
interface WasmLike {
  wasm?: { HEAPU8?: Uint8Array } | null;
}

let peakAllocated = 0;
let peakReserved = 0;
let watching = false;

/** The part of tfjs' engine read here: its backend, and the byte count `tf.memory()` copies out of its state. */
interface EngineLike {
  backend: WebgpuLike & WasmLike;
  state: { numBytes: number };
}

const engineOf = (): EngineLike => tf.engine() as unknown as EngineLike;

// Read at every new tensor: fields only, no `tf.memory()` (which builds an object and asks the backend).
function allocatedNow(): number {
  const engine = engineOf();
  const used = engine.backend.bufferManager?.numBytesUsed;
  return typeof used === 'number' ? used : engine.state.numBytes;
}

function reservedNow(): number | undefined {
  const be = engineOf().backend;
  const pooled = be.bufferManager?.numBytesAllocated;
  if (typeof pooled === 'number') return pooled;
  const heap = be.wasm?.HEAPU8?.buffer.byteLength;
  return typeof heap === 'number' ? heap : undefined;
}

/**
 * Starts tracking the peak of allocated bytes: wraps tfjs' engine `trackTensor` (called for every new tensor and
 * variable) with a compare, which costs nothing next to a kernel. Idempotent.
 */
export function watchPeakMemory(): void {
  if (watching) return;
  const engine = tf.engine() as unknown as { trackTensor(a: unknown, backend: unknown): void };
  const track = engine.trackTensor.bind(engine);
  engine.trackTensor = (a, backend) => {
    track(a, backend);
    const now = allocatedNow();
    if (now > peakAllocated) peakAllocated = now;
  };
  watching = true;
}

/** Starts the peaks over from the bytes held now (a measurement of one pass). */
export function resetPeakMemory(): void {
  peakAllocated = allocatedNow();
  peakReserved = reservedNow() ?? 0;
}

/** The engine's memory now, with the peaks; also folds this reading into them. */
export function engineMemory(): EngineMemory {
  const allocated = allocatedNow();
  peakAllocated = Math.max(peakAllocated, allocated);
  const m: EngineMemory = {
    backend: tf.getBackend(),
    allocatedBytes: allocated,
    peakAllocatedBytes: peakAllocated,
    rssBytes: process.memoryUsage.rss(),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    machineUsedBytes: totalmem() - freemem(),
    machineTotalBytes: totalmem(),
  };
  const reserved = reservedNow();
  if (reserved !== undefined) {
    peakReserved = Math.max(peakReserved, reserved);
    m.reservedBytes = reserved;
    m.peakReservedBytes = peakReserved;
  }
  const mem = tf.memory() as { numBytesInGPU?: number; numBytesAllocatedInGPU?: number };
  if (typeof mem.numBytesInGPU === 'number')
    m.gpu = { bytesInUse: mem.numBytesInGPU, bytesAllocated: mem.numBytesAllocatedInGPU ?? mem.numBytesInGPU };
  return m;
}

const GIB = 2 ** 30;

/** The `perf/` memory metrics of a training step (GiB, as veRL logs them). */
export function memoryMetrics(): Record<string, number> {
  const m = engineMemory();
  const out: Record<string, number> = { 'perf/max_memory_allocated_gb': m.peakAllocatedBytes / GIB };
  if (m.peakReservedBytes !== undefined) out['perf/max_memory_reserved_gb'] = m.peakReservedBytes / GIB;
  out['perf/cpu_memory_used_gb'] = m.machineUsedBytes / GIB;
  out['perf/max_rss_gb'] = m.maxRssBytes / GIB;
  return out;
}
