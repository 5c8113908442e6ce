/**
 * The fused native AdamW (train/native-adamw.ts over native/blas-matmul) on wasm: AdamW.apply takes it, and four
 * clipped, weight-decayed steps over tensors of odd sizes equal a float64 AdamW written out here by hand (torch's
 * formula) to 1e-6 relative, weights and both moments; a non-finite norm still skips the step; the tfjs form on cpu
 * agrees with it; a clone of a weight taken before the step keeps its old values. Not built is a failure, not a
 * skip (CI builds the addon). Runs on wasm (this file is its own process).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend, loadNativeMatmul, NATIVE_MATMUL_ENV } from '../../../runtime/engine/backend';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { nativeAdamW } from '../../../runtime/engine/train/native-adamw';

delete process.env[BACKEND_ENV];
delete process.env[NATIVE_MATMUL_ENV];

before(async () => {
  const l = loadNativeMatmul();
  assert.ok(l.ok, `native/blas-matmul does not load: ${l.ok ? '' : l.reason} (npm run build:native)`);
  await initBackend({ prefer: 'wasm' });
  assert.equal(tf.getBackend(), 'wasm');
});

/** A deterministic pseudo-random float32 array in [-scale, scale). */
function values(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 2 * scale;
  }
  return out;
}

interface Hyper {
  lr: number;
  b1: number;
  b2: number;
  eps: number;
  wd: number;
  clip: number;
}

/** torch.optim.AdamW after clip_grad_norm_, in float64 throughout (the state is never rounded to float32). */
function referenceSteps(p0: Float64Array[], grads: Float32Array[][], h: Hyper) {
  const p = p0.map((x) => Float64Array.from(x));
  const m = p0.map((x) => new Float64Array(x.length));
  const v = p0.map((x) => new Float64Array(x.length));
  const norms: number[] = [];
  grads.forEach((gs, t) => {
    let sq = 0;
    for (const g of gs) for (const x of g) sq += x * x;
    const norm = Math.sqrt(sq);
    norms.push(norm);
    const coef = Math.min(1, h.clip / (norm + 1e-6));
    const bc1 = 1 - h.b1 ** (t + 1);
    const bc2 = 1 - h.b2 ** (t + 1);
    gs.forEach((g, i) => {
      for (let j = 0; j < g.length; j++) {
        const gj = g[j] * coef;
        m[i][j] = h.b1 * m[i][j] + (1 - h.b1) * gj;
        v[i][j] = h.b2 * v[i][j] + (1 - h.b2) * gj * gj;
        p[i][j] *= 1 - h.lr * h.wd;
        p[i][j] -= ((h.lr / bc1) * m[i][j]) / (Math.sqrt(v[i][j]) / Math.sqrt(bc2) + h.eps);
      }
    });
  });
  return { p, m, v, norms };
}

/**
 * Elementwise relative error ≤ 1e-6. A moment that cancelled to near zero (gradients of alternating sign) carries the
 * float32 rounding of its larger past values, so an element is measured against at least its tensor's mean magnitude.
 */
function assertClose(got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  assert.equal(got.length, want.length, what);
  let meanAbs = 0;
  for (let i = 0; i < want.length; i++) meanAbs += Math.abs(want[i]) / want.length;
  let worst = 0;
  let at = -1;
  for (let i = 0; i < want.length; i++) {
    const rel = Math.abs(got[i] - want[i]) / Math.max(Math.abs(want[i]), meanAbs, 1e-30);
    if (rel > worst) [worst, at] = [rel, i];
  }
  assert.ok(worst <= 1e-6, `${what}: relative error ${worst} at ${at} (${got[at]} vs ${want[at]})`);
}

const SHAPES = [[37, 5], [1001], [3], [16, 64]];
const H: Hyper = { lr: 0.05, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.01, clip: 1 };

describe('native AdamW on wasm', () => {
  test('is what AdamW.apply runs here', () => {
    const w = tf.zeros([4]);
    assert.ok(nativeAdamW([w]), 'the native kernels are not available on wasm with the addon loaded');
    w.dispose();
  });

  test('four clipped steps equal a float64 AdamW to 1e-6 relative (weights and both moments)', async () => {
    const init = SHAPES.map((s, i) => values(tf.util.sizeFromShape(s), 11 + i));
    // Gradients of growing size, so the first steps are clipped and the last is not (norm < 1).
    const grads = [3, 0.7, 2, 0.2].map((scale, t) =>
      SHAPES.map((s, i) => values(tf.util.sizeFromShape(s), 100 * t + i, scale / 40)),
    );
    const vars = SHAPES.map((s, i) => tf.variable(tf.tensor(init[i], s)));
    const before = tf.clone(vars[0]);
    const opt = new AdamW(vars, { betas: [H.b1, H.b2], eps: H.eps, weightDecay: H.wd, clipGradNorm: H.clip });
    const kernelsBefore = tf.memory().numTensors;
    const norms: number[] = [];
    for (const gs of grads) {
      const r = await opt.apply(
        gs.map((g, i) => tf.tensor(g, SHAPES[i])),
        H.lr,
      );
      assert.equal(r.skipped, false);
      norms.push(r.gradNorm);
    }
    assert.equal(tf.memory().numTensors, kernelsBefore, 'the steps leave no tensors behind');
    const ref = referenceSteps(
      init.map((x) => Float64Array.from(x)),
      grads,
      H,
    );
    norms.forEach((n, t) => assertClose([n], [ref.norms[t]], `norm at step ${t}`));
    assert.ok(ref.norms[0] > 1 && ref.norms[3] < 1, 'the test covers clipped and unclipped steps');
    const state = await opt.exportState();
    for (let i = 0; i < vars.length; i++) {
      assertClose(await vars[i].data(), ref.p[i], `weight ${i}`);
      assertClose(state.m[i], ref.m[i], `first moment ${i}`);
      assertClose(state.v[i], ref.v[i], `second moment ${i}`);
    }
    assert.deepEqual(await before.data(), init[0], 'a clone taken before the steps keeps the old weights');
    assert.equal(opt.step, 4);
    opt.dispose();
    tf.dispose([...vars, before]);
  });

  test('a non-finite gradient skips the step and leaves weights and moments alone', async () => {
    const w = tf.variable(tf.tensor1d([1, 2, 3]));
    const opt = new AdamW([w]);
    const r = await opt.apply([tf.tensor1d([1, Infinity, 0])], 0.1);
    assert.equal(r.skipped, true);
    assert.equal(r.gradNorm, Infinity);
    assert.deepEqual(Array.from(await w.data()), [1, 2, 3]);
    assert.equal(opt.step, 0);
    opt.dispose();
    w.dispose();
  });

  test('the tfjs form on cpu takes the same steps', async () => {
    const run = async (): Promise<Float32Array[]> => {
      const vars = SHAPES.map((s, i) => tf.variable(tf.tensor(values(tf.util.sizeFromShape(s), 7 + i), s)));
      const opt = new AdamW(vars, { clipGradNorm: 1, weightDecay: 0.1 });
      for (let t = 0; t < 3; t++)
        await opt.apply(
          SHAPES.map((s, i) => tf.tensor(values(tf.util.sizeFromShape(s), 50 * t + i, 0.1), s)),
          0.01,
        );
      const out = await Promise.all(vars.map(async (v) => (await v.data()) as Float32Array));
      opt.dispose();
      tf.dispose(vars);
      return out;
    };
    const wasm = await run();
    assert.ok(await tf.setBackend('cpu'));
    try {
      const cpu = await run();
      cpu.forEach((c, i) => {
        for (let j = 0; j < c.length; j++)
          assert.ok(Math.abs(c[j] - wasm[i][j]) <= 2e-6 * Math.max(1, Math.abs(c[j])), `tensor ${i}[${j}]`);
      });
    } finally {
      assert.ok(await tf.setBackend('wasm'));
    }
  });
});
