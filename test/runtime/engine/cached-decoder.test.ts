/**
 * The fused decode steps of `generate` (model/cached-decoder.ts, backend/decode-kernels.ts) against the decode through
 * `CausalLM.forward` they replace: same tokens, log probabilities within float32 rounding, on wasm (the attention in
 * the native addon's C) and cpu (the JavaScript kernels), for the features the kernels handle themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { BACKEND_ENV, initBackend } from '../../../runtime/engine/backend';
import { nativeBlasAddon } from '../../../runtime/engine/backend/native-matmul';
import { DECODE_ATTENTION } from '../../../runtime/engine/backend/decode-kernels';
import { FUSED_DECODE_ENV } from '../../../runtime/engine/lm/cached-decoder';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../../../runtime/engine/lm/config';
import { addLora } from '../../../runtime/engine/lm/lora';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';
import { generate, type Completion, type SamplingParams } from '../../../runtime/engine/sampling';
import { assertNativeMatmulOnWasm } from '../../helpers/native-matmul';

const LOGPROB_ATOL = 1e-4;

let savedBackend: string | undefined;
let savedFused: string | undefined;

before(async () => {
  savedBackend = process.env[BACKEND_ENV];
  savedFused = process.env[FUSED_DECODE_ENV];
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

async function both(m: CausalLM, params: SamplingParams): Promise<{ fused: Completion[]; forward: Completion[] }> {
  process.env[FUSED_DECODE_ENV] = '0';
  const forward = await generate(m, PROMPTS, params);
  process.env[FUSED_DECODE_ENV] = '1';
  let fused: Completion[] = [];
  const profile = await tf.profile(async () => {
    fused = await generate(m, PROMPTS, params);
    return [] as unknown as tf.TensorContainer;
  });
  assert.ok(
    profile.kernels.some((k) => k.name === DECODE_ATTENTION),
    `generate did not take the fused decode on ${tf.getBackend()}`,
  );
  return { fused, forward };
}

function assertSame(a: Completion[], b: Completion[]): void {
  assert.equal(a.length, b.length);
  a.forEach((c, i) => {
    assert.deepEqual(c.tokens, b[i].tokens, `completion ${i}`);
    assert.equal(c.finishReason, b[i].finishReason);
    c.logprobs.forEach((lp, j) =>
      assert.ok(
        Math.abs(lp - b[i].logprobs[j]) < LOGPROB_ATOL,
        `completion ${i} token ${j}: ${lp} vs ${b[i].logprobs[j]}`,
      ),
    );
  });
}

for (const backend of ['wasm', 'cpu'] as const) {
  describe(`fused decode equals the decode through forward on ${backend}`, () => {
    before(async () => {
      assert.ok(await tf.setBackend(backend));
      if (backend === 'wasm' && nativeBlasAddon())
        assert.ok(
          nativeBlasAddon()!.decodeAttention,
          'the native addon predates decodeAttention: npm run build:native',
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

    test('the decoder leaks no tensors', async () => {
      const m = model({ family: 'qwen2', layers: 1, hidden: 16, heads: 2, kvHeads: 1 }, 24);
      process.env[FUSED_DECODE_ENV] = '1';
      await generate(m, PROMPTS, { maxNewTokens: 3, stopTokenIds: [] });
      const before = tf.memory().numTensors;
      await generate(m, PROMPTS, { maxNewTokens: 9, n: 2, seed: 1, stopTokenIds: [] });
      assert.equal(tf.memory().numTensors, before);
      m.dispose();
    });
  });
}
