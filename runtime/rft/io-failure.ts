/**
 * An I/O failure as a run reports it: what the run was doing (checkpoint write, buffer append, metrics append, …),
 * the file it was doing it to, and why, e.g. `metrics append failed: /job/monitor/metrics.jsonl: no space left on
 * device (ENOSPC)`. Node's own message for a failed write names neither the file nor the operation.
 */

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
