/**
 * Model directories: config.json parsing, save/load round trips in every dtype, sharded checkpoints, GPT-2 files
 * saved without the `transformer.` prefix, clear errors for wrong files, and hub ids found in the HF cache.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { newModelConfigJson, parseModelConfig, type ModelFamily } from '../../../runtime/engine/lm/config';
import { initModel, loadModel, saveModel } from '../../../runtime/engine/lm/checkpoint';
import { resolveModelPath } from '../../../runtime/engine/lm/hub';
import { parameterCount } from '../../../runtime/engine/lm/params';
import type { CausalLM } from '../../../runtime/engine/lm/transformer';
import {
  readCheckpointDir,
  readSafetensors,
  writeSafetensors,
  type TensorToWrite,
} from '../../../runtime/engine/weights/safetensors';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'twb-ckpt-'));

function tinyConfig(family: ModelFamily, extra: Record<string, unknown> = {}) {
  const json = {
    ...newModelConfigJson({
      family,
      layers: 2,
      hidden: 16,
      heads: 4,
      kvHeads: family === 'gpt2' ? 4 : 2,
      vocabSize: 24,
      maxPositions: 32,
      eosTokenIds: [1],
    }),
    ...extra,
  };
  return parseModelConfig(json);
}

function logitsOf(m: CausalLM, ids: number[][]): Float32Array {
  return tf.tidy(() => m.logits(m.forward(tf.tensor2d(ids, undefined, 'int32')).hidden).dataSync() as Float32Array);
}

const IDS = [
  [3, 4, 5, 6, 7, 8],
  [9, 10, 11, 2, 3, 1],
];

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('config.json', () => {
  test('each family maps to its architecture switches', () => {
    const g = tinyConfig('gpt2');
    assert.deepEqual(
      [g.norm, g.positions, g.mlp, g.tieEmbeddings, g.qkvBias],
      ['layernorm', 'learned', 'dense', true, true],
    );
    const q2 = tinyConfig('qwen2', { tie_word_embeddings: false });
    assert.deepEqual(
      [q2.norm, q2.positions, q2.mlp, q2.tieEmbeddings, q2.qkvBias, q2.qkNorm, q2.kvHeads],
      ['rmsnorm', 'rope', 'swiglu', false, true, false, 2],
    );
    const q3 = tinyConfig('qwen3', { head_dim: 8 });
    assert.deepEqual([q3.qkNorm, q3.qkvBias, q3.headDim], [true, false, 8]);
    assert.deepEqual(
      tinyConfig('llama', {
        rope_scaling: {
          rope_type: 'llama3',
          factor: 8,
          low_freq_factor: 1,
          high_freq_factor: 4,
          original_max_position_embeddings: 16,
        },
      }).ropeScaling,
      {
        type: 'llama3',
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositions: 16,
      },
    );
  });

  test('bad configs name the file and the key', () => {
    assert.throws(
      () => parseModelConfig({ model_type: 'bert' }, '/m/config.json'),
      /\/m\/config.json: model_type "bert" is not supported/,
    );
    assert.throws(
      () => parseModelConfig({ model_type: 'qwen2', hidden_size: 16 }, '/m/config.json'),
      /\/m\/config.json: missing required key "num_attention_heads"/,
    );
    assert.throws(
      () =>
        parseModelConfig({
          ...newModelConfigJson({
            family: 'qwen2',
            layers: 1,
            hidden: 16,
            heads: 4,
            vocabSize: 8,
            maxPositions: 8,
            eosTokenIds: [1],
          }),
          num_key_value_heads: 3,
        }),
      /num_attention_heads \(4\) must be a multiple of num_key_value_heads \(3\)/,
    );
    assert.throws(
      () =>
        parseModelConfig({
          ...newModelConfigJson({
            family: 'llama',
            layers: 1,
            hidden: 16,
            heads: 4,
            vocabSize: 8,
            maxPositions: 8,
            eosTokenIds: [1],
          }),
          hidden_act: 'relu',
        }),
      /hidden_act "relu"/,
    );
  });

  test('parameter counts match the tensors actually created, and dispose frees every one', () => {
    for (const family of ['gpt2', 'llama', 'qwen2', 'qwen3'] as const) {
      const before = tf.memory().numTensors;
      const m = initModel(tinyConfig(family), 0);
      assert.equal(tf.memory().numTensors - before, m.variables().length, `${family}: only the weights stay live`);
      assert.equal(
        m.variables().reduce((n, v) => n + v.size, 0),
        parameterCount(m.config),
        family,
      );
      m.dispose();
      assert.equal(tf.memory().numTensors, before, `${family}: leaked tensors`);
    }
  });
});

describe('save and load', () => {
  for (const family of ['gpt2', 'llama', 'qwen2', 'qwen3'] as const) {
    test(`${family}: F32 round trip is exact and the files are Hugging Face's`, async () => {
      const dir = join(tmp(), 'model');
      const m = initModel(tinyConfig(family, family === 'qwen2' ? { tie_word_embeddings: false } : {}), 7);
      await saveModel(m, dir);
      assert.deepEqual(readdirSync(dir).sort(), ['config.json', 'generation_config.json', 'model.safetensors']);
      const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      assert.equal(cfg.model_type, family);
      assert.equal(cfg.torch_dtype, 'float32');
      const file = readSafetensors(new Uint8Array(readFileSync(join(dir, 'model.safetensors'))));
      if (family !== 'gpt2') {
        // nn.Linear weights are written [out, in], as PyTorch holds them.
        const q = file.tensors.get('model.layers.0.self_attn.q_proj.weight')!;
        assert.deepEqual(q.shape, [16, 16]);
        assert.deepEqual(file.tensors.get('model.layers.0.self_attn.k_proj.weight')!.shape, [8, 16]);
      } else {
        assert.deepEqual(file.tensors.get('transformer.h.0.attn.c_attn.weight')!.shape, [16, 48]);
      }
      const back = loadModel(dir);
      assert.equal(maxAbsDiff(logitsOf(m, IDS), logitsOf(back, IDS)), 0);
      m.dispose();
      back.dispose();
    });
  }

  test('F16 and BF16 checkpoints load within their rounding', async () => {
    const m = initModel(tinyConfig('qwen2'), 3);
    const ref = logitsOf(m, IDS);
    for (const [dtype, tol] of [
      ['F16', 5e-3],
      ['BF16', 5e-2],
    ] as const) {
      const dir = join(tmp(), dtype);
      await saveModel(m, dir, { dtype });
      assert.equal(
        JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).torch_dtype,
        dtype === 'F16' ? 'float16' : 'bfloat16',
      );
      const back = loadModel(dir);
      const d = maxAbsDiff(ref, logitsOf(back, IDS));
      assert.ok(d > 0 && d < tol, `${dtype}: max logit difference ${d}`);
      back.dispose();
    }
    m.dispose();
  });

  test('a sharded checkpoint loads the same as a single file', async () => {
    const m = initModel(tinyConfig('llama'), 5);
    const single = join(tmp(), 'single');
    await saveModel(m, single);
    const all = readCheckpointDir(single);
    const sharded = join(tmp(), 'sharded');
    mkdirSync(sharded);
    writeFileSync(join(sharded, 'config.json'), readFileSync(join(single, 'config.json'), 'utf8'));
    const names = [...all.keys()].sort();
    const shards: Record<string, TensorToWrite>[] = [{}, {}];
    const weightMap: Record<string, string> = {};
    names.forEach((name, i) => {
      const t = all.get(name)!;
      const file = `model-0000${(i % 2) + 1}-of-00002.safetensors`;
      shards[i % 2][name] = { dtype: 'F32', shape: t.shape, values: new Float32Array(t.bytes.slice().buffer) };
      weightMap[name] = file;
    });
    shards.forEach((s, i) =>
      writeFileSync(join(sharded, `model-0000${i + 1}-of-00002.safetensors`), writeSafetensors(s)),
    );
    writeFileSync(
      join(sharded, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: {}, weight_map: weightMap }),
    );
    const back = loadModel(sharded);
    assert.equal(maxAbsDiff(logitsOf(m, IDS), logitsOf(back, IDS)), 0);
    m.dispose();
    back.dispose();
  });

  test('GPT-2 files without the transformer. prefix and with attn.bias buffers load', async () => {
    const m = initModel(tinyConfig('gpt2'), 9);
    const dir = join(tmp(), 'gpt2');
    await saveModel(m, dir);
    const file = readCheckpointDir(dir);
    const renamed: Record<string, TensorToWrite> = {};
    for (const [name, t] of file)
      renamed[name.replace(/^transformer\./, '')] = {
        dtype: 'F32',
        shape: t.shape,
        values: new Float32Array(t.bytes.slice().buffer),
      };
    renamed['h.0.attn.bias'] = { dtype: 'F32', shape: [1, 1, 2, 2], values: [1, 0, 1, 1] };
    writeFileSync(join(dir, 'model.safetensors'), writeSafetensors(renamed));
    const back = loadModel(dir);
    assert.equal(maxAbsDiff(logitsOf(m, IDS), logitsOf(back, IDS)), 0);
    m.dispose();
    back.dispose();
  });

  test('wrong checkpoints are rejected with the tensor and directory named', async () => {
    const m = initModel(tinyConfig('qwen2'), 1);
    const dir = join(tmp(), 'bad');
    await saveModel(m, dir);
    const cfgPath = join(dir, 'config.json');
    const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, intermediate_size: cfg.intermediate_size + 8 }));
    assert.throws(
      () => loadModel(dir),
      (e: Error) =>
        e.message.includes(dir) &&
        /tensor model\.layers\.0\.mlp\.(gate|up|down)_proj\.weight has shape/.test(e.message),
    );
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, num_hidden_layers: 3 }));
    assert.throws(() => loadModel(dir), /missing \d+ tensors: model\.layers\.2\./);
    writeFileSync(cfgPath, JSON.stringify({ ...cfg, num_hidden_layers: 1 }));
    assert.throws(
      () => loadModel(dir),
      /tensors do not belong to a qwen2 model of this config.json: model\.layers\.1\./,
    );
    writeFileSync(cfgPath, '{ not json');
    assert.throws(
      () => loadModel(dir),
      (e: Error) => e.message.startsWith(cfgPath),
    );
    assert.throws(() => loadModel(join(dir, 'nope')), /config\.json: file not found/);
    m.dispose();
  });

  test('saving over an existing directory replaces it whole and leaves no temp files', async () => {
    const parent = tmp();
    const dir = join(parent, 'm');
    mkdirSync(dir);
    writeFileSync(join(dir, 'stale.txt'), 'old');
    const m = initModel(tinyConfig('gpt2'), 2);
    await saveModel(m, dir, { files: { 'tokenizer.json': '{}' } });
    assert.deepEqual(readdirSync(parent), ['m']);
    assert.ok(!existsSync(join(dir, 'stale.txt')));
    assert.ok(existsSync(join(dir, 'tokenizer.json')));
    m.dispose();
  });
});

describe('model_path resolution', () => {
  test('a hub id is found in the Hugging Face cache through refs/main', () => {
    const home = tmp();
    const snap = join(home, 'hub', 'models--Qwen--Qwen2.5-0.5B', 'snapshots', 'abc123');
    mkdirSync(snap, { recursive: true });
    writeFileSync(join(snap, 'config.json'), '{}');
    mkdirSync(join(home, 'hub', 'models--Qwen--Qwen2.5-0.5B', 'refs'));
    writeFileSync(join(home, 'hub', 'models--Qwen--Qwen2.5-0.5B', 'refs', 'main'), 'abc123\n');
    assert.equal(resolveModelPath('Qwen/Qwen2.5-0.5B', { env: { HF_HOME: home }, baseDir: home }), snap);
    assert.throws(
      () => resolveModelPath('Qwen/Qwen3-8B', { env: { HF_HOME: home }, baseDir: home }),
      (e: Error) =>
        e.message.includes(join(home, 'hub', 'models--Qwen--Qwen3-8B')) &&
        e.message.includes('huggingface-cli download'),
    );
  });

  test('a local directory wins and must hold config.json', () => {
    const d = tmp();
    assert.throws(() => resolveModelPath(d), /not a model directory \(no config\.json\)/);
    writeFileSync(join(d, 'config.json'), '{}');
    assert.equal(resolveModelPath(d), d);
  });
});
