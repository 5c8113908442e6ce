/**
 * Sampling: seeded reproducibility, left-padded batches that equal single prompts, log probabilities that equal the
 * trainer's recomputation, and each sampling control (temperature, top-k, top-p, min/max tokens, stops).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { newModelConfigJson, parseModelConfig, type ModelFamily } from '../../../runtime/engine/lm/config';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';
import { generate, TokenSampler } from '../../../runtime/engine/sampling';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { Rng } from '../../../runtime/engine/random';

const EOS = 1;

function tinyModel(family: ModelFamily, seed = 11): CausalLM {
  const cfg = parseModelConfig(
    newModelConfigJson({
      family,
      layers: 2,
      hidden: 16,
      heads: 4,
      kvHeads: family === 'gpt2' ? 4 : 2,
      vocabSize: 20,
      maxPositions: 40,
      eosTokenIds: [EOS],
    }),
  );
  return initModel(cfg, seed);
}

/** log π(token) of every completion token, recomputed from the whole sequence at `temperature`. */
function rescore(m: CausalLM, prompt: readonly number[], tokens: number[], temperature: number): number[] {
  const seq = [...prompt, ...tokens];
  return tf.tidy(() =>
    Array.from(scoreSequences(m, tf.tensor2d([seq], undefined, 'int32'), { temperature }).logprobs.dataSync()).slice(
      prompt.length - 1,
    ),
  );
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('generate', () => {
  const prompts = [
    [5, 6, 7, 8],
    [9, 10],
    [11, 12, 13],
  ];

  for (const family of ['gpt2', 'qwen3'] as const) {
    test(`${family}: sampled log probabilities equal the full-sequence recomputation at the sampling temperature`, async () => {
      const m = tinyModel(family);
      const out = await generate(m, prompts, { maxNewTokens: 8, n: 2, seed: 4, temperature: 0.7, stopTokenIds: [] });
      assert.equal(out.length, 6);
      for (const c of out) {
        const ref = rescore(m, prompts[c.promptIndex], c.tokens, 0.7);
        assert.equal(c.tokens.length, 8);
        ref.forEach((r, i) =>
          assert.ok(Math.abs(r - c.logprobs[i]) < 2e-5, `prompt ${c.promptIndex} token ${i}: ${c.logprobs[i]} vs ${r}`),
        );
      }
      m.dispose();
    });
  }

  test('the same seed gives the same samples; another seed gives others', async () => {
    const m = tinyModel('qwen2');
    const a = await generate(m, prompts, { maxNewTokens: 10, n: 2, seed: 1, stopTokenIds: [] });
    const b = await generate(m, prompts, { maxNewTokens: 10, n: 2, seed: 1, stopTokenIds: [] });
    const c = await generate(m, prompts, { maxNewTokens: 10, n: 2, seed: 2, stopTokenIds: [] });
    assert.deepEqual(
      a.map((x) => x.tokens),
      b.map((x) => x.tokens),
    );
    assert.notDeepEqual(
      a.map((x) => x.tokens),
      c.map((x) => x.tokens),
    );
    // The n samples of one prompt differ from each other.
    assert.notDeepEqual(a[0].tokens, a[1].tokens);
    m.dispose();
  });

  test('greedy decoding of a prompt is the same alone and left-padded in a batch', async () => {
    const m = tinyModel('llama');
    const batch = await generate(m, prompts, { maxNewTokens: 8, temperature: 0, stopTokenIds: [] });
    for (const [i, p] of prompts.entries()) {
      const alone = await generate(m, [p], { maxNewTokens: 8, temperature: 0, stopTokenIds: [] });
      assert.deepEqual(batch[i].tokens, alone[0].tokens, `prompt ${i}`);
    }
    m.dispose();
  });

  test('top-k 1 and a tiny top-p are greedy', async () => {
    const m = tinyModel('qwen2');
    const greedy = await generate(m, prompts, { maxNewTokens: 6, temperature: 0, stopTokenIds: [] });
    const k1 = await generate(m, prompts, { maxNewTokens: 6, temperature: 1.5, topK: 1, seed: 9, stopTokenIds: [] });
    const p0 = await generate(m, prompts, { maxNewTokens: 6, temperature: 1.5, topP: 1e-6, seed: 9, stopTokenIds: [] });
    assert.deepEqual(
      k1.map((c) => c.tokens),
      greedy.map((c) => c.tokens),
    );
    assert.deepEqual(
      p0.map((c) => c.tokens),
      greedy.map((c) => c.tokens),
    );
    m.dispose();
  });

  test('a stop token ends a completion (and is kept); min_new_tokens holds it back', async () => {
    const m = tinyModel('gpt2');
    // Stop on whatever the model likes most after the first prompt: it must then stop at once.
    const first = (await generate(m, [prompts[0]], { maxNewTokens: 1, temperature: 0, stopTokenIds: [] }))[0].tokens[0];
    const stopped = (await generate(m, [prompts[0]], { maxNewTokens: 6, temperature: 0, stopTokenIds: [first] }))[0];
    assert.deepEqual(stopped.tokens, [first]);
    assert.equal(stopped.finishReason, 'stop');
    const held = (
      await generate(m, [prompts[0]], { maxNewTokens: 6, minNewTokens: 3, temperature: 0, stopTokenIds: [first] })
    )[0];
    assert.ok(held.tokens.length >= 3);
    assert.ok(!held.tokens.slice(0, 3).includes(first));
    const unlimited = (await generate(m, [prompts[0]], { maxNewTokens: 5, temperature: 0, stopTokenIds: [] }))[0];
    assert.equal(unlimited.finishReason, 'length');
    assert.equal(unlimited.tokens.length, 5);
    m.dispose();
  });

  test('stop strings cut the completion before the string', async () => {
    const m = tinyModel('qwen2');
    const decode = (ids: number[]): string => ids.map((i) => String.fromCharCode(97 + i)).join('');
    const free = (await generate(m, [prompts[1]], { maxNewTokens: 8, temperature: 0, stopTokenIds: [] }, decode))[0];
    const stop = free.text!.slice(3, 5);
    const cut = (
      await generate(
        m,
        [prompts[1]],
        { maxNewTokens: 8, temperature: 0, stopTokenIds: [], stopStrings: [stop] },
        decode,
      )
    )[0];
    assert.equal(cut.finishReason, 'stop');
    assert.equal(cut.text, free.text!.slice(0, free.text!.indexOf(stop)));
    assert.deepEqual(cut.tokens, free.tokens.slice(0, cut.tokens.length));
    assert.equal(cut.logprobs.length, cut.tokens.length);
    m.dispose();
  });

  test('prompts longer than the context are refused; ids past validVocab are never sampled', async () => {
    const m = tinyModel('qwen2');
    await assert.rejects(
      async () => generate(m, [Array.from({ length: 40 }, () => 3)], { maxNewTokens: 4 }),
      /leaves no room in max_position_embeddings \(40\)/,
    );
    await assert.rejects(async () => generate(m, [[]], { maxNewTokens: 4 }), /prompt 0 is empty/);
    const out = await generate(m, prompts, {
      maxNewTokens: 12,
      n: 4,
      temperature: 3,
      seed: 5,
      validVocab: 6,
      stopTokenIds: [],
    });
    for (const c of out)
      assert.ok(
        c.tokens.every((t) => t < 6),
        c.tokens.join(','),
      );
    m.dispose();
  });

  test('generation leaks no tensors', async () => {
    const m = tinyModel('qwen3');
    await generate(m, prompts, { maxNewTokens: 4, stopTokenIds: [] });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) await generate(m, prompts, { maxNewTokens: 6, n: 2, seed: i });
    assert.equal(tf.memory().numTensors, before);
    m.dispose();
  });
});

describe('TokenSampler', () => {
  const logits = Float32Array.from([2, 1, 0.5, 0, -1, -3]);
  const softmax = (z: number[], t: number): number[] => {
    const e = z.map((x) => Math.exp(x / t));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  };

  test('draws follow softmax(z / T) and report log of that probability', () => {
    const T = 0.8;
    const s = new TokenSampler({ maxNewTokens: 1, temperature: T }, 6);
    const rng = new Rng(123);
    const counts = new Array(6).fill(0);
    const N = 20000;
    const p = softmax(Array.from(logits), T);
    for (let i = 0; i < N; i++) {
      const { token, logprob } = s.sample(logits, rng, 0, new Set());
      counts[token]++;
      assert.ok(Math.abs(logprob - Math.log(p[token])) < 1e-6);
    }
    // 5 standard deviations of a binomial proportion.
    p.forEach((pi, i) =>
      assert.ok(
        Math.abs(counts[i] / N - pi) < 5 * Math.sqrt((pi * (1 - pi)) / N) + 1e-9,
        `token ${i}: ${counts[i] / N} vs ${pi}`,
      ),
    );
  });

  test('top-k keeps the k most likely tokens; top-p the smallest set reaching p', () => {
    const rng = new Rng(7);
    const seen = (params: { topK?: number; topP?: number }): Set<number> => {
      const s = new TokenSampler({ maxNewTokens: 1, temperature: 1, ...params }, 6);
      const out = new Set<number>();
      for (let i = 0; i < 3000; i++) out.add(s.sample(logits, rng, 0, new Set()).token);
      return out;
    };
    assert.deepEqual([...seen({ topK: 2 })].sort(), [0, 1]);
    // softmax([2,1,0.5,0,-1,-3]) ≈ [0.50, 0.18, 0.11, 0.07, 0.02, 0.003]: 0.5 alone is below 0.6, adding 0.18 reaches it.
    assert.deepEqual([...seen({ topP: 0.6 })].sort(), [0, 1]);
    assert.deepEqual([...seen({ topP: 0.45 })].sort(), [0]);
  });

  test('top-k/top-p draws equal a full-sort reference for the same seed, ties included', () => {
    const g = new Rng(2024);
    let draws = 0;
    for (let trial = 0; trial < 600; trial++) {
      const V = [2, 3, 7, 40, 257, 3000][trial % 6];
      const kind = Math.floor(trial / 6) % 5;
      const logits = new Float32Array(V);
      for (let i = 0; i < V; i++) {
        const z = g.normal();
        // Continuous, coarse (many ties), two levels, one level, wide.
        logits[i] = [z * 3, Math.round(z * 2) / 2, g.uniform() < 0.3 ? 1 : 0, 0.25, z * 15][kind];
      }
      const topK = [0, 1, 2, 5, 50, V - 1, V, V + 3][trial % 8];
      const topP = [1, 0.95, 0.8, 0.5, 0.2, 1e-9, 0.999][trial % 7];
      const params = {
        maxNewTokens: 1,
        topK,
        topP,
        temperature: [1, 0.6, 1.7][trial % 3],
        minNewTokens: trial % 5 === 0 ? 2 : 0,
        validVocab: trial % 4 === 0 ? V - 1 || 1 : undefined,
      };
      const stops = new Set(trial % 5 === 0 && V > 2 ? [0] : []);
      const sampler = new TokenSampler(params, V);
      for (let seed = 0; seed < 8; seed++) {
        const got = sampler.sample(logits, new Rng(trial * 1000 + seed), 0, stops);
        const want = referenceSample(logits, params, new Rng(trial * 1000 + seed), 0, stops);
        assert.deepEqual(got, want, `trial ${trial} (V ${V}, top-k ${topK}, top-p ${topP}) seed ${seed}`);
        draws++;
      }
    }
    assert.equal(draws, 4800);
  });
});

/** The sampler written plainly: every candidate sorted by (probability descending, id ascending), then cut. */
function referenceSample(
  logits: Float32Array,
  params: { temperature: number; topK: number; topP: number; minNewTokens: number; validVocab?: number },
  rng: Rng,
  generated: number,
  stops: ReadonlySet<number>,
): { token: number; logprob: number } {
  const V = params.validVocab ?? logits.length;
  const scale = 1 / params.temperature;
  const banned = (i: number): boolean => generated < params.minNewTokens && stops.has(i);
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (!banned(i) && logits[i] * scale > max) max = logits[i] * scale;
  const p: number[] = [];
  let sum = 0;
  for (let i = 0; i < V; i++) {
    p.push(banned(i) ? 0 : Math.exp(logits[i] * scale - max));
    sum += p[i];
  }
  const logprob = (token: number): { token: number; logprob: number } => ({
    token,
    logprob: logits[token] * scale - (max + Math.log(sum)),
  });
  const order = p.map((_, i) => i).filter((i) => p[i] > 0);
  order.sort((a, b) => p[b] - p[a] || a - b);
  if (params.topK <= 0 && params.topP >= 1) {
    let u = rng.uniform() * sum;
    for (let i = 0; i < V; i++) {
      u -= p[i];
      if (u < 0) return logprob(i);
    }
    return logprob(order.reduce((a, b) => Math.max(a, b)));
  }
  const kept = params.topK > 0 ? order.slice(0, params.topK) : order;
  const keptSum = kept.reduce((s, i) => s + p[i], 0);
  let keep = kept.length;
  if (params.topP < 1) {
    let acc = 0;
    keep = 0;
    while (keep < kept.length) {
      acc += p[kept[keep++]];
      if (acc >= params.topP * keptSum) break;
    }
  }
  const final = kept.slice(0, keep);
  let u = rng.uniform() * final.reduce((s, i) => s + p[i], 0);
  for (const i of final) {
    u -= p[i];
    if (u < 0) return logprob(i);
  }
  return logprob(final[final.length - 1]);
}
