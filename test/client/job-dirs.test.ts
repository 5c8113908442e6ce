/**
 * Runs read back from disk for the Runs view: our runtime's job directories (run record, metrics.jsonl, checkpoints),
 * a staged run listed once (not once per stage), a record left `running` by a killed process, a torn last metrics
 * line, and Trinity-RFT's job directories (TensorBoard event files only, written here by our own monitor's writer in
 * Trinity's layout). The Runs view's tooltip of such runs says only what is known.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findJobDirs, readJobDir, readJobRuns } from '../../client/runs/job-dirs';
import { applyEnd, applyEvent, describeEnd, describeProgress, newRunState } from '../../client/runs/run-state';
import { runTooltip } from '../../client/runs/run-tooltip';
import { TensorBoardWriter } from '../../runtime/rft/monitor/tensorboard';
import { runRecordPath, type RunRecord } from '../../runtime/protocol';

function record(dir: string, r: Partial<RunRecord>): void {
  mkdirSync(join(dir, 'state'), { recursive: true });
  const full: RunRecord = {
    protocol: 1,
    runId: 'x',
    config: '/w/c.trinity.yaml',
    status: 'finished',
    pid: 999_999_999,
    backend: 'wasm',
    startedAt: '2026-12-01T10:00:00.000Z',
    stages: [],
    ...r,
  };
  writeFileSync(join(dir, 'state', 'run.json'), JSON.stringify(full));
}

function metrics(dir: string, lines: object[], torn = ''): void {
  mkdirSync(join(dir, 'monitor'), { recursive: true });
  appendFileSync(join(dir, 'monitor', 'metrics.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join('') + torn);
}

describe('job directories on disk', () => {
  test('a staged run is one run with its stages, latest step, reward and checkpoints; a torn last line is skipped', () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    const job = join(root, 'checkpoints', 'demo', 'arith');
    const sft = join(job, 'sft');
    const grpo = join(job, 'grpo');
    record(job, {
      status: 'stopped',
      endedAt: '2026-12-01T10:05:00.000Z',
      stages: [
        { name: 'sft', mode: 'train', jobDir: sft },
        { name: 'grpo', mode: 'both', jobDir: grpo },
      ],
    });
    metrics(sft, [{ role: 'trainer', step: 1, time: 1, values: { 'actor/sft_loss': 3.5 } }]);
    mkdirSync(join(sft, 'global_step_1'));
    metrics(
      grpo,
      [
        { role: 'explorer', step: 7, time: 20, values: { 'rollout/accuracy/mean': 0.25 } },
        { role: 'trainer', step: 7, time: 21, values: { 'critic/score/mean': 0.375, 'actor/pg_loss': -0.1 } },
        { role: 'explorer', step: 8, time: 22, values: { 'eval/sums/accuracy/mean@1': 0.5 } },
      ],
      '{"role": "trainer", "step": 8, "ti',
    );
    for (const n of [5, 10]) mkdirSync(join(grpo, `global_step_${n}`));
    assert.deepEqual(findJobDirs([root]), [job]);
    const run = readJobDir(job);
    assert.equal(run.status, 'stopped');
    assert.equal(run.configPath, '/w/c.trinity.yaml');
    assert.deepEqual(run.stage, { index: 1, count: 2, name: 'grpo', mode: 'both' });
    assert.equal(run.progress.trainer?.step, 7);
    assert.equal(run.progress.explorer?.step, 8);
    assert.equal(run.reward, 0.375);
    assert.deepEqual(run.evalScore, { taskset: 'sums', metric: 'accuracy', value: 0.5 });
    assert.deepEqual(
      run.checkpoints.map((c) => [c.stage, c.step]),
      [
        ['sft', 1],
        ['grpo', 5],
        ['grpo', 10],
      ],
    );
    // Stopped: step 7 is the last one done (the run was stopped in the step after it).
    assert.equal(describeProgress(run, 'several'), 'grpo 7 steps done · reward 0.375 · eval 0.5');
    assert.equal(describeProgress(run, 'never'), '7 steps done · reward 0.375 · eval 0.5', "the stage's own row");
    assert.equal(run.endedAt! - run.startedAt!, 5 * 60 * 1000);
  });

  test('a run read from disk keeps its last evaluation after later steps without one, as a live event stream does', () => {
    const job = join(mkdtempSync(join(tmpdir(), 'twb-jobs-')), 'job');
    record(job, { status: 'stopped', endedAt: '2026-12-01T10:05:00.000Z' });
    const rows: { role: 'explorer' | 'trainer'; step: number; time: number; values: Record<string, number> }[] = [
      { role: 'explorer', step: 2, time: 1, values: { 'eval/sums/accuracy/mean@1': 0.25 } },
      { role: 'explorer', step: 3, time: 2, values: { 'rollout/accuracy/mean': 0.5 } },
      { role: 'trainer', step: 3, time: 3, values: { 'critic/score/mean': 0.5 } },
    ];
    metrics(job, rows);
    // The window that ran it heard the same numbers as events: the other windows' notification says what it says.
    const live = newRunState(job, 'local');
    live.stages = readJobDir(job).stages;
    for (const r of rows)
      applyEvent(live, { type: 'metrics', role: r.role, step: r.step, time: r.time, values: r.values });
    applyEnd(live, { status: 'stopped' });
    const run = readJobDir(job);
    assert.deepEqual(run.evalScore, { taskset: 'sums', metric: 'accuracy', value: 0.25 });
    assert.equal(describeProgress(run, 'always'), describeProgress(live, 'always'));
    assert.match(describeProgress(run, 'several'), /^3 steps done · reward 0.5 · eval 0.25$/);
  });

  test('a one-stage run is not named twice beside its label, also when it failed before its first step', () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    const job = join(root, 'checkpoints', 'demo', 'countdown');
    const error = "model.model_path: 'model' is not a directory\n(the rest of the message)";
    record(job, { status: 'failed', error, stages: [{ name: 'countdown', mode: 'both', jobDir: job }] });
    const failed = readJobDir(job);
    assert.equal(describeEnd(failed, 'countdown'), "countdown failed: model.model_path: 'model' is not a directory");
    assert.equal(describeProgress(failed, 'several'), '');
    assert.equal(describeProgress(failed, 'always'), 'countdown', 'the status bar still says which run');

    metrics(job, [{ role: 'trainer', step: 3, time: 9, values: { 'critic/score/mean': 0.5 } }]);
    const stepped = readJobDir(job);
    assert.equal(
      describeEnd(stepped, 'countdown'),
      "countdown failed: model.model_path: 'model' is not a directory · 3 steps done · reward 0.5",
    );
    assert.equal(describeProgress(stepped, 'always'), 'countdown 3 steps done · reward 0.5');
  });

  test('a record that says running, of a process that is gone, is an interrupted run; of a live one, running', () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    const dead = join(root, 'dead');
    const live = join(root, 'live');
    record(dead, { status: 'running', pid: 999_999_999 });
    // Written by the live process itself, after it started (an older start would be a dead run's reused pid).
    record(live, { status: 'running', pid: process.pid, startedAt: new Date().toISOString() });
    assert.equal(readJobDir(dead).status, 'interrupted');
    assert.equal(readJobDir(live).status, 'running');
    assert.deepEqual(findJobDirs([root]), [dead, live]);
  });

  test("Trinity-RFT's job dir (TensorBoard event files per role, no record) shows its latest steps, read incrementally", () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    const job = join(root, 'ckpt', 'proj', 'run1');
    const trainer = new TensorBoardWriter(join(job, 'monitor', 'tensorboard', 'trainer'), 1);
    const explorer = new TensorBoardWriter(join(job, 'monitor', 'tensorboard', 'explorer'), 1);
    trainer.scalars(1, { 'critic/score/mean': 0.1 });
    explorer.scalars(1, { 'rollout/accuracy/mean': 0.2 });
    mkdirSync(join(job, 'global_step_1'));
    assert.deepEqual(findJobDirs([root]), [job]);
    let run = readJobDir(job);
    assert.equal(run.status, 'unknown');
    assert.equal(run.runWith, 'trinity');
    assert.equal(run.progress.trainer?.step, 1);
    assert.equal(run.reward, 0.1);
    trainer.scalars(2, { 'critic/score/mean': 0.6 });
    run = readJobDir(job);
    assert.equal(run.progress.trainer?.step, 2);
    assert.ok(Math.abs(run.reward! - 0.6) < 1e-6, `reward ${run.reward}`);
    assert.deepEqual(
      run.checkpoints.map((c) => c.step),
      [1],
    );
  });

  test("the explore and train halves of an asynchronous job share its directory: two runs, each with its own role's steps", () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    const job = join(root, 'async');
    mkdirSync(join(job, 'state'), { recursive: true });
    const base = {
      protocol: 1,
      runId: 'x',
      pid: 999_999_999,
      backend: 'wasm',
      startedAt: '2026-12-01T10:00:00.000Z',
      stages: [],
    };
    writeFileSync(
      join(job, runRecordPath('explore')),
      JSON.stringify({ ...base, config: '/w/explore.trinity.yaml', status: 'finished' }),
    );
    writeFileSync(
      join(job, runRecordPath('train')),
      JSON.stringify({ ...base, config: '/w/train.trinity.yaml', status: 'stopped' }),
    );
    metrics(job, [
      { role: 'explorer', step: 6, time: 1, values: { 'rollout/accuracy/mean': 0.5 } },
      { role: 'trainer', step: 3, time: 2, values: { 'critic/score/mean': 0.25 } },
    ]);
    assert.deepEqual(findJobDirs([root]), [job]);
    const runs = readJobRuns(job);
    assert.deepEqual(
      runs.map((r) => [r.key, r.configPath, r.status]),
      [
        [`${job}#explore`, '/w/explore.trinity.yaml', 'finished'],
        [`${job}#train`, '/w/train.trinity.yaml', 'stopped'],
      ],
    );
    assert.deepEqual(
      runs.map((r) => Object.keys(r.progress)),
      [['explorer'], ['trainer']],
    );
    assert.deepEqual(
      runs.map((r) => r.reward),
      [0.5, 0.25],
    );
  });

  test('the walk skips node_modules, hidden folders and checkpoints, and stops at its depth', () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-jobs-'));
    for (const d of ['node_modules/x', '.git/y', 'a/b/c/d/e/f/g/h'])
      metrics(join(root, d), [{ role: 'trainer', step: 1, time: 0, values: {} }]);
    metrics(join(root, 'ok'), [{ role: 'trainer', step: 1, time: 0, values: {} }]);
    assert.deepEqual(findJobDirs([root]), [join(root, 'ok')]);
  });
});

describe("the Runs view's tooltip", () => {
  test('a run read from disk without stages says what it knows, with no "Stage 1/1" and no empty "()"', () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-tip-'));
    const job = join(root, 'checkpoints', 'demo', 'countdown');
    record(job, { status: 'finished', endedAt: '2026-12-01T10:02:00.000Z' });
    metrics(job, [{ role: 'trainer', step: 4, time: 9, values: { 'critic/score/mean': 0.5 } }]);
    const run = readJobDir(job);
    const tip = runTooltip(run, 'countdown', '2m 00s');
    assert.equal(
      tip,
      `**countdown** — finished\n\ntrainer: step 4\n\nLatest reward: 0.5\n\nDuration: 2m 00s\n\n\`${job}\``,
    );
  });

  test("an evaluation's score whatever its reward calls it: accuracy first, then FrozenLake's test_score, then score", () => {
    const job = join(mkdtempSync(join(tmpdir(), 'twb-tip-')), 'lake');
    record(job, { status: 'finished', endedAt: '2026-12-01T10:02:00.000Z' });
    metrics(job, [
      { role: 'trainer', step: 2, time: 1, values: { 'critic/score/mean': 0.25 } },
      // A v0.4.0 evaluation of 4 runs: mean@2, then mean@4 (all runs), which is the one shown.
      {
        role: 'explorer',
        step: 2,
        time: 2,
        values: {
          'eval/lake-eval/env_steps/mean@2': 5,
          'eval/lake-eval/test_score/mean@2': 0.5,
          'eval/lake-eval/test_score/mean@4': 0.625,
          'eval/lake-eval/test_score/std@4': 0.1,
        },
      },
    ]);
    const lake = readJobDir(job);
    assert.deepEqual(lake.evalScore, { taskset: 'lake-eval', metric: 'test_score', value: 0.625 });
    assert.match(describeProgress(lake, 'never'), /reward 0.25 · eval 0.625$/);
    assert.match(runTooltip(lake, 'lake', ''), /\n\nEval test_score \(lake-eval\): 0.625\n\n/);

    const run = newRunState('/j/countdown', 'local');
    applyEvent(run, { type: 'metrics', role: 'explorer', step: 1, time: 1, values: { 'eval/cd/score/mean@1': 0.1 } });
    assert.deepEqual(run.evalScore, { taskset: 'cd', metric: 'score', value: 0.1 });
    const values = {
      'eval/math/score/mean@1': 0.2,
      'eval/math/accuracy/mean@1': 0.75,
      'eval/math/format_score/mean@1': 1,
    };
    applyEvent(run, { type: 'metrics', role: 'explorer', step: 2, time: 2, values });
    assert.deepEqual(run.evalScore, { taskset: 'math', metric: 'accuracy', value: 0.75 });
  });

  test("a staged run names its stage and the stage's mode; one stage of a known mode, only the mode", () => {
    const root = mkdtempSync(join(tmpdir(), 'twb-tip-'));
    const job = join(root, 'checkpoints', 'demo', 'arith');
    const stages = [
      { name: 'sft', mode: 'train', jobDir: join(job, 'sft') },
      { name: 'grpo', mode: 'both', jobDir: join(job, 'grpo') },
    ];
    record(job, { status: 'stopped', stages });
    metrics(stages[1].jobDir, [{ role: 'trainer', step: 2, time: 3, values: { 'actor/pg_loss': 0.1 } }]);
    // Stopped after two steps: counted as steps done, as the row and the end notice count them.
    assert.match(
      runTooltip(readJobDir(job), 'arith', ''),
      /^\*\*arith\*\* — stopped\n\nStage 2\/2: grpo \(both\)\n\ntrainer: 2 steps done\n\n/,
    );
    const live = newRunState(job, 'local');
    applyEvent(live, { type: 'stage', index: 0, count: 1, name: 'arith', mode: 'both', jobDir: job });
    assert.match(runTooltip(live, 'arith', ''), /^\*\*arith\*\* — starting\n\nMode: both\n\n`/);
  });
});
