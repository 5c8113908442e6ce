/** Asserts that the wasm backend's matmuls run on the native OpenBLAS kernel (native/blas-matmul), as CI builds it. */
import assert from 'node:assert/strict';
import {
  loadNativeMatmul,
  NATIVE_MATMUL_ACCELERATOR,
  NATIVE_MATMUL_ENV,
  type BackendInfo,
} from '../../runtime/engine/backend';

/**
 * Fails, saying how to build the addon, when `info` is wasm without `openblas-matmul`. Passes for other backends,
 * and when $TRINITY_WORKBENCH_NATIVE_MATMUL=0 deliberately runs the suite on stock wasm.
 */
export function assertNativeMatmulOnWasm(info: BackendInfo): void {
  if (info.name !== 'wasm') return;
  const l = loadNativeMatmul();
  if (!l.ok && l.disabled) return;
  assert.ok(
    info.accelerators?.includes(NATIVE_MATMUL_ACCELERATOR),
    `the wasm backend runs without its native OpenBLAS matmul: ${l.ok ? 'it loads but was not installed' : l.reason}. ` +
      `CI builds it (.ci/run); locally: apt-get install libopenblas-dev && npm run build:native ` +
      `(or set ${NATIVE_MATMUL_ENV}=0 to test stock wasm on purpose).`,
  );
}
