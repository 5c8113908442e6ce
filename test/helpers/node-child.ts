/**
 * A Node child process run to its end without blocking the test's event loop, so that a test can run two at once (on
 * CI's two cores, their time is that of the longer one).
 */
import { spawn } from 'node:child_process';

export interface NodeChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The child was sent SIGTERM after `timeoutMs`. */
  timedOut: boolean;
}

/** Runs `node ...args` with `env` (only that) in `cwd`; SIGTERM after `timeoutMs` when given. */
export function runNodeChild(
  args: string[],
  opts: { cwd?: string; env: Record<string, string>; timeoutMs?: number },
): Promise<NodeChildResult> {
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGTERM');
        }, opts.timeoutMs);
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
  });
}
