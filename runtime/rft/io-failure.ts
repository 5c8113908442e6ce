/**
 * An I/O failure as a run reports it: what the run was doing (checkpoint write, buffer append, metrics append, …),
 * the file it was doing it to, and why, e.g. `metrics append failed: /job/monitor/metrics.jsonl: no space left on
 * device (ENOSPC)`. Node's own message for a failed write names neither the file nor the operation. A run that
 * ends on one adds what to do about its cause and how to resume (`ioFailureMessage`).
 */

import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export class IoFailure extends Error {
  override name = 'IoFailure';
  constructor(
    readonly operation: string,
    readonly path: string,
    override readonly cause: unknown,
  ) {
    super(`${operation} failed: ${path}: ${describeIoError(cause)}`);
  }
}

interface CodedError {
  code?: unknown;
  path?: unknown;
  message?: unknown;
}

/** Whether `e` is a failure of the file system or of SQLite's storage (rather than a bug or bad data). */
export function isIoError(e: unknown): boolean {
  if (e instanceof IoFailure) return false;
  const code = (e as CodedError | null)?.code;
  if (typeof code !== 'string') return false;
  return /^E[A-Z]+$/.test(code) || /^SQLITE_(FULL|IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB|PERM)/.test(code);
}

/** `no space left on device (ENOSPC)`: the system's words without Node's `CODE: ` prefix and `, syscall` suffix. */
export function describeIoError(e: unknown): string {
  const { code, message } = (e ?? {}) as CodedError;
  const text = typeof message === 'string' ? message : String(e);
  if (typeof code !== 'string') return text;
  const errno = new RegExp(`^${code}: (.*?)(?:, \\w+(?: .*)?)?$`).exec(text);
  return `${errno ? errno[1] : text} (${code})`;
}

/**
 * Runs `fn`; an I/O error it throws comes back as an IoFailure naming `operation` and the file: the error's own
 * path where Node recorded one (opening a file), else `path`.
 */
export function withIo<T>(operation: string, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw asIoFailure(operation, path, e);
  }
}

/** The async form of {@link withIo}. */
export async function withIoAsync<T>(operation: string, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw asIoFailure(operation, path, e);
  }
}

function asIoFailure(operation: string, path: string, e: unknown): unknown {
  if (!isIoError(e)) return e;
  const own = (e as CodedError).path;
  return new IoFailure(operation, typeof own === 'string' ? own : path, e);
}

/** What the system's error code says about the disk, and what the user does about it before resuming. */
function remedy(code: string): string {
  if (/^(ENOSPC|EDQUOT|EFBIG|SQLITE_FULL)/.test(code)) return 'The disk is full: free space on it';
  if (/^(EROFS|EACCES|EPERM|SQLITE_READONLY|SQLITE_PERM|SQLITE_CANTOPEN)/.test(code))
    return 'The file cannot be written there (a read-only file system, or its permissions): make it writable';
  if (/^(EIO|SQLITE_IOERR|SQLITE_CORRUPT|SQLITE_NOTADB)/.test(code))
    return 'The disk reported an I/O error: check it (`dmesg`, `fsck`) and the file';
  return 'Fix the cause above';
}

/** An IoFailure as plain data, so that it crosses a worker thread's boundary as itself (not as its stack's text). */
export interface IoFailureData {
  operation: string;
  path: string;
  code: string | undefined;
  message: string;
}

export function ioFailureData(e: unknown): IoFailureData | undefined {
  if (!(e instanceof IoFailure)) return undefined;
  const { code, message } = (e.cause ?? {}) as CodedError;
  return {
    operation: e.operation,
    path: e.path,
    code: typeof code === 'string' ? code : undefined,
    message: typeof message === 'string' ? message : String(e.cause),
  };
}

export function ioFailureFrom(d: IoFailureData): IoFailure {
  return new IoFailure(d.operation, d.path, Object.assign(new Error(d.message), { code: d.code }));
}

/**
 * A run's error for an I/O failure (`undefined` for any other error): what failed where, the remedy for its cause,
 * and how to resume, since the failure left every earlier checkpoint and buffer row intact.
 */
export function ioFailureMessage(e: unknown, configPath: string): string | undefined {
  if (!(e instanceof IoFailure)) return undefined;
  const code = (e.cause as CodedError | null)?.code;
  if (typeof code !== 'string') return undefined;
  return (
    `${e.message}. ${remedy(code)}, then resume the run (Resume in the editor, or ` +
    `\`trinity-workbench run --continue-from-checkpoint --config ${configPath}\`): it continues from its last ` +
    'checkpoint; every checkpoint and buffer row written before the failure is intact.'
  );
}

/**
 * `mkdir -p dir` that throws the real cause: Node's recursive mkdir reports ENOENT for the leaf when creating an
 * ancestor failed (a read-only file system, a permission), so the first missing ancestor is retried alone for the
 * system's own error.
 */
export function makeDirs(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    if ((e as CodedError).code !== 'ENOENT') throw e;
    let missing = dir;
    while (dirname(missing) !== missing && !existsSync(dirname(missing))) missing = dirname(missing);
    mkdirSync(missing);
    // It could be made after all (another process removed and remade a folder meanwhile): the rest, as asked.
    mkdirSync(dir, { recursive: true });
  }
}
