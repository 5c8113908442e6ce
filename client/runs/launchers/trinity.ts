/**
 * `trinityWorkbench.runWith: trinity`: the real Trinity-RFT on this machine, `<python> -m trinity.cli.launcher run
 * --config FILE`, in its own process group (Trinity starts Ray workers, vLLM and trainers under it). Its output
 * lines go to the sink; the protocol's events are synthesised from what Trinity writes in the job dir (see
 * job-follower.ts) and from how the process ends.
 *
 * Plugin dirs: Trinity's `run` takes one `--plugin-dir` value and puts it in TRINITY_PLUGIN_DIRS, which its loader
 * splits on `:`; several dirs are passed as one value joined that way. Resume: `spec.resume` becomes
 * `continue_from_checkpoint` (see configTextForResume); when the config says otherwise, Trinity is given a copy of
 * the config with that key changed, in a temp dir (relative paths in a Trinity config are relative to the working
 * directory, not to the file, so the copy means the same).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Result } from 'execa' with { 'resolution-mode': 'import' };
import { PROTOCOL_VERSION } from '../../../runtime/protocol';
import { JobFollower } from './job-follower';
import type { LaunchedRun, Launcher, LaunchSink, LaunchSpec, RunEnd } from './launcher';
import { configTextForResume, readTrinityJob, stageFailure } from './trinity-job';

export interface TrinityLauncherOptions {
  /** The Python that has trinity-rft installed (`trinityWorkbench.pythonPath`). */
  pythonPath?: string;
  /** How often the job dir is looked at, in ms. */
  pollMs?: number;
}

/** Lines of output kept for the error of a failed run, and for finding a failed stage. */
const KEEP_LINES = 400;
const ERROR_LINES = 20;

export class TrinityLauncher implements Launcher {
  readonly kind = 'trinity' as const;

  constructor(private readonly options: TrinityLauncherOptions = {}) {}

  async launch(spec: LaunchSpec, sink: LaunchSink): Promise<LaunchedRun> {
    const python = this.options.pythonPath ?? 'python3';
    let text: string;
    try {
      text = readFileSync(spec.configPath, 'utf8');
    } catch (e) {
      throw new Error(`cannot read the config ${spec.configPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    const job = readTrinityJob(text, spec.jobDir);
    let config = spec.configPath;
    let tempDir: string | undefined;
    const override = configTextForResume(text, spec.resume);
    if (override !== undefined) {
      tempDir = mkdtempSync(join(tmpdir(), 'trinity-workbench-config-'));
      config = join(tempDir, basename(spec.configPath));
      writeFileSync(config, override);
    }
    const args = ['-m', 'trinity.cli.launcher', 'run', '--config', config];
    if (spec.pluginDirs.length) args.push('--plugin-dir', spec.pluginDirs.join(':'));

    const startedAt = Date.now();
    const follower = new JobFollower({ dirs: job.stages.map((s) => s.jobDir), startedAt, roleOf: job.roleOf, sink, pollMs: this.options.pollMs });
    follower.start();

    const { execa } = await import('execa');
    const child = execa(python, args, {
      cwd: spec.cwd,
      env: spec.env,
      extendEnv: false,
      detached: true,
      cleanup: false,
      reject: false,
      buffer: false,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const cleanUp = () => {
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    };
    const spawned = await Promise.race([new Promise<true>((resolve) => child.once('spawn', () => resolve(true))), child.then((r) => r)]);
    if (spawned !== true) {
      follower.finish();
      cleanUp();
      const why = spawned.code === 'ENOENT' ? 'not found' : (spawned.code ?? spawned.shortMessage);
      throw new Error(`cannot start Trinity-RFT: ${python} ${why}. Set trinityWorkbench.pythonPath to the Python that has trinity-rft installed.`);
    }
    const pid = child.pid!;
    if (override !== undefined) {
      sink.event({ type: 'log', level: 'info', message: `continue_from_checkpoint is ${spec.resume} for this run (the config says ${!spec.resume}); Trinity reads a copy of the config: ${config}` });
    }
    sink.event({ type: 'run', protocol: PROTOCOL_VERSION, runId: randomUUID(), config: spec.configPath, jobDir: spec.jobDir, backend: 'trinity', startedAt: new Date(startedAt).toISOString(), pid, stages: job.stages });

    const recent: string[] = [];
    const stderrTail: string[] = [];
    const collect = (stream: Readable | null, isErr: boolean) => {
      if (!stream) return;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        sink.output(line);
        recent.push(line);
        if (recent.length > KEEP_LINES) recent.shift();
        if (isErr) {
          stderrTail.push(line);
          if (stderrTail.length > ERROR_LINES) stderrTail.shift();
        }
      });
    };
    collect(child.stdout, false);
    collect(child.stderr, true);

    let stopRequested = false;
    const ended: Promise<RunEnd> = child.then((result) => {
      follower.finish();
      cleanUp();
      const end = runEnd(result, stopRequested, recent, stderrTail);
      sink.event(end.status === 'failed' ? { type: 'done', status: end.status, error: end.error } : { type: 'done', status: end.status });
      return end;
    });

    return {
      id: String(pid),
      pid,
      ended,
      async stop(graceMs: number): Promise<RunEnd> {
        if (!stopRequested) {
          stopRequested = true;
          const deadline = Date.now() + graceMs;
          signalGroup(pid, 'SIGTERM');
          const kill = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
          const end = await ended;
          clearTimeout(kill);
          // The leader is gone; what it started in its group (Ray workers) gets the rest of the grace, then SIGKILL.
          while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
          if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
          return end;
        }
        return ended;
      },
    };
  }
}

function runEnd(result: Result, stopped: boolean, recent: string[], stderrTail: string[]): RunEnd {
  const exitCode = result.exitCode ?? null;
  const signal = result.signal ?? null;
  if (stopped) return { status: 'stopped', exitCode, signal };
  const tail = (stderrTail.length ? stderrTail : recent.slice(-ERROR_LINES)).join('\n');
  if (exitCode === 0) {
    const failure = stageFailure(recent);
    return failure ? { status: 'failed', error: failure, exitCode, signal } : { status: 'finished', exitCode, signal };
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
  return { status: 'failed', error: `Trinity-RFT ${how}${tail ? `:\n${tail}` : ''}`, exitCode, signal };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}
