/**
 * Backend parity: the same tiny models (fixed seed through `initModel`) on the wasm backend (set up by `initBackend`,
 * with its UnsortedSegmentSum kernel) and on the pure-JS cpu backend give the same logits and the same gradients of
 * an SFT-style loss (masked mean NLL of the completion tokens).
 *
 * Tolerances (float32; the two backends sum in different orders, XNNPACK vs plain loops):
 *   logits:    max |wasm − cpu| ≤ 1e-4 (logits are O(1–5) here, so this is ~1e-5 relative)
 *   gradients: per weight tensor, max |wasm − cpu| ≤ 1e-3 · max |cpu| + 1e-7
 *   loss:      |wasm − cpu| ≤ 1e-5 · |cpu|
 * Observed differences are about 1e-6 for logits and 1e-6 relative for gradients (logged per check).
 *
 * tfjs backends are process-global; both are initialised once and `tf.setBackend` switches between them (each model
 * is built from the seed on the backend it runs on). A separate test checks that a model whose variables were
 * created on wasm computes the same on cpu: tfjs moves tensor data to the active backend when it is read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend } from '../../../runtime/engine/backend';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../../runtime/engine/lm/config';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';

const LOGITS_ATOL = 1e-4;
const GRAD_RTOL = 1e-3;
const GRAD_ATOL = 1e-7;
const LOSS_RTOL = 1e-5;

let savedEnv: string | undefined;

before(async () => {
  // This test needs wasm and cpu whatever the environment forces for the rest of the suite.
  savedEnv = process.env[BACKEND_ENV];
  delete process.env[BACKEND_ENV];
  const info = await initBackend({ prefer: 'wasm' });
  assert.equal(info.tfBackend, 'wasm');
  // The wasm side computes its matmuls on the native OpenBLAS kernel: this compares it with cpu too.
  assertNativeMatmulOnWasm(info);
  assert.ok(await tf.setBackend('cpu'), 'the cpu backend does not start');
  // The cpu backend prints a "looks like you are running TensorFlow.js in Node.js" banner on first use.
  (tf.backend() as { firstUse?: boolean }).firstUse = false;
  assert.ok(await tf.setBackend('wasm'));
});

after(async () => {
  if (savedEnv !== undefined) process.env[BACKEND_ENV] = savedEnv;
  await tf.setBackend('wasm');
});

async function use(backend: 'wasm' | 'cpu'): Promise<void> {
  assert.ok(await tf.setBackend(backend), `cannot switch to ${backend}`);
  assert.equal(tf.getBackend(), backend);
}

/** A model config with O(1) weights (initializer_range 0.3) so attention and logits are far from uniform. */
function config(spec: NewModelSpec) {
  return parseModelConfig({ ...newModelConfigJson(spec), initializer_range: 0.3 });
}

interface Batch {
  ids: number[][];
  /** 1 on completion tokens (positions 1..T-1 of ids whose log-prob is trained), 0 on prompt and padding. */
  lossMask: number[][];
  /** For the padded forward: 1 on real tokens. */
  keyMask: number[][];
}

interface Outputs {
  /** Logits of the plain forward `[B, T, V]`. */
  logits: Float32Array;
  /** Logits of a forward with a key mask (left padding). */
  maskedLogits: Float32Array;
  loss: number;
  grads: Map<string, Float32Array>;
  weights: Map<string, Float32Array>;
}

/** Masked mean NLL of the completion tokens, the SFT loss. */
function sftLoss(model: CausalLM, ids: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  const logp = scoreSequences(model, ids).logprobs;
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tf.sum(mask)) as tf.Scalar;
}

function run(model: CausalLM, batch: Batch): Outputs {
  const B = batch.ids.length;
  const T = batch.ids[0].length;
  // The model builds (and keeps) its RoPE tables on its first forward; count after that.
  tf.tidy(() => model.forward(tf.tensor2d([[0, 0]], [1, 2], 'int32')).hidden);
  const before = tf.memory().numTensors;
  const ids = tf.tensor2d(batch.ids, [B, T], 'int32');
  const mask = tf.tensor2d(batch.lossMask, [B, T - 1], 'float32');
  const keyMask = tf.tensor2d(batch.keyMask, [B, T], 'float32');
  try {
    const logits = tf.tidy(() => model.logits(model.forward(ids).hidden).dataSync() as Float32Array);
    const maskedLogits = tf.tidy(() => model.logits(model.forward(ids, { keyMask }).hidden).dataSync() as Float32Array);
    const vars = model.variables();
    const { value, grads } = tf.variableGrads(() => sftLoss(model, ids, mask), vars);
    const out: Outputs = { logits, maskedLogits, loss: value.dataSync()[0], grads: new Map(), weights: new Map() };
    for (const s of model.specs) {
      const v = model.params.get(s.name)!;
      out.grads.set(s.name, grads[v.name].dataSync() as Float32Array);
      out.weights.set(s.name, v.dataSync() as Float32Array);
    }
    value.dispose();
    tf.dispose(grads);
    return out;
  } finally {
    tf.dispose([ids, mask, keyMask]);
    assert.equal(tf.memory().numTensors, before, 'leaked tensors');
  }
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function maxAbs(a: Float32Array): number {
  let m = 0;
  for (const x of a) m = Math.max(m, Math.abs(x));
  return m;
}

function compare(name: string, wasm: Outputs, cpu: Outputs): void {
  for (const [k, w] of wasm.weights)
    assert.equal(maxAbsDiff(w, cpu.weights.get(k)!), 0, `${name}: initModel gave different ${k} on the two backends`);
  const dl = maxAbsDiff(wasm.logits, cpu.logits);
  const dm = maxAbsDiff(wasm.maskedLogits, cpu.maskedLogits);
  assert.ok(maxAbs(cpu.logits) > 0.5, `${name}: logits too small to compare (${maxAbs(cpu.logits)})`);
  let worst = { name: '', diff: 0, scale: 0, ratio: 0 };
  for (const [k, gc] of cpu.grads) {
    const gw = wasm.grads.get(k)!;
    const diff = maxAbsDiff(gw, gc);
    const scale = maxAbs(gc);
    const bound = GRAD_RTOL * scale + GRAD_ATOL;
    assert.ok(scale > 0, `${name}: gradient of ${k} is all zero on cpu`);
    assert.ok(
      diff <= bound,
      `${name}: gradient of ${k} differs: max |wasm − cpu| ${diff.toExponential(3)} > ${bound.toExponential(3)} (max |g| ${scale.toExponential(3)})`,
    );
    if (diff / bound > worst.ratio) worst = { name: k, diff, scale, ratio: diff / bound };
  }
  console.log(
    `  ${name}: loss wasm ${wasm.loss.toFixed(6)} cpu ${cpu.loss.toFixed(6)}; max|Δlogits| ${dl.toExponential(2)} (masked ${dm.toExponential(2)}, max|logit| ${maxAbs(cpu.logits).toFixed(2)}); ` +
      `worst grad ${worst.name}: max|Δ| ${worst.diff.toExponential(2)} of max|g| ${worst.scale.toExponential(2)}`,
  );
  assert.ok(dl <= LOGITS_ATOL, `${name}: logits differ by ${dl}`);
  assert.ok(dm <= LOGITS_ATOL, `${name}: masked-forward logits differ by ${dm}`);
  assert.ok(
    Math.abs(wasm.loss - cpu.loss) <= LOSS_RTOL * Math.abs(cpu.loss),
    `${name}: loss ${wasm.loss} vs ${cpu.loss}`,
  );
}

async function onBoth(spec: NewModelSpec, seed: number, batch: Batch): Promise<{ wasm: Outputs; cpu: Outputs }> {
  const results: Partial<Record<'wasm' | 'cpu', Outputs>> = {};
  for (const backend of ['wasm', 'cpu'] as const) {
    await use(backend);
    const model = initModel(config(spec), seed);
    try {
      results[backend] = run(model, batch);
    } finally {
      model.dispose();
    }
  }
  await use('wasm');
  return { wasm: results.wasm!, cpu: results.cpu! };
}

const BATCH: Batch = {
  // Row 0: 4 prompt tokens then 7 completion tokens. Row 1: 3 prompt tokens, 5 completion, 3 padding (id 0).
  ids: [
    [5, 17, 3, 9, 22, 40, 8, 8, 31, 2, 47, 1],
    [12, 6, 6, 30, 19, 44, 7, 25, 0, 0, 0, 0],
  ],
  lossMask: [
    [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
    [0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0],
  ],
  keyMask: [
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0],
  ],
};

describe('backend parity: wasm vs cpu on tiny models (same seed)', () => {
  test('qwen2, 2 layers, GQA (4 query heads on 2 kv heads), q/k/v biases, tied head', async () => {
    const spec: NewModelSpec = {
      family: 'qwen2',
      layers: 2,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      intermediate: 48,
      vocabSize: 48,
      maxPositions: 32,
      eosTokenIds: [1],
    };
    const { wasm, cpu } = await onBoth(spec, 7, BATCH);
    compare('qwen2', wasm, cpu);
  });

  test('gpt2, 2 layers, 4 heads, learned positions, gelu_new, tied head', async () => {
    const spec: NewModelSpec = {
      family: 'gpt2',
      layers: 2,
      hidden: 32,
      heads: 4,
      intermediate: 64,
      vocabSize: 48,
      maxPositions: 32,
      eosTokenIds: [1],
    };
    const { wasm, cpu } = await onBoth(spec, 8, BATCH);
    compare('gpt2', wasm, cpu);
  });

  test('qwen3, 1 layer, GQA (4 on 1), q/k norms, untied head', async () => {
    const spec: NewModelSpec = {
      family: 'qwen3',
      layers: 1,
      hidden: 32,
      heads: 4,
      kvHeads: 1,
      intermediate: 40,
      vocabSize: 48,
      maxPositions: 32,
      tieEmbeddings: false,
      eosTokenIds: [1],
    };
    const { wasm, cpu } = await onBoth(spec, 9, BATCH);
    compare('qwen3', wasm, cpu);
  });

  test('a model created on wasm computes the same after switching to cpu (tensor data moves between backends)', async () => {
    const spec: NewModelSpec = {
      family: 'qwen2',
      layers: 2,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      intermediate: 48,
      vocabSize: 48,
      maxPositions: 32,
      eosTokenIds: [1],
    };
    await use('cpu');
    const ref = initModel(config(spec), 7);
    let fromCpu: Outputs;
    try {
      fromCpu = run(ref, BATCH);
    } finally {
      ref.dispose();
    }
    await use('wasm');
    const model = initModel(config(spec), 7);
    try {
      const onWasm = run(model, BATCH);
      await use('cpu');
      const moved = run(model, BATCH);
      // Created on wasm, computed on cpu: must match a model built on cpu (same kernels, same data) exactly.
      assert.equal(maxAbsDiff(moved.logits, fromCpu.logits), 0, 'moved model: logits differ from the cpu-built model');
      for (const [k, g] of fromCpu.grads)
        assert.equal(maxAbsDiff(moved.grads.get(k)!, g), 0, `moved model: gradient of ${k} differs`);
      await use('wasm');
      const back = run(model, BATCH);
      assert.equal(maxAbsDiff(back.logits, onWasm.logits), 0, 'moved back to wasm: logits changed');
      // And an update made on cpu is seen on wasm.
      await use('cpu');
      const v = model.params.get('model.norm.weight')!;
      tf.tidy(() => v.assign(tf.mul(v, 2)));
      await use('wasm');
      assert.deepEqual(
        Array.from(v.dataSync()),
        Array.from(fromCpu.weights.get('model.norm.weight')!, (x) => x * 2),
      );
    } finally {
      await use('wasm');
      model.dispose();
    }
  });

  test('UnsortedSegmentSum (the gradient of gather): wasm host kernel equals cpu bit for bit', async () => {
    const n = 37 * 24;
    const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898) * 3.7);
    const ids = Int32Array.from({ length: 37 }, (_, i) => (i * 7) % 11);
    const out: Partial<Record<'wasm' | 'cpu', Float32Array>> = {};
    for (const backend of ['wasm', 'cpu'] as const) {
      await use(backend);
      out[backend] = tf.tidy(
        () => tf.unsortedSegmentSum(tf.tensor2d(x, [37, 24]), tf.tensor1d(ids, 'int32'), 13).dataSync() as Float32Array,
      );
    }
    await use('wasm');
    assert.equal(maxAbsDiff(out.wasm!, out.cpu!), 0);
  });
});
