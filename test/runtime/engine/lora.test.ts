/**
 * LoRA: adapters start as a no-op, train while the base stays frozen, save as PEFT's files, load back to the same
 * outputs, and merge into the base weights.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { newModelConfigJson, parseModelConfig, type ModelFamily } from '../../../runtime/engine/lm/config';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { addLora, loadLora, mergeLora, saveLora, type LoraSpec } from '../../../runtime/engine/lm/lora';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { Trainer } from '../../../runtime/engine/train/step';
import { readSafetensors } from '../../../runtime/engine/weights/safetensors';

const ROWS = [
  [2, 3, 4, 5, 6, 7],
  [7, 6, 5, 4, 3, 2],
];

function model(family: ModelFamily): CausalLM {
  return initModel(
    parseModelConfig(
      newModelConfigJson({
        family,
        layers: 2,
        hidden: 16,
        heads: 4,
        kvHeads: family === 'gpt2' ? 4 : 2,
        vocabSize: 12,
        maxPositions: 16,
        eosTokenIds: [1],
      }),
    ),
    21,
  );
}

function logits(m: CausalLM): Float32Array {
  return tf.tidy(() => m.logits(m.forward(tf.tensor2d(ROWS, undefined, 'int32')).hidden).dataSync() as Float32Array);
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

async function train(m: CausalLM, steps: number): Promise<number[]> {
  const opt = new AdamW(m.trainableVariables(), { weightDecay: 0 });
  const t = new Trainer(opt, { lr: 5e-2, style: 'constant', warmupSteps: 0, totalSteps: steps });
  const losses: number[] = [];
  m.training = true;
  for (let i = 0; i < steps; i++) {
    losses.push(
      (
        await t.step([
          () =>
            tf.tidy(
              () => tf.neg(tf.mean(scoreSequences(m, tf.tensor2d(ROWS, undefined, 'int32')).logprobs)) as tf.Scalar,
            ),
        ])
      ).loss,
    );
  }
  m.training = false;
  opt.dispose();
  return losses;
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('LoRA', () => {
  for (const [family, targets] of [
    ['qwen2', ['q_proj', 'v_proj']],
    ['gpt2', ['c_attn', 'c_proj']],
  ] as const) {
    test(`${family}: trains only the adapters, saves as PEFT, loads and merges to the same outputs`, async () => {
      const spec: LoraSpec = { rank: 4, alpha: 8, targetModules: targets, dropout: 0 };
      const m = model(family);
      const base = logits(m);
      const baseWeights = m.variables().map((v) => v.dataSync().slice());
      const names = addLora(m, spec, 1);
      assert.equal(names.length, family === 'gpt2' ? 6 : 4);
      assert.equal(maxDiff(base, logits(m)), 0, 'B = 0: the adapters start as a no-op');
      assert.equal(m.trainableVariables().length, 2 * names.length);

      const losses = await train(m, 20);
      assert.ok(losses[19] < losses[0] - 0.1, `loss ${losses[0]} -> ${losses[19]}`);
      m.variables().forEach((v, i) => assert.deepEqual(v.dataSync(), baseWeights[i], 'base weights stay frozen'));
      const tuned = logits(m);
      assert.ok(maxDiff(base, tuned) > 1e-2);

      const dir = join(mkdtempSync(join(tmpdir(), 'twb-lora-')), 'adapter');
      await saveLora(m, dir, spec, 'tiny-base');
      assert.deepEqual(readdirSync(dir).sort(), ['adapter_config.json', 'adapter_model.safetensors']);
      const cfg = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      assert.deepEqual(
        [cfg.peft_type, cfg.r, cfg.lora_alpha, cfg.target_modules, cfg.fan_in_fan_out],
        ['LORA', 4, 8, [...targets], family === 'gpt2'],
      );
      const file = readSafetensors(new Uint8Array(readFileSync(join(dir, 'adapter_model.safetensors'))));
      const first = family === 'gpt2' ? 'transformer.h.0.attn.c_attn' : 'model.layers.0.self_attn.q_proj';
      assert.deepEqual(file.tensors.get(`base_model.model.${first}.lora_A.weight`)?.shape, [4, 16]);
      assert.deepEqual(file.tensors.get(`base_model.model.${first}.lora_B.weight`)?.shape, [
        family === 'gpt2' ? 48 : 16,
        4,
      ]);

      const fresh = model(family);
      assert.deepEqual(loadLora(fresh, dir), spec);
      assert.ok(maxDiff(tuned, logits(fresh)) < 1e-6);
      mergeLora(fresh);
      assert.equal(fresh.adapters.size, 0);
      assert.ok(maxDiff(tuned, logits(fresh)) < 1e-5, 'merged weights give the adapted outputs');
      m.dispose();
      fresh.dispose();
    });
  }

  test('dropout applies only in training mode', async () => {
    const m = model('llama');
    addLora(m, { rank: 2, alpha: 2, targetModules: 'all-linear', dropout: 0.5 }, 3);
    await train(m, 3);
    const a = logits(m);
    assert.equal(maxDiff(a, logits(m)), 0, 'inference is deterministic');
    m.training = true;
    assert.ok(maxDiff(a, logits(m)) > 0, 'training mode drops adapter inputs');
    m.dispose();
  });

  test('unknown target modules and malformed adapters are named', async () => {
    const m = model('qwen3');
    assert.throws(
      () => addLora(m, { rank: 2, alpha: 2, targetModules: ['c_attn'], dropout: 0 }),
      /target_modules c_attn match no linear layer of this qwen3 model \(it has q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj\)/,
    );
    const other = model('qwen3');
    addLora(other, { rank: 2, alpha: 2, targetModules: ['q_proj'], dropout: 0 });
    const dir = join(mkdtempSync(join(tmpdir(), 'twb-lora-')), 'a');
    await saveLora(other, dir, { rank: 2, alpha: 2, targetModules: ['q_proj'], dropout: 0 });
    const gpt = model('gpt2');
    assert.throws(
      () => loadLora(gpt, dir),
      /adapter for model\.layers\.0\.self_attn\.q_proj, which this gpt2 model does not have/,
    );
    m.dispose();
    other.dispose();
    gpt.dispose();
  });
});
