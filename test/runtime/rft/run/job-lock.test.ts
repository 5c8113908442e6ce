/**
 * One writer per job folder: the lock (a real SQLite exclusive lock, a holder file) refuses a second taker naming
 * the holder and how to stop it, is taken over with a line when its holder died (a real process, SIGKILLed while
 * holding it), refuses a holder on another host, frees everything on release, and lets the explore and train
 * processes of one job hold one each. Taking it loads no TensorFlow.js (1.4 s of CPU for every lock taker when it
 * did, through the atomic write's module).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { jobLockPath, type JobLockHolder } from '../../../../runtime/protocol';
import { JobLocked, takeJobLock } from '../../../../runtime/rft/run/job/job-lock';
import { lockHolderLive, readJobLock } from '../../../../runtime/run-records';
import { spawnLockHolder } from '../../../helpers/lock-holder';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'twb-lock-'));
const run = (runId: string) => ({ runId, config: '/configs/grpo.yaml' });
const quiet = (): void => {};

describe('the job lock', () => {
  test('a second taker is refused, naming the holder and how to stop it; after release the folder is free', () => {
    const job = fresh();
    const first = takeJobLock(job, undefined, run('run-a'), quiet);
    assert.deepEqual(readJobLock(job), first.holder);
    assert.equal(first.holder.pid, process.pid);
    assert.equal(lockHolderLive(first.holder), true);
    assert.throws(
      () => takeJobLock(job, undefined, run('run-b'), quiet),
      (e: Error) =>
        e instanceof JobLocked &&
        e.refusal.reason === 'job-locked' &&
        e.refusal.holder.runId === 'run-a' &&
        e.refusal.lockFile === join(job, 'state', 'lock.json') &&
        e.message.startsWith(`another run is writing ${job}: run run-a (pid ${process.pid}, started `) &&
        e.message.includes(`\`kill ${process.pid}\``),
    );
    first.release();
    assert.equal(existsSync(join(job, 'state', 'lock.json')), false);
    const lines: string[] = [];
    takeJobLock(job, undefined, run('run-b'), (_, m) => lines.push(m)).release();
    assert.deepEqual(lines, [], 'a released lock is not "taken over"');
  });

  test('the lock of a process killed while holding it is taken over, with a line naming that run', async () => {
    const job = fresh();
    const child = await spawnLockHolder(job, 'killed-run', 'x.yaml');
    assert.throws(() => takeJobLock(job, undefined, run('too-early'), quiet), JobLocked, 'held while it lives');
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    assert.equal(readJobLock(job)?.runId, 'killed-run', 'the dead run left its holder file');
    assert.equal(lockHolderLive(readJobLock(job)!), false);
    const lines: string[] = [];
    const lock = takeJobLock(job, undefined, run('after'), (level, m) => lines.push(`${level}: ${m}`));
    assert.equal(lines.length, 1);
    assert.match(
      lines[0],
      new RegExp(
        `^warning: took over the job from run killed-run \\(pid ${child.pid}, started .*\\), which ended without releasing it$`,
      ),
    );
    assert.equal(readJobLock(job)?.runId, 'after');
    lock.release();
  });

  test('a holder on another host is refused even with the lock free: this machine cannot tell whether it runs', () => {
    const job = fresh();
    mkdirSync(join(job, 'state'));
    const holder: JobLockHolder = {
      protocol: 1,
      runId: 'remote',
      pid: 4242,
      host: `not-${hostname()}`,
      startedAt: '2026-01-01T00:00:00.000Z',
      config: 'x.yaml',
    };
    writeFileSync(join(job, jobLockPath()), JSON.stringify(holder));
    assert.throws(
      () => takeJobLock(job, undefined, run('local'), quiet),
      (e: Error) =>
        e instanceof JobLocked &&
        e.message.includes(`pid 4242 on host not-${hostname()}`) &&
        e.message.includes(`if it no longer runs, delete ${join(job, 'state', 'lock.json')}`),
    );
    assert.deepEqual(JSON.parse(readFileSync(join(job, jobLockPath()), 'utf8')), holder, 'left as it was');
    assert.equal(lockHolderLive(holder), true);
  });

  test('the explore and train processes of one job hold one lock each', () => {
    const job = fresh();
    const explore = takeJobLock(job, 'explore', run('e'), quiet);
    const train = takeJobLock(job, 'train', run('t'), quiet);
    assert.throws(() => takeJobLock(job, 'train', run('t2'), quiet), JobLocked);
    assert.equal(readJobLock(job, 'explore')?.runId, 'e');
    assert.equal(readJobLock(job, 'train')?.runId, 't');
    explore.release();
    train.release();
  });

  test('a process that takes and releases the lock loads no TensorFlow.js', () => {
    const job = fresh();
    const loaded = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `const { takeJobLock } = require(${JSON.stringify(resolve(__dirname, '../../../../runtime/rft/run/job/job-lock.ts'))});
         takeJobLock(${JSON.stringify(job)}, undefined, { runId: 'light', config: 'x.yaml' }, () => {}).release();
         console.log(JSON.stringify(Object.keys(require.cache)));`,
      ],
      { encoding: 'utf8' },
    );
    const modules = JSON.parse(loaded) as string[];
    assert.ok(
      modules.some((m) => m.endsWith('job-lock.ts')),
      'the child loaded the lock',
    );
    assert.deepEqual(
      modules.filter((m) => /@tensorflow|[\\/]engine[\\/](backend|lm|train)[\\/]/.test(m)),
      [],
    );
  });
});
