/** `trinity-workbench metrics` through the bundled dist/cli.js (built by `npm run build`), as a user runs it. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { writeEvents } from '../helpers/tfevents';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'metrics', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function job(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twb-cli-metrics-'));
  const trainer = join(dir, 'monitor', 'tensorboard', 'trainer');
  const explorer = join(dir, 'monitor', 'tensorboard', 'explorer');
  mkdirSync(trainer, { recursive: true });
  mkdirSync(explorer, { recursive: true });
  writeEvents(join(trainer, 'events.out.tfevents.1.h'), [
    { file_version: true },
    { scalar: 'actor/pg_loss', value: 0.5, step: 1, wall_time: 1700000001 },
    { scalar: 'actor/grad_norm', value: 2, step: 1, wall_time: 1700000001 },
    { histogram: 'weights', values: [1, 2], step: 1 },
  ]);
  writeEvents(join(explorer, 'events.out.tfevents.1.h'), [
    { tensor: 'rollout/reward, mean', value: 0.25, step: 1, encoding: 'double_val', wall_time: 1700000002.5 },
  ]);
  return dir;
}

describe('trinity-workbench metrics', () => {
  test('CSV of every scalar in a job dir, with the header and quoting', () => {
    const r = run([job()]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      'run,tag,step,wall_time,value\nexplorer,"rollout/reward, mean",1,1700000002.5,0.25\ntrainer,actor/pg_loss,1,1700000001,0.5\ntrainer,actor/grad_norm,1,1700000001,2\n',
    );
  });

  test('--format json gives the same rows; --tag keeps the matching tags', () => {
    const r = run(['--format', 'json', '--tag', '^actor/', job()]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [
      { run: 'trainer', tag: 'actor/pg_loss', step: 1, wallTime: 1700000001, value: 0.5 },
      { run: 'trainer', tag: 'actor/grad_norm', step: 1, wallTime: 1700000001, value: 2 },
    ]);
  });

  test('bad usage exits 2 with the reason', () => {
    assert.equal(run([]).code, 2);
    const bad = run(['--format', 'xml', job()]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--format must be csv or json/);
    assert.match(run(['--tag', '(', job()]).stderr, /--tag is not a valid regular expression/);
    assert.equal(run(['--since', '1', job()]).code, 2);
  });

  test('an unreadable path exits 1 naming it; the readable ones are still printed', () => {
    const missing = join(tmpdir(), 'twb-no-such-job');
    const r = run([missing, job()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`cannot read ${missing}: ENOENT`));
    assert.match(r.stdout, /trainer,actor\/pg_loss,1/);
  });

  test('a damaged event file exits 1 naming the file and byte offset', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-cli-bad-'));
    const file = join(dir, 'events.out.tfevents.2.h');
    const offsets = writeEvents(file, [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2, corrupt: 'payload' },
    ]);
    const r = run([file]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`${file}: bad data checksum in the record at byte ${offsets[1]}`), r.stderr);
    assert.match(r.stdout, /,x,1,/);
  });
});
