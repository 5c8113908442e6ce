/**
 * Every example the extension ships runs as it is, the way a new user gets it: copied out of examples/ into an empty
 * workspace by New Config from Example's own code, checked by the language server (no errors, only the models
 * missing), its models made by Create Small Model's own arguments and sized from the run plan, then run from the
 * copy's folder, as Run from the editor starts the runtime. Nothing reads Trinity's corpus. The arithmetic demo is
 * copied and checked here; its full run is test/examples/demo.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { initBackend } from '../../runtime/engine/backend';
import type { RuntimeEvent } from '../../runtime/protocol';
import { runJob, type JobResult } from '../../runtime/rft/run/job/job';
import { copyExample, listExamples } from '../../client/example-copies';
import { missingModelTargets, modelCreateArgs, positionsFor } from '../../client/small-model';
import type { RunPlanResponse } from '../../server/lsp-messages';
import { startInProcess, type TestClient } from '../helpers/lsp';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLES = join(ROOT, 'examples');
const CLI = join(ROOT, 'dist', 'cli.js');
/** Smaller than Create Small Model's "tiny", so the examples run in seconds here. */
const TEST_SIZE = { label: 'test', detail: '', layers: 1, hidden: 32, heads: 4 };

let lsp: TestClient;
const workspace = mkdtempSync(join(tmpdir(), 'twb-examples-'));
const home = process.cwd();
// Only what a fresh install has: no model or corpus variables from the developer's shell.
for (const v of ['TRINITY_MODEL_PATH', 'TRINITY_TEACHER_MODEL_PATH', 'TRINITY_CHECKPOINT_ROOT_DIR', 'DEMO_MODEL_PATH'])
  delete process.env[v];

before(async () => {
  await initBackend({ prefer: 'wasm' });
  lsp = await startInProcess({ rootUri: pathToFileURL(workspace).toString() });
});
after(async () => {
  process.chdir(home);
  await lsp?.close();
});

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

const trainerSteps = (jobDir: string) => metrics(jobDir).filter((l) => l.role === 'trainer').length;

/** The example copied as New Config from Example copies it, checked by the server, its missing models made. */
async function newFromExample(label: string): Promise<string> {
  const example = listExamples(EXAMPLES).find((e) => e.label === label);
  assert.ok(example, `no shipped example ${label}`);
  const config = copyExample(example, EXAMPLES, workspace);
  const uri = pathToFileURL(config).toString();
  await lsp.open(uri, readFileSync(config, 'utf8'));
  const plan = await lsp.request<RunPlanResponse>('trinity/runPlan', { uri });
  assert.deepEqual(
    plan.errors.map((d) => `${d.range.start.line + 1}: ${d.message}`),
    [],
    `${label} has errors as copied`,
  );
  const targets = missingModelTargets(plan.models, dirname(config));
  assert.ok(targets.length > 0 && targets[0].key === 'model.model_path', 'a fresh copy has no model yet');
  for (const [i, t] of targets.entries()) {
    assert.equal(dirname(t.outDir), dirname(config), `${t.key} goes beside the config`);
    const [, ...argv] = modelCreateArgs({
      cliPath: CLI,
      arch: 'qwen2',
      size: TEST_SIZE,
      vocab: 'byte',
      maxPositions: positionsFor(plan),
      outDir: t.outDir,
      seed: i,
    });
    const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
  return config;
}

/** Runs a copied config from its own folder, as Run from the editor does. */
async function run(config: string): Promise<JobResult> {
  process.chdir(dirname(config));
  try {
    const r = await runJob(config, { backend: 'wasm', workDir: process.cwd() });
    assert.equal(r.status, 'finished', r.error);
    return r;
  } finally {
    process.chdir(home);
  }
}

describe('the shipped examples', () => {
  test('none reads the test corpus, and their data is what examples/make-example-data.mjs makes', () => {
    for (const e of listExamples(EXAMPLES))
      assert.doesNotMatch(readFileSync(e.config, 'utf8'), /TRINITY_CORPUS_DIR|shared\/corpus/, e.label);
    const r = spawnSync(process.execPath, [join(EXAMPLES, 'make-example-data.mjs'), '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  test('arithmetic (the demo): copied and checked; its run is demo.test.ts', async () => {
    await newFromExample('arithmetic/arithmetic.trinity.yaml');
  });

  test('countdown: GRPO one-step off-policy on generated countdown tasks', async () => {
    const r = await run(await newFromExample('countdown/countdown.trinity.yaml'));
    const jobDir = r.stages[0].jobDir;
    assert.equal(trainerSteps(jobDir), 2);
    const explorer = metrics(jobDir).filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values);
    // sync_offset 1: explorer step k runs on trainer step k − 2's weights (none before step 3).
    assert.deepEqual(
      explorer.map((l) => l.values['rollout/model_version']),
      [0, 0],
    );
    // countdown_reward: 0 (no valid equation), 0.1 (format only) or 1 per rollout.
    assert.ok(explorer.every((l) => l.values['rollout/score/mean'] >= 0 && l.values['rollout/score/mean'] <= 1));
    assert.ok(metrics(jobDir).some((l) => 'eval/countdown-test/score/mean@1' in l.values));
  });

  test('gsm8k: SFT on prompt/response pairs, then GRPO with math_workflow', async () => {
    const r = await run(await newFromExample('gsm8k/gsm8k.trinity.yaml'));
    assert.deepEqual(
      r.stages.map((s) => s.name),
      ['sft', 'grpo'],
    );
    assert.equal(trainerSteps(r.stages[0].jobDir), 2);
    assert.equal(trainerSteps(r.stages[1].jobDir), 2);
  });

  test('distill: on-policy distillation from an auxiliary teacher model, both made for the copy', async () => {
    const config = await newFromExample('distill/distill.trinity.yaml');
    assert.ok(existsSync(join(dirname(config), 'teacher', 'config.json')), 'the teacher was made beside the config');
    const r = await run(config);
    const jobDir = r.stages[0].jobDir;
    assert.equal(trainerSteps(jobDir), 8);
    const explorer = metrics(jobDir).filter((l) => l.role === 'explorer' && 'rollout/kl_divergence/mean' in l.values);
    assert.equal(explorer.length, 8);
    assert.ok(explorer.every((l) => Number.isFinite(l.values['rollout/kl_divergence/mean'])));
    assert.ok(metrics(jobDir).some((l) => 'eval/arith-test/accuracy/mean@1' in l.values));
  });

  test('frozen-lake: GRPO on the FrozenLake agent; its episodes are recorded turn by turn', async () => {
    const r = await run(await newFromExample('frozen-lake/frozen-lake.trinity.yaml'));
    const jobDir = r.stages[0].jobDir;
    assert.equal(trainerSteps(jobDir), 2);
    const explorer = metrics(jobDir).filter((l) => l.role === 'explorer' && 'rollout/env_steps/mean' in l.values);
    assert.equal(explorer.length, 2);
    for (const l of explorer) {
      // Each episode takes at most agent_max_steps (4) turns; test_score is the share that reached the goal.
      assert.ok(l.values['rollout/env_steps/max'] <= 4, JSON.stringify(l.values));
      assert.ok(l.values['rollout/test_score/mean'] >= 0 && l.values['rollout/test_score/mean'] <= 1);
    }
    const lines = readFileSync(join(jobDir, 'monitor', 'rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const episode = (
      JSON.parse(lines[0]) as { samples: { messages: { role: string; content: string }[]; actionMask: number[] }[] }
    ).samples[0];
    assert.equal(episode.messages[0].role, 'system');
    assert.match(episode.messages[1].content, /^Current Observation \(0\): \n/);
    assert.ok(episode.actionMask.includes(1) && episode.actionMask.includes(0), 'sampled tokens trained, the rest not');
  });

  test('dpo: human-like preference pairs', async () => {
    const r = await run(await newFromExample('dpo/human-like.trinity.yaml'));
    const lines = metrics(r.stages[0].jobDir).filter((l) => l.role === 'trainer');
    assert.equal(lines.length, 2);
    // Step 1: the policy is the reference, so every pair's DPO loss is −log σ(0) = ln 2 and the margin is 0.
    assert.ok(
      Math.abs(lines[0].values['actor/dpo_loss'] - Math.LN2) < 1e-5,
      `step 1 dpo_loss ${lines[0].values['actor/dpo_loss']}`,
    );
  });

  for (const [label, steps] of [
    ['sft-arith.trinity.yaml', 8],
    ['dpo-arith.trinity.yaml', 4],
    ['grpo-arith.trinity.yaml', 4],
  ] as const)
    test(`${label}: a top-level example, copied with examples/data`, async () => {
      const r = await run(await newFromExample(label));
      assert.equal(trainerSteps(r.stages[0].jobDir), steps);
    });

  test('async: explore and train processes of one job share an SQLite buffer', async () => {
    const explore = await newFromExample('async/explore.trinity.yaml');
    const dir = dirname(explore);
    const progress: string[] = [];
    const launch = (file: string) =>
      new Promise<number | null>((done) => {
        const child = spawn(
          process.execPath,
          [CLI, 'run', '--config', file, '--backend', 'wasm', '--events', 'jsonl'],
          {
            cwd: dir,
            stdio: ['ignore', 'pipe', 'ignore'],
          },
        );
        createInterface({ input: child.stdout }).on('line', (line) => {
          const ev = JSON.parse(line) as RuntimeEvent;
          if (ev.type === 'progress') progress.push(`${file} ${ev.role} ${ev.step}/${ev.total ?? ''}`);
        });
        child.on('exit', (code) => done(code));
      });
    const [e, t] = await Promise.all([launch('explore.trinity.yaml'), launch('train.trinity.yaml')]);
    assert.deepEqual([e, t], [0, 0]);
    // What the Runs view and the status bar show: the explorer's steps of its known total; the trainer's without one,
    // since how many steps the other process feeds is not configured (it showed "step 2/1").
    assert.deepEqual(
      progress.filter((p) => p.startsWith('explore.')),
      ['explore.trinity.yaml explorer 1/2', 'explore.trinity.yaml explorer 2/2'],
    );
    assert.deepEqual(
      progress.filter((p) => p.startsWith('train.')),
      ['train.trinity.yaml trainer 1/', 'train.trinity.yaml trainer 2/'],
    );
    const jobDir = join(dir, 'checkpoints', 'trinity-workbench-examples', 'countdown-async');
    // 8 tasks → 2 explorer steps of 4 tasks × 4 rollouts = 2 trainer steps of 16.
    assert.ok(existsSync(join(jobDir, 'global_step_2', 'model.safetensors')), `no final checkpoint in ${jobDir}`);
    const db = new Database(join(dir, 'checkpoints', 'countdown-async.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          `SELECT json_extract(experience, '$.eid.batch') AS batch, COUNT(*) AS n, MIN(consumed) AS lo, MAX(consumed) AS hi FROM "countdown-experiences" GROUP BY batch ORDER BY batch`,
        )
        .all() as { batch: number; n: number; lo: number; hi: number }[];
      assert.deepEqual(
        rows.map((r) => [r.batch, r.n, r.lo, r.hi]),
        [1, 2].map((b) => [b, 16, 1, 1]),
        'each explorer step wrote 16 experiences, and the trainer read each exactly once',
      );
    } finally {
      db.close();
    }
  });
});
