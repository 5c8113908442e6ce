/**
 * Fault injection, Jepsen-style: one job (GRPO in both mode on an SQL experience buffer, tiny model) lives through
 * a seeded history of faults against the real runtime process: a second concurrent run (while the first is
 * suspended by SIGSTOP), SIGKILL at random points, SIGTERM, the stale lock a killed run leaves and a fabricated one,
 * a truncated and a bit-flipped checkpoint file, a full disk (a small tmpfs, when the test runs as root). After every
 * fault the invariants are checked and violations counted: the run resumes from the newest intact checkpoint; every
 * experience is trained exactly once (each explorer step's rows in the buffer once, none read twice); no (run, tag,
 * step) has two values in any reader (metrics.jsonl, the TensorBoard files, rollouts); every checkpoint the pointer
 * names verifies. The seed is printed; `TRINITY_TEST_SEED=<seed>` repeats the history.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { rolloutStepsOnDisk } from '../../../../client/dashboard/series';
import { readAllMetrics } from '../../../../runtime/metrics/job-metrics';
import type { ScalarRow } from '../../../../runtime/metrics/types';
import type { RunRecord } from '../../../../runtime/protocol';
import { quickCheck } from '../../../../runtime/rft/buffer/integrity';
import { checkpointDirs, checkpointProblem } from '../../../../runtime/rft/checkpoint/checkpoint-choice';
import { MANIFEST_FILE, type CheckpointManifest } from '../../../../runtime/rft/checkpoint/manifest';
import { fillDisk, fullDiskUnavailable, smallTmpfs } from '../../../helpers/full-disk';
import { seededRandom, TEST_SEED } from '../../../helpers/kill-point';
import { killAll, start, type Running } from './cli-process';
import { fullDiskError, GRPO_STAGE, header, RUN_WRITES, tinyJob, topLevel, type TinyJob } from './helpers';

/**
 * Steps of the job. Every fault lands at least {@link LEFT_AT_FAULT} steps before the end: a tiny model's step takes
 * about 130 ms on a quiet machine, so a fault after a random wait near the end could come after the run had
 * finished (a SIGTERM then ends a finished run: exit 0, and the next round has nothing to resume).
 */
const STEPS = 16;
const LEFT_AT_FAULT = 6;
/** Experiences per explorer step: batch_size 4 × repeat_times 4. */
const PER_STEP = 16;

const random = seededRandom('faults');
const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

/** Faults injected, by kind, and invariant violations found, for the summary line (docs/reliability.md). */
const faults: Record<string, number> = {};
const violations: string[] = [];
const injected = (kind: string): void => {
  faults[kind] = (faults[kind] ?? 0) + 1;
};

let mount: ReturnType<typeof smallTmpfs> | undefined;
let job: TinyJob;
let config: string;
let jobDir: string;

before(() => {
  console.log(`# fault injection: TRINITY_TEST_SEED=${TEST_SEED}`);
  const why = fullDiskUnavailable();
  if (why) console.log(`# fault injection: no full-disk fault here: ${why}`);
  else mount = smallTmpfs('12m');
  job = tinyJob(21, mount?.dir);
  const body = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', `total_steps: ${STEPS}`)
    .replace('eval_on_startup: true', 'eval_on_startup: false')
    .replace('eval_interval: 2', 'eval_interval: 100')
    .replace('save_interval: 2', 'save_interval: 1')
    .replace(
      '    default_reward_fn_type: math_boxed_reward',
      '    default_reward_fn_type: math_boxed_reward\n  trainer_input:\n    experience_buffer:\n      name: exps\n      storage_type: sql\n      path: sqlite:///buffer.db',
    );
  config = job.write('faults.yaml', header(job, 'faults') + body);
  jobDir = join(job.dir, 'checkpoints', 'tests', 'faults');
});

after(() => {
  killAll();
  console.log(
    `# fault injection: ${Object.values(faults).reduce((a, b) => a + b, 0)} faults (${Object.entries(faults)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}), ${violations.length} invariant violations (TRINITY_TEST_SEED=${TEST_SEED})`,
  );
  mount?.unmount();
});

const logs = (r: Running): string[] => r.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
const runRecord = (): RunRecord => JSON.parse(readFileSync(join(jobDir, 'state', 'run.json'), 'utf8')) as RunRecord;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The step of the newest checkpoint that verifies (0: none): where the next run resumes. */
function newestIntact(): number {
  return checkpointDirs(jobDir).find((c) => checkpointProblem(c.dir) === undefined)?.step ?? 0;
}

/** Starts the run and checks it resumed where it should: its first trainer step follows the newest intact one. */
function resume(): { run: Running; from: number } {
  const from = newestIntact();
  return { run: start(config), from };
}

async function resumedAt(r: { run: Running; from: number }, round: string): Promise<void> {
  const first = await r.run.waitFor((e) => e.type === 'metrics' && e.role === 'trainer');
  if (first.type === 'metrics' && first.step !== r.from + 1)
    violations.push(`${round}: resumed at trainer step ${first.step}, the newest intact checkpoint is ${r.from}`);
}

/** Waits until the run has trained a few steps more (a random number, and a random moment within the next). */
async function someStepsLater(r: Running, from: number, round: string): Promise<void> {
  const k = Math.min(STEPS - LEFT_AT_FAULT, from + int(1, 3));
  await r.waitFor((e) => e.type === 'metrics' && e.role === 'trainer' && e.step >= k);
  const delay = int(0, 200);
  console.log(`# ${round}: fault after trainer step ${k} + ${delay} ms`);
  await sleep(delay);
}

function duplicates(rows: ScalarRow[]): string[] {
  const seen = new Set<string>();
  return rows.map((r) => `${r.run} ${r.tag} ${r.step}`).filter((k) => seen.has(k) || !seen.add(k));
}

/** Every invariant on the job as it is now; each broken one is counted (and the round fails). */
function checkInvariants(round: string, final = false): void {
  const found: string[] = [];
  for (const [reader, rows] of [
    ['metrics.jsonl', readAllMetrics([jobDir]).rows],
    ['TensorBoard', readAllMetrics([join(jobDir, 'monitor', 'tensorboard')]).rows],
  ] as const) {
    const dup = duplicates(rows);
    if (dup.length) found.push(`${reader} shows ${dup.length} (run, tag, step) twice, e.g. ${dup[0]}`);
  }
  const rollouts = rolloutStepsOnDisk(jobDir, 1000).map((r) => r.step);
  if (new Set(rollouts).size !== rollouts.length) found.push(`rollouts.jsonl shows a step twice: ${rollouts}`);
  const pointer = join(jobDir, 'latest_checkpointed_iteration.txt');
  if (existsSync(pointer)) {
    const dir = join(jobDir, `global_step_${readFileSync(pointer, 'utf8').trim()}`);
    const problem = checkpointProblem(dir);
    if (problem) found.push(`the pointer names ${dir}, which does not verify: ${problem}`);
  }
  const buffer = join(job.dir, 'buffer.db');
  const damage = quickCheck(buffer);
  if (damage.length) found.push(`the buffer fails quick_check: ${damage[0]}`);
  const db = new Database(buffer, { readonly: true, fileMustExist: true });
  try {
    const batches = db
      .prepare(
        `SELECT json_extract(experience, '$.eid.batch') AS step, COUNT(*) AS n, MIN(consumed) AS lo, MAX(consumed) AS hi FROM exps GROUP BY step ORDER BY step`,
      )
      .all() as { step: number; n: number; lo: number; hi: number }[];
    for (const b of batches) {
      if (b.n !== PER_STEP) found.push(`explorer step ${b.step} has ${b.n} rows in the buffer, not ${PER_STEP}`);
      if (b.hi > 1) found.push(`explorer step ${b.step}: a row was trained on ${b.hi} times`);
    }
    if (final) {
      const steps = batches.map((b) => b.step);
      if (steps.join() !== Array.from({ length: STEPS }, (_, i) => i + 1).join())
        found.push(`the buffer holds explorer steps ${steps}, not 1..${STEPS}`);
      for (const b of batches) if (b.lo !== 1) found.push(`explorer step ${b.step}: a row was never trained on`);
      const trained = [
        ...new Set(
          readAllMetrics([jobDir])
            .rows.filter((r) => r.run === 'trainer')
            .map((r) => r.step),
        ),
      ];
      if (trained.sort((a, b) => a - b).join() !== Array.from({ length: STEPS }, (_, i) => i + 1).join())
        found.push(`the trainer's curves hold steps ${trained}, not 1..${STEPS}`);
    }
  } finally {
    db.close();
  }
  violations.push(...found.map((f) => `${round}: ${f}`));
  assert.deepEqual(found, [], round);
}

/** A random file of the newest checkpoint (from its manifest) and that checkpoint's step. */
function newestCheckpointFile(): { step: number; file: string; size: number } {
  const newest = checkpointDirs(jobDir)[0];
  const manifest = JSON.parse(readFileSync(join(newest.dir, MANIFEST_FILE), 'utf8')) as CheckpointManifest;
  const files = [
    ...manifest.files,
    { path: MANIFEST_FILE, size: readFileSync(join(newest.dir, MANIFEST_FILE)).length },
  ];
  const f = files[int(0, files.length - 1)];
  return { step: newest.step, file: f.path, size: f.size };
}

function damageLine(r: Running, step: number, file: string): string | undefined {
  return logs(r).find((m) => m.startsWith(`checkpoint global_step_${step} is damaged: ${file}: `));
}

describe(`fault injection (seed ${TEST_SEED})`, () => {
  let killedRunId = '';

  test('a second run while the first is suspended (SIGSTOP) is refused, naming it; the first is then SIGKILLed', async () => {
    const first = start(config);
    const runEvent = await first.waitFor((e) => e.type === 'run');
    assert.ok(runEvent.type === 'run');
    killedRunId = runEvent.runId;
    first.kill('SIGSTOP');
    const second = start(config);
    const exit = await second.exit;
    first.kill('SIGCONT');
    injected('second concurrent run');
    assert.equal(exit.code, 75, second.stderr().slice(-1000));
    const done = second.events.at(-1);
    assert.ok(done?.type === 'done' && done.status === 'refused', JSON.stringify(done));
    assert.equal(done.refusal?.holder.pid, runEvent.pid);
    assert.equal(done.refusal?.holder.runId, runEvent.runId);
    assert.equal(runRecord().runId, runEvent.runId, "the refused run leaves the job's record alone");
    await someStepsLater(first, 0, 'first run');
    first.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    injected('SIGKILL');
    checkInvariants('after the first SIGKILL');
  });

  test("the killed run's lock is taken over with a line naming it; SIGTERM stops the next run cleanly", async () => {
    assert.equal(JSON.parse(readFileSync(join(jobDir, 'state', 'lock.json'), 'utf8')).runId, killedRunId);
    injected('stale lock (a killed run)');
    const r = resume();
    await resumedAt(r, 'after the first SIGKILL');
    assert.ok(
      logs(r.run).some((m) => m.startsWith(`took over the job from run ${killedRunId} `)),
      logs(r.run).join('\n'),
    );
    await someStepsLater(r.run, r.from, 'SIGTERM');
    r.run.kill('SIGTERM');
    injected('SIGTERM');
    const exit = await r.run.exit;
    assert.equal(exit.code, 130, r.run.stderr().slice(-1000));
    assert.deepEqual(r.run.events.at(-1), { type: 'done', status: 'stopped' });
    assert.equal(runRecord().status, 'stopped');
    assert.equal(existsSync(join(jobDir, 'state', 'lock.json')), false, 'a stopped run releases the job');
    checkInvariants('after SIGTERM');
  });

  test('a truncated file of the newest checkpoint is named, the run falls back to the one before; then SIGKILL', async () => {
    const { step, file, size } = newestCheckpointFile();
    const cut = int(0, size - 1);
    truncateSync(join(jobDir, `global_step_${step}`, file), cut);
    console.log(`# truncated global_step_${step}/${file} to ${cut} of ${size} bytes`);
    injected('truncated checkpoint file');
    const r = resume();
    await resumedAt(r, 'after truncation');
    assert.ok(damageLine(r.run, step, file), logs(r.run).join('\n'));
    assert.equal(r.from, step - 1);
    await someStepsLater(r.run, r.from, 'second SIGKILL');
    r.run.kill('SIGKILL');
    await r.run.exit;
    injected('SIGKILL');
    checkInvariants('after truncation and the second SIGKILL');
  });

  test('a bit flipped in the newest checkpoint is named and passed over; then the disk fills up (or SIGKILL)', async () => {
    const { step, file, size } = newestCheckpointFile();
    const path = join(jobDir, `global_step_${step}`, file);
    const bytes = new Uint8Array(readFileSync(path));
    const at = int(0, size - 1);
    const bit = int(0, 7);
    bytes[at] ^= 1 << bit;
    writeFileSync(path, bytes);
    console.log(`# flipped bit ${bit} of byte ${at} in global_step_${step}/${file}`);
    injected('bit-flipped checkpoint file');
    const r = resume();
    await resumedAt(r, 'after the bit flip');
    assert.ok(damageLine(r.run, step, file), logs(r.run).join('\n'));
    // The disk fills the moment the resumed run logs its first step, while steps are left to write: after a random
    // wait the rest of a short run could finish first (seed 1262285532 did, and the run exited 0).
    if (!mount || r.from + 1 >= STEPS) {
      await someStepsLater(r.run, r.from, 'third SIGKILL');
      r.run.kill('SIGKILL');
      await r.run.exit;
      injected('SIGKILL');
      checkInvariants('after the bit flip and the third SIGKILL');
      return;
    }
    console.log(`# full disk: after trainer step ${r.from + 1}`);
    const filler = join(mount.dir, 'filler');
    fillDisk(filler);
    injected('full disk');
    const exit = await r.run.exit;
    rmSync(filler);
    assert.equal(exit.code, 1, r.run.stderr().slice(-1000));
    const done = r.run.events.at(-1);
    assert.ok(done?.type === 'done' && done.status === 'failed');
    console.log(`# full disk: ${done.error}`);
    assert.match(done.error ?? '', fullDiskError([...RUN_WRITES, 'buffer read'], config));
    assert.deepEqual([runRecord().status, runRecord().error], ['failed', done.error], 'state/run.json says why');
    checkInvariants('after the full disk');
  });

  test('a fabricated stale lock (a dead pid of this host) is taken over; the run finishes every step', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(
      join(jobDir, 'state', 'lock.json'),
      JSON.stringify({ protocol: 1, runId: 'fabricated', pid: dead, host: hostname(), startedAt: 'then', config }),
    );
    injected('stale lock (fabricated)');
    const r = resume();
    await resumedAt(r, 'the last run');
    assert.ok(logs(r.run).some((m) => m.startsWith(`took over the job from run fabricated (pid ${dead}, `)));
    const exit = await r.run.exit;
    assert.equal(exit.code, 0, r.run.stderr().slice(-2000));
    assert.deepEqual(r.run.events.at(-1), { type: 'done', status: 'finished' });
    checkInvariants('at the end', true);
    assert.equal(
      readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'),
      `${STEPS}\n`,
      logs(r.run).join('\n'),
    );
    assert.deepEqual(violations, []);
  });
});
