/**
 * The fused decode paths of `generate` against the decode through `CausalLM.forward` they replace: same tokens, log
 * probabilities within float32 rounding. On wasm two paths: the whole step as one native kernel (lm/native-decoder.ts,
 * backend/decode-step.ts: prefill included) and, with it turned off, the per-layer kernels (model/cached-decoder.ts,
 * backend/decode-kernels.ts, attention in the native addon's C); on cpu the per-layer kernels' JavaScript. For the
 * features the kernels handle themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend } from '../../../runtime/engine/backend';
import { nativeBlasAddon } from '../../../runtime/engine/backend/native-matmul';
import { DECODE_ATTENTION } from '../../../runtime/engine/backend/decode-kernels';
import { DECODE_STEP, DECODE_STEP_ENV } from '../../../runtime/engine/backend/decode-step';
import { FUSED_DECODE_ENV } from '../../../runtime/engine/lm/cached-decoder';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../../runtime/engine/lm/config';
import { addLora } from '../../../runtime/engine/lm/lora';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';
import { generate, type Completion, type SamplingParams } from '../../../runtime/engine/sampling';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

const LOGPROB_ATOL = 1e-4;
/** Between the two fused paths (the same math but the attention's summation order). */
const FUSED_LOGPROB_ATOL = 1e-5;

let savedBackend: string | undefined;
let savedFused: string | undefined;
let savedStep: string | undefined;

before(async () => {
  savedBackend = process.env[BACKEND_ENV];
  savedFused = process.env[FUSED_DECODE_ENV];
  savedStep = process.env[DECODE_STEP_ENV];
  delete process.env[BACKEND_ENV];
  const info = await initBackend({ prefer: 'wasm' });
  assertNativeMatmulOnWasm(info);
  assert.ok(await tf.setBackend('cpu'));
  (tf.backend() as { firstUse?: boolean }).firstUse = false;
});

after(async () => {
  if (savedBackend !== undefined) process.env[BACKEND_ENV] = savedBackend;
  if (savedFused === undefined) delete process.env[FUSED_DECODE_ENV];
  else process.env[FUSED_DECODE_ENV] = savedFused;
  if (savedStep === undefined) delete process.env[DECODE_STEP_ENV];
  else process.env[DECODE_STEP_ENV] = savedStep;
  await tf.setBackend('wasm');
});

function model(spec: Omit<NewModelSpec, 'vocabSize' | 'maxPositions' | 'eosTokenIds'>, seed: number): CausalLM {
  const raw = newModelConfigJson({ ...spec, vocabSize: 40, maxPositions: 48, eosTokenIds: [1] });
  // O(1) weights: attention and logits far from uniform, so a wrong cache slot or rotation shows.
  return initModel(parseModelConfig({ ...raw, initializer_range: 0.3 }), seed);
}

/** Left padding (prompts of 3, 7 and 5 tokens) and a run long enough to attend over many decoded slots. */
const PROMPTS = [
  [5, 9, 2],
  [3, 3, 8, 14, 21, 7, 30],
  [11, 4, 19, 25, 6],
];

/** generate with the kernels `kernel` names (asserted to run), under the given switches. */
async function runWith(
  m: CausalLM,
  params: SamplingParams,
  fused: '0' | '1',
  step: '0' | '1',
  kernel?: string,
): Promise<Completion[]> {
  process.env[FUSED_DECODE_ENV] = fused;
  process.env[DECODE_STEP_ENV] = step;
  let out: Completion[] = [];
  const profile = await tf.profile(async () => {
    out = await generate(m, PROMPTS, params);
    return [] as unknown as tf.TensorContainer;
  });
  if (kernel)
    assert.ok(
      profile.kernels.some((k) => k.name === kernel),
      `generate did not run ${kernel} on ${tf.getBackend()}`,
    );
  return out;
}

/**
 * The decode through forward, the per-layer fused kernels and, on wasm, the one-kernel step; each fused path is
 * checked against forward, and the two fused paths against each other.
 */
async function both(m: CausalLM, params: SamplingParams): Promise<{ fused: Completion[]; forward: Completion[] }> {
  const forward = await runWith(m, params, '0', '0');
  // With one new token there is no decode step: only the prefill, through forward.
  const kernels = await runWith(m, params, '1', '0', params.maxNewTokens > 1 ? DECODE_ATTENTION : undefined);
  assertSame(kernels, forward);
  if (tf.getBackend() !== 'wasm') return { fused: kernels, forward };
  const step = await runWith(m, params, '1', '1', DECODE_STEP);
  assertSame(step, kernels, FUSED_LOGPROB_ATOL);
  return { fused: step, forward };
}

function assertSame(a: Completion[], b: Completion[], atol = LOGPROB_ATOL): void {
  assert.equal(a.length, b.length);
  a.forEach((c, i) => {
    assert.deepEqual(c.tokens, b[i].tokens, `completion ${i}`);
    assert.equal(c.finishReason, b[i].finishReason);
    c.logprobs.forEach((lp, j) =>
      assert.ok(Math.abs(lp - b[i].logprobs[j]) < atol, `completion ${i} token ${j}: ${lp} vs ${b[i].logprobs[j]}`),
    );
  });
}

for (const backend of ['wasm', 'cpu'] as const) {
  describe(`fused decode equals the decode through forward on ${backend}`, () => {
    before(async () => {
      assert.ok(await tf.setBackend(backend));
      if (backend === 'wasm' && nativeBlasAddon())
        assert.ok(
          nativeBlasAddon()!.decodeAttention && nativeBlasAddon()!.decodeStep,
          'the native addon predates decodeAttention or decodeStep: npm run build:native',
        );
    });

    test('qwen2: GQA (4 query heads on 2 kv heads), q/k/v biases, tied head; greedy and sampled', async () => {
      const m = model({ family: 'qwen2', layers: 2, hidden: 32, heads: 4, kvHeads: 2 }, 21);
      const greedy = await both(m, { maxNewTokens: 24, temperature: 0, stopTokenIds: [] });
      assertSame(greedy.fused, greedy.forward);
      const sampled = await both(m, { maxNewTokens: 16, n: 2, temperature: 0.8, topP: 0.9, seed: 3, stopTokenIds: [] });
      assertSame(sampled.fused, sampled.forward);
      m.dispose();
    });

    test('qwen3: q/k norms, 4 query heads on 1 kv head, untied head, stop tokens', async () => {
      const m = model({ family: 'qwen3', layers: 2, hidden: 32, heads: 4, kvHeads: 1, tieEmbeddings: false }, 22);
      const r = await both(m, { maxNewTokens: 20, temperature: 0 });
      assertSame(r.fused, r.forward);
      m.dispose();
    });

    test('llama with LoRA adapters on every linear layer (merged into the fused weights)', async () => {
      const m = model({ family: 'llama', layers: 2, hidden: 32, heads: 4, kvHeads: 4 }, 23);
      addLora(m, { rank: 4, alpha: 8, targetModules: 'all-linear', dropout: 0 }, 5);
      let seed = 40;
      for (const a of m.adapters.values()) a.b.assign(tf.randomNormal(a.b.shape, 0, 0.2, 'float32', seed++));
      const r = await both(m, { maxNewTokens: 16, temperature: 0, stopTokenIds: [] });
      assertSame(r.fused, r.forward);
      m.dispose();
    });

    test('head dim 12 (dot products past a multiple of 8), prefill only, and a sampled run', async () => {
      const m = model({ family: 'qwen2', layers: 2, hidden: 36, heads: 3, kvHeads: 3 }, 25);
      const prefillOnly = await both(m, { maxNewTokens: 1, n: 3, temperature: 1, seed: 9, stopTokenIds: [] });
      assertSame(prefillOnly.fused, prefillOnly.forward);
      const sampled = await both(m, { maxNewTokens: 12, temperature: 1.3, topK: 5, seed: 4, stopTokenIds: [] });
      assertSame(sampled.fused, sampled.forward);
      m.dispose();
    });

    test('the decoder leaks no tensors', async () => {
      const m = model({ family: 'qwen2', layers: 1, hidden: 16, heads: 2, kvHeads: 1 }, 24);
      process.env[FUSED_DECODE_ENV] = '1';
      for (const step of backend === 'wasm' ? ['0', '1'] : ['0']) {
        process.env[DECODE_STEP_ENV] = step;
        await generate(m, PROMPTS, { maxNewTokens: 3, stopTokenIds: [] });
        const before = tf.memory().numTensors;
        await generate(m, PROMPTS, { maxNewTokens: 9, n: 2, seed: 1, stopTokenIds: [] });
        await generate(m, PROMPTS, { maxNewTokens: 1, stopTokenIds: [] });
        assert.equal(tf.memory().numTensors, before, `one-kernel step ${step}`);
      }
      m.dispose();
    });

    if (backend === 'wasm')
      test('the one-kernel step refuses a token id outside the vocabulary instead of reading past the embedding', async () => {
        const m = model({ family: 'qwen2', layers: 1, hidden: 16, heads: 2, kvHeads: 1 }, 26);
        process.env[FUSED_DECODE_ENV] = '1';
        process.env[DECODE_STEP_ENV] = '1';
        await generate(m, [[3, 4, 2]], { maxNewTokens: 2, stopTokenIds: [] });
        const before = tf.memory().numTensors;
        const heap = tf.memory().numBytes;
        await assert.rejects(
          generate(m, [[3, 40, 2]], { maxNewTokens: 4, stopTokenIds: [] }),
          /token id is outside the vocabulary/,
        );
        assert.equal(tf.memory().numTensors, before, 'a failed prefill leaks no tensor');
        assert.equal(tf.memory().numBytes, heap, 'a failed prefill leaks no tensor bytes');
        m.dispose();
      });
  });
}
