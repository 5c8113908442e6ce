/**
 * safetensors: the byte layout of the format, round trips, sharded checkpoints, and the float16/bfloat16
 * conversions checked exactly against float64 references (IEEE 754 round-to-nearest-even).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  bfloat16ToFloat,
  floatToBfloat16,
  floatToHalf,
  halfToFloat,
  readCheckpointDir,
  readSafetensors,
  SafetensorsError,
  toFloat32,
  writeSafetensors,
} from '../../../runtime/engine/weights/safetensors';

describe('float16', () => {
  test('known bit patterns decode exactly', () => {
    const cases: [number, number][] = [
      [0x3c00, 1],
      [0xc000, -2],
      [0x7bff, 65504],
      [0x0001, 2 ** -24],
      [0x0400, 2 ** -14],
      [0x3555, 0.333251953125],
      [0x8000, -0],
    ];
    for (const [bits, v] of cases) assert.ok(Object.is(halfToFloat(bits), v), `0x${bits.toString(16)}`);
    assert.equal(halfToFloat(0x7c00), Infinity);
    assert.ok(Number.isNaN(halfToFloat(0x7e00)));
  });

  test('encoding rounds to nearest, ties to even, like the reference', () => {
    assert.equal(floatToHalf(1), 0x3c00);
    assert.equal(floatToHalf(65504), 0x7bff);
    assert.equal(floatToHalf(65520), 0x7c00, 'halfway to the next power rounds up to infinity');
    assert.equal(floatToHalf(1 + 2 ** -11), 0x3c00, 'tie between 1 and its successor goes to the even one');
    assert.equal(floatToHalf(1 + 3 * 2 ** -11), 0x3c02, 'tie goes up to the even one');
    assert.equal(floatToHalf(2 ** -25), 0x0000, 'half of the smallest subnormal is a tie to even (zero)');
    assert.equal(floatToHalf(3 * 2 ** -25), 0x0002);
    assert.equal(floatToHalf(-0), 0x8000);
    assert.equal(floatToHalf(NaN) & 0x7e00, 0x7e00);
  });

  test('every float16 survives decode -> encode, and encode picks the nearest value (float64 reference)', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const v = halfToFloat(bits);
      if (Number.isNaN(v)) continue;
      assert.equal(floatToHalf(v), bits);
    }
    let seed = 7;
    for (let i = 0; i < 20000; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const x = ((seed / 0x7fffffff) * 2 - 1) * 70000;
      const got = halfToFloat(floatToHalf(x));
      const f = Math.fround(x);
      if (Math.abs(f) >= 65520) {
        assert.equal(Math.abs(got), Infinity);
        continue;
      }
      // No float16 is closer to the float32 input than the one chosen.
      const up = halfToFloat(floatToHalf(x) + 1);
      const down = halfToFloat(floatToHalf(x) - 1);
      for (const other of [up, down])
        if (Number.isFinite(other)) assert.ok(Math.abs(got - f) <= Math.abs(other - f), `${x}`);
    }
  });
});

describe('bfloat16', () => {
  test('is the top half of float32, rounded to nearest even', () => {
    assert.equal(floatToBfloat16(1), 0x3f80);
    assert.equal(bfloat16ToFloat(0x3f80), 1);
    assert.equal(floatToBfloat16(1 + 2 ** -8), 0x3f80, 'tie to even (down)');
    assert.equal(floatToBfloat16(1 + 3 * 2 ** -8), 0x3f82, 'tie to even (up)');
    assert.equal(bfloat16ToFloat(floatToBfloat16(3.14159)), 3.140625);
    assert.ok(Number.isNaN(bfloat16ToFloat(floatToBfloat16(NaN))));
  });
});

describe('safetensors files', () => {
  test('layout: u64 header length, 8-byte aligned JSON header, then sorted data', () => {
    const buf = writeSafetensors(
      { b: { dtype: 'F32', shape: [2], values: [1, 2] }, a: { dtype: 'F16', shape: [1], values: [0.5] } },
      { format: 'pt' },
    );
    const n = Number(new DataView(buf.buffer).getBigUint64(0, true));
    assert.equal((8 + n) % 8, 0);
    const header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n)));
    assert.deepEqual(header.__metadata__, { format: 'pt' });
    assert.deepEqual(header.a, { dtype: 'F16', shape: [1], data_offsets: [0, 2] });
    assert.deepEqual(header.b, { dtype: 'F32', shape: [2], data_offsets: [2, 10] });
    assert.equal(buf.byteLength, 8 + n + 10);
  });

  test('round trip of F32, F16 and BF16 tensors', () => {
    const values = Float32Array.from({ length: 24 }, (_, i) => Math.sin(i) * 3);
    const buf = writeSafetensors({
      'model.embed_tokens.weight': { dtype: 'F32', shape: [4, 6], values },
      'lm_head.weight': { dtype: 'BF16', shape: [4, 6], values },
      'norm.weight': { dtype: 'F16', shape: [24], values },
    });
    const f = readSafetensors(buf);
    assert.deepEqual(toFloat32(f.tensors.get('model.embed_tokens.weight')!), values);
    assert.deepEqual(f.tensors.get('lm_head.weight')!.shape, [4, 6]);
    const bf = toFloat32(f.tensors.get('lm_head.weight')!);
    const h = toFloat32(f.tensors.get('norm.weight')!);
    for (let i = 0; i < values.length; i++) {
      assert.ok(Math.abs(bf[i] - values[i]) <= Math.abs(values[i]) * 2 ** -8 + 1e-30, `bf16 ${i}`);
      assert.ok(Math.abs(h[i] - values[i]) <= Math.abs(values[i]) * 2 ** -11 + 2 ** -25, `f16 ${i}`);
    }
  });

  test('sharded checkpoints follow model.safetensors.index.json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-st-'));
    writeFileSync(
      join(dir, 'model-00001-of-00002.safetensors'),
      writeSafetensors({ a: { dtype: 'F32', shape: [1], values: [1] } }),
    );
    writeFileSync(
      join(dir, 'model-00002-of-00002.safetensors'),
      writeSafetensors({ b: { dtype: 'F32', shape: [2], values: [2, 3] } }),
    );
    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({
        metadata: {},
        weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
      }),
    );
    const t = readCheckpointDir(dir);
    assert.deepEqual([...t.keys()].sort(), ['a', 'b']);
    assert.deepEqual([...toFloat32(t.get('b')!)], [2, 3]);
  });

  test('integer and F64 tensors written by other tools read back as their values', () => {
    // Hand-built: header {x: I32[3] @0..12, y: I8[2] @12..14, z: F64[1] @14..22, w: I64[1] @22..30, v: BOOL[1] @30..31}.
    const header = JSON.stringify({
      x: { dtype: 'I32', shape: [3], data_offsets: [0, 12] },
      y: { dtype: 'I8', shape: [2], data_offsets: [12, 14] },
      z: { dtype: 'F64', shape: [1], data_offsets: [14, 22] },
      w: { dtype: 'I64', shape: [1], data_offsets: [22, 30] },
      v: { dtype: 'BOOL', shape: [1], data_offsets: [30, 31] },
    });
    const buf = new Uint8Array(8 + header.length + 31);
    const view = new DataView(buf.buffer);
    view.setBigUint64(0, BigInt(header.length), true);
    buf.set(new TextEncoder().encode(header), 8);
    const d = 8 + header.length;
    [-7, 0, 2147483647].forEach((v, i) => view.setInt32(d + 4 * i, v, true));
    view.setInt8(d + 12, -128);
    view.setInt8(d + 13, 5);
    view.setFloat64(d + 14, 0.1, true);
    view.setBigInt64(d + 22, -(2n ** 40n), true);
    view.setUint8(d + 30, 1);
    const t = readSafetensors(buf).tensors;
    assert.deepEqual([...toFloat32(t.get('x')!)], [-7, 0, Math.fround(2147483647)]);
    assert.deepEqual([...toFloat32(t.get('y')!)], [-128, 5]);
    assert.deepEqual([...toFloat32(t.get('z')!)], [Math.fround(0.1)]);
    assert.deepEqual([...toFloat32(t.get('w')!)], [-(2 ** 40)]);
    assert.deepEqual([...toFloat32(t.get('v')!)], [1]);
  });

  test('a malformed shard index is reported by its path, not as a missing model.safetensors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-st-'));
    writeFileSync(join(dir, 'model.safetensors.index.json'), '{"weight_map": ');
    assert.throws(
      () => readCheckpointDir(dir),
      (e: Error) =>
        e instanceof SafetensorsError &&
        e.message.includes('model.safetensors.index.json') &&
        /not JSON/.test(e.message),
    );
  });

  test('corrupt files are refused with a message, never read out of bounds', () => {
    const good = writeSafetensors({ a: { dtype: 'F32', shape: [2], values: [1, 2] } });
    assert.throws(() => readSafetensors(good.subarray(0, 4)), SafetensorsError);
    assert.throws(() => readSafetensors(good.subarray(0, good.byteLength - 1)), /byte range/);
    const huge = new Uint8Array(good);
    new DataView(huge.buffer).setBigUint64(0, 1n << 40n, true);
    assert.throws(() => readSafetensors(huge), /does not fit/);
    assert.throws(() => writeSafetensors({ a: { dtype: 'F32', shape: [3], values: [1] } }), /holds 3 values/);
  });
});
