/**
 * `run --nice N` (what the editor starts a local run with: trinityWorkbench.runNice): every thread of the run — the
 * main thread, Node's helpers, OpenBLAS's, the explorer's worker — runs at nice N, read from /proc while it trains,
 * so an editor beside a run that uses every core keeps the CPU it asks for. A value outside 0–19 is bad usage.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, test } from 'node:test';
import { grpoConfig, tinyJob } from './helpers';
import { killAll, start } from './cli-process';
import { parseProcStat } from '../../../helpers/process';

const CLI = resolve(__dirname, '..', '..', '..', '..', 'dist', 'cli.js');

after(killAll);

interface ThreadStat {
  tid: number;
  name: string;
  nice: number;
}

/** Every thread of `pid` from /proc/<pid>/task/<tid>/stat (proc(5): nice is field 19). */
function threads(pid: number): ThreadStat[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((t) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    } catch {
      return []; // the thread ended meanwhile
    }
    return [{ tid: Number(t), ...parseProcStat(stat) }];
  });
}

test('the main thread and the threads that do the work run at the nice value asked for', async () => {
  const job = tinyJob(21);
  const config = grpoConfig(job, 'nice', 400);
  const run = start(config, {}, undefined, ['--nice', '7']);
  await run.waitFor((e) => e.type === 'metrics' && e.role === 'trainer' && e.step >= 3);
  const seen = threads(run.pid);
  run.kill('SIGTERM');
  await run.exit;
  const main = seen.find((t) => t.tid === run.pid);
  assert.equal(main?.nice, 7, 'the main thread');
  // Node's own helper threads, started before the CLI's code runs, as well as those the run starts after it.
  assert.ok(seen.length >= 4, `${seen.length} threads`);
  assert.deepEqual(
    seen.filter((t) => t.nice !== 7),
    [],
    'every thread at nice 7',
  );
});

test('a nice value outside 0–19 is refused as bad usage before any work', () => {
  const r = spawnSync(process.execPath, [CLI, 'run', '--config', 'x.yaml', '--nice', '20'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--nice must be an integer from 0 to 19, got 20/);
});
