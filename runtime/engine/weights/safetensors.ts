/**
 * The safetensors format (Hugging Face): an 8-byte little-endian header length, a JSON header naming each tensor's
 * dtype, shape and byte range, then the raw little-endian data. Reads F32/F16/BF16 (and integer) tensors, writes
 * F32/F16/BF16, and follows `model.safetensors.index.json` for sharded checkpoints.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type SafeDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

const BYTES: Record<SafeDtype, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<SafeDtype, number>> = BYTES;

export interface SafeTensor {
  dtype: SafeDtype;
  shape: number[];
  /** The tensor's raw bytes (a view into the file's buffer). */
  bytes: Uint8Array<ArrayBufferLike>;
}

export interface SafetensorsFile {
  tensors: Map<string, SafeTensor>;
  metadata: Record<string, string>;
}

export class SafetensorsError extends Error {}

export function readSafetensors(buf: Uint8Array<ArrayBufferLike>): SafetensorsFile {
  if (buf.byteLength < 8) throw new SafetensorsError('file is shorter than the 8-byte header length');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (headerLen > buf.byteLength - 8 || headerLen > 100 * 1024 * 1024)
    throw new SafetensorsError(`header length ${headerLen} does not fit the file (${buf.byteLength} bytes)`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + headerLen)));
  } catch (e) {
    throw new SafetensorsError(`header is not JSON: ${(e as Error).message}`);
  }
  const data = buf.subarray(8 + headerLen);
  const tensors = new Map<string, SafeTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = (v ?? {}) as Record<string, string>;
      continue;
    }
    const t = v as { dtype?: string; shape?: number[]; data_offsets?: [number, number] };
    if (!t.dtype || !(t.dtype in BYTES)) throw new SafetensorsError(`tensor ${name}: unsupported dtype ${t.dtype}`);
    const dtype = t.dtype as SafeDtype;
    const shape = t.shape ?? [];
    const [begin, end] = t.data_offsets ?? [0, -1];
    const count = shape.reduce((a, b) => a * b, 1);
    if (!(begin >= 0 && end <= data.byteLength && end - begin === count * BYTES[dtype])) {
      throw new SafetensorsError(
        `tensor ${name}: byte range [${begin}, ${end}) does not match ${dtype}${JSON.stringify(shape)} in ${data.byteLength} data bytes`,
      );
    }
    tensors.set(name, { dtype, shape, bytes: data.subarray(begin, end) });
  }
  return { tensors, metadata };
}

type ElementReader = (view: DataView, byteOffset: number) => number;

/** How one element of each dtype widens to a number (F16 and BF16 exactly; I64 as the nearest double). */
const READ: Record<SafeDtype, ElementReader> = {
  F64: (v, o) => v.getFloat64(o, true),
  F32: (v, o) => v.getFloat32(o, true),
  F16: (v, o) => halfToFloat(v.getUint16(o, true)),
  BF16: (v, o) => bfloat16ToFloat(v.getUint16(o, true)),
  I64: (v, o) => Number(v.getBigInt64(o, true)),
  I32: (v, o) => v.getInt32(o, true),
  I16: (v, o) => v.getInt16(o, true),
  I8: (v, o) => v.getInt8(o),
  U8: (v, o) => v.getUint8(o),
  BOOL: (v, o) => v.getUint8(o),
};

type WritableDtype = TensorToWrite['dtype'];

const WRITE: Record<WritableDtype, (view: DataView, byteOffset: number, value: number) => void> = {
  F32: (v, o, x) => v.setFloat32(o, x, true),
  F16: (v, o, x) => v.setUint16(o, floatToHalf(x), true),
  BF16: (v, o, x) => v.setUint16(o, floatToBfloat16(x), true),
};

/** A tensor's values as float32. */
export function toFloat32(t: SafeTensor): Float32Array {
  const size = BYTES[t.dtype];
  const read = READ[t.dtype];
  const out = new Float32Array(t.bytes.byteLength / size);
  const view = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = read(view, i * size);
  return out;
}

/** A tensor's values as numbers, exactly (I64 beyond 2^53 as the nearest double). */
export function tensorNumbers(t: SafeTensor): number[] {
  const size = BYTES[t.dtype];
  const read = READ[t.dtype];
  const out = new Array<number>(t.bytes.byteLength / size);
  const view = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = read(view, i * size);
  return out;
}

export interface TensorToWrite {
  dtype: 'F32' | 'F16' | 'BF16';
  shape: number[];
  values: Float32Array | number[];
}

/** Serialises tensors (sorted by name, data 8-byte aligned after a space-padded header, as the reference does). */
export function writeSafetensors(
  tensors: Record<string, TensorToWrite>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const t = tensors[name];
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.values.length)
      throw new SafetensorsError(
        `tensor ${name}: shape ${JSON.stringify(t.shape)} holds ${count} values, got ${t.values.length}`,
      );
    const size = count * BYTES[t.dtype];
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerBytes = new Uint8Array(json.byteLength + ((8 - ((8 + json.byteLength) % 8)) % 8)).fill(0x20);
  headerBytes.set(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const name of names) {
    const { dtype, values } = tensors[name];
    const write = WRITE[dtype];
    for (let i = 0; i < values.length; i++, at += BYTES[dtype]) write(view, at, values[i]);
  }
  return out;
}

/** A safetensors file read from disk (tensors are views into its bytes); a damaged file is named in the error. */
export function readSafetensorsFile(path: string): SafetensorsFile {
  const b = readFileSync(path);
  try {
    return readSafetensors(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
  } catch (e) {
    if (e instanceof SafetensorsError) throw new SafetensorsError(`${path}: ${e.message}`);
    throw e;
  }
}

/** All tensors of a checkpoint directory: `model.safetensors`, or the shards `model.safetensors.index.json` lists. */
export function readCheckpointDir(dir: string): Map<string, SafeTensor> {
  const indexPath = join(dir, 'model.safetensors.index.json');
  if (!existsSync(indexPath)) return readSafetensorsFile(join(dir, 'model.safetensors')).tensors;
  let index: { weight_map?: Record<string, string> };
  try {
    index = JSON.parse(readFileSync(indexPath, 'utf8'));
  } catch (e) {
    throw new SafetensorsError(`${indexPath}: not JSON: ${(e as Error).message}`);
  }
  const out = new Map<string, SafeTensor>();
  const shards = new Map<string, SafetensorsFile>();
  for (const [name, file] of Object.entries(index.weight_map ?? {})) {
    let shard = shards.get(file);
    if (!shard) {
      shard = readSafetensorsFile(join(dir, file));
      shards.set(file, shard);
    }
    const t = shard.tensors.get(name);
    if (!t) throw new SafetensorsError(`index maps ${name} to ${file}, which does not hold it`);
    out.set(name, t);
  }
  return out;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 binary16 -> number, exact. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** number -> IEEE 754 binary16, rounding to nearest even (overflow to infinity, NaN kept quiet). */
export function floatToHalf(v: number): number {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    // Subnormal: shift the implicit-1 mantissa into place, rounding to nearest even.
    const m = mant | 0x800000;
    const shift = 14 - e;
    let r = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && r & 1)) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++;
  return sign | r;
}

/** bfloat16 -> number, exact. */
export function bfloat16ToFloat(b: number): number {
  u32[0] = b << 16;
  return f32[0];
}

/** number -> bfloat16 (the top half of float32), rounding to nearest even. */
export function floatToBfloat16(v: number): number {
  f32[0] = v;
  const x = u32[0];
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}
