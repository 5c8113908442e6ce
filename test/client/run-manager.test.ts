/**
 * The extension's run manager with the real runtime process (`node dist/cli.js run --events jsonl`, no mocked
 * child): runs to the end, stops during generation and during a trainer step, kills a runtime that ignores SIGTERM
 * after the grace period, shows a crash on start as an error, shows a full disk's failure (its file, operation and
 * what to do) in the run's state, end notice and job folder, runs two jobs at once, reports a non-JSON stdout line
 * without failing, and reads every run back from its job directory.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../runtime/engine/backend';
import type { RuntimeEvent } from '../../runtime/protocol';
import { LocalLauncher } from '../../client/runs/launchers/local';
import type { LaunchSpec } from '../../client/runs/launchers/launcher';
import { findNode } from '../../client/runs/node-path';
import { RunManager, type LiveRun } from '../../client/runs/run-manager';
import { findJobDirs, readJobDir } from '../../client/runs/job-dirs';
import { describeEnd, describeProgress } from '../../client/runs/run-state';
import {
  fullDiskError,
  GRPO_STAGE,
  grpoConfig,
  header,
  RUN_WRITES,
  tinyJob,
  topLevel,
  type TinyJob,
} from '../runtime/rft/run/helpers';
import { fillDisk, fullDiskUnavailable, smallTmpfs } from '../helpers/full-disk';
import { alive } from '../helpers/process';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const IGNORE_SIGTERM = resolve(__dirname, '..', 'fixtures', 'client', 'ignore-sigterm.cjs');

const SFT = `mode: train
algorithm:
  algorithm_type: sft
  optimizer: {lr: 3e-3}
buffer:
  total_steps: 400
  train_batch_size: 8
  trainer_input:
    experience_buffer:
      name: demos
      storage_type: file
      path: data/sft.jsonl
      format: {prompt_type: plaintext, prompt_key: question, response_key: answer}
trainer:
  save_interval: 2
`;

function sft(job: TinyJob, name: string): string {
  return job.write(`${name}.yaml`, header(job, name) + SFT);
}

function spec(job: TinyJob, config: string, name: string, extra: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    configPath: config,
    cwd: job.dir,
    jobDir: join(job.dir, 'checkpoints', 'tests', name),
    resume: false,
    pluginDirs: [],
    env: { ...process.env },
    ...extra,
  };
}

function manager(): { runs: RunManager; lines: Map<string, string[]> } {
  const lines = new Map<string, string[]>();
  const runs = new RunManager({
    output: (run) => {
      const l: string[] = [];
      lines.set(run.jobDir, l);
      return { line: (t) => l.push(t) };
    },
  });
  return { runs, lines };
}

const node = findNode(undefined, process.env);
const launcher = (env: Record<string, string> = {}) =>
  new LocalLauncher({
    nodePath: 'path' in node ? node.path : process.execPath,
    cliPath: CLI,
    extraArgs: ['--backend', 'wasm'],
    ...env,
  });

function waitFor(run: LiveRun, pred: (e: RuntimeEvent) => boolean, timeoutMs = 60_000): Promise<RuntimeEvent> {
  return new Promise((res, rej) => {
    const seen = run.events.find(pred);
    if (seen) return res(seen);
    const timer = setTimeout(
      () => rej(new Error(`no matching event in ${timeoutMs} ms; saw ${run.events.map((e) => e.type).join(',')}`)),
      timeoutMs,
    );
    const poll = setInterval(() => {
      const e = run.events.find(pred);
      if (e) {
        clearInterval(poll);
        clearTimeout(timer);
        res(e);
      }
    }, 20);
  });
}

async function goneWithin(pid: number, ms: number): Promise<number> {
  const t0 = Date.now();
  while (alive(pid)) {
    if (Date.now() - t0 > ms) assert.fail(`process ${pid} still alive ${ms} ms after stop`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - t0;
}

before(async () => {
  // The tiny models of these tests are made in this process.
  await initBackend({ prefer: 'wasm' });
});

describe('run manager with the real runtime', () => {
  test('the Node.js on PATH is found and is the one the native modules are built for', () => {
    assert.ok('path' in node, 'error' in node ? node.error : '');
    const missing = findNode('/nonexistent/node', process.env);
    assert.ok('error' in missing && /trinityWorkbench\.nodePath/.test(missing.error));
    const none = findNode(undefined, { PATH: '/nonexistent' });
    assert.ok('error' in none && /No `node` was found on PATH/.test(none.error));
  });

  test('a run goes to the end: events drive its state, and its job directory reads back the same', async () => {
    const job = tinyJob(21);
    const { runs, lines } = manager();
    const changes: string[] = [];
    runs.onDidChange((r) => changes.push(r.status));
    const run = await runs.start(launcher(), spec(job, grpoConfig(job, 'whole', 4), 'whole'));
    assert.ok(run.handle.pid && run.state.pid === run.handle.pid);
    const end = await run.handle.ended;
    assert.equal(end.status, 'finished', end.error);
    const s = run.state;
    assert.equal(s.status, 'finished');
    assert.equal(s.live, false);
    assert.equal(s.progress.trainer?.step, 4);
    assert.equal(s.progress.trainer?.total, 4);
    assert.ok(s.reward !== undefined && s.reward >= 0 && s.reward <= 1, `reward ${s.reward}`);
    assert.deepEqual(
      s.checkpoints.map((c) => c.step),
      [2, 4],
    );
    // The status bar names the run by its one stage (the config's `name`); beside the label it is not named again.
    assert.match(describeProgress(s, 'always'), /^whole step 4\/4 · reward /);
    assert.match(describeProgress(s, 'several'), /^step 4\/4 · reward /);
    assert.ok(changes.includes('running') && changes.at(-1) === 'finished');
    assert.ok(runs.liveRuns().length === 0);
    assert.ok((lines.get(s.jobDir) ?? []).some((l) => /run finished/.test(l)));
    // Another window reads the same run from disk.
    assert.deepEqual(findJobDirs([job.dir]), [s.jobDir]);
    const disk = readJobDir(s.jobDir);
    assert.equal(disk.status, 'finished');
    assert.equal(disk.configPath, resolve(job.dir, 'whole.yaml'));
    assert.equal(disk.progress.trainer?.step, 4);
    assert.equal(disk.reward, s.reward);
    assert.deepEqual(
      disk.checkpoints.map((c) => c.step),
      [2, 4],
    );
  });

  test('Stop during generation: the runtime ends the step, says stopped, and its process is gone within 5 s', async () => {
    const job = tinyJob(22);
    const { runs } = manager();
    const run = await runs.start(launcher(), spec(job, grpoConfig(job, 'gen', 200), 'gen'));
    // The run event comes before the explorer's first rollouts (eval on startup, then step 1's generation).
    await waitFor(run, (e) => e.type === 'run');
    const pid = run.handle.pid!;
    const t0 = Date.now();
    const end = await runs.stop(run.state.jobDir, 10_000);
    assert.equal(end?.status, 'stopped', end?.error);
    await goneWithin(pid, 5000 - (Date.now() - t0));
    assert.ok(Date.now() - t0 < 5000, `stopped after ${Date.now() - t0} ms`);
    assert.deepEqual(run.events.at(-1), { type: 'done', status: 'stopped' });
    assert.equal(run.state.status, 'stopped');
    assert.equal(readJobDir(run.state.jobDir).status, 'stopped');
  });

  test('Stop during a trainer step: stopped after that step, with a loadable last checkpoint', async () => {
    const job = tinyJob(23);
    const { runs } = manager();
    const run = await runs.start(launcher(), spec(job, sft(job, 'train'), 'train'));
    await waitFor(run, (e) => e.type === 'checkpoint');
    const pid = run.handle.pid!;
    const t0 = Date.now();
    const end = await runs.stop(run.state.jobDir, 10_000);
    assert.equal(end?.status, 'stopped', end?.error);
    await goneWithin(pid, 5000);
    assert.ok(Date.now() - t0 < 5000);
    const steps = run.events.flatMap((e) => (e.type === 'progress' ? [e.step] : []));
    assert.ok(steps.length >= 2 && steps.at(-1)! < 400, `stopped at step ${steps.at(-1)}`);
    // The end notice counts the steps done: the stop came during the step after the last one. The run's one stage
    // is named as the label (the config's `name`): the notice says it once.
    const latestDone = `${steps.at(-1)}/${run.state.progress.trainer?.total}`;
    assert.match(describeProgress(run.state, 'always'), new RegExp(`^train ${latestDone} steps done`));
    assert.match(describeEnd(run.state, 'train'), new RegExp(`^train stopped · ${latestDone} steps done( · |$)`));
    const latest = Number(readFileSync(join(run.state.jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));
    assert.ok(existsSync(join(run.state.jobDir, `global_step_${latest}`, 'model.safetensors')));
  });

  test('a runtime that ignores SIGTERM is killed with its process group after the grace period; Resume continues from its checkpoint', async () => {
    const job = tinyJob(24);
    const { runs } = manager();
    const config = grpoConfig(job, 'deaf', 40);
    const deafSpec = spec(job, config, 'deaf', {
      env: { ...process.env, NODE_OPTIONS: `--require ${IGNORE_SIGTERM}` },
    });
    const run = await runs.start(launcher(), deafSpec);
    await waitFor(run, (e) => e.type === 'checkpoint');
    const pid = run.handle.pid!;
    const t0 = Date.now();
    const end = await runs.stop(run.state.jobDir, 800);
    const took = Date.now() - t0;
    assert.equal(end?.status, 'stopped');
    assert.match(end?.error ?? '', /killed/);
    assert.equal(end?.signal, 'SIGKILL');
    assert.ok(took >= 800 && took < 5000, `killed after ${took} ms`);
    await goneWithin(pid, 1000);
    // On disk the run was cut off mid-flight: its record still says running, of a pid that is gone.
    assert.equal(readJobDir(run.state.jobDir).status, 'interrupted');

    const resumed = await runs.start(launcher(), { ...deafSpec, env: { ...process.env }, resume: true });
    const end2 = await resumed.handle.ended;
    assert.equal(end2.status, 'finished', end2.error);
    const first = run.events.flatMap((e) => (e.type === 'progress' && e.role === 'trainer' ? [e.step] : []));
    const second = resumed.events.flatMap((e) => (e.type === 'progress' && e.role === 'trainer' ? [e.step] : []));
    assert.ok(
      second[0] > 1 && second[0] <= Math.max(...first) + 1,
      `resumed at ${second[0]} after ${Math.max(...first)}`,
    );
    assert.equal(second.at(-1), 40);
    assert.equal(readJobDir(run.state.jobDir).status, 'finished');
  });

  test("a crash on start (a model directory that is not a model) is a failed run with the runtime's reason", async () => {
    const job = tinyJob(25);
    mkdirSync(join(job.dir, 'broken-model'));
    writeFileSync(join(job.dir, 'broken-model', 'config.json'), '{"model_type": "qwen2", "hidden_size": ');
    const config = job.write(
      'crash.yaml',
      header(job, 'crash').replace('model_path: model', 'model_path: broken-model') + topLevel(GRPO_STAGE),
    );
    const { runs, lines } = manager();
    const run = await runs.start(launcher(), spec(job, config, 'crash'));
    const end = await run.handle.ended;
    assert.equal(end.status, 'failed');
    assert.match(end.error ?? '', /model\.model_path broken-model: .*broken-model/);
    assert.equal(run.state.status, 'failed');
    assert.equal(run.state.error, end.error);
    assert.ok((lines.get(run.state.jobDir) ?? []).some((l) => /run failed/.test(l)));
    assert.equal(end.exitCode, 1);
  });

  test(
    "a full disk: the run ends failed with the runtime's reason and what to do, in its state, the end notice and the job folder",
    { skip: fullDiskUnavailable() },
    async () => {
      const disk = smallTmpfs('6m');
      try {
        const job = tinyJob(27, disk.dir);
        const config = grpoConfig(job, 'full', 40);
        const { runs } = manager();
        const run = await runs.start(launcher(), spec(job, config, 'full'));
        await waitFor(run, (e) => e.type === 'progress' && e.role === 'trainer' && e.step >= 2);
        fillDisk(join(disk.dir, 'filler'));
        const end = await run.handle.ended;
        assert.equal(end.status, 'failed');
        assert.match(end.error ?? '', fullDiskError(RUN_WRITES, config));
        assert.equal(run.state.error, end.error);
        assert.equal(describeEnd(run.state, 'full').split(' · ')[0], `full failed: ${end.error}`, 'the end notice');
        const onDisk = readJobDir(run.state.jobDir);
        assert.deepEqual([onDisk.status, onDisk.error], ['failed', end.error], 'the Runs view, from state/run.json');
      } finally {
        disk.unmount();
      }
    },
  );

  test('two runs at once each get their own events; a second run into the same job directory is refused', async () => {
    const job = tinyJob(26);
    const { runs } = manager();
    const a = await runs.start(launcher(), spec(job, grpoConfig(job, 'a', 3), 'a'));
    const b = await runs.start(launcher(), spec(job, sft(job, 'b'), 'b'));
    await assert.rejects(runs.start(launcher(), spec(job, grpoConfig(job, 'a', 3), 'a')), /already writing to/);
    assert.equal(runs.liveRuns().length, 2);
    const endA = await a.handle.ended;
    assert.equal(endA.status, 'finished', endA.error);
    await runs.stop(b.state.jobDir, 5000);
    assert.ok(a.events.every((e) => e.type !== 'run' || e.jobDir === a.state.jobDir));
    assert.ok(b.events.every((e) => e.type !== 'run' || e.jobDir === b.state.jobDir));
    assert.ok(a.events.some((e) => e.type === 'metrics' && e.role === 'explorer'));
    assert.ok(!b.events.some((e) => e.type === 'metrics' && e.role === 'explorer'), 'the SFT run has no explorer');
    assert.equal(a.state.progress.trainer?.step, 3);
    assert.deepEqual(findJobDirs([job.dir]).sort(), [a.state.jobDir, b.state.jobDir].sort());
  });

  test("a non-JSON line on the runtime's stdout (a plugin printing) is reported and the run goes on", async () => {
    const job = tinyJob(27);
    const plugins = join(job.dir, 'plugins');
    mkdirSync(plugins);
    writeFileSync(join(plugins, 'chatty.mjs'), 'console.log("hello from a plugin");\nexport const rewards = {};\n');
    const { runs, lines } = manager();
    const run = await runs.start(
      launcher(),
      spec(job, grpoConfig(job, 'chatty', 2), 'chatty', { pluginDirs: [plugins] }),
    );
    const end = await run.handle.ended;
    assert.equal(end.status, 'finished', end.error);
    const out = lines.get(run.state.jobDir) ?? [];
    assert.ok(
      out.some((l) => /not an event on the runtime's stdout.*hello from a plugin/.test(l)),
      out.join('\n'),
    );
    assert.equal(run.state.progress.trainer?.step, 2);
  });

  test('a Node.js that cannot be started is refused with the setting to fix', async () => {
    const job = tinyJob(28);
    const { runs } = manager();
    const bad = new LocalLauncher({ nodePath: join(job.dir, 'no-node'), cliPath: CLI });
    await assert.rejects(
      runs.start(bad, spec(job, grpoConfig(job, 'nonode', 2), 'nonode')),
      /trinityWorkbench\.nodePath/,
    );
    assert.equal(runs.liveRuns().length, 0);
  });
});
