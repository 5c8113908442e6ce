/**
 * Logits parity with PyTorch on webgpu (Dawn on SwiftShader's Vulkan driver here and in CI; a GPU where there is
 * one): the cases of test/helpers/logits-parity.ts that parity.test.ts runs on cpu, with the same bound
 * (max |ours − torch| ≤ 1e-4 · max(1, max |ref|)), for all four fixture models, full sequences and KV-cache decoding,
 * and the negative controls. Every read is an awaited data(); a synchronous read of a GPU tensor throws and fails
 * the test.
 */
import assert from 'node:assert/strict';
import { before, describe } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { describeLogitsParity } from '../../helpers/logits-parity';
import { startWebgpuGuarded, type SyncReadGuard } from '../../helpers/webgpu';

let guard: SyncReadGuard;

before(async () => {
  guard = await startWebgpuGuarded();
});

describe('logits parity with PyTorch on webgpu (float64 reference, 1e-4 relative)', () => {
  describeLogitsParity({
    check: () => {
      assert.equal(tf.getBackend(), 'webgpu');
      assert.equal(guard.count, 0, 'a synchronous read of a GPU tensor');
    },
  });
});
