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
import { PROTOCOL_VERSION } from '../../../runtime/protocol';
import { GroupProcess, type GroupExit } from '../process-group';
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
      throw new Error(
        `cannot read the config ${spec.configPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
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
    const follower = new JobFollower({
      dirs: job.stages.map((s) => s.jobDir),
      startedAt,
      roleOf: job.roleOf,
      sink,
      pollMs: this.options.pollMs,
    });
    follower.start();

    const recent: string[] = [];
    const stderrTail: string[] = [];
    const collect = (isErr: boolean) => (line: string) => {
      sink.output(line);
      recent.push(line);
      if (recent.length > KEEP_LINES) recent.shift();
      if (isErr) {
        stderrTail.push(line);
        if (stderrTail.length > ERROR_LINES) stderrTail.shift();
      }
    };
    const proc = await GroupProcess.start({
      command: python,
      args,
      cwd: spec.cwd,
      env: spec.env,
      onStdoutLine: collect(false),
      onStderrLine: collect(true),
    });
    const cleanUp = () => {
      if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    };
    if (proc.pid === undefined) {
      const exit = await proc.exited;
      follower.finish();
      cleanUp();
      const why = exit.spawnError === 'ENOENT' ? 'not found' : exit.spawnError;
      throw new Error(
        `cannot start Trinity-RFT: ${python} ${why}. Set trinityWorkbench.pythonPath to the Python that has trinity-rft installed.`,
      );
    }
    const pid = proc.pid;
    if (override !== undefined) {
      sink.event({
        type: 'log',
        level: 'info',
        message: `continue_from_checkpoint is ${spec.resume} for this run (the config says ${!spec.resume}); Trinity reads a copy of the config: ${config}`,
      });
    }
    sink.event({
      type: 'run',
      protocol: PROTOCOL_VERSION,
      runId: randomUUID(),
      config: spec.configPath,
      jobDir: spec.jobDir,
      backend: 'trinity',
      startedAt: new Date(startedAt).toISOString(),
      pid,
      stages: job.stages,
    });

    const ended: Promise<RunEnd> = proc.exited.then((exit) => {
      follower.finish();
      cleanUp();
      const end = runEnd(exit, recent, stderrTail);
      sink.event(
        end.status === 'failed'
          ? { type: 'done', status: end.status, error: end.error }
          : { type: 'done', status: end.status },
      );
      return end;
    });

    return { id: String(pid), pid, ended, stop: async (graceMs) => (await proc.stop(graceMs), ended) };
  }
}

function runEnd(exit: GroupExit, recent: string[], stderrTail: string[]): RunEnd {
  const { exitCode, signal } = exit;
  if (exit.stopRequested) return { status: 'stopped', exitCode, signal };
  const tail = (stderrTail.length ? stderrTail : recent.slice(-ERROR_LINES)).join('\n');
  if (exitCode === 0) {
    const failure = stageFailure(recent);
    return failure ? { status: 'failed', error: failure, exitCode, signal } : { status: 'finished', exitCode, signal };
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
  return { status: 'failed', error: `Trinity-RFT ${how}${tail ? `:\n${tail}` : ''}`, exitCode, signal };
}
