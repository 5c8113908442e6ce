/**
 * Reference log-probs through the one-kernel step (lm/native-scorer.ts) against `scoreSequences`, the forward they
 * replace in the RFT trainer: the same tail columns within float32 rounding, for left-padded prompts and
 * right-padded responses, a temperature, GQA with q/k/v biases (tied head) and q/k norms (untied head), and batches
 * long enough to run in several row chunks.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../runtime/engine/backend';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../../runtime/engine/lm/config';
import { nativeTailLogprobs } from '../../../runtime/engine/lm/native-scorer';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { Rng } from '../../../runtime/engine/random';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

const ATOL = 1e-5;

before(async () => {
  assertNativeMatmulOnWasm(await initBackend({ prefer: 'wasm' }));
});

/** B rows of P + R tokens: prompts left-padded, responses right-padded, lengths varying by row. */
function batch(rng: Rng, B: number, P: number, R: number, vocab: number): { tokens: number[][]; mask: number[][] } {
  const tokens: number[][] = [];
  const mask: number[][] = [];
  for (let b = 0; b < B; b++) {
    const p = 1 + (b % P);
    const r = 1 + ((b * 7) % R);
    tokens.push(Array.from({ length: P + R }, (_, t) => (t >= P - p && t < P + r ? rng.nextU32() % vocab : 0)));
    mask.push(Array.from({ length: P + R }, (_, t) => (t >= P - p && t < P + r ? 1 : 0)));
  }
  return { tokens, mask };
}

const cases: { name: string; spec: Omit<NewModelSpec, 'vocabSize' | 'maxPositions' | 'eosTokenIds'>; B: number }[] = [
  {
    name: 'qwen2, GQA, q/k/v biases, tied head',
    spec: { family: 'qwen2', layers: 2, hidden: 32, heads: 4, kvHeads: 2 },
    B: 6,
  },
  {
    name: 'qwen3, q/k norms, untied head',
    spec: { family: 'qwen3', layers: 2, hidden: 32, heads: 4, kvHeads: 1, tieEmbeddings: false },
    B: 5,
  },
  {
    name: 'qwen2, 40 rows of 40 tokens (two row chunks)',
    spec: { family: 'qwen2', layers: 1, hidden: 16, heads: 2, kvHeads: 1 },
    B: 40,
  },
];

for (const c of cases)
  test(`native reference log-probs equal scoreSequences' tail: ${c.name}`, () => {
    const raw = newModelConfigJson({ ...c.spec, vocabSize: 50, maxPositions: 64, eosTokenIds: [1] });
    const m = initModel(parseModelConfig({ ...raw, initializer_range: 0.3 }), 7);
    const P = 13;
    const R = 27;
    const { tokens, mask } = batch(new Rng(3), c.B, P, R, 50);
    const temperature = 0.7;
    const want = tf.tidy(() =>
      tf.slice(
        scoreSequences(m, tf.tensor2d(tokens, undefined, 'int32'), { temperature, attentionMask: mask }).logprobs,
        [0, P - 1],
        [c.B, R],
      ),
    );
    const before = tf.memory().numTensors;
    const got = nativeTailLogprobs(m, tokens, mask, R, temperature);
    assert.ok(got, 'the native scorer runs on wasm with the addon');
    assert.equal(tf.memory().numTensors, before + 1, 'only the result is left');
    assert.deepEqual(got.shape, [c.B, R]);
    const a = got.arraySync();
    const w = want.arraySync();
    let worst = 0;
    a.forEach((row, b) =>
      row.forEach((v, j) => {
        // Columns past a row's response score padding: the trainer masks them, and so does this check.
        if (!mask[b][P + j]) return;
        worst = Math.max(worst, Math.abs(v - w[b][j]));
      }),
    );
    assert.ok(worst < ATOL, `max |difference| ${worst}`);
    got.dispose();
    want.dispose();
    m.dispose();
  });
