/**
 * A stand-in for a Ray head's Jobs REST API, for the ray-job launcher's tests (Ray cannot be installed here). It
 * speaks the request and response shapes of ray/dashboard/modules/job/job_head.py and behaves as Ray's job
 * supervisor (job_supervisor.py) on what a client can observe: a `gcs://` working_dir package is unpacked and the
 * entrypoint runs there through the shell in a new session, stdout and stderr into one log that begins with
 * "Running entrypoint for job …"; exit 0 is SUCCEEDED, else FAILED with Ray's message and the log's tail; stop
 * sends SIGTERM, waits RAY_JOB_STOP_WAIT_TIME_S (3 s), then SIGKILL, and the job is STOPPED. Loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, closeSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { unzipSync } from 'fflate';

type Status = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export interface StandinJob {
  submissionId: string;
  entrypoint: string;
  status: Status;
  message: string | null;
  errorType: string | null;
  exitCode: number | null;
  startTime: number;
  endTime: number | null;
  runtimeEnv: { working_dir?: string };
  metadata: Record<string, string>;
  logPath: string;
  /** Where the working_dir was unpacked (the entrypoint's cwd). */
  cwd?: string;
  child?: ChildProcess;
  stopping: boolean;
}

export interface RayJobsServerOptions {
  /** Environment of the entrypoints (the cluster's). */
  env?: NodeJS.ProcessEnv;
  stopWaitSeconds?: number;
  /** Acknowledge stop requests but never stop (a stuck cluster). */
  ignoreStop?: boolean;
}

export class RayJobsServer {
  readonly packages = new Map<string, Uint8Array>();
  readonly jobs = new Map<string, StandinJob>();
  /** `METHOD path` of every request, in order. */
  readonly requests: string[] = [];
  private server?: Server;
  private readonly root = mkdtempSync(join(tmpdir(), 'twb-ray-head-'));
  address = '';

  constructor(private readonly options: RayJobsServerOptions = {}) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e: Error) => send(res, 500, e.stack ?? e.message));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.address = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.address;
  }

  async close(): Promise<void> {
    for (const job of this.jobs.values())
      if (job.child?.pid && job.exitCode === null && job.status === 'RUNNING') killGroup(job.child.pid, 'SIGKILL');
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    this.requests.push(`${req.method} ${path}`);
    const body = await readBody(req);
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && path === '/api/version')
      return send(res, 200, {
        version: '4',
        ray_version: '2.40.0',
        ray_commit: 'stand-in',
        session_name: 'session_stand_in',
      });
    if ((m = /^\/api\/packages\/([^/]+)\/([^/]+)$/.exec(path))) {
      const uri = `${m[1]}://${m[2]}`;
      if (req.method === 'GET')
        return this.packages.has(uri) ? send(res, 200, '') : send(res, 404, `Package ${uri} does not exist`);
      if (req.method === 'PUT') {
        this.packages.set(uri, body);
        return send(res, 200, '');
      }
    }
    if (req.method === 'POST' && path === '/api/jobs/') return this.submit(body, res);
    if ((m = /^\/api\/jobs\/([^/]+)(\/logs|\/stop)?$/.exec(path))) {
      const job = this.jobs.get(decodeURIComponent(m[1]));
      if (!job) return send(res, 404, `Job ${m[1]} does not exist`);
      if (req.method === 'GET' && !m[2]) return send(res, 200, details(job));
      if (req.method === 'GET' && m[2] === '/logs') return send(res, 200, { logs: readFileSync(job.logPath, 'utf8') });
      if (req.method === 'POST' && m[2] === '/stop') return send(res, 200, { stopped: this.stop(job) });
    }
    send(res, 404, `404: Not Found`);
  }

  private submit(body: Uint8Array, res: ServerResponse): void {
    let req: {
      entrypoint?: unknown;
      submission_id?: string;
      runtime_env?: { working_dir?: string };
      metadata?: Record<string, string>;
    };
    try {
      req = JSON.parse(new TextDecoder().decode(body));
    } catch (e) {
      return send(
        res,
        400,
        `Traceback (most recent call last):\njson.decoder.JSONDecodeError: ${(e as Error).message}`,
      );
    }
    if (typeof req.entrypoint !== 'string')
      return send(res, 400, 'Traceback (most recent call last):\nTypeError: entrypoint must be a string, got None');
    const id = req.submission_id ?? `raysubmit_${Math.random().toString(36).slice(2, 18)}`;
    if (this.jobs.has(id))
      return send(
        res,
        400,
        `Traceback (most recent call last):\nValueError: Job with submission_id ${id} already exists. Please use a different submission_id.`,
      );
    const logPath = join(this.root, 'logs', `job-driver-${id}.log`);
    mkdirSync(dirname(logPath), { recursive: true });
    writeFileSync(logPath, '');
    const job: StandinJob = {
      submissionId: id,
      entrypoint: req.entrypoint,
      status: 'PENDING',
      message: 'Job has not started yet. It may be waiting for the runtime environment to be set up.',
      errorType: null,
      exitCode: null,
      startTime: Date.now(),
      endTime: null,
      runtimeEnv: req.runtime_env ?? {},
      metadata: req.metadata ?? {},
      logPath,
      stopping: false,
    };
    this.jobs.set(id, job);
    setTimeout(() => this.run(job), 50);
    send(res, 200, { job_id: id, submission_id: id });
  }

  private run(job: StandinJob): void {
    if (job.status !== 'PENDING') return;
    const uri = job.runtimeEnv.working_dir;
    let cwd = this.root;
    if (uri) {
      const pkg = this.packages.get(uri);
      if (!pkg)
        return this.end(
          job,
          'FAILED',
          `Failed to set up runtime environment.\nFailed to fetch URI ${uri} from GCS.`,
          'RUNTIME_ENV_SETUP_FAILURE',
        );
      cwd = join(
        this.root,
        'runtime_resources',
        'working_dir_files',
        uri.replace(/^gcs:\/\//, '').replace(/\.zip$/, ''),
      );
      for (const [name, content] of Object.entries(unzipSync(pkg))) {
        if (name.endsWith('/')) continue;
        mkdirSync(dirname(join(cwd, name)), { recursive: true });
        writeFileSync(join(cwd, name), content);
      }
    }
    job.cwd = cwd;
    writeFileSync(job.logPath, `Running entrypoint for job ${job.submissionId}: ${job.entrypoint}\n`, { flag: 'a' });
    const fd = openSync(job.logPath, 'a');
    const child = spawn('/bin/sh', ['-c', job.entrypoint], {
      cwd,
      detached: true, // start_new_session=True
      stdio: ['ignore', fd, fd],
      env: { ...(this.options.env ?? process.env), PYTHONUNBUFFERED: '1', RAY_ADDRESS: '127.0.0.1:6379' },
    });
    closeSync(fd);
    job.child = child;
    job.status = 'RUNNING';
    job.message = 'Job is currently running.';
    child.on('exit', (code, signal) => {
      if (job.stopping) return this.end(job, 'STOPPED', 'Job was intentionally stopped.', null, code);
      const exit = code ?? (signal ? -1 : 0);
      if (exit === 0) return this.end(job, 'SUCCEEDED', 'Job finished successfully.', null, 0);
      const tail = readFileSync(job.logPath, 'utf8').slice(-20000);
      this.end(
        job,
        'FAILED',
        `Job entrypoint command failed with exit code ${exit}, last available logs (truncated to 20,000 chars):\n${tail}`,
        'JOB_ENTRYPOINT_COMMAND_ERROR',
        exit,
      );
    });
  }

  private stop(job: StandinJob): boolean {
    if (job.status !== 'RUNNING' && job.status !== 'PENDING') return false;
    if (this.options.ignoreStop) return true;
    job.stopping = true;
    if (job.status === 'PENDING') {
      this.end(job, 'STOPPED', 'Job was intentionally stopped.');
      return true;
    }
    const pid = job.child!.pid!;
    killGroup(pid, 'SIGTERM');
    const t = setTimeout(() => killGroup(pid, 'SIGKILL'), (this.options.stopWaitSeconds ?? 3) * 1000);
    job.child!.once('exit', () => clearTimeout(t));
    return true;
  }

  private end(
    job: StandinJob,
    status: Status,
    message: string,
    errorType: string | null = null,
    exitCode: number | null = null,
  ): void {
    job.status = status;
    job.message = message;
    job.errorType = errorType;
    job.exitCode = exitCode;
    job.endTime = Date.now();
  }
}

/** GET /api/jobs/{id}: JobDetails as Ray serialises it. */
function details(job: StandinJob) {
  return {
    type: 'SUBMISSION',
    job_id: null,
    submission_id: job.submissionId,
    driver_info: null,
    status: job.status,
    entrypoint: job.entrypoint,
    message: job.message,
    error_type: job.errorType,
    start_time: job.startTime,
    end_time: job.endTime,
    metadata: job.metadata,
    runtime_env: job.runtimeEnv,
    driver_agent_http_address: job.status === 'PENDING' ? null : 'http://127.0.0.1:52365',
    driver_node_id: 'stand-in-node',
    driver_exit_code: job.exitCode,
  };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of req) chunks.push(c as Uint8Array);
  return new Uint8Array(Buffer.concat(chunks));
}
