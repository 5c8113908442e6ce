/**
 * `storage_type: file` for experience buffers: a JSON-lines file, one experience per line (codec.ts), appended as
 * Trinity's JSONWriter does (trinity/buffer/storage/file.py `FileStorage`: path must end `.json`/`.jsonl`, parent
 * directories created, file opened for append, each batch written then flushed).
 *
 * Trinity never reads this file back (FileStorage.read raises NotImplementedError); here a reader tails it:
 * - it hands out only complete lines (ending in "\n"), so a line torn by a crashed writer is never read;
 * - its position is the byte offset after the last line handed out, so a persisted position resumes exactly;
 * - the stream is over when every writer that opened the file has finished: writers record `open` and `finish` in
 *   a sidecar `<path>.writers` (JSON lines with pid and host). A recorded pid that no longer runs on this host died:
 *   when no writer is live and one died, the stream ends after `deadWriterGraceMs` unless a writer (a restarted
 *   explorer) opens the file again. As in Trinity's ref-counted storages, a reader that starts before any writer
 *   waits (up to `max_read_timeout`).
 * A new writer that finds a torn last line (no other live writer) truncates it away before appending.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  appendFileSync,
  statSync,
  ftruncateSync,
  writeSync,
} from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Experience } from '../experience';
import { RecordError, experienceToRecord, recordToExperience, validateExperience } from './codec';
import {
  BufferConfigError,
  BufferStopError,
  CorruptRecordError,
  consoleLogger,
  type BufferPosition,
  type CorruptHandler,
  type ExperienceReader,
  type ExperienceWriter,
  type Logger,
  type ReadOptions,
} from './types';
import { makeDirs, withIo } from '../io-failure';
import {
  HOST,
  WritersGone,
  abortReason,
  countWriters,
  checkBatchSize,
  linkSignals,
  readTimeoutMs,
  sleep,
  writerMayBeAlive,
} from './wait';

export function checkJsonPath(path: string, key = 'path'): void {
  const ext = extname(path);
  if (ext !== '.jsonl' && ext !== '.json') {
    throw new BufferConfigError(key, `File path must end with '.json' or '.jsonl', got ${path} (\`${key}\`)`);
  }
}

interface WriterEvent {
  id: string;
  pid: number;
  host: string;
  event: 'open' | 'finish';
}

const writersPath = (path: string): string => `${path}.writers`;

/** Writers recorded for the file: how many ever opened it, which may still be writing, how many died (countWriters). */
export function fileWriterStatus(path: string): { registered: number; live: WriterEvent[]; died: number } {
  let text: string;
  try {
    text = readFileSync(writersPath(path), 'utf8');
  } catch {
    return { registered: 0, live: [], died: 0 };
  }
  const opened = new Map<string, WriterEvent>(); // in the order they opened
  const finished = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let ev: WriterEvent;
    try {
      ev = JSON.parse(line);
    } catch {
      continue; // a line torn by a killed writer
    }
    if (ev.event === 'open') opened.set(ev.id, ev);
    else if (ev.event === 'finish') finished.add(ev.id);
  }
  const writers = [...opened.values()].map((ev) => ({
    ev,
    finished: finished.has(ev.id),
    mayBeAlive: writerMayBeAlive(ev.pid, ev.host),
  }));
  const { died } = countWriters(writers);
  const live = writers.filter((w) => !w.finished && w.mayBeAlive).map((w) => w.ev);
  return { registered: writers.length, live, died };
}

const utf8 = new TextDecoder('utf-8');

function writeAll(fd: number, buf: Uint8Array): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

export interface FileWriterOptions {
  /** fsync after every batch (survives power loss, not only process death). Default false, as Trinity's flush(). */
  fsync?: boolean;
  logger?: Logger;
}

export class JsonlExperienceWriter implements ExperienceWriter {
  readonly path: string;
  private fd: number | null;
  private readonly id = randomBytes(6).toString('hex');
  private readonly fsync: boolean;

  constructor(path: string, opts: FileWriterOptions = {}) {
    checkJsonPath(path);
    this.path = resolve(path);
    this.fsync = opts.fsync ?? false;
    this.fd = withIo('buffer open', this.path, () => {
      makeDirs(dirname(this.path));
      const others = fileWriterStatus(this.path).live;
      const fd = openSync(this.path, 'a+');
      try {
        if (others.length === 0) this.repairTornTail(fd, opts.logger ?? consoleLogger);
        appendFileSync(writersPath(this.path), this.writerEvent('open'));
      } catch (e) {
        closeSync(fd);
        throw e;
      }
      return fd;
    });
  }

  private writerEvent(event: WriterEvent['event']): string {
    return JSON.stringify({ id: this.id, pid: process.pid, host: HOST, event } satisfies WriterEvent) + '\n';
  }

  /** Cuts a last line without its "\n" (left by a writer killed mid-line); readers never handed it out. */
  private repairTornTail(fd: number, logger: Logger): void {
    const size = fstatSync(fd).size;
    if (size === 0) return;
    const chunk = new Uint8Array(Math.min(size, 1 << 16));
    let end = size;
    let cut = -1;
    while (end > 0 && cut < 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      if (start + n === size && chunk[n - 1] === 0x0a) return; // ends with a newline: nothing torn
      const i = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (i >= 0) cut = start + i + 1;
      else end = start;
    }
    if (cut < 0) cut = 0;
    logger.warn(`${this.path}: removing ${size - cut} bytes of an incomplete last line (a writer stopped mid-line)`);
    ftruncateSync(fd, cut);
  }

  async write(exps: Experience[]): Promise<void> {
    this.writeNow(exps);
  }

  /** `write` done before it returns (the appends are synchronous): for callers that cannot wait on a promise. */
  writeNow(exps: Experience[]): void {
    if (this.fd === null) throw new Error(`${this.path}: write after finish()`);
    if (exps.length === 0) return;
    const lines: string[] = [];
    for (let i = 0; i < exps.length; i++) {
      validateExperience(exps[i], `experience ${i} of the batch`);
      lines.push(JSON.stringify(experienceToRecord(exps[i])));
    }
    const fd = this.fd;
    const before = fstatSync(fd).size;
    withIo('buffer append', this.path, () => {
      try {
        writeAll(fd, new TextEncoder().encode(lines.join('\n') + '\n'));
        if (this.fsync) fsyncSync(fd);
      } catch (e) {
        // A batch is all there or not at all (a full disk may have taken part of it): cut back what it wrote.
        try {
          ftruncateSync(fd, before);
        } catch {
          // the error below says what happened
        }
        throw e;
      }
    });
  }

  async finish(): Promise<void> {
    this.finishNow();
  }

  /** `finish` done before it returns. */
  finishNow(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    withIo('buffer close', this.path, () => appendFileSync(writersPath(this.path), this.writerEvent('finish')));
  }
}

export interface FileReaderOptions {
  maxReadTimeoutS: number;
  resumeFrom?: BufferPosition;
  pollIntervalMs?: number;
  /** How long a dead writer's stream stays open for another writer (default DEAD_WRITER_GRACE_MS). */
  deadWriterGraceMs?: number;
  /** Where the reader says why it waits (a dead writer's grace period). */
  logger?: Logger;
  onCorrupt?: CorruptHandler;
}

interface Pending {
  exp: Experience;
  endOffset: number;
  line: number;
}

const MAX_SCAN_BYTES = 16 << 20;

export class JsonlExperienceReader implements ExperienceReader {
  readonly path: string;
  private offset = 0;
  private line = 0;
  private delivered = 0;
  /** Bytes of complete lines already scanned into `pending`. */
  private scanOffset = 0;
  private scanLine = 0;
  /** Bytes after the last complete line at the last scan (an incomplete line). */
  private tornBytes = 0;
  private pending: Pending[] = [];
  private readonly closer = new AbortController();
  private reading = false;
  private readonly writersGone: WritersGone;

  constructor(
    path: string,
    private readonly opts: FileReaderOptions,
  ) {
    checkJsonPath(path);
    this.path = resolve(path);
    this.writersGone = new WritersGone(opts.deadWriterGraceMs, (what) => opts.logger?.warn(`${this.path}: ${what}`));
    const p = opts.resumeFrom;
    if (p !== undefined) {
      if (p.storage !== 'file')
        throw new Error(`resumeFrom is a ${p.storage} position; this is a file buffer (${this.path})`);
      if (!Number.isInteger(p.offset) || p.offset < 0)
        throw new Error(`resumeFrom.offset ${p.offset} is not a byte offset`);
      if (p.offset > 0) withIo('buffer resume', this.path, () => this.checkResumeOffset(p.offset));
      this.offset = this.scanOffset = p.offset;
      this.line = this.scanLine = p.line;
      this.delivered = p.delivered;
    }
  }

  private checkResumeOffset(offset: number): void {
    const size = existsSync(this.path) ? statSync(this.path).size : 0;
    if (offset > size)
      throw new Error(`${this.path}: resumeFrom.offset ${offset} is past the end of the file (${size} bytes)`);
    const fd = openSync(this.path, 'r');
    const b = new Uint8Array(1);
    try {
      readSync(fd, b, 0, 1, offset - 1);
    } finally {
      closeSync(fd);
    }
    if (b[0] !== 0x0a) throw new Error(`${this.path}: resumeFrom.offset ${offset} is not at a line boundary`);
  }

  state(): BufferPosition {
    return { storage: 'file', path: this.path, offset: this.offset, line: this.line, delivered: this.delivered };
  }

  close(): void {
    this.closer.abort();
  }

  /**
   * Reads the complete lines appended since the last scan into `pending`; stops at a corrupt line unless onCorrupt
   * skips it. A partial last line is left in the file and read again next time (a new writer may cut it).
   */
  private scan(): CorruptRecordError | undefined {
    if (!existsSync(this.path)) return undefined;
    const fd = openSync(this.path, 'r');
    try {
      const size = fstatSync(fd).size;
      this.tornBytes = 0;
      if (size < this.scanOffset) {
        throw new Error(
          `${this.path} shrank to ${size} bytes, below the read position ${this.scanOffset}; was it replaced?`,
        );
      }
      while (this.scanOffset < size) {
        const len = Math.min(size - this.scanOffset, MAX_SCAN_BYTES);
        const data = new Uint8Array(len);
        const n = readSync(fd, data, 0, len, this.scanOffset);
        if (n <= 0) break;
        let start = 0;
        for (let nl = data.indexOf(0x0a, start); nl >= 0 && nl < n; nl = data.indexOf(0x0a, start)) {
          const text = utf8.decode(data.subarray(start, nl));
          const lineNo = this.scanLine + 1;
          const endOffset = this.scanOffset + nl + 1;
          if (text.trim() !== '') {
            let exp: Experience;
            try {
              exp = recordToExperience(JSON.parse(text));
            } catch (e) {
              if (!(e instanceof RecordError) && !(e instanceof SyntaxError)) throw e;
              const err = new CorruptRecordError({ file: this.path, line: lineNo }, e.message);
              if (!this.opts.onCorrupt) {
                this.scanOffset += start; // stop before the bad line so the next read meets it again
                return err;
              }
              this.opts.onCorrupt(err);
              this.scanLine = lineNo;
              start = nl + 1;
              continue;
            }
            this.pending.push({ exp, endOffset, line: lineNo });
          }
          this.scanLine = lineNo;
          start = nl + 1;
        }
        if (start === 0) {
          // No newline in the whole chunk: an incomplete last line (or one longer than a chunk, read whole next).
          if (n < MAX_SCAN_BYTES || this.scanOffset + n >= size) {
            this.tornBytes = size - this.scanOffset;
            break;
          }
          throw new Error(`${this.path}: line ${this.scanLine + 1} is longer than ${MAX_SCAN_BYTES} bytes`);
        }
        this.scanOffset += start;
      }
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  private take(n: number): Experience[] {
    const batch = this.pending.splice(0, n);
    const last = batch[batch.length - 1];
    this.offset = last.endOffset;
    this.line = last.line;
    this.delivered += n;
    return batch.map((p) => p.exp);
  }

  async read(batchSize: number, opts: ReadOptions = {}): Promise<Experience[]> {
    checkBatchSize(batchSize);
    if (opts.minModelVersion !== undefined)
      throw new Error('minModelVersion is not supported by the file storage (FIFO)');
    if (this.closer.signal.aborted) throw new BufferStopError(`${this.path}: reader closed`, 'closed', 0, batchSize);
    if (this.reading) throw new Error(`${this.path}: a read is already in progress`);
    this.reading = true;
    const link = linkSignals(opts.signal, this.closer.signal);
    const signal = link.signal;
    const timeout = readTimeoutMs(this.opts.maxReadTimeoutS, opts.timeoutMs);
    let deadline = Date.now() + timeout;
    let seen = this.pending.length;
    try {
      for (;;) {
        if (signal.aborted) throw this.stopOrAbort(signal, batchSize, opts.signal);
        const corrupt = withIo('buffer read', this.path, () => this.scan());
        if (this.pending.length >= batchSize) return this.take(batchSize);
        if (corrupt) throw corrupt;
        if (this.pending.length !== seen) {
          seen = this.pending.length;
          deadline = Date.now() + timeout;
        }
        const w = fileWriterStatus(this.path);
        const count = { registered: w.registered, live: w.live.length, died: w.died };
        if (this.writersGone.over(count)) {
          // Every writer is done; what they wrote before finishing is on disk, so one more scan is final.
          const c2 = withIo('buffer read', this.path, () => this.scan());
          if (this.pending.length >= batchSize) return this.take(batchSize);
          if (c2) throw c2;
          const torn = this.tornBytes ? ` (ignored ${this.tornBytes} bytes of an incomplete last line)` : '';
          throw new BufferStopError(
            `${this.path}: ${WritersGone.describe(count, this.writersGone.graceMs)}, with ${this.pending.length} of ${batchSize} experiences left${torn}`,
            'finished',
            this.pending.length,
            batchSize,
          );
        }
        if (Date.now() >= deadline) {
          throw new BufferStopError(
            `${this.path}: max read timeout reached (${timeout / 1000} s) with ${this.pending.length} of ${batchSize} experiences`,
            'timeout',
            this.pending.length,
            batchSize,
          );
        }
        try {
          await sleep(Math.min(this.opts.pollIntervalMs ?? 100, Math.max(0, deadline - Date.now())), signal);
        } catch {
          throw this.stopOrAbort(signal, batchSize, opts.signal);
        }
      }
    } finally {
      link.dispose();
      this.reading = false;
    }
  }

  private stopOrAbort(signal: AbortSignal, batchSize: number, user: AbortSignal | undefined): unknown {
    if (user?.aborted) return abortReason(user);
    if (signal.aborted)
      return new BufferStopError(`${this.path}: reader closed`, 'closed', this.pending.length, batchSize);
    return new Error('unreachable');
  }
}
