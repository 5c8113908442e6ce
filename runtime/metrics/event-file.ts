/**
 * One TensorBoard event file read incrementally: each `read()` returns the scalars appended since the previous
 * one. A record still being written is left for the next call.
 *
 * Damage: a record whose payload CRC fails (or that does not decode) is reported with its byte offset and
 * skipped, since its length was intact; a length whose CRC fails loses the framing, so the reader reports it once
 * and stops at that file (later calls return nothing new from it).
 *
 * Restarts: file versions, `SessionLog.START` events and steps going back purge orphaned points as TensorBoard does
 * (restarts.ts), across every file of a run when its readers share one RunRestarts.
 */
import { closeSync, openSync } from 'node:fs';
import { readAt } from './read-at';
import { decodeEvent, fileVersionNumber, scalarOf, SESSION_START } from './event-proto';
import { ReadBatch, RunRestarts } from './restarts';
import { readTfRecords, type FramedRecords } from './tfrecord';
import type { MetricsRead } from './types';

export class EventFileReader {
  private offset: number;
  private stopped = false;

  /** `from`: the byte offset to start at (e.g. the file's size, to read only what is appended from now on). */
  constructor(
    readonly path: string,
    readonly run: string,
    from = 0,
    /** The run's restart state, shared by the readers of its files (read in name order). */
    private readonly restarts = new RunRestarts(run),
  ) {
    this.offset = from;
  }

  /** Where the next read starts. */
  get position(): number {
    return this.offset;
  }

  /** Whether the reader gave up on this file (its framing was lost at `position`). */
  get lost(): boolean {
    return this.stopped;
  }

  /** New scalars since the last call. Throws only when the file cannot be opened or read (an fs error). */
  read(): MetricsRead {
    const out = new ReadBatch();
    if (this.stopped) return out.result();
    const fd = openSync(this.path, 'r');
    try {
      let want = CHUNK;
      for (;;) {
        const bytes = readAt(fd, this.offset, want);
        const framed = readTfRecords(bytes);
        this.collect(framed, out);
        this.offset += framed.end;
        if (framed.lost) {
          this.stopped = true;
          break;
        }
        if (bytes.length < want) break; // reached the end of what is written
        // A record larger than the chunk: read exactly that record next time round.
        want = framed.end === 0 ? Math.max(CHUNK, recordSize(bytes)) : CHUNK;
      }
    } finally {
      closeSync(fd);
    }
    return out.result();
  }

  private collect(framed: FramedRecords, out: ReadBatch): void {
    for (const p of framed.problems) {
      const at = this.offset + p.offset;
      out.problems.push(
        p.kind === 'length-crc'
          ? {
              file: this.path,
              offset: at,
              message: `${this.path}: bad length checksum in the record at byte ${at}; the rest of the file is not read`,
            }
          : {
              file: this.path,
              offset: at,
              message: `${this.path}: bad data checksum in the record at byte ${at} (${p.length} bytes); record skipped`,
            },
      );
    }
    for (const r of framed.records) {
      let event;
      try {
        event = decodeEvent(r.payload);
      } catch (e) {
        const at = this.offset + r.offset;
        out.problems.push({
          file: this.path,
          offset: at,
          message: `${this.path}: the record at byte ${at} is not a tensorflow.Event (${(e as Error).message}); skipped`,
        });
        continue;
      }
      if (event.what === 'fileVersion') this.restarts.version(fileVersionNumber(event.fileVersion));
      else if (event.what === 'sessionLog' && event.sessionLog?.status === SESSION_START)
        this.restarts.start(this.path, event.step, out);
      if (event.what !== 'summary' || !event.summary) continue;
      const values = event.summary.value;
      this.restarts.summary(
        this.path,
        event.step,
        values.map((v) => v.tag),
        out,
      );
      for (const v of values) {
        const value = scalarOf(v);
        if (value !== undefined)
          out.add({ run: this.run, tag: v.tag, step: event.step, wallTime: event.wallTime, value });
      }
    }
  }
}

/** Bytes read per step; event files with images can be large, and only their scalars are kept. */
const CHUNK = 4 << 20;

/** The whole size of the record whose header starts `bytes` (its length was checked by readTfRecords). */
function recordSize(bytes: Uint8Array): number {
  return 12 + Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true)) + 4;
}
