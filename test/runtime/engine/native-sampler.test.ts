/**
 * The native sampler (backend/native-sampler.ts, native/blas-matmul/src/sample_rows.c) against TokenSampler, the
 * JavaScript it stands in for: the same token for the same uniform on every row it answers, the same log-probability
 * to 1e-12, rows within rounding of a boundary handed back (−1) rather than guessed, banned ids never drawn; and
 * `generate` with it on and off gives the same completions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../runtime/engine/backend';
import { nativeBlasAddon } from '../../../runtime/engine/backend/native-matmul';
import { NATIVE_SAMPLER_ENV, NativeRowSampler } from '../../../runtime/engine/backend/native-sampler';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { Rng } from '../../../runtime/engine/random';
import { generate, TokenSampler, type SamplingParams } from '../../../runtime/engine/sampling';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

let saved: string | undefined;

before(async () => {
  saved = process.env[NATIVE_SAMPLER_ENV];
  delete process.env[NATIVE_SAMPLER_ENV];
  assertNativeMatmulOnWasm(await initBackend({ prefer: 'wasm' }));
  assert.ok(nativeBlasAddon()?.sampleRows, 'the native addon predates sampleRows: npm run build:native');
});

after(() => {
  if (saved === undefined) delete process.env[NATIVE_SAMPLER_ENV];
  else process.env[NATIVE_SAMPLER_ENV] = saved;
});

/** `rows` rows of V logits, N(0, spread²) each, with some exact ties at the top. */
function randomLogits(rng: Rng, rows: number, V: number, spread: number): Float32Array {
  const z = new Float32Array(rows * V);
  for (let i = 0; i < z.length; i++) z[i] = rng.normal() * spread;
  for (let r = 0; r < rows; r += 3) z[r * V + 1] = z[r * V] = 9;
  return z;
}

describe('NativeRowSampler equals TokenSampler', () => {
  const cases: { name: string; V: number; valid: number; temperature: number; banned: number[]; spread: number }[] = [
    { name: 'V 4096, T 1', V: 4096, valid: 4096, temperature: 1, banned: [], spread: 2 },
    { name: 'V 4096, T 0.3, sharp logits', V: 4096, valid: 4096, temperature: 0.3, banned: [], spread: 4 },
    {
      name: 'V 37 of which 30 valid, T 1.7, two banned ids',
      V: 37,
      valid: 30,
      temperature: 1.7,
      banned: [0, 9],
      spread: 1,
    },
    { name: 'greedy (ties at the top go to the lower id)', V: 512, valid: 512, temperature: 0, banned: [], spread: 3 },
    { name: 'greedy with the top id banned', V: 64, valid: 64, temperature: 0, banned: [0], spread: 1 },
  ];
  for (const c of cases)
    test(c.name, () => {
      const rows = 400;
      const rng = new Rng(17);
      const logits = randomLogits(rng, rows, c.V, c.spread);
      const params: SamplingParams = {
        maxNewTokens: 4,
        temperature: c.temperature,
        validVocab: c.valid,
        minNewTokens: c.banned.length ? 2 : 0,
      };
      const js = new TokenSampler(params, c.V);
      const native = NativeRowSampler.for({
        temperature: c.temperature,
        topK: 0,
        topP: 1,
        validVocab: c.valid,
        vocab: c.V,
      });
      assert.ok(native, 'the native sampler serves plain temperature sampling');
      const u = Float64Array.from({ length: rows }, () => rng.uniform());
      const all = Int32Array.from({ length: rows }, (_, i) => i);
      const r = native.sample(logits, all, u, Int32Array.from(c.banned));
      let answered = 0;
      for (let i = 0; i < rows; i++) {
        const want = js.sample(logits.subarray(i * c.V, (i + 1) * c.V), { uniform: () => u[i] }, 0, new Set(c.banned));
        assert.ok(!c.banned.includes(want.token));
        if (r.tokens[i] < 0) continue;
        answered++;
        assert.equal(r.tokens[i], want.token, `row ${i}`);
        assert.ok(Math.abs(r.logprobs[i] - want.logprob) < 1e-12, `row ${i}: ${r.logprobs[i]} vs ${want.logprob}`);
      }
      // Greedy rows with an exact tie at the top (every third row) are handed back; draws almost never are.
      const expected = c.temperature > 0 ? rows - 2 : rows - Math.ceil(rows / 3);
      assert.ok(answered >= expected, `answered ${answered} of ${rows} rows`);
    });

  test('a draw exactly on a boundary is handed back, not guessed', () => {
    const native = NativeRowSampler.for({ temperature: 1, topK: 0, topP: 1, validVocab: 4, vocab: 4 })!;
    const logits = new Float32Array(4).fill(0.5);
    // u · sum = 2 · p: the walk reaches exactly 0 after two ids.
    const r = native.sample(logits, Int32Array.of(0, 0), Float64Array.of(0.5, 0.3), new Int32Array(0));
    assert.equal(r.tokens[0], -1);
    assert.equal(r.tokens[1], 1);
    assert.ok(Math.abs(r.logprobs[1] - Math.log(0.25)) < 1e-15);
  });

  test('top-k and top-p stay with TokenSampler; rows outside the logits are refused', () => {
    assert.equal(NativeRowSampler.for({ temperature: 1, topK: 5, topP: 1, validVocab: 8, vocab: 8 }), undefined);
    assert.equal(NativeRowSampler.for({ temperature: 1, topK: 0, topP: 0.9, validVocab: 8, vocab: 8 }), undefined);
    const native = NativeRowSampler.for({ temperature: 1, topK: 0, topP: 1, validVocab: 8, vocab: 8 })!;
    assert.throws(
      () => native.sample(new Float32Array(16), Int32Array.of(2), new Float64Array(1), new Int32Array(0)),
      /row lies outside the logits/,
    );
  });
});

describe('generate with and without the native sampler', () => {
  const model = () =>
    initModel(
      parseModelConfig(
        newModelConfigJson({
          family: 'qwen2',
          layers: 2,
          hidden: 32,
          heads: 4,
          kvHeads: 2,
          vocabSize: 300,
          maxPositions: 64,
          eosTokenIds: [1],
        }),
      ),
      31,
    );
  const prompts = [
    [5, 9, 2],
    [3, 3, 8, 14, 21, 7, 30],
  ];
  const settings: SamplingParams[] = [
    { maxNewTokens: 20, n: 3, temperature: 0.7, seed: 5 },
    { maxNewTokens: 12, temperature: 0, stopTokenIds: [] },
    { maxNewTokens: 16, n: 2, temperature: 1.2, seed: 8, minNewTokens: 6, stopTokenIds: [1, 2] },
    { maxNewTokens: 10, n: 2, temperature: 1, seed: 2, topP: 0.8 },
  ];
  for (const params of settings)
    test(JSON.stringify(params), async () => {
      assert.equal(tf.getBackend(), 'wasm');
      const m = model();
      process.env[NATIVE_SAMPLER_ENV] = '0';
      const js = await generate(m, prompts, params);
      delete process.env[NATIVE_SAMPLER_ENV];
      const native = await generate(m, prompts, params);
      assert.equal(native.length, js.length);
      native.forEach((c, i) => {
        assert.deepEqual(c.tokens, js[i].tokens, `completion ${i}`);
        assert.equal(c.finishReason, js[i].finishReason);
        c.logprobs.forEach((lp, j) =>
          assert.ok(Math.abs(lp - js[i].logprobs[j]) < 1e-12, `completion ${i} token ${j}`),
        );
      });
      m.dispose();
    });
});
