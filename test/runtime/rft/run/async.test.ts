/**
 * Trinity's fully asynchronous setup as two processes (dist/cli.js run --events jsonl): a `mode: explore` and a
 * `mode: train` config of the same job sharing an SQLite experience buffer, with checkpoint weight sync. The buffer is
 * counted with better-sqlite3 directly: every explorer step's batch is in the table exactly once, and every row is
 * read by the trainer exactly once, whether the pair runs through, the explorer is SIGKILLed and restarted, the
 * trainer is SIGKILLed and restarted, or the explorer dies between committing a batch and recording it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadModel } from '../../../../runtime/engine/lm/checkpoint';
import { TEST_KILL_AFTER_WRITE_ENV } from '../../../../runtime/rft/run/exchange/async-state';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { SqlExperienceReader } from '../../../../runtime/rft/buffer';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { header, tinyJob } from './helpers';
import { killAll, start, type Running } from './cli-process';
import { killPoint } from '../../../helpers/kill-point';

const BATCH = 2;
const REPEAT = 4;
/** Experiences per explorer step, and per trainer step. */
const PER_STEP = BATCH * REPEAT;
const SYNC_INTERVAL = 2;

interface Pair {
  explore: string;
  train: string;
  jobDir: string;
  db: string;
}

/**
 * The two configs of one job: same project/name, one SQLite buffer, checkpoint sync every 2 steps. `storage` is the
 * buffer's storage type: `sql`, or Trinity's async_gsm8k way, a `queue` persisted to the same database.
 */
function pair(seed: number, name: string, steps: number, syncStyle = 'fixed', storage = 'sql'): Pair {
  const job = tinyJob(seed);
  const body = (mode: string): string =>
    `${header(job, name)}mode: ${mode}
algorithm:
  algorithm_type: grpo
  repeat_times: ${REPEAT}
  optimizer:
    lr: 1e-3
buffer:
  batch_size: ${BATCH}
  total_steps: ${steps}
  train_batch_size: ${PER_STEP}
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
  trainer_input:
    experience_buffer:
      name: exps
      storage_type: ${storage}
      path: sqlite:///buffer.db
      max_read_timeout: 60
synchronizer:
  sync_method: checkpoint
  sync_interval: ${SYNC_INTERVAL}
  sync_style: ${syncStyle}
  sync_timeout: 30
trainer:
  save_interval: 100
`;
  return {
    explore: job.write('explore.yaml', body('explore')),
    train: job.write('train.yaml', body('train')),
    jobDir: join(job.dir, 'checkpoints', 'tests', name),
    db: join(job.dir, 'buffer.db'),
  };
}

function query<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const c = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return c.prepare(sql).all(...params) as T[];
  } finally {
    c.close();
  }
}

interface BatchCount {
  batch: number;
  rows: number;
  uniq: number;
  versions: string;
}

/** Rows per explorer step (eid.batch), with distinct (task, run) pairs and the model versions written. */
function rowsPerStep(db: string): BatchCount[] {
  return query<BatchCount>(
    db,
    `SELECT json_extract(experience, '$.eid.batch') AS batch, COUNT(*) AS rows,
            COUNT(DISTINCT json_extract(experience, '$.eid.task') || '/' || json_extract(experience, '$.eid.run')) AS uniq,
            GROUP_CONCAT(DISTINCT model_version) AS versions
       FROM exps GROUP BY batch ORDER BY batch`,
  );
}

function assertEveryStepOnce(db: string, steps: number): void {
  const counts = rowsPerStep(db);
  assert.deepEqual(
    counts.map((c) => [c.batch, c.rows, c.uniq]),
    Array.from({ length: steps }, (_, i) => [i + 1, PER_STEP, PER_STEP]),
    'each explorer step written exactly once',
  );
}

/** Every row read exactly once: Trinity's `consumed` counter is 1 on each. */
function assertEveryRowReadOnce(db: string): void {
  const consumed = query<{ consumed: number; n: number }>(
    db,
    'SELECT consumed, COUNT(*) AS n FROM exps GROUP BY consumed',
  );
  assert.deepEqual(
    consumed.map((c) => c.consumed),
    [1],
    `consumed flags ${JSON.stringify(consumed)}`,
  );
}

function readLog(db: string): { seq: number; ids: number[] }[] {
  return query<{ seq: number; ids: string }>(
    db,
    `SELECT seq, ids FROM exps__reads WHERE reader = 'trainer' ORDER BY seq`,
  ).map((r) => ({
    seq: r.seq,
    ids: (JSON.parse(r.ids) as [number, number][]).flatMap(([a, b]) =>
      Array.from({ length: b - a + 1 }, (_, i) => a + i),
    ),
  }));
}

const stepsOf = (events: RuntimeEvent[], role: string): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === role ? [e.step] : []));
const versionsOf = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) =>
    e.type === 'metrics' && e.role === 'explorer' && 'rollout/model_version' in e.values
      ? [e.values['rollout/model_version']]
      : [],
  );
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function until(cond: () => boolean, what: string, timeoutMs = 20000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts the trainer and waits until it reports itself running (so the explorer waits for its checkpoints). */
async function startTrainer(p: Pair, cwd?: string): Promise<Running> {
  const t = start(p.train, {}, cwd);
  const status = join(p.jobDir, 'state', 'trainer.json');
  await until(
    () => existsSync(status) && JSON.parse(readFileSync(status, 'utf8')).status === 'running',
    'the trainer to start',
  );
  return t;
}

/** Runs the pair's trainer, then its explorer, to the end; both wrote and read every step's batch exactly once. */
async function runPairThrough(p: Pair, steps: number): Promise<{ trainer: Running; explorer: Running }> {
  const trainer = await startTrainer(p);
  const explorer = start(p.explore);
  await finished(explorer, 'explorer');
  await finished(trainer, 'trainer');
  assertEveryStepOnce(p.db, steps);
  assertEveryRowReadOnce(p.db);
  return { trainer, explorer };
}

async function finished(r: Running, who: string): Promise<void> {
  const { code, signal } = await r.exit;
  assert.equal(code, 0, `${who} exited ${code ?? signal}:\n${r.stderr().slice(-2000)}`);
  assert.deepEqual(r.events[r.events.length - 1], { type: 'done', status: 'finished' });
}

function latestStep(jobDir: string): number {
  return Number(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));
}

function assertLoads(jobDir: string, step: number): void {
  assert.ok(existsSync(join(jobDir, `global_step_${step}`, 'model.safetensors')));
  loadModel(join(jobDir, `global_step_${step}`)).dispose();
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

after(() => {
  killAll();
});

describe('mode explore + mode train on one SQL buffer', { timeout: 300000 }, () => {
  test("Trinity's async_gsm8k pair: a queue persisted to sqlite:///, resolved against the working directory, carries every step to the trainer", async () => {
    const steps = 4;
    const p = pair(27, 'queue-pair', steps, 'fixed', 'queue');
    // Launched from another directory than the configs' (as `trinity run --config dir/explorer.yaml` would be); the
    // model and the taskset are named by absolute paths, the queue's database is left relative.
    const cwd = mkdtempSync(join(tmpdir(), 'twb-queue-cwd-'));
    const home = dirname(p.db);
    for (const config of [p.train, p.explore])
      writeFileSync(
        config,
        readFileSync(config, 'utf8')
          .replace('model_path: model\n', `model_path: ${join(home, 'model')}\n`)
          .replace('path: data/train.jsonl\n', `path: ${join(home, 'data', 'train.jsonl')}\n`),
      );
    const trainer = await startTrainer(p, cwd);
    const explorer = start(p.explore, {}, cwd);
    await finished(explorer, 'explorer');
    await finished(trainer, 'trainer');
    const db = join(cwd, 'buffer.db');
    assert.equal(existsSync(p.db), false, 'nothing beside the configs');
    assertEveryStepOnce(db, steps);
    assert.deepEqual(stepsOf(trainer.events, 'trainer'), range(1, steps), 'every step trained on, in order');
    assert.deepEqual(
      trainer.events.flatMap((e) => (e.type === 'checkpoint' ? [e.step] : [])),
      [2, 4],
    );
    assert.deepEqual(versionsOf(explorer.events), [0, 0, 2, 2]);
  });

  test('a priority replay queue in mode train is refused before any work: its priorities live in memory', async () => {
    const p = pair(28, 'replay-queue', 2, 'fixed', 'queue');
    const yaml = readFileSync(p.train, 'utf8').replace(
      '      max_read_timeout: 60\n',
      '      max_read_timeout: 60\n      replay_buffer: {enable: true}\n',
    );
    writeFileSync(p.train, yaml);
    const r = await runJob(p.train, { backend: 'wasm' });
    assert.equal(r.status, 'failed');
    assert.match(
      r.error!,
      /in `mode: train` this queue is what the job's other process \(the explorer\) would share, but it is a priority replay queue/,
    );
    assert.equal(existsSync(p.jobDir), false, 'no job dir');
  });

  test('the pair runs to completion: each step once in the table, all of it trained on, weights pulled every sync_interval', async () => {
    const steps = 8;
    const p = pair(21, 'pair', steps);
    const { trainer, explorer } = await runPairThrough(p, steps);
    const rows = steps * PER_STEP;
    assert.deepEqual(
      stepsOf(trainer.events, 'trainer'),
      range(1, rows / PER_STEP),
      'trainer steps = rows / train_batch_size',
    );
    // buffer.total_steps is the trainer's total here (examples.test.ts: none without it).
    assert.ok(
      trainer.events.every((e) => e.type !== 'progress' || e.total === steps),
      'each trainer step of buffer.total_steps',
    );
    // Checkpoint sync: the trainer saves every sync_interval steps; the explorer, after every sync_interval steps,
    // waits for a newer checkpoint while the trainer runs. In lockstep: versions 0,0,2,2,4,4,6,6.
    const checkpoints = trainer.events.flatMap((e) => (e.type === 'checkpoint' ? [e.step] : []));
    assert.deepEqual(checkpoints, [2, 4, 6, 8]);
    const versions = versionsOf(explorer.events);
    assert.deepEqual(
      versions,
      range(1, steps).map((k) => Math.floor((k - 1) / SYNC_INTERVAL) * SYNC_INTERVAL),
    );
    // The rows carry the version of the weights that produced them.
    assert.deepEqual(
      rowsPerStep(p.db).map((c) => c.versions),
      versions.map(String),
    );
    assertLoads(p.jobDir, steps);
    const state = JSON.parse(readFileSync(join(p.jobDir, 'state', 'explorer.json'), 'utf8'));
    assert.deepEqual(state, { explorerStep: steps, readerOffset: steps * BATCH, finished: true });
    assert.equal(JSON.parse(readFileSync(join(p.jobDir, 'state', 'trainer.json'), 'utf8')).status, 'stopped');
  });

  test('mode train with no explorer feeding it ends finished after max_read_timeout, saying it trained nothing', async () => {
    const p = pair(24, 'alone', 2);
    writeFileSync(p.train, readFileSync(p.train, 'utf8').replace('max_read_timeout: 60', 'max_read_timeout: 1'));
    const trainer = start(p.train);
    await finished(trainer, 'trainer');
    assert.deepEqual(stepsOf(trainer.events, 'trainer'), []);
    const said = trainer.events.flatMap((e) => (e.type === 'log' && e.level === 'warning' ? [e.message] : []));
    assert.ok(
      said.some((m) =>
        /^this run trained nothing: exps gave no batch of \d+ experiences within max_read_timeout \(1 s\): is the job's mode: explore process running\?$/.test(
          m,
        ),
      ),
      said.join('\n'),
    );
  });

  test('explorer-driven sync: the explorer takes whatever the trainer has at its sync points, and nothing waits for sync_timeout', async () => {
    const steps = 8;
    const p = pair(26, 'explorer-driven', steps, 'explorer_driven');
    const trainer = await startTrainer(p);
    const explorer = start(p.explore);
    const startedAt = Date.now();
    await finished(explorer, 'explorer');
    await finished(trainer, 'trainer');
    // A sync request left unanswered would hold the explorer for sync_timeout (30 s) at one of its 4 sync points.
    assert.ok(Date.now() - startedAt < 30000, `the pair took ${Date.now() - startedAt} ms`);
    assert.ok(!explorer.stderr().includes('within sync_timeout'), explorer.stderr());
    assertEveryStepOnce(p.db, steps);
    assertEveryRowReadOnce(p.db);
    assert.deepEqual(stepsOf(trainer.events, 'trainer'), range(1, steps));
    // No fixed schedule: the trainer checkpoints when asked (and at the end), and versions only move at sync points,
    // to one of those checkpoints.
    const checkpoints = trainer.events.flatMap((e) => (e.type === 'checkpoint' ? [e.step] : []));
    assert.equal(checkpoints[checkpoints.length - 1], steps);
    const versions = versionsOf(explorer.events);
    assert.equal(versions[0], 0);
    for (let k = 1; k < steps; k++) {
      if (versions[k] === versions[k - 1]) continue;
      assert.equal(
        k % SYNC_INTERVAL,
        0,
        `version changed before explorer step ${k + 1}, not after a sync point: ${versions}`,
      );
      assert.ok(
        versions[k] > versions[k - 1] && checkpoints.includes(versions[k]),
        `versions ${versions}, checkpoints ${checkpoints}`,
      );
    }
    // Every sync point is answered at once: with the trainer's newest weights, or, when the trainer is still waiting
    // for data with nothing newer (an explorer running far ahead on a busy machine), with the weights it has.
    const answers =
      explorer
        .stderr()
        .match(
          /explorer step \d+: model weights of trainer step \d+|No new model weights found, current version: \d+/g,
        ) ?? [];
    assert.equal(answers.length, steps / SYNC_INTERVAL, explorer.stderr());
    assert.deepEqual(
      rowsPerStep(p.db).map((c) => c.versions),
      versions.map(String),
    );
  });

  test('fully_async: the explorer never waits at a sync point; it takes the newest checkpoint after any step', async () => {
    const steps = 6;
    const p = pair(27, 'fully-async', steps, 'fully_async');
    const { trainer, explorer } = await runPairThrough(p, steps);
    assert.ok(!/waits up to sync_timeout|within sync_timeout/.test(explorer.stderr()), explorer.stderr());
    // Versions only move forward, each to a checkpoint the trainer saved (every sync_interval steps), whenever the
    // explorer finds one, not only after a sync point.
    const checkpoints = trainer.events.flatMap((e) => (e.type === 'checkpoint' ? [e.step] : []));
    const versions = versionsOf(explorer.events);
    assert.equal(versions[0], 0);
    for (let k = 1; k < steps; k++)
      assert.ok(
        versions[k] === versions[k - 1] || (versions[k] > versions[k - 1] && checkpoints.includes(versions[k])),
        `versions ${versions}, checkpoints ${checkpoints}`,
      );
    assert.deepEqual(
      rowsPerStep(p.db).map((c) => c.versions),
      versions.map(String),
    );
  });

  test('SIGKILL the explorer at a random point and restart it: every step once in the table, the trainer waits and trains on all', async () => {
    const steps = 10;
    const p = pair(22, 'kill-explorer', steps);
    const trainer = await startTrainer(p);
    const first = start(p.explore);
    const killAfter = killPoint('async: SIGKILL the explorer', 2, 7);
    await first.waitFor((e) => e.type === 'metrics' && e.role === 'explorer' && e.step >= killAfter);
    first.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    const recorded = JSON.parse(readFileSync(join(p.jobDir, 'state', 'explorer.json'), 'utf8')).explorerStep as number;
    assert.ok(recorded >= killAfter && recorded < steps, `killed after step ${recorded}`);
    // A kill between the commit and the state file leaves one step more in the table than recorded.
    const inTable = Math.max(...rowsPerStep(p.db).map((c) => c.batch));
    assert.ok(inTable === recorded || inTable === recorded + 1, `table holds step ${inTable}, state says ${recorded}`);

    // The trainer polls a table with no live writer before the explorer is back: it must wait for it, not end.
    await new Promise((res) => setTimeout(res, 1500));
    const second = start(p.explore);
    await finished(second, 'restarted explorer');
    await finished(trainer, 'trainer');
    assert.deepEqual(
      stepsOf(second.events, 'explorer'),
      range(inTable + 1, steps),
      'the restarted explorer continues after the last step in the table',
    );
    assertEveryStepOnce(p.db, steps);
    assertEveryRowReadOnce(p.db);
    assert.deepEqual(stepsOf(trainer.events, 'trainer'), range(1, steps));
    assert.ok(
      Math.max(...versionsOf([...first.events, ...second.events])) > 0,
      'the explorer pulled trainer checkpoints',
    );
    assertLoads(p.jobDir, steps);
  });

  test("SIGKILL the trainer at a random point and restart it: it resumes at its checkpoint's buffer position, reading every row once", async () => {
    const steps = 10;
    const p = pair(23, 'kill-trainer', steps);
    const first = await startTrainer(p);
    const explorer = start(p.explore);
    const killAfter = killPoint('async: SIGKILL the trainer', 3, 7); // after the first checkpoint (step 2)
    await first.waitFor((e) => e.type === 'metrics' && e.role === 'trainer' && e.step >= killAfter);
    first.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');

    const saved = latestStep(p.jobDir);
    const position = JSON.parse(readFileSync(join(p.jobDir, `global_step_${saved}`, 'trainer_state.json'), 'utf8'))
      .extra.buffer;
    assert.equal(position.seq, saved, 'the checkpoint holds the read position of its step');
    const before = readLog(p.db);
    const readBeforeCheckpoint = new Set(before.filter((r) => r.seq <= saved).flatMap((r) => r.ids));
    assert.equal(readBeforeCheckpoint.size, saved * PER_STEP);

    const second = start(p.train);
    await finished(second, 'restarted trainer');
    await finished(explorer, 'explorer');
    assert.ok(second.stderr().includes(`resumed from ${join(p.jobDir, `global_step_${saved}`)}`));
    assert.deepEqual(
      stepsOf(second.events, 'trainer'),
      range(saved + 1, steps),
      'the second trainer trains from the checkpointed step on',
    );
    // Reads after the saved position were given back and read again; the read log now holds exactly the second
    // trainer's batches, which together with the ones before the checkpoint cover every row once.
    const afterResume = readLog(p.db);
    assert.deepEqual(
      afterResume.map((r) => r.seq),
      range(saved + 1, steps),
    );
    const readAfter = afterResume.flatMap((r) => r.ids);
    assert.equal(new Set(readAfter).size, readAfter.length);
    assert.ok(
      readAfter.every((id) => !readBeforeCheckpoint.has(id)),
      'nothing read before the checkpoint is read again',
    );
    const all = query<{ id: number }>(p.db, 'SELECT id FROM exps').map((r) => r.id);
    assert.deepEqual(
      [...readBeforeCheckpoint, ...readAfter].sort((a, b) => a - b),
      all.sort((a, b) => a - b),
      'nothing lost',
    );
    assertEveryRowReadOnce(p.db);
    assertEveryStepOnce(p.db, steps);
    assert.equal(latestStep(p.jobDir), steps);
    assertLoads(p.jobDir, steps);
  });

  test('an explorer killed after committing a batch but before recording it does not write that step again', async () => {
    const steps = 5;
    const p = pair(24, 'crash-window', steps);
    const first = start(p.explore, { [TEST_KILL_AFTER_WRITE_ENV]: '3' });
    assert.equal((await first.exit).signal, 'SIGKILL');
    // Step 3 is in the buffer, but the explorer's state still says step 2.
    assert.equal(JSON.parse(readFileSync(join(p.jobDir, 'state', 'explorer.json'), 'utf8')).explorerStep, 2);
    assert.deepEqual(
      rowsPerStep(p.db).map((c) => [c.batch, c.rows]),
      [
        [1, PER_STEP],
        [2, PER_STEP],
        [3, PER_STEP],
      ],
    );
    const second = start(p.explore);
    await finished(second, 'restarted explorer');
    assert.deepEqual(stepsOf(second.events, 'explorer'), [4, 5]);
    assertEveryStepOnce(p.db, steps);
    assert.deepEqual(JSON.parse(readFileSync(join(p.jobDir, 'state', 'explorer.json'), 'utf8')), {
      explorerStep: steps,
      readerOffset: steps * BATCH,
      finished: true,
    });
  });

  test('a trainer killed before its first checkpoint: the batch it took is read again by the next trainer', async () => {
    const steps = 3;
    const p = pair(25, 'no-checkpoint', steps);
    const explored = await runJob(p.explore, { backend: 'wasm' }); // no trainer running: the explorer does not wait
    assert.equal(explored.status, 'finished', explored.error);
    // An earlier trainer took one batch and died before saving anything.
    const earlier = new SqlExperienceReader(p.db, 'exps', {
      policy: 'priority',
      maxReadTimeoutS: 1,
      readerName: 'trainer',
    });
    assert.equal((await earlier.read(PER_STEP)).length, PER_STEP);
    earlier.close();
    const events: RuntimeEvent[] = [];
    const trained = await runJob(p.train, { backend: 'wasm', events: (e) => events.push(e) });
    assert.equal(trained.status, 'finished', trained.error);
    assert.deepEqual(stepsOf(events, 'trainer'), range(1, steps));
    assert.deepEqual(
      readLog(p.db).map((r) => r.seq),
      range(1, steps),
    );
    assertEveryRowReadOnce(p.db);
    assertLoads(p.jobDir, steps);
  });
});
