/** Choosing and initialising the tfjs backend (see init.ts), and probing what this machine offers (probe.ts). */
export { initBackend, currentBackend } from './init';
export {
  BACKEND_ENV,
  BACKEND_ORDER,
  BackendUnavailableError,
  isBackendName,
  parseBackendPreference,
  type BackendInfo,
  type BackendName,
  type BackendPreference,
  type InitBackendOptions,
  type TriedBackend,
  type WebgpuComparison,
} from './types';
export { pickWebgpuOrWasm, type WebgpuOrWasm, type WebgpuVsWasm } from './webgpu-or-wasm';
export { registerWasmKernels, unsortedSegmentSumShape } from './wasm-kernels';
export { measureMatmulGflops, selfTest } from './measure';
export { engineMemory, memoryMetrics, resetPeakMemory, watchPeakMemory, type EngineMemory } from './memory';
export {
  NATIVE_MATMUL_ACCELERATOR,
  NATIVE_MATMUL_ENV,
  installNativeMatmul,
  loadNativeMatmul,
  nativeMatmulStatus,
  useNativeMatmul,
} from './native-matmul';
export {
  BLAS_THREADS_ENV,
  BlasThreads,
  atBaseBlasThreads,
  blasThreadLimits,
  blasThreads,
  chooseBlasThreads,
  setBlasThreads,
  type BlasThreadChoice,
  type BlasThreadLimits,
  type BlasWork,
} from './blas-threads';
export { probeBackends, type BackendProbe, type MachineReport, machineReport } from './probe';
