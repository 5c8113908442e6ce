/**
 * Gradient checks on webgpu (Dawn on SwiftShader's Vulkan driver here and in CI; a GPU where there is one): the
 * smallest of the engine's checks (test/helpers/gradcheck-cases.ts, all of which run on wasm in gradcheck.test.ts)
 * against central differences whose projection onto the cotangent is done in float64 on the host. The subset: the
 * attention core (batched matmuls, softmax, the causal mask), RMSNorm, the embedding lookup (webgpu's own
 * UnsortedSegmentSum), and the loss path (token log-probs at two temperatures and the entropy), plus one negative
 * control so the checks are seen to fail on webgpu too. Every read is an awaited data(): the backend's synchronous
 * read is made to throw, as in webgpu-sync-reads.test.ts.
 *
 * Tolerances: the wasm ones (atol 2e-3, rtol 2e-2, h = 1e-2; see test/helpers/gradcheck.ts). WGSL's f32 is IEEE
 * single precision; its exp/log may be less exact than wasm's (WGSL allows a few ULP), but float32 rounding of the
 * outputs is what the budget already covers, about 50x below the bound; observed worst err/bound here ≤ 0.02.
 * The whole-model checks are not repeated: a model check is two forwards per sampled coordinate (192 for gpt2), and
 * even with the engine's tiled matmul on a software adapter (backend/webgpu.ts) the gpt2 check took 51 s on
 * SwiftShader here (2 loaded cores); the parts they compose are checked here one by one.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { assertGradCheck, describeReport } from '../../helpers/gradcheck';
import { NEGATIVE_CASES, OP_CASES } from '../../helpers/gradcheck-cases';
import { startWebgpuGuarded, type SyncReadGuard } from '../../helpers/webgpu';

const SUBSET = ['attention', 'rmsNorm', 'gather', 'tokenLogProbs(T=1)', 'tokenLogProbs(T=0.7)', 'tokenEntropy(T=1)'];
let guard: SyncReadGuard;

before(async () => {
  guard = await startWebgpuGuarded();
});

describe('gradient checks on webgpu', () => {
  test('the active backend is webgpu', () => assert.equal(tf.getBackend(), 'webgpu'));

  for (const key of SUBSET) {
    const c = OP_CASES[key];
    assert.ok(c, `no gradient check named ${key}`);
    test(c.name, async () => {
      const rep = await c.run();
      console.log(`  [webgpu] ${describeReport(rep)}`);
      assertGradCheck(rep);
      assert.equal(guard.count, 0);
    });
  }

  test(`negative control: ${NEGATIVE_CASES.logProbs.name} fails`, async () => {
    const rep = await NEGATIVE_CASES.logProbs.run();
    assert.equal(rep.ok, false, describeReport(rep));
    assert.equal(guard.count, 0);
  });
});
