/**
 * The local explorer's batched generation against the wasm heap: the estimate (local-memory/generation-bytes.ts)
 * against the peak the engine really reaches generating on wasm, and the check built on it: TRN325 refuses, before
 * any work, an explorer whose runners' rows cannot fit its heap (naming the keys, offering the runner count that
 * fits), TRN326 warns near the limit, and the explorer that shares the trainer's thread counts the trainer's state.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { engineMemory, initBackend, resetPeakMemory, watchPeakMemory } from '../../../runtime/engine/backend';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { generate } from '../../../runtime/engine/sampling';
import { shapeFromHfConfig } from '../../../runtime/config/gpu-memory/model-shape';
import { generationBytes } from '../../../runtime/config/local-memory/generation-bytes';
import { checkConfig } from '../../../runtime/config/check-config';
import { readModelConfigJson } from '../../../runtime/engine/lm/config-json-cache';
import { ConfigRejected, loadRunnableConfig } from '../../../runtime/rft/run/job/job-config';
import { QWEN25_05B_JSON } from '../../helpers/shrunk-model-json';

interface Gen {
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  vocabSize: number;
  rows: number;
  prompt: number;
  steps: number;
}

describe('the estimate follows the peak of a batched generation (wasm)', () => {
  before(async () => {
    await initBackend({ prefer: 'wasm' });
    watchPeakMemory();
  });
  const CASES: Gen[] = [
    { layers: 2, hidden: 64, heads: 4, kvHeads: 2, vocabSize: 256, rows: 64, prompt: 256, steps: 128 },
    { layers: 4, hidden: 128, heads: 8, kvHeads: 4, vocabSize: 2048, rows: 32, prompt: 64, steps: 96 },
    { layers: 3, hidden: 256, heads: 4, kvHeads: 2, vocabSize: 8192, rows: 16, prompt: 256, steps: 32 },
  ];
  for (const c of CASES) {
    test(`${c.rows} rows of ${c.prompt} + ${c.steps} tokens, ${c.layers} layers, vocabulary ${c.vocabSize}: within −16%…+2%`, async () => {
      const json = newModelConfigJson({
        family: 'qwen2',
        maxPositions: 1024,
        eosTokenIds: [1],
        intermediate: 2 * c.hidden,
        ...c,
      });
      const model = initModel(parseModelConfig(json), 1);
      const base = engineMemory().allocatedBytes;
      const prompts = Array.from({ length: c.rows }, (_, i) =>
        Array.from({ length: c.prompt }, (_, t) => 2 + ((t * 7 + i) % (c.vocabSize - 2))),
      );
      resetPeakMemory();
      // No stop token: every row decodes all its steps.
      const out = await generate(model, prompts, { maxNewTokens: c.steps, temperature: 1, seed: 1, stopTokenIds: [] });
      const peak = engineMemory().peakAllocatedBytes - base;
      model.dispose();
      assert.ok(out.every((o) => o.tokens.length === c.steps));
      const shape = shapeFromHfConfig(json, 'test');
      assert.ok('shape' in shape);
      const est = generationBytes(shape.shape, { rows: c.rows, tokens: c.prompt + c.steps });
      const ratio = est / peak;
      assert.ok(ratio >= 0.84 && ratio <= 1.02, `estimate ${est} vs measured ${peak} (×${ratio.toFixed(3)})`);
    });
  }
});

/** A folder with Qwen2.5-0.5B's config.json and a small GSM8K-style taskset. */
function modelDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twb-explorer-heap-'));
  mkdirSync(join(dir, 'small-model'));
  writeFileSync(join(dir, 'small-model', 'config.json'), JSON.stringify(QWEN25_05B_JSON));
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'train.jsonl'), '{"question": "1+1?", "answer": "2"}\n');
  return dir;
}

function config(o: { mode?: string; maxLen: number; runners: number; repeat: number; batch: number; offset?: number }) {
  return [
    `mode: ${o.mode ?? 'explore'}`,
    'model:',
    '  model_path: small-model',
    `  max_model_len: ${o.maxLen}`,
    'algorithm:',
    '  algorithm_type: grpo',
    `  repeat_times: ${o.repeat}`,
    '  kl_loss_fn: none',
    'buffer:',
    `  batch_size: ${o.batch}`,
    '  explorer_input:',
    '    taskset:',
    '      path: data',
    'explorer:',
    `  runner_per_model: ${o.runners}`,
    ...(o.offset !== undefined ? ['synchronizer:', `  sync_offset: ${o.offset}`] : []),
    '',
  ].join('\n');
}

async function findings(dir: string, yaml: string, localRuns = true) {
  const r = await checkConfig(yaml, {
    env: {},
    host: { baseDirs: [dir], env: {}, modelConfig: readModelConfigJson, localRuns },
    datasets: false,
  });
  return r.diagnostics.filter((d) => d.code === 'TRN325' || d.code === 'TRN326');
}

describe('TRN325 / TRN326: the explorer generation against the wasm heap', () => {
  const dir = modelDir();

  test('32 runners of 4 rows × 4,096 tokens are refused at runner_per_model, with the count that fits', async () => {
    const yaml = config({ maxLen: 4096, runners: 32, repeat: 4, batch: 32 });
    const [f] = await findings(dir, yaml);
    assert.equal(f?.code, 'TRN325', JSON.stringify(f));
    assert.equal(yaml.slice(f.range[0], f.range[1]).startsWith('runner_per_model'), true);
    assert.match(f.message, /decodes up to 128 rows in one engine call/);
    assert.match(f.message, /go in its worker thread's heap|go in the heap/);
    assert.deepEqual(await findings(dir, yaml, false), [], 'not where runs go to Trinity');
    // The offered runner count fits at the most it may need: no finding with it.
    const fix = f.data?.fixes?.[0];
    assert.ok(fix && fix.set[0].path.join('.') === 'explorer.runner_per_model', JSON.stringify(f.data));
    const n = fix.set[0].value as number;
    assert.ok(n >= 1 && n < 32);
    assert.deepEqual(await findings(dir, yaml.replace('runner_per_model: 32', `runner_per_model: ${n}`)), []);
  });

  test('near the limit is a warning; a short context fits', async () => {
    const [w] = await findings(dir, config({ maxLen: 4096, runners: 4, repeat: 4, batch: 4 }));
    assert.equal(w?.code, 'TRN326', JSON.stringify(w));
    assert.deepEqual(await findings(dir, config({ maxLen: 1024, runners: 4, repeat: 4, batch: 4 })), []);
  });

  test("an explorer that takes turns with the trainer counts the trainer's weights and moments in its heap", async () => {
    const apart = config({ mode: 'both', maxLen: 1024, runners: 4, repeat: 4, batch: 4, offset: 1 });
    assert.deepEqual(await findings(dir, apart), [], 'its own worker heap: weights and a short batch fit');
    const [f] = await findings(dir, config({ mode: 'both', maxLen: 1024, runners: 4, repeat: 4, batch: 4, offset: 0 }));
    assert.equal(f?.code, 'TRN325', JSON.stringify(f));
    assert.match(f.message, /the heap the trainer's weights and optimizer state also hold/);
  });

  test("an evaluation of more rows than a training step is what counts: the eval taskset's repeat_times is named", async () => {
    // One training task of 2 runs is 2 rows; the evaluation runs 32 eval tasks at once, 4 runs each: 128 rows.
    const train = config({ maxLen: 4096, runners: 32, repeat: 2, batch: 1 });
    assert.deepEqual(await findings(dir, train), [], 'without the eval taskset, 2 rows fit');
    const yaml = train.replace(
      '      path: data\n',
      '      path: data\n    eval_tasksets:\n      - name: held-out\n        path: data\n        repeat_times: 4\n',
    );
    const [f] = await findings(dir, yaml);
    // A warning: the eval taskset may hold a single task (4 rows), which fits; 32 of them at once do not.
    assert.equal(f?.code, 'TRN326', JSON.stringify(f));
    assert.match(f.message, /decodes up to 128 rows in one engine call/);
    assert.match(f.message, /The least it needs fits, the most does not: the explorer may run out of the heap/);
    assert.match(
      f.message,
      /runners of its evaluation, each an eval task × `buffer\.explorer_input\.eval_tasksets\.0\.repeat_times` \(line 17\) 4 runs/,
    );
    const n = f.data?.fixes?.[0]?.set[0].value as number;
    assert.ok(n >= 1 && n < 32, JSON.stringify(f.data));
    assert.deepEqual(await findings(dir, yaml.replace('runner_per_model: 32', `runner_per_model: ${n}`)), []);
  });

  test('run refuses it before any work, naming the file and line', async () => {
    const yaml = config({ maxLen: 16384, runners: 16, repeat: 8, batch: 16 });
    const path = join(dir, 'explore.yaml');
    writeFileSync(path, yaml);
    await assert.rejects(
      loadRunnableConfig(path, { backend: 'wasm' }, () => undefined),
      (e: Error) => {
        assert.ok(e instanceof ConfigRejected, String(e));
        assert.ok(e.message.includes(`${path}:15:`), e.message);
        assert.match(e.message, /TRN325 The local explorer decodes up to 128 rows/);
        return true;
      },
    );
  });
});
