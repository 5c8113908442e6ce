/**
 * The reader/writer contract every experience buffer keeps, the reader positions callers persist, and the errors
 * that stand in for Trinity's control flow:
 *
 * - Trinity's readers end a stream by raising `StopIteration` / `StopAsyncIteration` (trinity/buffer/storage/queue.py
 *   `QueueStorage.get_batch`, storage/sql.py `_read_fifo` / `_read_priority`): here that is {@link BufferStopError}.
 * - Trinity's queue reader raises `TimeoutError("Read incomplete batch (k/n), please check your workflow.")` when
 *   `max_read_timeout` passes (reader/queue_reader.py): here {@link BufferReadTimeoutError}.
 * - A stored record that cannot be decoded is a {@link CorruptRecordError} naming the file and row id / line.
 */
import type { Experience } from '../experience';

/** Where a reader stands; plain JSON, so a caller can persist it and hand it back as `resumeFrom`. */
export type BufferPosition = QueuePosition | FilePosition | SqlFifoPosition | SqlPriorityPosition;

export interface QueuePosition {
  storage: 'queue';
  name: string;
  /** Experiences handed out so far (an in-memory queue cannot be resumed after its process ends). */
  delivered: number;
}

export interface FilePosition {
  storage: 'file';
  path: string;
  /** Byte offset just past the last line handed out (always at a line boundary). */
  offset: number;
  /** 1-based number of the last line handed out (0 = none). */
  line: number;
  delivered: number;
}

export interface SqlFifoPosition {
  storage: 'sql';
  policy: 'fifo';
  path: string;
  table: string;
  /** The id of the last row handed out: the next read starts at `id > lastId` (Trinity's `offset`). */
  lastId: number;
  delivered: number;
}

export interface SqlPriorityPosition {
  storage: 'sql';
  policy: 'priority';
  path: string;
  table: string;
  /** The reader's name in the read log (`<table>__reads`). */
  reader: string;
  /** How many batches this reader had taken when the position was captured. */
  seq: number;
  delivered: number;
}

export interface ReadOptions {
  /** Overrides the storage's `max_read_timeout` (which is in seconds) for this read. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Trinity's `min_model_version` (staleness control): experiences of older model versions are skipped (queue: dropped;
   * sql `priority`: left unread). Not supported by FIFO readers (Trinity's `_read_fifo` takes no such argument).
   */
  minModelVersion?: number;
}

export interface ExperienceWriter {
  /** Appends one batch. SQL: one transaction (all or nothing). Queue: one queue item (blocks while the queue is full). */
  write(exps: Experience[]): Promise<void>;
  /** Tells readers this writer is done; once every writer of the buffer has finished, readers end with BufferStopError. */
  finish(): Promise<void>;
}

export interface ExperienceReader {
  /**
   * Resolves with exactly `batchSize` experiences. Rejects with {@link BufferStopError} when every writer has
   * finished and fewer remain (or, for `file`/`sql`, when `max_read_timeout` passes without progress), with
   * {@link BufferReadTimeoutError} when a `queue` read times out, and with the signal's reason when aborted.
   * A rejected read consumes nothing: the position is unchanged.
   */
  read(batchSize: number, opts?: ReadOptions): Promise<Experience[]>;
  /** The position after the last successful read. */
  state(): BufferPosition;
  /** Releases the reader; a pending read rejects with BufferStopError (reason `closed`). */
  close(): void;
}

export type StopReason = 'finished' | 'timeout' | 'closed';

/** Trinity's StopIteration: the stream is over for this reader. */
export class BufferStopError extends Error {
  override name = 'BufferStopError';
  constructor(
    message: string,
    readonly reason: StopReason,
    /** Experiences that were available (but fewer than requested) when the read stopped. */
    readonly available: number,
    readonly requested: number,
  ) {
    super(message);
  }
}

/** Trinity's queue-reader TimeoutError ("Read incomplete batch (k/n), please check your workflow."). */
export class BufferReadTimeoutError extends Error {
  override name = 'BufferReadTimeoutError';
  constructor(
    readonly available: number,
    readonly requested: number,
  ) {
    super(`Read incomplete batch (${available}/${requested}), please check your workflow.`);
  }
}

/** A stored experience that cannot be decoded. `rowId` for SQL rows, `line` for JSONL lines. */
export class CorruptRecordError extends Error {
  override name = 'CorruptRecordError';
  readonly file: string;
  readonly table?: string;
  readonly rowId?: number;
  readonly line?: number;
  readonly detail: string;
  constructor(where: { file: string; table?: string; rowId?: number; line?: number }, detail: string) {
    const loc =
      where.rowId !== undefined
        ? `${where.file}: table "${where.table}" row id ${where.rowId}`
        : `${where.file}:${where.line}`;
    super(`${loc}: corrupt experience record: ${detail}`);
    this.file = where.file;
    this.table = where.table;
    this.rowId = where.rowId;
    this.line = where.line;
    this.detail = detail;
  }
}

/** A buffer config that cannot be opened; `key` is the offending config key (dotted path). */
export class BufferConfigError extends Error {
  override name = 'BufferConfigError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export function isBufferStop(e: unknown): e is BufferStopError {
  return e instanceof BufferStopError;
}

/** How a reader reports records it skips; without it a corrupt record makes `read` reject. */
export type CorruptHandler = (err: CorruptRecordError) => void;

export interface Logger {
  warn(msg: string): void;
}

export const consoleLogger: Logger = { warn: (m) => console.warn(m) };
