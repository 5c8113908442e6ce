/**
 * TensorBoard event files: CRC-32C against the published check value, TFRecord framing, and scalar events decoded
 * back by an independent protobuf reader.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { crc32c } from '../../../../runtime/metrics/crc32c';
import { TensorBoardWriter } from '../../../../runtime/rft/monitor/tensorboard';

/** Minimal protobuf decoding: field number -> list of raw values (varint as bigint, fixed as bytes, bytes). */
function decode(buf: Uint8Array): Map<number, (bigint | Uint8Array)[]> {
  const out = new Map<number, (bigint | Uint8Array)[]>();
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    let value: bigint | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 1) value = buf.slice(i, (i += 8));
    else if (wire === 5) value = buf.slice(i, (i += 4));
    else if (wire === 2) {
      const n = Number(varint());
      value = buf.slice(i, (i += n));
    } else throw new Error(`wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

function records(file: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let at = 0;
  while (at < file.length) {
    const len = Number(view.getBigUint64(at, true));
    const masked = (c: number) => ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
    assert.equal(view.getUint32(at + 8, true), masked(crc32c(file.subarray(at, at + 8))), 'length crc');
    const data = file.subarray(at + 12, at + 12 + len);
    assert.equal(view.getUint32(at + 12 + len, true), masked(crc32c(data)), 'data crc');
    out.push(data);
    at += 12 + len + 4;
  }
  return out;
}

describe('TensorBoard event files', () => {
  test('CRC-32C matches the standard check value', () => {
    assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
    assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  });

  test('scalars round-trip through TFRecord framing and the Event/Summary protobufs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-tb-'));
    const w = new TensorBoardWriter(dir, 3);
    w.scalars(3, { 'actor/pg_loss': 0.25, 'rollout/accuracy/mean': 0.5, skipped: NaN });
    const [name] = readdirSync(dir);
    assert.match(name, new RegExp(`^events\\.out\\.tfevents\\.\\d+\\..+\\.${process.pid}\\.\\d+$`));
    const recs = records(new Uint8Array(readFileSync(join(dir, name))));
    assert.equal(recs.length, 3);
    assert.equal(new TextDecoder().decode(decode(recs[0]).get(3)![0] as Uint8Array), 'brain.Event:2');
    // SessionLog.START (status 1) at the writer's first step: where TensorBoard purges a restarted run's orphans.
    const start = decode(recs[1]);
    assert.equal(start.get(2)![0], 3n);
    assert.equal(decode(start.get(7)![0] as Uint8Array).get(1)![0], 1n);
    const event = decode(recs[2]);
    assert.equal(event.get(2)![0], 3n);
    const values = decode(event.get(5)![0] as Uint8Array)
      .get(1)!
      .map((v) => decode(v as Uint8Array));
    const scalars = Object.fromEntries(
      values.map((v) => [
        new TextDecoder().decode(v.get(1)![0] as Uint8Array),
        new DataView((v.get(2)![0] as Uint8Array).buffer).getFloat32(0, true),
      ]),
    );
    assert.deepEqual(scalars, { 'actor/pg_loss': 0.25, 'rollout/accuracy/mean': 0.5 });
  });
});
