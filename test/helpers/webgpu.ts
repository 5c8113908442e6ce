/**
 * Starts the engine on webgpu for an in-process test: Dawn on SwiftShader's Vulkan driver unless $VK_ICD_FILENAMES
 * names another (CI installs libvulkan1; Debian's chromium ships the driver), and fails, never skips, when it cannot
 * start. The backend's readSync is then made to throw for any tensor still on the GPU (what crashes in Node:
 * tfjs-backend-webgpu's synchronous read draws through an OffscreenCanvas), and counted, so a test can assert that
 * nothing it ran read the device synchronously.
 */
import { tmpdir } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../runtime/engine/backend';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export interface SyncReadGuard {
  /** Synchronous reads of GPU-resident tensors attempted so far (each one threw). */
  readonly count: number;
}

export async function startWebgpuGuarded(): Promise<SyncReadGuard> {
  process.env.VK_ICD_FILENAMES ??= SWIFTSHADER_ICD;
  process.env.XDG_RUNTIME_DIR ??= tmpdir();
  try {
    await initBackend({ prefer: 'webgpu' });
  } catch (e) {
    throw new Error(
      `webgpu did not start (CI installs libvulkan1; Debian's chromium ships ${SWIFTSHADER_ICD}): ${(e as Error).message}`,
    );
  }
  const be = tf.backend() as unknown as {
    readSync(id: object): unknown;
    tensorMap: { get(id: object): { values?: unknown } };
  };
  const guard = { count: 0 };
  const readSync = be.readSync.bind(be);
  be.readSync = (id: object) => {
    if (be.tensorMap.get(id)?.values == null) {
      guard.count++;
      throw new Error('synchronous read of a GPU tensor on webgpu');
    }
    return readSync(id);
  };
  return guard;
}
