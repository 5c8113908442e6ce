/**
 * A process's start time, which the run board and the language server use to tell a run's process from a later one
 * given its pid: ps's `lstart` (what macOS gives) read from this machine's real `ps` agrees with Linux's /proc to
 * within its whole second, in this time zone and in one half an hour off UTC, and a gone process has none.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { parseLstart, procStartMs, psStartMs } from '../../runtime/process-start';

const PROCESS_START = resolve(__dirname, '..', '..', 'runtime', 'process-start.ts');

test("ps's lstart of a running process is /proc's start, truncated to the second", async () => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    const proc = procStartMs(child.pid!);
    assert.notEqual(proc, undefined, 'this test needs /proc (Linux)');
    const line = execFileSync('ps', ['-o', 'lstart=', '-p', String(child.pid)], {
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
    });
    const ps = parseLstart(line);
    assert.notEqual(ps, undefined, `parsed ${JSON.stringify(line)}`);
    assert.ok(proc! - ps! >= 0 && proc! - ps! < 1000, `ps ${ps} (${line.trim()}) vs /proc ${proc}`);
    assert.equal(psStartMs(child.pid!), ps);
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((r) => child.on('exit', r));
  assert.equal(psStartMs(child.pid!), undefined, 'a gone process has no start');
});

test('in a time zone half an hour off UTC, ps and /proc still agree', () => {
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `const { procStartMs, psStartMs } = require(${JSON.stringify(PROCESS_START)});
       console.log(JSON.stringify([procStartMs(process.pid), psStartMs(process.pid)]));`,
    ],
    { encoding: 'utf8', env: { ...process.env, TZ: 'Asia/Kolkata' } },
  );
  const [proc, ps] = JSON.parse(out) as [number, number];
  assert.ok(proc - ps >= 0 && proc - ps < 1000, `ps ${ps} vs /proc ${proc}`);
});

test('lstart lines: day padded or not; anything else is no start', () => {
  assert.equal(parseLstart('Sun Dec  6 18:12:00 2026\n'), new Date(2026, 11, 6, 18, 12, 0).getTime());
  assert.equal(parseLstart('Mon Nov 30 09:05:07 2026'), new Date(2026, 10, 30, 9, 5, 7).getTime());
  assert.equal(parseLstart(''), undefined);
  assert.equal(parseLstart('So 6 Dez 18:12:00 2026'), undefined);
});
