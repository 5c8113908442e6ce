/**
 * Gradient checks of every layer and loss building block of the engine (runtime/engine/ops.ts, the embedding lookup,
 * the softmax attention of whole tiny models through `scoreSequences`) on the backend `initBackend({ prefer: 'auto' })`
 * picks (wasm on a machine without tfjs-node or a GPU), against central finite differences in float32.
 *
 * Tolerances (float32, see test/helpers/gradcheck.ts for the error budget): each sampled coordinate must satisfy
 * |analytic − numeric| ≤ atol + rtol·|numeric| with atol = 2e-3, rtol = 2e-2, step h = 1e-2 on O(1) inputs and weights.
 * Whole models use Richardson-extrapolated central differences with h = 2e-2 (see MODEL_STEP) and the same atol/rtol.
 * Observed errors are far smaller (the worst err/bound ratio is logged per check: ≤ 0.02 for single ops, ≤ 0.17 for
 * models). Each check also requires a sampled gradient of at least 20·atol = 4e-2, so it cannot pass on gradients
 * that are all ≈ 0; the "negative controls" at the end show that gradients with one term dropped fail these checks.
 * Also verified once by hand (registering deliberately wrong gradients for Softmax, Tanh, Sigmoid, Erf, Rsqrt,
 * BatchMatMul (b scaled by 0.9), Concat, Sum, and an UnsortedSegmentSum that overwrites instead of adding): each
 * made the checks of the ops and models that use it fail.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend, type BackendInfo } from '../../../runtime/engine/backend';
import { assertGradCheck, describeReport, gradCheck, randn, type GradCheckReport } from '../../helpers/gradcheck';
import { MODEL_CASES, NEGATIVE_CASES, OP_CASES, withInputs } from '../../helpers/gradcheck-cases';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

let info: BackendInfo;

before(async () => {
  info = await initBackend({ prefer: 'auto' });
  // On wasm, the matmuls (and so every matmul gradient checked here) run on the native OpenBLAS kernel.
  assertNativeMatmulOnWasm(info);
});

function check(rep: GradCheckReport): void {
  console.log(`  [${tf.getBackend()}] ${describeReport(rep)}`);
  assertGradCheck(rep);
}

describe(`gradient checks on the active backend (initBackend auto)`, () => {
  test('the active backend is the one initBackend chose', () => {
    assert.equal(tf.getBackend(), info.tfBackend);
  });

  for (const c of Object.values(OP_CASES)) test(c.name, async () => check(await c.run()));
});

describe('gradient checks of whole tiny models through scoreSequences (every weight tensor, up to 12 entries each)', () => {
  for (const c of Object.values(MODEL_CASES)) test(c.name, async () => check(await c.run()));
});

// ---- negative controls: the same checks reject gradients with a term dropped ----

describe('negative controls: a gradient with one term dropped fails the check', () => {
  for (const c of Object.values(NEGATIVE_CASES)) {
    test(c.name, async () => {
      const rep = await c.run();
      assert.equal(rep.ok, false, describeReport(rep));
    });
  }

  test('a check whose gradients are all ≈ 0 is reported as vacuous, not passed', async () => {
    const rep = await withInputs(
      22,
      (rng) => [randn([6], rng)],
      ([x]) => gradCheck('tiny', (xx) => tf.mul(xx, 1e-4), [x]),
    );
    assert.equal(rep.ok, false);
    assert.match(rep.problems.join('\n'), /vacuous/);
  });
});
