/**
 * TensorBoard event files written directly: TFRecord framing (length, masked CRC-32C of the length, payload,
 * masked CRC-32C of the payload) around hand-encoded `tensorflow.Event` protobufs holding scalar summaries. This is
 * all `tensorboard --logdir` needs for scalar charts, without a TensorFlow dependency.
 *
 * Each writer (one per process and role) opens its own file, `events.out.tfevents.<seconds>.<host>.<pid>.<n>` as
 * TensorBoard's own writer names them, starting with `file_version` `brain.Event:2` and a `SessionLog.START` at the
 * first step it will log: a run resumed from its checkpoint at step N starts at N+1, and TensorBoard then drops what
 * the abandoned timeline logged from N+1 on (runtime/metrics/restarts.ts has its rule).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { maskedCrc32c } from '../../metrics/crc32c';
import { withIo } from '../io-failure';

/** One TFRecord: u64 length, u32 masked crc(length), payload, u32 masked crc(payload). */
export function tfRecord(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + 4 + payload.length + 4);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(payload.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(payload, 12);
  view.setUint32(12 + payload.length, maskedCrc32c(payload), true);
  return out;
}

class ProtoWriter {
  private bytes: number[] = [];
  varint(v: number | bigint): this {
    let x = BigInt(v);
    if (x < 0n) x += 1n << 64n;
    while (x >= 0x80n) {
      this.bytes.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.bytes.push(Number(x));
    return this;
  }
  tag(field: number, wire: number): this {
    return this.varint((field << 3) | wire);
  }
  double(field: number, v: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.tag(field, 1).bytes.push(...b);
    return this;
  }
  float(field: number, v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.tag(field, 5).bytes.push(...b);
    return this;
  }
  int64(field: number, v: number): this {
    return this.tag(field, 0).varint(v);
  }
  lengthDelimited(field: number, payload: Uint8Array): this {
    this.tag(field, 2)
      .varint(payload.length)
      .bytes.push(...payload);
    return this;
  }
  string(field: number, s: string): this {
    return this.lengthDelimited(field, new TextEncoder().encode(s));
  }
  finish(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/** `Event { wall_time = 1; step = 2; file_version = 3 | summary = 5 }`, `Summary.Value { tag = 1; simple_value = 2 }`. */
export function scalarEvent(wallTime: number, step: number, values: Record<string, number>): Uint8Array {
  const summary = new ProtoWriter();
  for (const [tag, v] of Object.entries(values))
    summary.lengthDelimited(1, new ProtoWriter().string(1, tag).float(2, v).finish());
  return new ProtoWriter().double(1, wallTime).int64(2, step).lengthDelimited(5, summary.finish()).finish();
}

export function fileVersionEvent(wallTime: number): Uint8Array {
  return new ProtoWriter().double(1, wallTime).string(3, 'brain.Event:2').finish();
}

/** `Event { wall_time = 1; step = 2; session_log = 7 }`, `SessionLog { status = 1 }` with START = 1 (event.proto). */
export function sessionStartEvent(wallTime: number, step: number): Uint8Array {
  const sessionLog = new ProtoWriter().int64(1, 1).finish();
  return new ProtoWriter().double(1, wallTime).int64(2, step).lengthDelimited(7, sessionLog).finish();
}

let writers = 0;

/** Appends scalar summaries to a file of its own in `dir`, opened with the file version and a START at `startStep`. */
export class TensorBoardWriter {
  readonly path: string;

  constructor(dir: string, startStep: number) {
    const now = Date.now() / 1000;
    this.path = join(dir, `events.out.tfevents.${Math.floor(now)}.${hostname()}.${process.pid}.${++writers}`);
    this.append(() => {
      mkdirSync(dir, { recursive: true });
      return new Uint8Array([...tfRecord(fileVersionEvent(now)), ...tfRecord(sessionStartEvent(now, startStep))]);
    });
  }

  scalars(step: number, values: Record<string, number>): void {
    const finite = Object.fromEntries(Object.entries(values).filter(([, v]) => Number.isFinite(v)));
    if (Object.keys(finite).length) this.append(() => tfRecord(scalarEvent(Date.now() / 1000, step, finite)));
  }

  private append(records: () => Uint8Array): void {
    withIo('TensorBoard append', this.path, () => appendFileSync(this.path, records()));
  }
}
