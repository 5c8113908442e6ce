/**
 * `trinityWorkbench.runWith: ray-job`: the config run as a Ray job through the dashboard's Jobs REST API. The
 * config's folder is uploaded as the job's `working_dir` (ray-package.ts), the entrypoint is `python -m
 * trinity.cli.launcher run --config <config file>` run there by Ray's job supervisor, and the job's status and log
 * are polled. Metrics and checkpoints come from the job dir as with the `trinity` launcher, which works when the
 * cluster writes the job dir to a filesystem this machine sees (a shared or the same disk); otherwise only the
 * log and the status arrive.
 *
 * Relative paths in the config resolve against the config's folder on the cluster (the working_dir), and
 * `${oc.env:…}` against the cluster's environment: the window's environment is not sent. Plugin dirs must sit
 * inside the config's folder, to be uploaded with it.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { PROTOCOL_VERSION, type StageInfo } from '../../../runtime/protocol';
import { JobFollower } from './job-follower';
import type { LaunchedRun, Launcher, LaunchSink, LaunchSpec, RunEnd } from './launcher';
import { dashboardAddress, RayJobsClient, TERMINAL, type JobDetails, type RayJobStatus } from './ray-jobs-api';
import { packWorkingDir } from './ray-package';
import { configTextForResume, readTrinityJob, stageFailure } from './trinity-job';

export interface RayJobLauncherOptions {
  /** The dashboard address when `spec.env.RAY_ADDRESS` is not set (`trinityWorkbench.rayAddress`). */
  address?: string;
  /** The cluster's Python, in the entrypoint. */
  python?: string;
  pollMs?: number;
  /** Consecutive failed polls after which the run is given up as lost (the job may still run on the cluster). */
  maxFailedPolls?: number;
}

const DEFAULT_ADDRESS = 'http://127.0.0.1:8265';
const KEEP_LINES = 400;
const ERROR_LINES = 20;

export class RayJobLauncher implements Launcher {
  readonly kind = 'ray-job' as const;

  constructor(private readonly options: RayJobLauncherOptions = {}) {}

  async launch(spec: LaunchSpec, sink: LaunchSink): Promise<LaunchedRun> {
    const api = new RayJobsClient(dashboardAddress(spec.env.RAY_ADDRESS || this.options.address || DEFAULT_ADDRESS));
    let text: string;
    try {
      text = readFileSync(spec.configPath, 'utf8');
    } catch (e) {
      throw new Error(
        `cannot read the config ${spec.configPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    const folder = dirname(spec.configPath);
    const configName = basename(spec.configPath);
    const pluginDirs = spec.pluginDirs.map((d) => {
      const rel = relative(folder, d);
      if (!rel || rel.startsWith('..') || isAbsolute(rel))
        throw new Error(
          `the plugin dir ${d} is outside ${folder}, the folder uploaded to Ray: move it inside, or run with trinityWorkbench.runWith: trinity`,
        );
      return rel.split(sep).join('/');
    });
    const override = configTextForResume(text, spec.resume);
    const jobRel = relative(folder, spec.jobDir);
    // The job's checkpoints are not uploaded when they sit inside the folder (its top-level folder holding them).
    const exclude =
      jobRel && !jobRel.startsWith('..') && !isAbsolute(jobRel) ? [join(folder, jobRel.split(sep)[0])] : [];
    const pkg = packWorkingDir(folder, {
      exclude,
      replace: override !== undefined ? { [configName]: override } : undefined,
    });

    await api.version();
    if (!(await api.packageExists(pkg.name))) await api.uploadPackage(pkg.name, pkg.zip);
    const python = this.options.python ?? 'python';
    const entrypoint = [
      python,
      '-m',
      'trinity.cli.launcher',
      'run',
      '--config',
      configName,
      ...(pluginDirs.length ? ['--plugin-dir', pluginDirs.join(':')] : []),
    ]
      .map(shellQuote)
      .join(' ');

    const job = readTrinityJob(text, spec.jobDir);
    const startedAt = Date.now();
    const follower = new JobFollower({
      dirs: job.stages.map((s) => s.jobDir),
      startedAt,
      roleOf: job.roleOf,
      sink,
      pollMs: this.options.pollMs,
    });
    follower.start();
    let id: string;
    try {
      id = await api.submit({
        entrypoint,
        submission_id: `trinity-workbench-${randomUUID()}`,
        runtime_env: { working_dir: pkg.uri },
        metadata: { submitted_by: 'trinity-workbench', config: configName },
      });
    } catch (e) {
      follower.finish();
      throw e;
    }
    if (override !== undefined)
      sink.event({
        type: 'log',
        level: 'info',
        message: `continue_from_checkpoint is ${spec.resume} for this run (the config says ${!spec.resume}); the uploaded copy of ${configName} says so`,
      });
    sink.event({
      type: 'log',
      level: 'info',
      message: `submitted Ray job ${id} to ${api.address} (working_dir ${pkg.uri}, ${pkg.files.length} files)`,
    });
    sink.event(runEvent(spec, id, startedAt, job.stages));
    return new RayJobRun(api, id, sink, follower, this.options).launched();
  }
}

/** No local process: `pid` is 0 (nothing to signal); the run is known by its Ray submission id. */
function runEvent(spec: LaunchSpec, id: string, startedAt: number, stages: StageInfo[]) {
  return {
    type: 'run',
    protocol: PROTOCOL_VERSION,
    runId: id,
    config: spec.configPath,
    jobDir: spec.jobDir,
    backend: 'ray-job',
    startedAt: new Date(startedAt).toISOString(),
    pid: 0,
    stages,
  } as const;
}

class RayJobRun {
  private end?: RunEnd;
  private resolveEnded!: (end: RunEnd) => void;
  private readonly ended = new Promise<RunEnd>((resolve) => (this.resolveEnded = resolve));
  private logChars = 0;
  private partial = '';
  private readonly recent: string[] = [];
  private failedPolls = 0;
  private stopping = false;
  private lastStatus: RayJobStatus = 'PENDING';
  private wake?: () => void;

  constructor(
    private readonly api: RayJobsClient,
    private readonly id: string,
    private readonly sink: LaunchSink,
    private readonly follower: JobFollower,
    private readonly options: RayJobLauncherOptions,
  ) {}

  launched(): LaunchedRun {
    void this.loop();
    return { id: this.id, ended: this.ended, stop: (graceMs) => this.stop(graceMs) };
  }

  private async loop(): Promise<void> {
    const every = this.options.pollMs ?? 1000;
    while (!this.end) {
      await this.tick();
      if (this.end) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.stopping ? Math.min(every, 200) : every);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  private async tick(): Promise<void> {
    let info: JobDetails;
    try {
      info = await this.api.info(this.id);
      await this.readLogs();
      this.failedPolls = 0;
    } catch (e) {
      this.failedPolls++;
      if (this.failedPolls === 1) this.sink.warn((e as Error).message);
      if (this.failedPolls >= (this.options.maxFailedPolls ?? 30)) {
        this.finish({
          status: 'failed',
          error: `lost contact with Ray: ${(e as Error).message} Job ${this.id} may still be running on the cluster (\`ray job status ${this.id}\`).`,
        });
      }
      return;
    }
    this.lastStatus = info.status;
    if (!TERMINAL.has(info.status)) return;
    this.flushPartial();
    this.finish(this.endOf(info));
  }

  private async readLogs(): Promise<void> {
    const logs = await this.api.logs(this.id);
    if (logs.length < this.logChars) this.logChars = 0; // a log that restarted
    const fresh = this.partial + logs.slice(this.logChars);
    this.logChars = logs.length;
    const lines = fresh.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line.replace(/\r$/, ''));
  }

  private flushPartial(): void {
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }

  private line(line: string): void {
    this.sink.output(line);
    this.recent.push(line);
    if (this.recent.length > KEEP_LINES) this.recent.shift();
  }

  private endOf(info: JobDetails): RunEnd {
    const exitCode = info.driver_exit_code ?? null;
    if (info.status === 'STOPPED') return { status: 'stopped', exitCode };
    if (info.status === 'SUCCEEDED') {
      const failure = stageFailure(this.recent);
      return failure ? { status: 'failed', error: failure, exitCode } : { status: 'finished', exitCode };
    }
    // Ray's message for an entrypoint that exited non-zero carries the last 20,000 characters of the log.
    const m = /^Job entrypoint command failed with exit code (-?\d+)/.exec(info.message ?? '');
    const error = m
      ? `Trinity-RFT exited with code ${m[1]} (Ray job ${this.id}):\n${this.recent.slice(-ERROR_LINES).join('\n')}`
      : `Ray job ${this.id} failed${info.error_type ? ` (${info.error_type})` : ''}: ${(info.message ?? 'no message').trim()}`;
    return { status: 'failed', error, exitCode };
  }

  private finish(end: RunEnd): void {
    if (this.end) return;
    this.end = end;
    this.follower.finish();
    this.sink.event(
      end.status === 'failed'
        ? { type: 'done', status: end.status, error: end.error }
        : { type: 'done', status: end.status },
    );
    this.wake?.();
    this.resolveEnded(end);
  }

  private async stop(graceMs: number): Promise<RunEnd> {
    if (this.end) return this.end;
    if (!this.stopping) {
      this.stopping = true;
      try {
        await this.api.stop(this.id);
      } catch (e) {
        this.sink.warn((e as Error).message);
      }
      this.wake?.();
      const timer = setTimeout(() => {
        this.finish({
          status: 'failed',
          error: `asked Ray to stop job ${this.id}, but after ${graceMs / 1000} s it is still ${this.lastStatus}: it may still be running on the cluster (\`ray job stop ${this.id}\`).`,
        });
      }, graceMs);
      await this.ended;
      clearTimeout(timer);
    }
    return this.ended;
  }
}

/** POSIX shell quoting (Ray runs the entrypoint with `shell=True`). */
function shellQuote(s: string): string {
  return /^[\w./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
