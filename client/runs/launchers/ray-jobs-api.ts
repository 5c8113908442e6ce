/**
 * Ray's Jobs REST API on the dashboard (ray/dashboard/modules/job/job_head.py; the client is
 * ray/dashboard/modules/dashboard_sdk.py and job/sdk.py): request and response shapes, and errors in words a user
 * can act on. Node's fetch; no Ray installation needed.
 */

export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export const TERMINAL: ReadonlySet<RayJobStatus> = new Set(['STOPPED', 'SUCCEEDED', 'FAILED']);

/** POST /api/jobs/ (JobSubmitRequest; optional fields left out, as Ray's client strips None). */
export interface JobSubmitRequest {
  entrypoint: string;
  submission_id?: string;
  runtime_env?: { working_dir?: string; env_vars?: Record<string, string> };
  metadata?: Record<string, string>;
}

/** GET /api/jobs/{id} (JobDetails): the fields read here. */
export interface JobDetails {
  submission_id: string | null;
  job_id: string | null;
  status: RayJobStatus;
  entrypoint: string;
  message: string | null;
  error_type?: string | null;
  start_time?: number | null;
  end_time?: number | null;
  driver_exit_code?: number | null;
}

export class RayApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

const SETTING = 'trinityWorkbench.rayAddress';

/**
 * The dashboard's HTTP address from a `RAY_ADDRESS`-style value: `http(s)://host:port` as is, `host:port` as
 * http. Ray's own client also takes `ray://…` and `auto` and resolves them through a running Ray; that needs Ray
 * on this machine, so those are refused with the fix.
 */
export function dashboardAddress(raw: string): string {
  const v = raw.trim().replace(/\/+$/, '');
  if (/^https?:\/\/[^/\s]+$/.test(v)) return v;
  if (/^[\w.-]+:\d+$/.test(v)) return `http://${v}`;
  throw new RayApiError(
    `"${raw}" is not the address of a Ray dashboard. Set ${SETTING} (or RAY_ADDRESS) to the dashboard's HTTP address, e.g. http://127.0.0.1:8265.`,
  );
}

export class RayJobsClient {
  constructor(readonly address: string) {}

  /** GET /api/version: also the check that the dashboard answers at all. */
  async version(): Promise<{ version: string; ray_version: string }> {
    return (await this.json('GET', '/api/version')) as { version: string; ray_version: string };
  }

  async packageExists(name: string): Promise<boolean> {
    const r = await this.request('GET', `/api/packages/gcs/${name}`);
    if (r.status === 200) return true;
    if (r.status === 404) return false;
    throw await this.failure(r, `checking for package ${name}`);
  }

  async uploadPackage(name: string, zip: Uint8Array): Promise<void> {
    const r = await this.request('PUT', `/api/packages/gcs/${name}`, zip);
    if (r.status !== 200) throw await this.failure(r, `uploading the working dir (${name})`);
  }

  /** POST /api/jobs/: the job's submission id. */
  async submit(req: JobSubmitRequest): Promise<string> {
    const body = (await this.json('POST', '/api/jobs/', req, 'submitting the job')) as {
      submission_id?: string;
      job_id?: string;
    };
    const id = body.submission_id ?? body.job_id;
    if (!id)
      throw new RayApiError(`the Ray dashboard at ${this.address} accepted the job but returned no submission_id`);
    return id;
  }

  async info(id: string): Promise<JobDetails> {
    return (await this.json(
      'GET',
      `/api/jobs/${encodeURIComponent(id)}`,
      undefined,
      `reading job ${id}`,
    )) as JobDetails;
  }

  /** The job's whole log so far (Ray returns it all on each call). */
  async logs(id: string): Promise<string> {
    return (
      (
        (await this.json('GET', `/api/jobs/${encodeURIComponent(id)}/logs`, undefined, `reading job ${id}'s log`)) as {
          logs: string;
        }
      ).logs ?? ''
    );
  }

  /** POST /api/jobs/{id}/stop: whether the job was still running. */
  async stop(id: string): Promise<boolean> {
    return (
      (await this.json('POST', `/api/jobs/${encodeURIComponent(id)}/stop`, undefined, `stopping job ${id}`)) as {
        stopped: boolean;
      }
    ).stopped;
  }

  private async json(method: string, path: string, body?: unknown, doing = `calling ${path}`): Promise<unknown> {
    const r = await this.request(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? undefined : 'application/json',
    );
    if (r.status !== 200) throw await this.failure(r, doing);
    try {
      return await r.json();
    } catch {
      throw new RayApiError(
        `the answer of ${this.address}${path} is not JSON: is ${this.address} a Ray dashboard? Check ${SETTING}.`,
        r.status,
      );
    }
  }

  private async request(
    method: string,
    path: string,
    body?: string | Uint8Array,
    type = 'application/octet-stream',
  ): Promise<Response> {
    try {
      return await fetch(`${this.address}${path}`, {
        method,
        body,
        headers: body === undefined ? undefined : { 'content-type': type },
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new RayApiError(
        `cannot reach the Ray dashboard at ${this.address} (${why}). Is the cluster up (\`ray start --head\`)? Set ${SETTING} (or RAY_ADDRESS) to its dashboard address, e.g. http://127.0.0.1:8265.`,
      );
    }
  }

  private async failure(r: Response, doing: string): Promise<RayApiError> {
    const text = (await r.text().catch(() => '')).trim();
    const hint = r.status === 404 ? ` Is ${this.address} a Ray dashboard (Ray 2.x)? Check ${SETTING}.` : '';
    return new RayApiError(
      `${doing} failed: the Ray dashboard at ${this.address} answered ${r.status}${text ? `: ${lastLine(text)}` : ''}.${hint}`,
      r.status,
    );
  }
}

/** Ray answers errors with a Python traceback; its last line says what went wrong. */
function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim());
  return lines[lines.length - 1].slice(0, 500);
}
