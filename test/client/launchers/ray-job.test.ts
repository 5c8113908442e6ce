/**
 * The `ray-job` launcher against a stand-in Ray head (test/helpers/ray-jobs-server.ts: Ray's Jobs REST shapes over
 * real HTTP on loopback, entrypoints run as real processes in the unpacked working_dir) running the Trinity-RFT
 * stand-in: submit with upload, status, logs, metrics and checkpoints from the (shared) job dir, stop, a failed
 * job, and addresses that do not answer.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unzipSync } from 'fflate';
import type { LaunchSpec } from '../../../client/runs/launchers/launcher';
import { RayJobLauncher } from '../../../client/runs/launchers/ray-job';
import { alive, RecordingSink } from '../../helpers/launch-sink';
import { RayJobsServer } from '../../helpers/ray-jobs-server';
import { PYTHON, STANDIN_DIR } from '../../helpers/tfevents';

interface Workspace {
  dir: string;
  config: string;
  jobDir: string;
}

/** A config folder with a data file the stand-in prints (proof it ran in the uploaded copy) and checkpoints inside. */
function workspace(standin: Record<string, unknown>): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'twb-rayws-'));
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'marker.txt'), `uploaded ${dir}\n`);
  mkdirSync(join(dir, 'plugins'));
  writeFileSync(join(dir, 'plugins', 'my_workflow.py'), '# a plugin\n');
  const root = join(dir, 'checkpoints');
  const config = join(dir, 'grpo.yaml');
  writeFileSync(
    config,
    `project: demo\nname: ray-run\nmode: both\ncheckpoint_root_dir: ${root}\nstandin: ${JSON.stringify({ echo_file: 'data/marker.txt', ...standin })}\n`,
  );
  return { dir, config, jobDir: join(root, 'demo', 'ray-run') };
}

function spec(ws: Workspace, address: string, over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    configPath: ws.config,
    cwd: ws.dir,
    jobDir: ws.jobDir,
    resume: true,
    pluginDirs: [],
    env: { RAY_ADDRESS: address },
    ...over,
  };
}

describe('ray-job launcher', () => {
  const server = new RayJobsServer({
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: STANDIN_DIR, PYTHONDONTWRITEBYTECODE: '1' },
    stopWaitSeconds: 1,
  });
  let address = '';
  const launcher = new RayJobLauncher({ python: PYTHON, pollMs: 100 });
  before(async () => {
    address = await server.start();
  });
  after(() => server.close());

  test('submit: the folder is uploaded and run there; status, logs, metrics, checkpoints, done finished', async () => {
    const ws = workspace({ steps: 2, step_seconds: 0.1 });
    // A previous run's checkpoint in the folder: not uploaded, not reported again.
    mkdirSync(join(ws.jobDir, 'global_step_0'), { recursive: true });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws, address, { pluginDirs: [join(ws.dir, 'plugins')] }), sink);
    const end = await run.ended;
    assert.deepEqual(end, { status: 'finished', exitCode: 0 });

    const job = server.jobs.get(run.id)!;
    assert.equal(job.entrypoint, `${PYTHON} -m trinity.cli.launcher run --config grpo.yaml --plugin-dir plugins`);
    const uri = job.runtimeEnv.working_dir!;
    assert.match(uri, /^gcs:\/\/_ray_pkg_[0-9a-f]{32}\.zip$/);
    assert.deepEqual(Object.keys(unzipSync(server.packages.get(uri)!)).sort(), [
      'data/marker.txt',
      'grpo.yaml',
      'plugins/my_workflow.py',
    ]);
    assert.ok(server.requests.includes(`PUT /api/packages/gcs/${uri.slice('gcs://'.length)}`));

    const [runEvent] = sink.of('run');
    assert.equal(runEvent.runId, run.id);
    assert.equal(runEvent.backend, 'ray-job');
    assert.equal(runEvent.pid, 0);
    assert.deepEqual(runEvent.stages, [{ name: 'ray-run', mode: 'both', jobDir: ws.jobDir }]);
    // The log, line by line and once each: Ray's header, the stand-in's print of the uploaded file, its steps.
    assert.equal(sink.lines[0], `Running entrypoint for job ${run.id}: ${job.entrypoint}`);
    assert.ok(sink.lines.includes(`uploaded ${ws.dir}`), sink.lines.join('\n'));
    assert.ok(sink.lines.some((l) => l.endsWith(`Loading plugins from plugins`)));
    assert.equal(sink.lines.filter((l) => l.includes("Step 1: {'rollout/accuracy/mean'")).length, 1);
    assert.deepEqual(
      sink
        .of('metrics')
        .filter((m) => m.role === 'explorer')
        .map((m) => [m.step, m.values]),
      [
        [1, { 'rollout/accuracy/mean': 0.1 }],
        [2, { 'rollout/accuracy/mean': 0.2 }],
      ],
    );
    assert.deepEqual(
      sink.of('checkpoint').map((c) => c.step),
      [1, 2],
    );
    assert.deepEqual(sink.events.at(-1), { type: 'done', status: 'finished' });

    // The same folder again: the cluster has the package, nothing is uploaded.
    const puts = server.requests.filter((r) => r.startsWith('PUT')).length;
    writeFileSync(ws.config.replace('grpo.yaml', 'unused.txt'), '');
    const again = await launcher.launch(
      spec(ws, address, { pluginDirs: [join(ws.dir, 'plugins')] }),
      new RecordingSink(),
    );
    await again.ended;
    assert.equal(
      server.requests.filter((r) => r.startsWith('PUT')).length,
      puts + 1,
      'a changed folder is a new package',
    );
    const third = await launcher.launch(
      spec(ws, address, { pluginDirs: [join(ws.dir, 'plugins')] }),
      new RecordingSink(),
    );
    await third.ended;
    assert.equal(
      server.requests.filter((r) => r.startsWith('PUT')).length,
      puts + 1,
      'an unchanged folder is not uploaded again',
    );
  });

  test('logs arrive while the job runs; stop: Ray stops it, status stopped, the process gone', async () => {
    const ws = workspace({ steps: 10000, step_seconds: 0.2 });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws, address), sink);
    await sink.until(() => sink.lines.some((l) => l.includes('Step 1:')), 15000, 'the first step in the log');
    const job = server.jobs.get(run.id)!;
    assert.equal(job.status, 'RUNNING');
    assert.equal(sink.of('done').length, 0);
    const end = await run.stop(5000);
    assert.equal(end.status, 'stopped');
    assert.equal(job.status, 'STOPPED');
    assert.ok(server.requests.includes(`POST /api/jobs/${run.id}/stop`));
    assert.equal(alive(job.child!.pid!), false);
    assert.deepEqual(sink.events.at(-1), { type: 'done', status: 'stopped' });
  });

  test('a job Ray does not stop within the grace is reported, with what to do', async () => {
    const stuck = new RayJobsServer({
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: STANDIN_DIR, PYTHONDONTWRITEBYTECODE: '1' },
      ignoreStop: true,
    });
    const at = await stuck.start();
    try {
      const ws = workspace({ steps: 10000, step_seconds: 0.2 });
      const sink = new RecordingSink();
      const run = await launcher.launch(spec(ws, at), sink);
      await sink.until(() => sink.lines.length > 1, 15000, 'the log');
      const end = await run.stop(800);
      assert.equal(end.status, 'failed');
      assert.match(
        end.error!,
        new RegExp(`asked Ray to stop job ${run.id}, but after 0.8 s it is still RUNNING: .*ray job stop ${run.id}`),
      );
    } finally {
      await stuck.close();
    }
  });

  test('a failed job: done failed with the exit code and the log tail', async () => {
    const ws = workspace({ steps: 5, step_seconds: 0.05, crash_at_step: 2 });
    const sink = new RecordingSink();
    const run = await launcher.launch(spec(ws, address), sink);
    const end = await run.ended;
    assert.equal(end.status, 'failed');
    assert.equal(end.exitCode, 1);
    assert.match(end.error!, new RegExp(`^Trinity-RFT exited with code 1 \\(Ray job ${run.id}\\):\\n`));
    assert.match(end.error!, /RuntimeError: CUDA out of memory while training step 2/);
    assert.equal(server.jobs.get(run.id)!.status, 'FAILED');
  });

  test('an address that does not answer: launch rejects naming it and the setting', async () => {
    const port = await freePort();
    const ws = workspace({ steps: 1 });
    await assert.rejects(
      launcher.launch(spec(ws, `http://127.0.0.1:${port}`), new RecordingSink()),
      new RegExp(
        `cannot reach the Ray dashboard at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\..*Set trinityWorkbench\\.rayAddress`,
      ),
    );
    await assert.rejects(
      launcher.launch(spec(ws, 'ray://head:10001'), new RecordingSink()),
      /"ray:\/\/head:10001" is not the address of a Ray dashboard\. Set trinityWorkbench\.rayAddress/,
    );
    // Without RAY_ADDRESS, the constructor's address is used.
    await assert.rejects(
      new RayJobLauncher({ address: `127.0.0.1:${port}` }).launch(spec(ws, '', { env: {} }), new RecordingSink()),
      new RegExp(`cannot reach the Ray dashboard at http://127\\.0\\.0\\.1:${port}`),
    );
  });

  test('a plugin dir outside the uploaded folder is refused before anything is submitted', async () => {
    const ws = workspace({ steps: 1 });
    const before = server.jobs.size;
    await assert.rejects(
      launcher.launch(spec(ws, address, { pluginDirs: [tmpdir()] }), new RecordingSink()),
      /the plugin dir .* is outside .*, the folder uploaded to Ray/,
    );
    assert.equal(server.jobs.size, before);
  });
});

/** A loopback port nothing listens on. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
