/**
 * Logits parity with PyTorch on webgpu (Dawn on SwiftShader's Vulkan driver here and in CI; a GPU where there is
 * one): the cases of test/helpers/logits-parity.ts that parity.test.ts runs on cpu, with the same bound
 * (max |ours − torch| ≤ 1e-4 · max(1, max |ref|)), for all four fixture models, full sequences and KV-cache decoding,
 * and the negative controls. Every read is an awaited data(); a synchronous read of a GPU tensor throws and fails
 * the test.
 *
 * On SwiftShader the engine runs every matmul as tfjs' tiled program (backend/webgpu.ts: the small-output programs
 * tfjs picks for a GPU take 100+ ms per dispatch there). Those programs are what a hardware adapter runs for
 * one-token decode steps, so one model is also checked with tfjs' own choice (WEBGPU_MATMUL_PROGRAM_TYPE -1).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import {
  assertClose,
  compare,
  describeLogitsParity,
  incrementalLogits,
  loadParityModel,
  readInputs,
  readReference,
  report,
} from '../../helpers/logits-parity';
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

describe("webgpu with tfjs' own matmul program choice (what a GPU runs)", () => {
  test('qwen2: prefill 10, then two one-token steps (reduce programs), match the torch reference', async (t) => {
    const flag = 'WEBGPU_MATMUL_PROGRAM_TYPE';
    const before = tf.env().getNumber(flag);
    assert.equal(before, 3, 'the engine did not pick the tiled matmul on the software adapter');
    tf.env().set(flag, -1);
    const model = loadParityModel('qwen2');
    try {
      const ids = readInputs();
      const ref = readReference('qwen2');
      for (const step of await incrementalLogits(model, ids, [10, 1, 1])) {
        const c = compare(step.logits, ref.logits, ids.length, step.len, step.t0);
        report(t, 'qwen2', `default programs, t=${step.t0}..${step.t0 + step.len - 1}`, c);
        assertClose('qwen2', `default matmul programs at t=${step.t0}`, c);
      }
    } finally {
      model.dispose();
      tf.env().set(flag, before);
    }
    assert.equal(guard.count, 0, 'a synchronous read of a GPU tensor');
  });
});
