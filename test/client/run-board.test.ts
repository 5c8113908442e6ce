/**
 * The editor's run state with real processes: a runtime that floods its output is taken in batches (listeners hear
 * of it a bounded number of times, the output is rate-limited) and the state is final within a second of the
 * process's last word; the run board shows a run started in a terminal as live within 2 s with its own numbers (not
 * the previous run's of the same job folder), says when it ends, and is what `runOf` answers for its config (the
 * title button and the CodeLens); a real run's output channel has each message once and no backend probing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import { RUN_RECORD_FILE } from '../../runtime/protocol';
import { LocalLauncher } from '../../client/runs/launchers/local';
import { RunBoard } from '../../client/runs/run-board';
import { RunManager } from '../../client/runs/run-manager';
import type { RunState } from '../../client/runs/run-state';
import { GRPO_STAGE, header, tinyJob, topLevel } from '../runtime/rft/run/helpers';
import { alive } from '../helpers/process';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const FLOOD = resolve(__dirname, '..', 'fixtures', 'client', 'flood-runtime.cjs');

function manager(): { runs: RunManager; lines: string[] } {
  const lines: string[] = [];
  return { runs: new RunManager({ output: () => ({ line: (t) => lines.push(t) }) }), lines };
}

const spec = (dir: string, config: string, jobDir: string) => ({
  configPath: config,
  cwd: dir,
  jobDir,
  resume: false,
  pluginDirs: [],
  env: { ...process.env },
});

async function until<T>(what: string, f: () => T | undefined | false, ms: number): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - t0 > ms) assert.fail(`no ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

const children: number[] = [];
after(() => {
  for (const pid of children) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

describe('run state in the editor', () => {
  test('a runtime printing 20 000 warnings: listeners hear of it in batches, the output is limited, the state is final within 1 s', async () => {
    const job = tinyJob(31);
    const { runs, lines } = manager();
    let changes = 0;
    let events = 0;
    runs.onDidChange(() => changes++);
    runs.onEvent(() => events++);
    const launcher = new LocalLauncher({ nodePath: process.execPath, cliPath: FLOOD });
    const run = await runs.start(launcher, spec(job.dir, join(job.dir, 'flood.yaml'), join(job.dir, 'flood')));
    const last = await until(
      'the final step',
      () => run.state.progress.explorer?.step === 200 && !run.state.live && run.state.progress.explorer,
      60_000,
    );
    const lag = Date.now() - Number(/at (\d+)/.exec(last.detail)?.[1]);
    assert.ok(lag < 1000, `the state reached the last step ${lag} ms after the runtime wrote it`);
    assert.equal(run.state.status, 'finished');
    // 20 000 log lines and 200 progress events: the views are told a few dozen times, not 20 000.
    assert.ok(changes < 500, `${changes} change notifications`);
    assert.equal(events, 202, 'listeners get every event but the log lines (run, 200 progress, done)');
    assert.ok(!run.events.some((e) => e.type === 'log'), 'log lines are not kept for replay');
    assert.ok(lines.length < 10_000, `${lines.length} output lines for 40 000 printed`);
    assert.ok(
      lines.some((l) => /more lines in that second not shown/.test(l)),
      lines.slice(-3).join('\n'),
    );
    assert.match(lines.at(-1)!, /run finished/);
  });

  test('a run started in a terminal: live on the board within 2 s with its own step, then ended with its numbers', async () => {
    const job = tinyJob(32);
    const config = job.write(
      'term.yaml',
      header(job, 'term') +
        topLevel(GRPO_STAGE)
          .replace('total_steps: 4', 'total_steps: 6')
          .replace('eval_interval: 2', 'eval_interval: 100'),
    );
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'term');
    // A previous run of the same job folder, stopped at step 61 with its own numbers.
    mkdirSync(join(jobDir, 'state'), { recursive: true });
    mkdirSync(join(jobDir, 'monitor'), { recursive: true });
    const old = Date.now() / 1000 - 3600;
    writeFileSync(
      join(jobDir, 'state', 'run.json'),
      JSON.stringify({ status: 'stopped', pid: 1, config, startedAt: new Date(old * 1000).toISOString() }),
    );
    writeFileSync(
      join(jobDir, 'monitor', 'metrics.jsonl'),
      `${JSON.stringify({ role: 'explorer', step: 61, time: 1, wallTime: old + 60, values: { 'rollout/score/mean': 0.97 } })}\n`,
    );
    assert.ok(RUN_RECORD_FILE.test('run.json'));
    const { runs } = manager();
    const board = new RunBoard(runs, { roots: () => [job.dir], pollMs: 200, rescanMs: 1000 }).start();
    const ended: RunState[] = [];
    board.onDidEnd((r) => ended.push(r));
    try {
      assert.equal(board.runOf(config)?.status, 'stopped');
      let fired = 0;
      board.onDidChange(() => fired++);
      const child = spawn(process.execPath, [CLI, 'run', '--config', config, '--backend', 'wasm'], {
        cwd: job.dir,
        stdio: 'ignore',
      });
      children.push(child.pid!);
      // The record is written as the run starts (after the backend and the config check); the board sees it
      // within 2 s of that.
      let recorded: number | undefined;
      const live = await until(
        'the terminal run live on the board',
        () => {
          if (
            recorded === undefined &&
            new RegExp(`"pid":\\s*${child.pid}\\b`).test(readFileSync(join(jobDir, 'state', 'run.json'), 'utf8'))
          )
            recorded = Date.now();
          const r = board.runOf(config);
          return r?.live && r.pid === child.pid ? r : undefined;
        },
        60_000,
      );
      const seenAfter = Date.now() - (recorded ?? 0);
      assert.ok(seenAfter < 2000, `seen ${seenAfter} ms after its record was written`);
      assert.equal(live.status, 'running');
      await until('listeners told of it', () => fired > 0, 500);
      assert.notEqual(live.progress.explorer?.step, 61, "not the previous run's step");
      assert.notEqual(live.reward, 0.97, "not the previous run's reward");
      const stepping = await until('a step of its own', () => board.runOf(config)?.progress.explorer?.step, 60_000);
      assert.ok(stepping >= 1 && stepping <= 6, `step ${stepping}`);
      await new Promise((r) => child.on('exit', r));
      const done = await until('the end', () => ended.find((r) => r.key === live.key), 5000);
      assert.equal(done.status, 'finished');
      assert.equal(done.progress.explorer?.step, 6);
      assert.ok(done.reward !== undefined && done.reward !== 0.97);
      assert.equal(board.runOf(config)?.live, false);
    } finally {
      board.dispose();
    }
  });

  test("a real run's output: each message once, no backend probing lines", async () => {
    const job = tinyJob(33);
    const config = job.write(
      'once.yaml',
      header(job, 'once') +
        topLevel(GRPO_STAGE)
          .replace('total_steps: 4', 'total_steps: 1')
          .replace('eval_interval: 2', 'eval_interval: 100'),
    );
    const { runs, lines } = manager();
    // auto: the runtime tries the backends this machine lacks before the one that runs.
    const run = await runs.start(
      new LocalLauncher({ nodePath: process.execPath, cliPath: CLI }),
      spec(job.dir, config, join(job.dir, 'checkpoints', 'tests', 'once')),
    );
    const end = await run.handle.ended;
    assert.equal(end.status, 'finished', end.error);
    assert.deepEqual(
      lines.filter((l) => /unavailable|not picked/.test(l)),
      [],
    );
    assert.equal(lines.filter((l) => /tfjs backend: /.test(l)).length, 1, lines.join('\n'));
    const counts = new Map<string, number>();
    for (const l of lines) {
      const text = l.replace(/^\[(info|warning|error)\] /, '').replace(/^(warning|error): /, '');
      counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    assert.deepEqual(
      [...counts].filter(([, n]) => n > 1),
      [],
    );
  });
});
