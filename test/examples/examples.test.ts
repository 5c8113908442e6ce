/**
 * The example configs written for Trinity run on the local runtime with the corpus's real datasets (countdown,
 * GSM8K with SFT warm-up, DPO on human_like, and the asynchronous explore/train pair), on a tiny byte-level model.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import { initModel, saveModel } from '../../runtime/engine/model/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../runtime/engine/model/config';
import { buildByteTokenizer, tokenizerFromJson } from '../../runtime/engine/tokenizer';
import { runJob } from '../../runtime/rft/run/job';
import { corpusDir } from '../helpers/corpus';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');

let env: Record<string, string>;

function trainerSteps(jobDir: string): number {
  return readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter((l) => (JSON.parse(l) as { role: string }).role === 'trainer').length;
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
  const dir = mkdtempSync(join(tmpdir(), 'twb-examples-'));
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const cfg = parseModelConfig(newModelConfigJson({ family: 'qwen2', layers: 1, hidden: 32, heads: 4, kvHeads: 2, vocabSize: tokenizer.vocabSize, maxPositions: 1024, eosTokenIds: [...tokenizer.eosTokenIds] }));
  const model = initModel(cfg, 1);
  saveModel(model, join(dir, 'model'), { tokenizer });
  model.dispose();
  env = { TRINITY_MODEL_PATH: join(dir, 'model'), TRINITY_CHECKPOINT_ROOT_DIR: join(dir, 'checkpoints'), TRINITY_CORPUS_DIR: corpusDir() };
  Object.assign(process.env, env);
});

describe('examples', () => {
  test('countdown: GRPO one-step off-policy on the corpus countdown split', async () => {
    const r = await runJob(join(ROOT, 'examples/countdown/countdown.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    assert.equal(trainerSteps(r.stages[0].jobDir), 4);
  });

  test('gsm8k: SFT on sft_for_gsm8k, then GRPO with math_workflow', async () => {
    const r = await runJob(join(ROOT, 'examples/gsm8k/gsm8k.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    assert.deepEqual(
      r.stages.map((s) => s.name),
      ['sft', 'grpo'],
    );
    assert.equal(trainerSteps(r.stages[0].jobDir), 2);
    assert.equal(trainerSteps(r.stages[1].jobDir), 4);
  });

  test('dpo: the human_like preference pairs', async () => {
    const r = await runJob(join(ROOT, 'examples/dpo/human-like.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    assert.equal(trainerSteps(r.stages[0].jobDir), 4);
  });

  test('async: explore and train processes of one job share an SQLite buffer', async () => {
    const launch = (file: string) =>
      new Promise<number | null>((done) => {
        const child = spawn(process.execPath, [CLI, 'run', '--config', join(ROOT, 'examples/async', file), '--backend', 'wasm'], { env: { ...process.env, ...env }, stdio: 'ignore' });
        child.on('exit', (code) => done(code));
      });
    const [explore, train] = await Promise.all([launch('explore.trinity.yaml'), launch('train.trinity.yaml')]);
    assert.deepEqual([explore, train], [0, 0]);
    const jobDir = join(env.TRINITY_CHECKPOINT_ROOT_DIR, 'trinity-workbench-examples', 'countdown-async');
    // 17 tasks → 4 explorer steps of 4 tasks × 4 rollouts = 4 trainer steps of 16.
    assert.ok(existsSync(join(jobDir, 'global_step_4', 'model.safetensors')), `no final checkpoint in ${jobDir}`);
  });
});
