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
 * The whole-model checks are not repeated: every matmul with at most 128 outputs runs tfjs-webgpu's
 * MatMulReduceProgram, ~0.1 s per dispatch on SwiftShader, so one model forward costs about a second and a model
 * check takes minutes; the parts they compose are checked here one by one.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { tmpdir } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../runtime/engine/backend';
import { assertGradCheck, describeReport } from '../../helpers/gradcheck';
import { NEGATIVE_CASES, OP_CASES } from '../../helpers/gradcheck-cases';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
const SUBSET = ['attention', 'rmsNorm', 'gather', 'tokenLogProbs(T=1)', 'tokenLogProbs(T=0.7)', 'tokenEntropy(T=1)'];
let syncReads = 0;

before(async () => {
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
  const readSync = be.readSync.bind(be);
  be.readSync = (id: object) => {
    if (be.tensorMap.get(id)?.values == null) {
      syncReads++;
      throw new Error('synchronous read of a GPU tensor on webgpu');
    }
    return readSync(id);
  };
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
      assert.equal(syncReads, 0);
    });
  }

  test(`negative control: ${NEGATIVE_CASES.logProbs.name} fails`, async () => {
    const rep = await NEGATIVE_CASES.logProbs.run();
    assert.equal(rep.ok, false, describeReport(rep));
    assert.equal(syncReads, 0);
  });
});
