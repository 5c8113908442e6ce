/**
 * Scoring only a batch's last columns (scoreSequences' and CausalLM.forward's `tail`: the trainer's response tokens,
 * the last layer and the head skipping the prompt's positions) gives the values and the gradients of the full
 * forward's last columns. On wasm with the OpenBLAS addon, through the fused training kernels and through tfjs' own
 * ops, for the qwen2 (q/k/v biases), qwen3 (q/k norms), llama (grouped-query attention, untied head) and GPT-2
 * (learned positions, fused qkv, LayerNorm) layouts, left-padded rows of different prompt lengths.
 *
 * Tolerances: values within 2e-6·max(1, |x|) (the kept rows go through the same kernels; only matmuls over fewer rows,
 * which may block their sums differently); gradients within 2e-5 of the tensor's largest |entry| (a weight gradient
 * of the last layer sums over 3/8 of the rows, the others' rows adding exact zeros before).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { BACKEND_ENV, initBackend } from '../../../runtime/engine/backend';
import { TRAIN_KERNELS_ENV, useTrainKernels } from '../../../runtime/engine/backend/train-kernels';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type ModelFamily } from '../../../runtime/engine/lm/config';
import { SCORE_TAIL_ENV, scoreSequences } from '../../../runtime/engine/logprobs';
import { Rng } from '../../../runtime/engine/random';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

delete process.env[BACKEND_ENV];
delete process.env[TRAIN_KERNELS_ENV];
delete process.env[SCORE_TAIL_ENV];

before(async () => {
  const info = await initBackend({ prefer: 'wasm' });
  assert.equal(info.name, 'wasm');
  assertNativeMatmulOnWasm(info);
});
after(() => useTrainKernels(true));

const B = 6;
const T = 14;
const TAIL = 5;
const V = 37;

function model(family: ModelFamily, extra: { kvHeads?: number; tieEmbeddings?: boolean } = {}) {
  const cfg = parseModelConfig(
    newModelConfigJson({
      family,
      layers: 3,
      hidden: 32,
      heads: 4,
      vocabSize: V,
      maxPositions: 32,
      eosTokenIds: [0],
      ...extra,
    }),
  );
  return initModel(cfg, 7);
}

/** Rows left-padded by 0..3 tokens (veRL's layout), real tokens in [1, V). */
function batch(): { ids: number[][]; mask: number[][] } {
  const rng = new Rng(11);
  const ids: number[][] = [];
  const mask: number[][] = [];
  for (let b = 0; b < B; b++) {
    const pad = b % 4;
    ids.push(Array.from({ length: T }, (_, t) => (t < pad ? 0 : 1 + Math.floor(rng.uniform() * (V - 1)))));
    mask.push(Array.from({ length: T }, (_, t) => (t < pad ? 0 : 1)));
  }
  return { ids, mask };
}

function assertClose(got: ArrayLike<number>, want: ArrayLike<number>, bound: (w: number) => number, what: string) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    assert.ok(d <= bound(want[i]), `${what}[${i}]: ${got[i]} vs ${want[i]} (|Δ| ${d})`);
    worst = Math.max(worst, d);
  }
  return worst;
}

const CASES: [string, () => ReturnType<typeof initModel>][] = [
  ['qwen2', () => model('qwen2')],
  ['qwen3', () => model('qwen3')],
  ['llama, GQA, untied head', () => model('llama', { kvHeads: 2, tieEmbeddings: false })],
  ['gpt2', () => model('gpt2')],
];

for (const fused of [true, false]) {
  describe(`scoreSequences' tail (${fused ? 'fused training kernels' : "tfjs' ops"})`, () => {
    before(() => assert.equal(useTrainKernels(fused), fused));
    for (const [name, make] of CASES) {
      test(`${name}: the last columns' log-probs, entropies and every gradient`, () => {
        const m = make();
        const { ids, mask } = batch();
        const idsT = tf.tensor2d(ids, undefined, 'int32');
        // Per-token weights, so every column and row reaches the gradient differently.
        const rng = new Rng(5);
        const wl = tf.tensor2d(Array.from({ length: B }, () => Array.from({ length: TAIL }, () => rng.normal())));
        const we = tf.tensor2d(Array.from({ length: B }, () => Array.from({ length: TAIL }, () => rng.normal())));
        const loss = (tail: number | undefined) => () =>
          tf.tidy(() => {
            const s = scoreSequences(m, idsT, { temperature: 0.7, entropy: true, attentionMask: mask, tail });
            const cut = (x: tf.Tensor2D) => (tail ? x : tf.slice(x, [0, T - 1 - TAIL], [B, TAIL]));
            return tf.add(tf.sum(tf.mul(cut(s.logprobs), wl)), tf.sum(tf.mul(cut(s.entropy!), we))) as tf.Scalar;
          });
        const vars = m.variables();
        const full = tf.variableGrads(loss(undefined), vars);
        const part = tf.variableGrads(loss(TAIL), vars);
        assertClose(part.value.dataSync(), full.value.dataSync(), (w) => 2e-6 * Math.max(1, Math.abs(w)), 'loss');

        const fullS = scoreSequences(m, idsT, { temperature: 0.7, entropy: true, attentionMask: mask });
        const partS = scoreSequences(m, idsT, { temperature: 0.7, entropy: true, attentionMask: mask, tail: TAIL });
        assert.deepEqual(partS.logprobs.shape, [B, TAIL]);
        const last = (x: tf.Tensor2D) => tf.slice(x, [0, T - 1 - TAIL], [B, TAIL]).dataSync();
        const bound = (w: number) => 2e-6 * Math.max(1, Math.abs(w));
        assertClose(partS.logprobs.dataSync(), last(fullS.logprobs), bound, 'log-probs');
        assertClose(partS.entropy!.dataSync(), last(fullS.entropy!), bound, 'entropies');

        let reached = 0;
        for (const v of vars) {
          const g = part.grads[v.name].dataSync() as Float32Array;
          const want = full.grads[v.name].dataSync() as Float32Array;
          const scale = want.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
          assertClose(g, want, () => 2e-5 * Math.max(scale, 1e-6), `d loss / d ${v.name}`);
          if (scale > 0) reached++;
        }
        // Every weight takes part (the prompt's positions still feed the last layer's keys and values).
        assert.equal(reached, vars.length, 'every weight has a non-zero gradient');
        tf.dispose([idsT, wl, we, full.value, part.value, ...Object.values(full.grads), ...Object.values(part.grads)]);
        tf.dispose([fullS.logprobs, fullS.entropy!, partS.logprobs, partS.entropy!]);
      });
    }
  });
}

describe('tail bounds', () => {
  test('the forward returns the last positions only; a tail of every column is the full scores; the switch; a bad one throws', () => {
    const m = model('qwen2');
    const { ids, mask } = batch();
    const idsT = tf.tensor2d(ids, undefined, 'int32');
    const h = m.forward(tf.slice(idsT, [0, 0], [B, T - 1]) as tf.Tensor2D, { tail: TAIL });
    assert.deepEqual(h.hidden.shape, [B, TAIL, 32]);
    const all = scoreSequences(m, idsT, { attentionMask: mask, tail: T - 1 });
    const full = scoreSequences(m, idsT, { attentionMask: mask });
    assert.deepEqual(all.logprobs.shape, [B, T - 1]);
    assert.deepEqual(all.logprobs.dataSync(), full.logprobs.dataSync());
    process.env[SCORE_TAIL_ENV] = '0';
    try {
      const off = scoreSequences(m, idsT, { attentionMask: mask, tail: TAIL });
      assert.deepEqual(off.logprobs.shape, [B, T - 1], `${SCORE_TAIL_ENV}=0 scores every column`);
    } finally {
      delete process.env[SCORE_TAIL_ENV];
    }
    assert.throws(() => scoreSequences(m, idsT, { tail: 0 }), /tail must be a positive integer, got 0/);
    assert.throws(() => scoreSequences(m, idsT, { tail: 1.5 }), /tail must be a positive integer, got 1.5/);
  });
});
