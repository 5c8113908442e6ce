/**
 * RoPE through the rotate-half matrix (ops.applyRopeRotation, what CausalLM.forward runs) against the split-and-concat
 * form (test/helpers/rope-reference.ts): the same bits forward and backward, on wasm (OpenBLAS or XNNPACK matmul) and cpu, at a
 * training step's shape (B 8, 6 heads, T 64, head dim 64) with a real config's tables.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend } from '../../../runtime/engine/backend';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { ropeTables } from '../../../runtime/engine/lm/rope';
import { applyRopeRotation, rotateHalfMatrix } from '../../../runtime/engine/ops';
import { applyRope } from '../../helpers/rope-reference';
import { Rng } from '../../../runtime/engine/random';

delete process.env[BACKEND_ENV];

before(async () => {
  tf.env().set('IS_TEST', true);
  assert.equal((await initBackend({ prefer: 'wasm' })).name, 'wasm');
});

function gaussian(rng: Rng, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.normal();
  return out;
}

for (const backend of ['wasm', 'cpu']) {
  test(`applyRopeRotation equals applyRope bit for bit, values and gradients (${backend})`, async () => {
    await tf.setBackend(backend);
    const [B, H, T, d] = [8, 6, 64, 64];
    const cfg = parseModelConfig(
      newModelConfigJson({
        family: 'qwen2',
        layers: 1,
        hidden: H * d,
        heads: H,
        vocabSize: 8,
        maxPositions: 128,
        eosTokenIds: [0],
      }),
    );
    const tables = ropeTables(cfg);
    const rng = new Rng(5);
    const x = tf.tensor4d(gaussian(rng, B * H * T * d), [B, H, T, d]);
    const w = tf.tensor4d(gaussian(rng, B * H * T * d), [B, H, T, d]);
    const positions = tf.tensor2d(
      Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => t + 3 * b)),
      [B, T],
      'int32',
    );
    const n = tf.memory().numTensors;
    const half = tf.tidy(() =>
      [tables.cos, tables.sin].map((t) => tf.reshape(tf.gather(t, positions), [B, 1, T, d / 2])),
    );
    const full = tf.tidy(() => half.map((h) => tf.concat([h, h], -1)));
    const rot = rotateHalfMatrix(d);
    const split = (xx: tf.Tensor): tf.Tensor => applyRope(xx, half[0], half[1]);
    const matrix = (xx: tf.Tensor): tf.Tensor => applyRopeRotation(xx, full[0], full[1], rot);
    const grad = (f: (xx: tf.Tensor) => tf.Tensor) => tf.grad((xx: tf.Tensor) => tf.sum(tf.mul(f(xx), w)));
    const [ySplit, yMatrix, gSplit, gMatrix] = tf.tidy(() => [split(x), matrix(x), grad(split)(x), grad(matrix)(x)]);
    assert.deepEqual(await yMatrix.data(), await ySplit.data());
    assert.deepEqual(await gMatrix.data(), await gSplit.data());
    tf.dispose([ySplit, yMatrix, gSplit, gMatrix, ...half, ...full, rot]);
    assert.equal(tf.memory().numTensors, n);
    tf.dispose([x, w, positions, tables.cos, tables.sin]);
  });
}
