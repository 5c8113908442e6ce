/**
 * Reference log-probs through the one-kernel step (lm/native-scorer.ts) against `scoreSequences`, the forward they
 * replace in the RFT trainer: the same tail columns within float32 rounding, for left-padded prompts and
 * right-padded responses, a temperature, GQA with q/k/v biases (tied head) and q/k norms (untied head), and batches
 * long enough to run in several row chunks. Then against float64 log-softmaxes computed here: of PyTorch's float64
 * logits for the parity checkpoints (test/fixtures/engine/parity), and, for a vocabulary of several head blocks
 * (decode_step.c folds the log-softmax block by block), of the model's own logits.
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
import { loadParityModel, readInputs, readReference } from '../../helpers/logits-parity';
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

/** log softmax(z / temperature)[target] in float64. */
function logSoftmaxAt(z: ArrayLike<number>, temperature: number, target: number): number {
  let max = -Infinity;
  for (let v = 0; v < z.length; v++) max = Math.max(max, z[v] / temperature);
  let sum = 0;
  for (let v = 0; v < z.length; v++) sum += Math.exp(z[v] / temperature - max);
  return z[target] / temperature - max - Math.log(sum);
}

/**
 * A float32 forward's logits lie within 1e-6 of the logit scale (max(1, max |logit|)) of float64 ones (about
 * a tenth of that on these models); a log-softmax at temperature τ moves by at most twice the largest logit error over τ.
 */
function float32Bound(logitScale: number, temperature: number): number {
  return (2 * 1e-6 * Math.max(1, logitScale)) / temperature;
}

/** The scorer's `[B, cols]` tail of whole rows (all tokens real) against `want(b, t)`, the log-prob of token t. */
function worstTailError(
  m: Parameters<typeof nativeTailLogprobs>[0],
  ids: number[][],
  cols: number,
  temperature: number,
  want: (b: number, t: number) => number,
): number {
  const got = nativeTailLogprobs(
    m,
    ids,
    ids.map((r) => r.map(() => 1)),
    cols,
    temperature,
  );
  assert.ok(got, 'the native scorer runs on wasm with the addon');
  const a = got.arraySync();
  got.dispose();
  const T = ids[0].length;
  let worst = 0;
  a.forEach((row, b) => row.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - want(b, T - cols + j))))));
  return worst;
}

for (const name of ['qwen2', 'qwen3', 'llama3'] as const)
  test(`native reference log-probs equal a float64 log-softmax of PyTorch's float64 logits: ${name}`, (t) => {
    const ids = readInputs();
    const ref = readReference(name);
    const m = loadParityModel(name);
    const temperature = 0.7;
    let scale = 0;
    for (const row of ref.logits) for (const z of row) for (const x of z) scale = Math.max(scale, Math.abs(x));
    const bound = float32Bound(scale, temperature);
    for (const cols of [5, ids[0].length - 1]) {
      const worst = worstTailError(m, ids, cols, temperature, (b, tok) =>
        logSoftmaxAt(ref.logits[b][tok - 1], temperature, ids[b][tok]),
      );
      t.diagnostic(
        `${name}, last ${cols} tokens: max |ours − float64| ${worst.toExponential(2)} (bound ${bound.toExponential(2)})`,
      );
      assert.ok(worst <= bound, `${name}, last ${cols} tokens: max |difference| ${worst}`);
    }
    m.dispose();
  });

test('native reference log-probs over a vocabulary of several head blocks equal a float64 log-softmax', () => {
  // 9,000 tokens: two whole 4,096-column blocks and a partial one; large logits (initializer 1.0) so that rows' maxima
  // fall in different blocks and the running sum is rescaled.
  const V = 9000;
  const raw = newModelConfigJson({
    family: 'qwen2',
    layers: 1,
    hidden: 16,
    heads: 2,
    kvHeads: 1,
    tieEmbeddings: false,
    vocabSize: V,
    maxPositions: 32,
    eosTokenIds: [1],
  });
  const m = initModel(parseModelConfig({ ...raw, initializer_range: 1.0 }), 5);
  const rng = new Rng(11);
  const ids = Array.from({ length: 3 }, () => Array.from({ length: 10 }, () => rng.nextU32() % V));
  const temperature = 0.9;
  const logits = tf
    .tidy(() => m.logits(m.forward(tf.tensor2d(ids, undefined, 'int32')).hidden))
    .arraySync() as number[][][];
  let scale = 0;
  for (const row of logits) for (const z of row) for (const x of z) scale = Math.max(scale, Math.abs(x));
  assert.ok(scale > 20, `logits large enough to move the maximum between blocks (max |logit| ${scale})`);
  const bound = float32Bound(scale, temperature);
  const worst = worstTailError(m, ids, 6, temperature, (b, tok) =>
    logSoftmaxAt(logits[b][tok - 1], temperature, ids[b][tok]),
  );
  assert.ok(worst <= bound, `max |difference| ${worst} (bound ${bound})`);
  m.dispose();
});
