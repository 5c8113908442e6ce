/**
 * The `trinity` launcher against the Trinity-RFT stand-in (test/fixtures/trinity-standin, a real Python process
 * writing real TensorBoard event files and checkpoint dirs): a whole run, stop, a run that ignores SIGTERM, a crash,
 * a failed stage that exits 0, resume and a fresh start, and a Python that is not there.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { LaunchSpec } from '../../../client/runs/launchers/launcher';
import { TrinityLauncher } from '../../../client/runs/launchers/trinity';
import { PROTOCOL_VERSION } from '../../../runtime/protocol';
import { alive, RecordingSink } from '../../helpers/launch-sink';
import { PYTHON, STANDIN_DIR } from '../../helpers/tfevents';

interface Workspace {
  dir: string;
  config: string;
  jobDir: string;
}

function workspace(standin: Record<string, unknown>, extra = ''): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'twb-trinity-'));
  const root = join(dir, 'checkpoints');
  const config = join(dir, 'grpo.yaml');
  writeFileSync(
    config,
    `# a Trinity config (the stand-in reads what Trinity's launcher would)\nproject: demo\nname: grpo-run\nmode: both\ncheckpoint_root_dir: ${root}\ntrainer:\n  save_interval: 1\n${extra}standin: ${JSON.stringify(standin)}\n`,
  );
  return { dir, config, jobDir: join(root, 'demo', 'grpo-run') };
}

function spec(ws: Workspace, over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    configPath: ws.config,
    cwd: ws.dir,
    jobDir: ws.jobDir,
    resume: true,
    pluginDirs: [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: STANDIN_DIR, PYTHONDONTWRITEBYTECODE: '1' },
    ...over,
  };
}

const launcher = new TrinityLauncher({ pythonPath: PYTHON, pollMs: 100 });

describe('trinity launcher', () => {
  test('a run to completion: run, metrics with the values written, checkpoints, done finished', async () => {
    const ws = workspace({ steps: 3, step_seconds: 0.15 });
    const sink = new RecordingSink();
    const run = await launcher.launch(
      spec(ws, { pluginDirs: [join(ws.dir, 'plugins-a'), join(ws.dir, 'plugins-b')] }),
      sink,
    );
    const end = await run.ended;
    assert.deepEqual(end, { status: 'finished', exitCode: 0, signal: null });

    const [runEvent] = sink.of('run');
    assert.equal(sink.events[0], runEvent);
    assert.equal(runEvent.protocol, PROTOCOL_VERSION);
    assert.equal(runEvent.pid, run.pid);
    assert.equal(runEvent.jobDir, ws.jobDir);
    assert.equal(runEvent.backend, 'trinity');
    assert.deepEqual(runEvent.stages, [{ name: 'grpo-run', mode: 'both', jobDir: ws.jobDir }]);

    const metrics = sink.of('metrics').map((m) => [m.role, m.step, m.values]);
    assert.deepEqual(
      metrics.filter(([role]) => role === 'explorer'),
      [1, 2, 3].map((s) => ['explorer', s, { 'rollout/accuracy/mean': s / 10 }]),
    );
    // float32 in the file; 1/3 comes back as float32's shortest decimal.
    assert.deepEqual(
      metrics.filter(([role]) => role === 'trainer'),
      [
        ['trainer', 1, { 'actor/pg_loss': 1, 'actor/lr': 1e-6 }],
        ['trainer', 2, { 'actor/pg_loss': 0.5, 'actor/lr': 1e-6 }],
        ['trainer', 3, { 'actor/pg_loss': 0.33333334, 'actor/lr': 1e-6 }],
      ],
    );
    assert.ok(sink.of('metrics').every((m) => m.time >= 0 && m.time < 30));
    assert.deepEqual(
      sink.of('checkpoint'),
      [1, 2, 3].map((step) => ({ type: 'checkpoint', step, path: join(ws.jobDir, `global_step_${step}`) })),
    );
    assert.deepEqual(sink.events.at(-1), { type: 'done', status: 'finished' });
    // Output lines reach the sink; both plugin dirs reach Trinity through its one --plugin-dir value.
    assert.ok(sink.lines.some((l) => l.includes("Step 2: {'rollout/accuracy/mean': 0.2}")));
    assert.ok(sink.lines.some((l) => l.endsWith(`Loading plugins from ${join(ws.dir, 'plugins-a')}`)));
    assert.ok(sink.lines.some((l) => l.endsWith(`Loading plugins from ${join(ws.dir, 'plugins-b')}`)));
    assert.deepEqual(sink.warnings, []);
  });

  test('stop: SIGTERM to the group, status stopped, the process gone within 5 s', async () => {
    const ws = workspace({ steps: 10000, step_seconds: 0.2 });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws), sink);
    await sink.until(() => sink.of('metrics').length > 0, 15000, 'a first metrics event');
    const t0 = Date.now();
    const end = await run.stop(5000);
    assert.equal(end.status, 'stopped');
    assert.equal(end.signal, 'SIGTERM');
    assert.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`);
    assert.equal(alive(run.pid!), false);
    assert.deepEqual(sink.events.at(-1), { type: 'done', status: 'stopped' });
    assert.deepEqual(await run.ended, end);
  });

  test('a run that ignores SIGTERM is SIGKILLed after the grace', async () => {
    const ws = workspace({ steps: 10000, step_seconds: 0.2, ignore_sigterm: true });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws), sink);
    await sink.until(() => sink.of('metrics').length > 0, 15000, 'a first metrics event');
    const t0 = Date.now();
    const end = await run.stop(1000);
    const took = Date.now() - t0;
    assert.equal(end.status, 'stopped');
    assert.equal(end.signal, 'SIGKILL');
    assert.ok(took >= 950 && took < 5000, `stopped in ${took} ms`);
    assert.equal(alive(run.pid!), false);
  });

  test('a crash: done failed with the exit code and the last stderr lines', async () => {
    const ws = workspace({ steps: 5, step_seconds: 0.1, crash_at_step: 2 });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws), sink);
    const end = await run.ended;
    assert.equal(end.status, 'failed');
    assert.equal(end.exitCode, 1);
    assert.match(end.error!, /^Trinity-RFT exited with code 1:\n/);
    assert.match(end.error!, /RuntimeError: CUDA out of memory while training step 2/);
    const done = sink.events.at(-1);
    assert.equal(done?.type, 'done');
    assert.equal(done?.type === 'done' && done.error, end.error);
    assert.deepEqual(
      sink.of('metrics').map((m) => m.step),
      [1, 1],
    );
  });

  test('a failed stage, which Trinity logs and exits 0 after, is a failed run', async () => {
    const ws = workspace({ steps: 5, step_seconds: 0.1, stage_fail_at_step: 2 });
    const sink = new RecordingSink();
    const end = await (await launcher.launch(spec(ws), sink)).ended;
    assert.equal(end.status, 'failed');
    assert.equal(end.exitCode, 0);
    assert.equal(
      end.error,
      'Trainer failed: ValueError: Read incomplete batch (3/8), please check your workflow. (stand-in, step 2)',
    );
  });

  test('resume: only what the resumed run adds is reported; a fresh start follows the renamed job dir', async () => {
    const ws = workspace({ steps: 2, step_seconds: 0.05 });
    await (
      await launcher.launch(spec(ws), new RecordingSink())
    ).ended;
    // Same job, more steps: Trinity continues after global_step_2.
    writeFileSync(ws.config, `${readFileSync(ws.config, 'utf8').replace('"steps":2', '"steps":4')}`);
    const resumed = new RecordingSink();
    assert.equal((await (await launcher.launch(spec(ws), resumed)).ended).status, 'finished');
    assert.deepEqual([...new Set(resumed.of('metrics').map((m) => m.step))], [3, 4]);
    assert.deepEqual(
      resumed.of('checkpoint').map((c) => c.step),
      [3, 4],
    );
    assert.ok(resumed.lines.some((l) => l.includes('Resuming from')));

    // resume: false on a config that resumes by default: Trinity gets continue_from_checkpoint: false and moves
    // the run to <name>_<timestamp>, which is followed.
    const fresh = new RecordingSink();
    assert.equal((await (await launcher.launch(spec(ws, { resume: false }), fresh)).ended).status, 'finished');
    const logs = fresh.of('log').map((l) => l.message);
    assert.ok(
      logs.some((m) => m.startsWith('continue_from_checkpoint is false for this run')),
      logs.join('\n'),
    );
    const renamed = logs.find((m) => m.startsWith('Trinity renamed this run'));
    assert.ok(renamed, logs.join('\n'));
    assert.deepEqual([...new Set(fresh.of('metrics').map((m) => m.step))], [1, 2, 3, 4]);
    const dir = /its job dir is (.*)$/.exec(renamed)![1];
    assert.match(dir, /grpo-run_\d{14}$/);
    assert.deepEqual(
      fresh.of('checkpoint').map((c) => c.path),
      [1, 2, 3, 4].map((s) => join(dir, `global_step_${s}`)),
    );
    assert.ok(existsSync(join(ws.jobDir, 'global_step_4')));
  });

  test('a staged config: one stage per entry, each followed in <job dir>/<stage_name>', async () => {
    const ws = workspace(
      { steps: 1, step_seconds: 0.05 },
      'stages:\n  - stage_name: sft\n    mode: train\n  - stage_name: grpo\n',
    );
    const sink = new RecordingSink();
    assert.equal((await (await launcher.launch(spec(ws), sink)).ended).status, 'finished');
    assert.deepEqual(sink.of('run')[0].stages, [
      { name: 'sft', mode: 'train', jobDir: join(ws.jobDir, 'sft') },
      { name: 'grpo', mode: 'both', jobDir: join(ws.jobDir, 'grpo') },
    ]);
    assert.deepEqual(
      sink
        .of('metrics')
        .map((m) => m.role)
        .sort(),
      ['explorer', 'trainer', 'trainer'],
    );
    assert.deepEqual(
      sink
        .of('checkpoint')
        .map((c) => c.path)
        .sort(),
      [join(ws.jobDir, 'grpo', 'global_step_1'), join(ws.jobDir, 'sft', 'global_step_1')],
    );
  });

  test('a Python that is not there: launch rejects with the setting to fix', async () => {
    const ws = workspace({ steps: 1 });
    mkdirSync(ws.jobDir, { recursive: true });
    await assert.rejects(
      new TrinityLauncher({ pythonPath: join(ws.dir, 'no-python') }).launch(spec(ws), new RecordingSink()),
      /cannot start Trinity-RFT: .*no-python not found\. Set trinityWorkbench\.pythonPath/,
    );
  });
});
