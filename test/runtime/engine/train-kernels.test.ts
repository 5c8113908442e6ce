/**
 * The fused training kernels (runtime/engine/backend/train-kernels.ts, native/blas-matmul/src/train_kernels.c) on
 * wasm with the OpenBLAS addon: values and gradients against float64 references computed here on the host, central
 * finite differences (test/helpers/gradcheck.ts), the same bits on 1 and 2 threads, training steps against tfjs' own
 * ops, and the fallbacks (cpu, the switch, the environment variables).
 *
 * Tolerances: float32 inputs, float64 references. A value passes when |fused − ref| ≤ 2e-6 + 2e-6·|ref|
 * ({@link TOL}), about 15 float32 ulps; the kernels accumulate in float64 and their exp is within 2 ulp, and the
 * observed worst is ~2e-7 (each check logs its worst |Δ|/bound: ≤ 0.11). Gradients use the same bound with |ref|
 * the tensor's largest (they are sums of float32 products of O(1) terms). Training: the losses of 4 AdamW steps
 * agree with the tfjs-ops path within 1e-5 relative (observed: logged).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend, NATIVE_MATMUL_ENV, setBlasThreads } from '../../../runtime/engine/backend';
import {
  fusedHeadsRope,
  fusedMaskedSoftmax,
  fusedRmsNorm,
  fusedSwiglu,
  fusedTokenLogProbs,
  TRAIN_KERNELS_ENV,
  trainKernelsActive,
  useTrainKernels,
} from '../../../runtime/engine/backend/train-kernels';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { rmsNorm, swiglu, tokenLogProbs } from '../../../runtime/engine/ops';
import { Rng } from '../../../runtime/engine/random';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { nativeAdamW } from '../../../runtime/engine/train/native-adamw';
import { Trainer } from '../../../runtime/engine/train/step';
import { assertGradCheck, describeReport, gradCheck, randn } from '../../helpers/gradcheck';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

delete process.env[BACKEND_ENV];
delete process.env[TRAIN_KERNELS_ENV];

const TOL = { atol: 2e-6, rtol: 2e-6 };

before(async () => {
  const info = await initBackend({ prefer: 'wasm' });
  assert.equal(info.name, 'wasm');
  assertNativeMatmulOnWasm(info);
  assert.ok(trainKernelsActive(), 'the fused training kernels are active on wasm with the addon');
});

after(() => {
  setBlasThreads(1);
  useTrainKernels(true);
});

type F64 = Float64Array;

function values(t: tf.Tensor): Float64Array {
  return Float64Array.from(t.dataSync());
}

/** Every |got − ref| within atol + rtol·|ref| (scale: the tensor's largest |ref|, for gradients); the worst ratio. */
function assertClose(got: ArrayLike<number>, ref: ArrayLike<number>, what: string, byScale = false): number {
  assert.equal(got.length, ref.length, `${what}: length`);
  let scale = 0;
  for (let i = 0; i < ref.length; i++) scale = Math.max(scale, Math.abs(ref[i]));
  let worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const bound = TOL.atol + TOL.rtol * (byScale ? scale : Math.abs(ref[i]));
    const err = Math.abs(got[i] - ref[i]);
    assert.ok(
      err <= bound,
      `${what}[${i}]: ${got[i]} vs float64 ${ref[i]} (|Δ| ${err.toExponential(2)} > ${bound.toExponential(2)})`,
    );
    worst = Math.max(worst, err / bound);
  }
  console.log(`  ${what}: ${ref.length} entries, worst |Δ|/bound ${worst.toFixed(3)}`);
  return worst;
}

/** The analytic gradients of Σ r ⊙ f(xs) with respect to every x (tfjs autodiff through the fused kernels). */
function gradsOf(f: (...xs: tf.Tensor[]) => tf.Tensor, xs: tf.Tensor[], r: tf.Tensor): Float64Array[] {
  return tf
    .tidy(() => tf.grads((...a: tf.Tensor[]) => tf.sum(tf.mul(f(...a), r)))(xs))
    .map((g) => {
      const v = values(g);
      g.dispose();
      return v;
    });
}

describe('tokenLogProbs: log softmax(z / T)[target]', () => {
  function reference(z: F64, t: Int32Array, N: number, V: number, temp: number, r: F64): { y: F64; dz: F64 } {
    const y = new Float64Array(N);
    const dz = new Float64Array(N * V);
    for (let n = 0; n < N; n++) {
      let m = -Infinity;
      for (let i = 0; i < V; i++) m = Math.max(m, z[n * V + i] / temp);
      let s = 0;
      for (let i = 0; i < V; i++) s += Math.exp(z[n * V + i] / temp - m);
      const lse = m + Math.log(s);
      y[n] = z[n * V + t[n]] / temp - lse;
      for (let i = 0; i < V; i++)
        dz[n * V + i] = (r[n] / temp) * ((i === t[n] ? 1 : 0) - Math.exp(z[n * V + i] / temp - lse));
    }
    return { y, dz };
  }

  for (const [N, V, temp, scale] of [
    [37, 4096, 1, 3],
    [64, 512, 0.7, 2],
    [5, 131, 1.3, 20],
  ] as const) {
    test(`[${N}, ${V}] logits ×${scale}, T = ${temp}: values and gradient against float64`, () => {
      const rng = new Rng(N + V);
      const z = randn([N, V], rng, scale) as tf.Tensor2D;
      const targets = Int32Array.from({ length: N }, () => rng.nextU32() % V);
      const t = tf.tensor1d(targets, 'int32');
      const r = randn([N], rng);
      const ref = reference(values(z), targets, N, V, temp, values(r));
      assertClose(values(fusedTokenLogProbs(z, t, temp)), ref.y, 'log-probs');
      const [dz] = gradsOf((x) => fusedTokenLogProbs(x as tf.Tensor2D, t, temp), [z], r);
      assertClose(dz, ref.dz, 'dlogits', true);
      tf.dispose([z, t, r]);
    });
  }

  test('finite differences (gradcheck)', async () => {
    const rng = new Rng(3);
    const z = randn([6, 50], rng);
    const t = tf.tensor1d([0, 49, 7, 7, 20, 33], 'int32');
    const rep = await gradCheck('fused tokenLogProbs', (x) => fusedTokenLogProbs(x as tf.Tensor2D, t, 0.8), [z]);
    console.log(`  ${describeReport(rep)}`);
    assertGradCheck(rep);
    tf.dispose([z, t]);
  });

  test('a target outside the vocabulary is an error, not a read of another row', () => {
    const z = tf.zeros([2, 8]) as tf.Tensor2D;
    for (const bad of [8, -1]) {
      const t = tf.tensor1d([0, bad], 'int32');
      assert.throws(() => fusedTokenLogProbs(z, t, 1), /target is outside the vocabulary/);
      t.dispose();
    }
    z.dispose();
  });
});

describe('rmsNorm: x / √(mean(x²) + eps) · w', () => {
  function reference(x: F64, w: F64, rows: number, d: number, eps: number, r: F64) {
    const y = new Float64Array(rows * d);
    const dx = new Float64Array(rows * d);
    const dw = new Float64Array(d);
    for (let n = 0; n < rows; n++) {
      const o = n * d;
      let ss = 0;
      for (let i = 0; i < d; i++) ss += x[o + i] ** 2;
      const inv = 1 / Math.sqrt(ss / d + eps);
      let dot = 0; // Σ r·w·x̂
      for (let i = 0; i < d; i++) {
        y[o + i] = x[o + i] * inv * w[i];
        dw[i] += r[o + i] * x[o + i] * inv;
        dot += r[o + i] * w[i] * x[o + i] * inv;
      }
      for (let i = 0; i < d; i++) dx[o + i] = inv * (r[o + i] * w[i] - x[o + i] * inv * (dot / d));
    }
    return { y, dx, dw };
  }

  for (const [shape, eps] of [
    [[8, 64, 384], 1e-6],
    [[3, 5, 7], 1e-5],
    [[2, 4, 6, 64], 1e-6],
  ] as const) {
    test(`[${shape}], eps ${eps}: values and gradients against float64`, () => {
      const rng = new Rng(shape.length * 100 + shape[shape.length - 1]);
      const d = shape[shape.length - 1];
      const x = randn([...shape], rng, 1.5, 0.2);
      const w = randn([d], rng, 0.5, 1);
      const r = randn([...shape], rng);
      const ref = reference(values(x), values(w), x.size / d, d, eps, values(r));
      assertClose(values(fusedRmsNorm(x, w, eps)), ref.y, 'y');
      const [dx, dw] = gradsOf((a, b) => fusedRmsNorm(a, b, eps), [x, w], r);
      assertClose(dx, ref.dx, 'dx', true);
      assertClose(dw, ref.dw, 'dw', true);
      tf.dispose([x, w, r]);
    });
  }

  test('finite differences (gradcheck)', async () => {
    const rng = new Rng(4);
    const x = randn([3, 4, 16], rng);
    const w = randn([16], rng, 0.3, 1);
    const rep = await gradCheck('fused rmsNorm', (a, b) => fusedRmsNorm(a, b, 1e-6), [x, w]);
    console.log(`  ${describeReport(rep)}`);
    assertGradCheck(rep);
    tf.dispose([x, w]);
  });
});

describe('swiglu: silu(gate) · up', () => {
  test('[512, 1024] and [3, 7] against float64, gate from −100 to 100', () => {
    for (const shape of [
      [512, 1024],
      [3, 7],
    ]) {
      const rng = new Rng(shape[1]);
      const g = randn(shape, rng, 3);
      const u = randn(shape, rng);
      const r = randn(shape, rng);
      const gv = values(g);
      gv[0] = -100; // e^100 overflows float32: silu must still be ≈ 0, not NaN
      gv[1] = 100;
      const gate = tf.tensor(Float32Array.from(gv), shape);
      const [uv, rv] = [values(u), values(r)];
      const sig = (a: number): number => 1 / (1 + Math.exp(-a));
      const y = gv.map((a, i) => a * sig(a) * uv[i]);
      const dg = gv.map((a, i) => rv[i] * uv[i] * sig(a) * (1 + a * (1 - sig(a))));
      const du = gv.map((a, i) => rv[i] * a * sig(a));
      assertClose(values(fusedSwiglu(gate, u)), y, `y [${shape}]`);
      const [gg, gu] = gradsOf((a, b) => fusedSwiglu(a, b), [gate, u], r);
      assertClose(gg, dg, `dgate [${shape}]`, true);
      assertClose(gu, du, `dup [${shape}]`, true);
      tf.dispose([g, u, r, gate]);
    }
  });

  test('finite differences (gradcheck)', async () => {
    const rng = new Rng(5);
    const g = randn([4, 9], rng, 2);
    const u = randn([4, 9], rng);
    const rep = await gradCheck('fused swiglu', (a, b) => fusedSwiglu(a, b), [g, u]);
    console.log(`  ${describeReport(rep)}`);
    assertGradCheck(rep);
    tf.dispose([g, u]);
  });
});

describe('maskedSoftmax: attention probabilities softmax(scale · s + bias)', () => {
  /**
   * The model's mask: causal, plus padding per row (−1e9 additive, as transformer.ts builds it): `pads[b]` keys on
   * the left (veRL's layout), or on the right when `right`.
   */
  function mask(B: number, T: number, pads: number[] | undefined, right = false): Float32Array {
    const Bb = pads ? B : 1;
    const m = new Float32Array(Bb * T * T);
    const padded = (b: number, j: number): boolean => !!pads && (right ? j >= T - pads[b] : j < pads[b]);
    for (let b = 0; b < Bb; b++)
      for (let i = 0; i < T; i++)
        for (let j = 0; j < T; j++) m[(b * T + i) * T + j] = (j > i ? -1e9 : 0) + (padded(b, j) ? -1e9 : 0);
    return m;
  }

  for (const pads of [undefined, [0, 3, 1]]) {
    test(`${pads ? 'causal + left padding [B, 1, T, T]' : 'causal [1, 1, T, T]'}: values and gradient against float64`, () => {
      const [B, H, T] = [3, 4, 24];
      const scale = 1 / Math.sqrt(64);
      const rng = new Rng(pads ? 2 : 1);
      const s = randn([B, H, T, T], rng, 8) as tf.Tensor4D;
      const m = mask(B, T, pads);
      const bias = tf.tensor4d(m, [pads ? B : 1, 1, T, T]);
      const r = randn([B, H, T, T], rng);
      const [sv, rv] = [values(s), values(r)];
      const p = new Float64Array(sv.length);
      const ds = new Float64Array(sv.length);
      for (let row = 0; row < B * H * T; row++) {
        const b = Math.floor(row / (H * T));
        const mrow = ((pads ? b : 0) * T + (row % T)) * T;
        // The sum is rounded to float32 as both paths round it: on a padded query's row (every key masked) −1e9
        // swamps the score, every entry is equal and the row is uniform (its output is padding, never used).
        const v = Array.from({ length: T }, (_, j) => Math.fround(Math.fround(sv[row * T + j] * scale) + m[mrow + j]));
        const mx = Math.max(...v);
        const e = v.map((x) => Math.exp(x - mx));
        const sum = e.reduce((a, x) => a + x, 0);
        let dot = 0;
        for (let j = 0; j < T; j++) {
          p[row * T + j] = e[j] / sum;
          dot += p[row * T + j] * rv[row * T + j];
        }
        for (let j = 0; j < T; j++) ds[row * T + j] = scale * p[row * T + j] * (rv[row * T + j] - dot);
      }
      assertClose(values(fusedMaskedSoftmax(s, bias, scale)), p, 'probs');
      const [g] = gradsOf((x) => fusedMaskedSoftmax(x as tf.Tensor4D, bias, scale), [s], r);
      assertClose(g, ds, 'dscores', true);
      tf.dispose([s, bias, r]);
    });
  }

  // Right padding: every query keeps a real key, so no row is constant in the scores (a left-padded query's row is:
  // its numeric gradient is 0, while the softmax formula both paths use gives the gradient of the unmasked row).
  test('finite differences (gradcheck), causal + right padding', async () => {
    const rng = new Rng(6);
    const s = randn([2, 2, 5, 5], rng, 2);
    const bias = tf.tensor4d(mask(2, 5, [2, 0], true), [2, 1, 5, 5]);
    const rep = await gradCheck('fused maskedSoftmax', (x) => fusedMaskedSoftmax(x as tf.Tensor4D, bias, 0.5), [s]);
    console.log(`  ${describeReport(rep)}`);
    assertGradCheck(rep);
    tf.dispose([s, bias]);
  });
});

describe('headsRope: [B, T, H·hd] + bias → [B, H, T, hd], rotate-half RoPE', () => {
  function reference(x: F64, bias: F64 | undefined, cos: F64 | undefined, sin: F64 | undefined, dims: number[]) {
    const [B, T, H, hd] = dims;
    const half = hd / 2;
    const y = new Float64Array(x.length);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let h = 0; h < H; h++)
          for (let i = 0; i < hd; i++) {
            const at = (j: number): number => x[((b * T + t) * H + h) * hd + j] + (bias ? bias[h * hd + j] : 0);
            const c = cos ? cos[(b * T + t) * half + (i % half)] : 1;
            const s = sin ? sin[(b * T + t) * half + (i % half)] : 0;
            const rot = i < half ? -at(i + half) : at(i - half);
            y[((b * H + h) * T + t) * hd + i] = at(i) * c + rot * s;
          }
    return y;
  }

  for (const rotate of [true, false])
    test(`${rotate ? 'rotated (q, k)' : 'not rotated (v)'}: values, and gradients as the transpose (float64)`, () => {
      const [B, T, H, hd] = [3, 40, 4, 16];
      const rng = new Rng(rotate ? 7 : 8);
      const x = randn([B, T, H * hd], rng) as tf.Tensor3D;
      const bias = randn([H * hd], rng, 0.5) as tf.Tensor1D;
      const angles = Array.from({ length: B * T * (hd / 2) }, () => rng.uniform() * 6.28);
      const cos = tf.tensor3d(angles.map(Math.cos), [B, T, hd / 2]);
      const sin = tf.tensor3d(angles.map(Math.sin), [B, T, hd / 2]);
      const rope = rotate ? { cos, sin } : undefined;
      const [xv, bv] = [values(x), values(bias)];
      const [cv, sv] = rotate ? [values(cos), values(sin)] : [undefined, undefined];
      const dims = [B, T, H, hd];
      assertClose(values(fusedHeadsRope(x, H, bias, rope)), reference(xv, bv, cv, sv, dims), 'y');
      // The map is linear in (x, bias): its gradient for cotangent r is ⟨r, J e_k⟩ per input coordinate k.
      const r = randn([B, H, T, hd], rng);
      const rv = values(r);
      const [dx, db] = gradsOf((a, b) => fusedHeadsRope(a as tf.Tensor3D, H, b as tf.Tensor1D, rope), [x, bias], r);
      const refDx = new Float64Array(xv.length);
      const refDb = new Float64Array(bv.length);
      const unit = new Float64Array(xv.length);
      for (const k of [0, 1, 9, hd / 2, hd - 1, hd + 3, xv.length - 1]) {
        unit.fill(0);
        unit[k] = 1;
        const col = reference(unit, undefined, cv, sv, dims);
        refDx[k] = col.reduce((a, v, i) => a + v * rv[i], 0);
        assert.ok(Math.abs(dx[k] - refDx[k]) <= 1e-5 * (1 + Math.abs(refDx[k])), `dx[${k}] ${dx[k]} vs ${refDx[k]}`);
      }
      // dbias = Σ over (b, t) of dx.
      for (let b = 0; b < B * T; b++) for (let i = 0; i < H * hd; i++) refDb[i] += dx[b * H * hd + i];
      assertClose(db, refDb, 'dbias', true);
      tf.dispose([x, bias, cos, sin, r]);
    });

  test('finite differences (gradcheck)', async () => {
    const rng = new Rng(9);
    const x = randn([2, 3, 8], rng);
    const bias = randn([8], rng);
    const ang = Array.from({ length: 2 * 3 * 2 }, () => rng.uniform() * 6);
    const rope = { cos: tf.tensor3d(ang.map(Math.cos), [2, 3, 2]), sin: tf.tensor3d(ang.map(Math.sin), [2, 3, 2]) };
    const rep = await gradCheck(
      'fused headsRope',
      (a, b) => fusedHeadsRope(a as tf.Tensor3D, 2, b as tf.Tensor1D, rope),
      [x, bias],
    );
    console.log(`  ${describeReport(rep)}`);
    assertGradCheck(rep);
    tf.dispose([x, bias, rope.cos, rope.sin]);
  });
});

test('1 and 2 threads give the same bits (rows split; column sums in fixed blocks; the AdamW step too)', () => {
  const rng = new Rng(11);
  const x = randn([512, 384], rng);
  const w = randn([384], rng, 0.2, 1);
  const z = randn([512, 4096], rng, 2) as tf.Tensor2D;
  const t = tf.tensor1d(
    Int32Array.from({ length: 512 }, (_, i) => (i * 37) % 4096),
    'int32',
  );
  const hx = randn([8, 64, 384], rng) as tf.Tensor3D;
  const hb = randn([384], rng) as tf.Tensor1D;
  const [p, g, m, v] = [1, 2, 3, 4].map((i) => randn([1024, 1024], rng, 0.01 * i, i === 4 ? 0.1 : 0));
  const adamw = nativeAdamW([p, g, m, v]);
  assert.ok(adamw, 'the native AdamW is active');
  const h = { lr: 1e-3, b1: 0.9, b2: 0.999, eps: 1e-8, weightDecay: 0.01, coef: 0.7, bc1: 0.19, bc2: 0.002 };
  const bits = (threads: number): Uint32Array[] => {
    setBlasThreads(threads);
    const out = tf.tidy(() => [
      ...adamw.step(p, g, m, v, h),
      ...tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(fusedRmsNorm(a, b, 1e-6), a)))([x, w]),
      ...tf.grads((a: tf.Tensor) => tf.sum(tf.mul(fusedTokenLogProbs(a as tf.Tensor2D, t, 1), 0.5)))([z]),
      ...tf.grads((a: tf.Tensor, b: tf.Tensor) =>
        tf.sum(tf.square(fusedHeadsRope(a as tf.Tensor3D, 6, b as tf.Tensor1D))),
      )([hx, hb]),
    ]);
    return out.map((o) => new Uint32Array((o.dataSync() as Float32Array).buffer.slice(0)));
  };
  const one = bits(1);
  const two = bits(2);
  setBlasThreads(1);
  for (let i = 0; i < one.length; i++) assert.deepEqual(two[i], one[i], `output ${i}`);
  tf.dispose([x, w, z, t, hx, hb, p, g, m, v]);
});

describe('the ops use them on wasm with the addon, and tfjs ops everywhere else', () => {
  function kernelNames(fn: () => tf.Tensor): Promise<string[]> {
    return tf
      .profile(() => {
        const r = fn();
        r.dispose();
        return [] as unknown as tf.TensorContainer;
      })
      .then((p) => p.kernels.map((k) => k.name));
  }
  const ops = (): tf.Tensor =>
    tf.tidy(() => {
      const x = tf.ones([2, 3, 8]);
      const t = tf.tensor2d(
        [
          [1, 2, 3],
          [0, 7, 1],
        ],
        [2, 3],
        'int32',
      );
      return tf.add(tf.sum(tokenLogProbs(rmsNorm(x, tf.ones([8]), 1e-6), t)), tf.sum(swiglu(x, x)));
    });

  test('wasm with the addon: the fused kernels', async () => {
    const names = await kernelNames(ops);
    for (const k of ['TrinityRmsNormTrain', 'TrinityTokenLogProbs', 'TrinitySwiGluTrain'])
      assert.ok(names.includes(k), k);
  });

  for (const [what, off, on] of [
    [
      `${TRAIN_KERNELS_ENV}=0`,
      () => (process.env[TRAIN_KERNELS_ENV] = '0'),
      () => delete process.env[TRAIN_KERNELS_ENV],
    ],
    [
      `${NATIVE_MATMUL_ENV}=0 (no addon)`,
      () => (process.env[NATIVE_MATMUL_ENV] = '0'),
      () => delete process.env[NATIVE_MATMUL_ENV],
    ],
    ['useTrainKernels(false)', () => useTrainKernels(false), () => useTrainKernels(true)],
    ['the cpu backend', () => tf.setBackend('cpu'), () => tf.setBackend('wasm')],
  ] as const)
    test(`${what}: tfjs ops, the same values`, async () => {
      const fused = await ops().data();
      await off();
      try {
        assert.equal(trainKernelsActive(), false);
        const names = await kernelNames(ops);
        assert.ok(!names.some((n) => n.startsWith('Trinity')), names.join(' '));
        assert.ok(names.includes('LogSoftmax') || names.includes('Max'), 'tfjs log-softmax ops ran');
        const plain = await ops().data();
        assert.ok(Math.abs(plain[0] - fused[0]) <= 1e-5 * Math.abs(plain[0]), `${plain[0]} vs ${fused[0]}`);
      } finally {
        await on();
      }
      assert.ok(trainKernelsActive());
    });
});

describe('training steps: fused kernels against tfjs ops', () => {
  for (const family of ['qwen2', 'qwen3'] as const)
    test(`${family}: 4 AdamW steps, left-padded batch, temperature 0.8: losses within 1e-5`, async () => {
      const cfg = parseModelConfig(
        newModelConfigJson({
          family,
          layers: 2,
          hidden: 64,
          heads: 4,
          kvHeads: 2,
          vocabSize: 97,
          maxPositions: 64,
          eosTokenIds: [0],
        }),
      );
      const rng = new Rng(21);
      const rows = Array.from({ length: 3 }, () => Array.from({ length: 20 }, () => rng.nextU32() % 97));
      const mask = rows.map((r, i) => r.map((_, j) => (j < 2 * i ? 0 : 1)));
      const ids = tf.tensor2d(rows, [3, 20], 'int32');
      const losses = async (fused: boolean): Promise<number[]> => {
        useTrainKernels(fused);
        const model = initModel(cfg, 5);
        const opt = new AdamW(model.trainableVariables(), {
          betas: [0.9, 0.999],
          eps: 1e-8,
          weightDecay: 0.01,
          clipGradNorm: 1,
        });
        const trainer = new Trainer(opt, { lr: 1e-2, style: 'constant', warmupSteps: 0, totalSteps: 100 });
        const loss = (): tf.Scalar =>
          tf.tidy(() => {
            const lp = scoreSequences(model, ids, { attentionMask: mask, temperature: 0.8 }).logprobs;
            const m = tf.tensor2d(mask.map((r) => r.slice(1)));
            return tf.neg(tf.div(tf.sum(tf.mul(lp, m)), tf.sum(m))) as tf.Scalar;
          });
        const out: number[] = [];
        for (let s = 0; s < 4; s++) out.push((await trainer.step([loss])).loss);
        model.dispose();
        return out;
      };
      const plain = await losses(false);
      const fused = await losses(true);
      console.log(
        `  ${family}: tfjs ops ${plain.map((l) => l.toFixed(6)).join(' ')}; fused ${fused.map((l) => l.toFixed(6)).join(' ')}`,
      );
      assert.ok(plain[3] < plain[0] - 0.05, 'the steps train');
      for (let s = 0; s < 4; s++)
        assert.ok(Math.abs(fused[s] - plain[s]) <= 1e-5 * Math.abs(plain[s]), `step ${s}: ${fused[s]} vs ${plain[s]}`);
      ids.dispose();
    });
});
