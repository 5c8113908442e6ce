/**
 * The example configs written for Trinity run on the local runtime with the corpus's real datasets (countdown,
 * GSM8K with SFT warm-up, DPO on human_like, and the asynchronous explore/train pair), on a tiny byte-level model;
 * on-policy distillation on our arithmetic data, from a second tiny model as the teacher.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { initBackend } from '../../runtime/engine/backend';
import { initModel, saveModel } from '../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../runtime/engine/lm/config';
import { buildByteTokenizer, tokenizerFromJson } from '../../runtime/engine/tokenizer';
import { runJob } from '../../runtime/rft/run/job/job';
import { corpusDir } from '../helpers/corpus';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');

let env: Record<string, string>;

interface MetricsLine {
  role: string;
  step: number;
  values: Record<string, number>;
}

function metrics(jobDir: string): MetricsLine[] {
  return readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as MetricsLine);
}

function trainerSteps(jobDir: string): number {
  return metrics(jobDir).filter((l) => l.role === 'trainer').length;
}

/** Explorer rollout steps' `rollout/model_version`, in step order. */
function modelVersions(jobDir: string): number[] {
  return metrics(jobDir)
    .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
    .map((l) => l.values['rollout/model_version']);
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
  const dir = mkdtempSync(join(tmpdir(), 'twb-examples-'));
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 1,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      vocabSize: tokenizer.vocabSize,
      maxPositions: 1024,
      eosTokenIds: [...tokenizer.eosTokenIds],
    }),
  );
  for (const [name, seed] of [
    ['model', 1],
    ['teacher', 2],
  ] as const) {
    const model = initModel(cfg, seed);
    await saveModel(model, join(dir, name), { tokenizer });
    model.dispose();
  }
  env = {
    TRINITY_MODEL_PATH: join(dir, 'model'),
    TRINITY_TEACHER_MODEL_PATH: join(dir, 'teacher'),
    TRINITY_CHECKPOINT_ROOT_DIR: join(dir, 'checkpoints'),
    TRINITY_CORPUS_DIR: corpusDir(),
  };
  Object.assign(process.env, env);
});

describe('examples', () => {
  test('countdown: GRPO one-step off-policy on the corpus countdown split', async () => {
    const r = await runJob(join(ROOT, 'examples/countdown/countdown.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const jobDir = r.stages[0].jobDir;
    assert.equal(trainerSteps(jobDir), 4);
    // sync_offset 1: explorer step k runs on trainer step k − 2's weights (none before step 3).
    assert.deepEqual(modelVersions(jobDir), [0, 0, 1, 2]);
    const rewards = metrics(jobDir).flatMap((l) =>
      l.role === 'explorer' && 'rollout/score/mean' in l.values ? [l.values['rollout/score/mean']] : [],
    );
    assert.equal(rewards.length, 4);
    // countdown_reward: 0 (no valid equation), 0.1 (format only) or 1 per rollout.
    assert.ok(
      rewards.every((x) => x >= 0 && x <= 1),
      `rewards ${rewards}`,
    );
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

  test('distill: on-policy distillation from an auxiliary teacher model', async () => {
    const r = await runJob(join(ROOT, 'examples/distill/distill.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const jobDir = r.stages[0].jobDir;
    assert.equal(trainerSteps(jobDir), 8);
    const explorer = metrics(jobDir).filter((l) => l.role === 'explorer' && 'rollout/kl_divergence/mean' in l.values);
    assert.equal(explorer.length, 8);
    assert.ok(explorer.every((l) => Number.isFinite(l.values['rollout/kl_divergence/mean'])));
    assert.ok(metrics(jobDir).some((l) => 'eval/arith-test/accuracy/mean@1' in l.values));
  });

  test('dpo: the human_like preference pairs', async () => {
    const r = await runJob(join(ROOT, 'examples/dpo/human-like.trinity.yaml'), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const lines = metrics(r.stages[0].jobDir).filter((l) => l.role === 'trainer');
    assert.equal(lines.length, 4);
    // Step 1: the policy is the reference, so every pair's DPO loss is −log σ(0) = ln 2 and the margin is 0.
    assert.ok(
      Math.abs(lines[0].values['actor/dpo_loss'] - Math.LN2) < 1e-5,
      `step 1 dpo_loss ${lines[0].values['actor/dpo_loss']}`,
    );
    assert.ok(
      lines.every((l) => Number.isFinite(l.values['actor/dpo_loss']) && Number.isFinite(l.values['actor/grad_norm'])),
    );
  });

  test('async: explore and train processes of one job share an SQLite buffer', async () => {
    const launch = (file: string) =>
      new Promise<number | null>((done) => {
        const child = spawn(
          process.execPath,
          [CLI, 'run', '--config', join(ROOT, 'examples/async', file), '--backend', 'wasm'],
          { env: { ...process.env, ...env }, stdio: 'ignore' },
        );
        child.on('exit', (code) => done(code));
      });
    const [explore, train] = await Promise.all([launch('explore.trinity.yaml'), launch('train.trinity.yaml')]);
    assert.deepEqual([explore, train], [0, 0]);
    const jobDir = join(env.TRINITY_CHECKPOINT_ROOT_DIR, 'trinity-workbench-examples', 'countdown-async');
    // 17 tasks → 4 explorer steps of 4 tasks × 4 rollouts = 4 trainer steps of 16.
    assert.ok(existsSync(join(jobDir, 'global_step_4', 'model.safetensors')), `no final checkpoint in ${jobDir}`);
    const db = new Database(join(env.TRINITY_CHECKPOINT_ROOT_DIR, 'countdown-async.db'), {
      readonly: true,
      fileMustExist: true,
    });
    try {
      const rows = db
        .prepare(
          `SELECT json_extract(experience, '$.eid.batch') AS batch, COUNT(*) AS n, MIN(consumed) AS lo, MAX(consumed) AS hi FROM "countdown-experiences" GROUP BY batch ORDER BY batch`,
        )
        .all() as { batch: number; n: number; lo: number; hi: number }[];
      assert.deepEqual(
        rows.map((r) => [r.batch, r.n, r.lo, r.hi]),
        [1, 2, 3, 4].map((b) => [b, 16, 1, 1]),
        'each explorer step wrote 16 experiences, and the trainer read each exactly once',
      );
    } finally {
      db.close();
    }
  });
});
