/**
 * The four ways a run lost work or told a riddle (issue 33), each on the tiny job, in process: a second run of a
 * live job is refused and the first finishes alone; a run stopped between checkpoints and resumed shows each step
 * once in every reader; a damaged newest checkpoint is named and the run resumes from the one before (and a later
 * stage's damaged starting checkpoint is named before it runs); a full disk
 * (a small tmpfs, as root) names the file and the operation, ends the run as failed in state/run.json with that
 * reason and leaves every checkpoint intact, and the run resumes once there is room; the same under the SQL buffer
 * alone fails the trainer's read, which takes nothing. A read-only checkpoint_root_dir is named with what to do.
 * Also: a damaged SQLite buffer stops the run before any work.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { rolloutStepsOnDisk } from '../../../../client/dashboard/series';
import { initBackend } from '../../../../runtime/engine/backend';
import { readAllMetrics } from '../../../../runtime/metrics/job-metrics';
import type { ScalarRow } from '../../../../runtime/metrics/types';
import type { RunRecord, RuntimeEvent } from '../../../../runtime/protocol';
import { verifyCheckpoint } from '../../../../runtime/rft/checkpoint/manifest';
import { runJob, type JobOptions } from '../../../../runtime/rft/run/job/job';
import { fillDisk, fullDiskUnavailable, smallTmpfs } from '../../../helpers/full-disk';
import { fullDiskError, GRPO_STAGE, header, RUN_WRITES, sftStage, tinyJob, topLevel, type TinyJob } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

interface Ran {
  status: string;
  error?: string;
  events: RuntimeEvent[];
  logs: string[];
}

async function run(config: string, opts: Partial<JobOptions> = {}): Promise<Ran> {
  const events: RuntimeEvent[] = [];
  const logs: string[] = [];
  const r = await runJob(config, {
    backend: 'wasm',
    events: (e) => events.push(e),
    log: (_, m) => logs.push(m),
    ...opts,
  });
  return { status: r.status, error: r.error, events, logs };
}

/** The tiny GRPO job for `steps` steps, checkpointing every step, written as `<name>.yaml` after `edit`. */
function grpo(job: TinyJob, name: string, steps: number, edit = (yaml: string) => yaml): string {
  const body = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', `total_steps: ${steps}`)
    .replace('eval_on_startup: true', 'eval_on_startup: false')
    .replace('save_interval: 2', 'save_interval: 1');
  return job.write(`${name}.yaml`, edit(header(job, name) + body));
}

const jobDirOf = (job: TinyJob, name: string): string => join(job.dir, 'checkpoints', 'tests', name);
const trainerSteps = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === 'trainer' ? [e.step] : []));
const duplicates = (rows: ScalarRow[]): string[] => {
  const seen = new Set<string>();
  return rows.map((r) => `${r.run} ${r.tag} ${r.step}`).filter((k) => seen.has(k) || !seen.add(k));
};
const record = (jobDir: string, file = 'run.json'): RunRecord =>
  JSON.parse(readFileSync(join(jobDir, 'state', file), 'utf8')) as RunRecord;

/** Every reader shows each (run, tag, step) once: metrics.jsonl, the TensorBoard files alone, the rollouts. */
function assertOneValuePerStep(jobDir: string): void {
  const all = readAllMetrics([jobDir]);
  assert.deepEqual(all.problems, []);
  assert.deepEqual(duplicates(all.rows), [], 'metrics.jsonl');
  assert.deepEqual(duplicates(readAllMetrics([join(jobDir, 'monitor', 'tensorboard')]).rows), [], 'TensorBoard');
  const rollouts = rolloutStepsOnDisk(jobDir, 1000).map((r) => r.step);
  assert.deepEqual(
    rollouts,
    [...new Set(rollouts)].sort((a, b) => a - b),
    'rollouts.jsonl',
  );
}

/** Every global_step_N verifies against its manifest, the pointer names one, and no temporary write is left. */
function assertCheckpointsIntact(jobDir: string): void {
  const names = readdirSync(jobDir);
  assert.deepEqual(
    names.filter((n) => /^\.global_step_/.test(n)),
    [],
    'no temporary checkpoint directory is left',
  );
  for (const n of names.filter((x) => /^global_step_\d+$/.test(x)))
    assert.deepEqual(verifyCheckpoint(join(jobDir, n)), { status: 'intact' }, n);
  const pointer = readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8').trim();
  assert.ok(names.includes(`global_step_${pointer}`), `the pointer names global_step_${pointer}`);
}

describe('runs that survive', () => {
  test('a second run of a live job is refused, naming the live run, which goes on alone', async () => {
    const job = tinyJob(12);
    const config = grpo(job, 'twice', 200);
    let second: Promise<Ran> | undefined;
    // The first run is stopped once the second has been answered (the second's config check takes a while).
    const stop = new AbortController();
    const first = await run(config, {
      signal: stop.signal,
      progress: (role, step) => {
        if (role === 'trainer' && step === 2) second ??= run(config).finally(() => stop.abort());
      },
    });
    assert.ok(second, 'the second run was started while the first ran');
    const refused = await second;
    assert.equal(first.status, 'stopped', first.error);
    assert.equal(refused.status, 'refused');
    const done = refused.events.at(-1);
    assert.equal(done?.type, 'done');
    assert.ok(done?.type === 'done' && done.status === 'refused' && done.refusal?.reason === 'job-locked');
    const firstRun = first.events.find((e) => e.type === 'run');
    assert.ok(firstRun?.type === 'run');
    assert.equal(done.refusal.holder.runId, firstRun.runId);
    assert.equal(done.refusal.holder.pid, process.pid);
    assert.match(
      refused.error ?? '',
      new RegExp(`^another run is writing .*twice: run ${firstRun.runId} \\(pid ${process.pid}, `),
    );
    assert.deepEqual(
      refused.events.map((e) => e.type),
      ['done'],
      'nothing else: no run event, no step',
    );
    const jobDir = jobDirOf(job, 'twice');
    assert.equal(record(jobDir).runId, firstRun.runId, "the job's record stays the first run's");
    assert.equal(record(jobDir).status, 'stopped');
    const steps = trainerSteps(first.events);
    assert.deepEqual(
      steps,
      Array.from({ length: steps.length }, (_, i) => i + 1),
      'the first run trained on alone',
    );
    assertOneValuePerStep(jobDir);
    assert.equal(existsSync(join(jobDir, 'state', 'lock.json')), false, 'released at the end');
  });

  test('stopped after trainer step 5 with the checkpoint at 4, then resumed: each step once in every reader', async () => {
    const job = tinyJob(9);
    const config = grpo(job, 'curves', 7, (y) => y.replace('save_interval: 1', 'save_interval: 2'));
    const jobDir = jobDirOf(job, 'curves');
    const stop = new AbortController();
    const first = await run(config, {
      signal: stop.signal,
      progress: (role, step) => {
        if (role === 'trainer' && step >= 5) stop.abort();
      },
    });
    assert.equal(first.status, 'stopped');
    assert.equal(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'), '4\n');
    assert.ok(trainerSteps(first.events).includes(5));

    const second = await run(config);
    assert.equal(second.status, 'finished', second.error);
    const again = second.events.find((e) => e.type === 'metrics' && e.role === 'trainer' && e.step === 5);
    assert.ok(again?.type === 'metrics', 'the resumed run trains step 5 again');
    assertOneValuePerStep(jobDir);
    const rows = readAllMetrics([jobDir]).rows;
    const loss5 = rows.find((r) => r.run === 'trainer' && r.tag === 'actor/pg_loss' && r.step === 5);
    assert.equal(loss5?.value, again.values['actor/pg_loss'], "step 5 shows the resumed run's value");
    assert.deepEqual(
      [...new Set(rows.filter((r) => r.run === 'trainer').map((r) => r.step))].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7],
    );
  });

  test('a truncated optimizer.safetensors in the newest checkpoint: named, and the run resumes from the one before', async () => {
    const job = tinyJob(5);
    const jobDir = jobDirOf(job, 'damaged');
    assert.equal((await run(grpo(job, 'damaged', 3))).status, 'finished');
    truncateSync(join(jobDir, 'global_step_3', 'optimizer.safetensors'), 1000);
    const resumed = await run(grpo(job, 'damaged', 5));
    assert.equal(resumed.status, 'finished', resumed.error);
    assert.match(
      resumed.logs.find((m) => m.includes('is damaged')) ?? '',
      /^checkpoint global_step_3 is damaged: optimizer\.safetensors: 1000 bytes, the manifest says \d+; it is set aside as global_step_3\.damaged and the run resumes from global_step_2$/,
    );
    assert.deepEqual(trainerSteps(resumed.events), [3, 4, 5]);
    assert.ok(existsSync(join(jobDir, 'global_step_3.damaged')), 'kept aside for inspection');
    assertCheckpointsIntact(jobDir);
    assertOneValuePerStep(jobDir);
  });

  test("a later stage's starting checkpoint, damaged since the earlier stage finished: named before that stage runs", async () => {
    const job = tinyJob(13);
    const config = job.write(
      'staged.yaml',
      `${header(job, 'staged')}stages:${sftStage('sft', { steps: 2, batch: 4, saveInterval: 2 })}  - stage_name: grpo${GRPO_STAGE.replace(/^\n {4}/, '\n    ')}`,
    );
    // Stopped as the second stage begins: the first is recorded as finished, with its checkpoint.
    const stop = new AbortController();
    const first = await run(config, {
      signal: stop.signal,
      events: (e) => {
        if (e.type === 'stage' && e.index === 1) stop.abort();
      },
    });
    assert.equal(first.status, 'stopped', first.error);
    const sftDir = join(job.dir, 'checkpoints', 'tests', 'staged', 'sft', 'global_step_2');
    truncateSync(join(sftDir, 'model.safetensors'), 1000);
    const second = await run(config, { continueFromCheckpoint: true });
    assert.equal(second.status, 'failed');
    assert.match(
      second.error ?? '',
      new RegExp(
        `^stage grpo starts from ${sftDir}, which is damaged: model\\.safetensors: 1000 bytes, the manifest says \\d+`,
      ),
    );
    assert.deepEqual(trainerSteps(second.events), []);
  });

  test('no intact checkpoint: the run stops before any work, naming each checkpoint and why', async () => {
    const job = tinyJob(6);
    const jobDir = jobDirOf(job, 'lost');
    assert.equal((await run(grpo(job, 'lost', 1))).status, 'finished');
    truncateSync(join(jobDir, 'global_step_1', 'model.safetensors'), 64);
    const resumed = await run(grpo(job, 'lost', 3));
    assert.equal(resumed.status, 'failed');
    assert.match(
      resumed.error ?? '',
      /no checkpoint in .* is intact, so the run cannot resume:\n {2}global_step_1: model\.safetensors: 64 bytes, the manifest says \d+\n/,
    );
    assert.deepEqual(trainerSteps(resumed.events), []);
  });

  test('a damaged SQLite experience buffer is reported with its file before any work', async () => {
    const job = tinyJob(8);
    const db = new Database(join(job.dir, 'buffer.db'));
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX iv ON t (v);');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${'x'.repeat(40)}`);
    })();
    db.close();
    const fd = openSync(join(job.dir, 'buffer.db'), 'r+');
    writeSync(fd, new Uint8Array(4096).fill(0x5a), 0, 4096, 4096 * 3); // one b-tree page overwritten
    closeSync(fd);
    const sql = `  trainer_input:\n    experience_buffer:\n      name: exps\n      storage_type: sql\n      path: sqlite:///buffer.db\n`;
    const config = grpo(job, 'sqlbad', 2, (y) =>
      y.replace(
        '    default_reward_fn_type: math_boxed_reward\n',
        `    default_reward_fn_type: math_boxed_reward\n${sql}`,
      ),
    );
    const r = await run(config);
    assert.equal(r.status, 'failed');
    assert.match(
      r.error ?? '',
      new RegExp(
        `^${join(job.dir, 'buffer.db').replace(/[.]/g, '\\.')} \\(buffer\\.trainer_input\\.experience_buffer\\) fails SQLite's integrity check \\(PRAGMA quick_check\\), so the run does not start:\\n {2}\\S`,
      ),
    );
    assert.deepEqual(trainerSteps(r.events), []);
    assert.equal(record(jobDirOf(job, 'sqlbad')).status, 'failed');
  });
});

describe('a full or read-only disk', () => {
  const why = fullDiskUnavailable();
  let mount: ReturnType<typeof smallTmpfs> | undefined;
  let bufferMount: ReturnType<typeof smallTmpfs> | undefined;
  after(() => {
    mount?.unmount();
    bufferMount?.unmount();
  });

  test(
    "under the SQL buffer: the trainer's read fails named and takes nothing; the resumed run trains every row once",
    { skip: why },
    async () => {
      // The buffer alone on a small disk, filled by a `both` run and then trained on by a `mode: train` run, whose
      // only use of that disk is reading: each read marks its rows consumed, which needs room in SQLite's log.
      bufferMount = smallTmpfs('2m');
      const buffer = join(bufferMount.dir, 'buffer.db');
      const job = tinyJob(11);
      const steps = 4;
      const withBuffer = (y: string): string =>
        y.replace(
          '    default_reward_fn_type: math_boxed_reward\n',
          `    default_reward_fn_type: math_boxed_reward\n  trainer_input:\n    experience_buffer:\n      name: exps\n      storage_type: sql\n      path: sqlite:///${buffer}\n`,
        );
      const filled = await run(grpo(job, 'explored', steps, withBuffer));
      assert.equal(filled.status, 'finished', filled.error);
      const db = new Database(buffer);
      db.exec('UPDATE exps SET consumed = 0; DELETE FROM exps__reads;');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();

      const config = grpo(job, 'fullread', steps, (y) =>
        withBuffer(y)
          .replace('mode: both', 'mode: train')
          .replace('  batch_size: 4\n', '  batch_size: 4\n  train_batch_size: 16\n'),
      );
      const jobDir = jobDirOf(job, 'fullread');
      const filler = join(bufferMount.dir, 'filler');
      const first = await run(config, {
        progress: (role, step) => {
          if (role === 'trainer' && step === 2 && !existsSync(filler)) fillDisk(filler);
        },
      });
      assert.equal(first.status, 'failed');
      assert.match(first.error ?? '', fullDiskError(['buffer read'], config));
      assert.deepEqual(
        [record(jobDir, 'run-train.json').status, record(jobDir, 'run-train.json').error],
        ['failed', first.error],
        "state/run-train.json (a train process's record) says why",
      );
      assert.deepEqual(trainerSteps(first.events), [1, 2]);
      const consumed = (): number[][] => {
        const c = new Database(buffer, { readonly: true, fileMustExist: true });
        try {
          const rows = c
            .prepare(
              `SELECT json_extract(experience, '$.eid.batch') AS step, COUNT(*) AS n, SUM(consumed = 1) AS once FROM exps GROUP BY step ORDER BY step`,
            )
            .all() as { step: number; n: number; once: number }[];
          return rows.map((r) => [r.step, r.n, r.once]);
        } finally {
          c.close();
        }
      };
      // Priority reads take the newest rows first.
      assert.deepEqual(consumed(), [
        [1, 16, 0],
        [2, 16, 0],
        [3, 16, 16],
        [4, 16, 16],
      ]);
      assertCheckpointsIntact(jobDir);

      rmSync(filler);
      const second = await run(config);
      assert.equal(second.status, 'finished', second.error);
      assert.deepEqual(trainerSteps(second.events), [3, 4]);
      assert.deepEqual(
        consumed(),
        Array.from({ length: steps }, (_, i) => [i + 1, 16, 16]),
        'every row trained on once',
      );
      assertOneValuePerStep(jobDir);
    },
  );

  test(
    'a read-only file system under checkpoint_root_dir: named, with what to do, before any work',
    { skip: why },
    async () => {
      const ro = smallTmpfs('1m');
      try {
        execFileSync('mount', ['-o', 'remount,ro', ro.dir]);
        const job = tinyJob(12);
        const config = grpo(job, 'readonly', 2, (y) =>
          y.replace(`checkpoint_root_dir: ${job.dir}/checkpoints`, `checkpoint_root_dir: ${ro.dir}`),
        );
        const r = await run(config);
        assert.equal(r.status, 'failed');
        assert.equal(
          r.error,
          `job folder creation failed: ${ro.dir}/tests: read-only file system (EROFS). The file cannot be ` +
            'written there (a read-only file system, or its permissions): make it writable, then resume the run ' +
            `(Resume in the editor, or \`trinity-workbench run --continue-from-checkpoint --config ${config}\`): it ` +
            'continues from its last checkpoint; every checkpoint and buffer row written before the failure is intact.',
        );
        assert.deepEqual(trainerSteps(r.events), []);
      } finally {
        ro.unmount();
      }
    },
  );

  test(
    'names the file and the operation, ends the run as failed in state/run.json, keeps every checkpoint; the run resumes once there is room',
    { skip: why },
    async () => {
      mount = smallTmpfs('6m');
      const job = tinyJob(10, mount.dir);
      const config = grpo(job, 'full', 6);
      const jobDir = jobDirOf(job, 'full');
      const filler = join(mount.dir, 'filler');
      const first = await run(config, {
        progress: (role, step) => {
          if (role === 'trainer' && step === 2 && !existsSync(filler)) fillDisk(filler);
        },
      });
      assert.equal(first.status, 'failed');
      assert.match(first.error ?? '', fullDiskError(RUN_WRITES, config));
      const rec = record(jobDir);
      assert.equal(rec.status, 'failed');
      assert.equal(rec.error, first.error, 'state/run.json says why');
      assertCheckpointsIntact(jobDir);

      rmSync(filler);
      const second = await run(config);
      assert.equal(second.status, 'finished', second.error);
      assert.equal(trainerSteps(second.events).at(-1), 6);
      assertCheckpointsIntact(jobDir);
      assertOneValuePerStep(jobDir);
    },
  );
});
