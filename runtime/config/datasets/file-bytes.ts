/**
 * The bytes of a data file, decompressed when it is `.gz`: read in chunks (the peek stops early), whole up to a
 * limit, or whole as text (the runtime's loading).
 */
import { promises as fsp, createReadStream } from 'node:fs';
import * as zlib from 'node:zlib';
import { compressionOf } from './data-file-formats';
import { DataError } from './data-error';

const CHUNK_SIZE = 64 * 1024;

export interface ChunkSource {
  next(): Promise<Uint8Array | null>;
  close(): Promise<void>;
}

export async function openSource(file: string): Promise<ChunkSource> {
  if (compressionOf(file) === '.gz') {
    const stream = createReadStream(file).pipe(zlib.createGunzip());
    const it = stream[Symbol.asyncIterator]();
    return {
      async next() {
        const r = await it.next();
        return r.done ? null : asBytes(r.value as Buffer);
      },
      async close() {
        stream.destroy();
      },
    };
  }
  const fh = await fsp.open(file, 'r');
  let pos = 0;
  return {
    async next() {
      const buf = new Uint8Array(CHUNK_SIZE);
      const { bytesRead } = await fh.read(buf, 0, CHUNK_SIZE, pos);
      if (bytesRead === 0) return null;
      pos += bytesRead;
      return buf.subarray(0, bytesRead);
    },
    async close() {
      await fh.close();
    },
  };
}

/** Reads whole (decompressed) content if it is at most `limit` bytes; otherwise null. */
export async function readWhole(file: string, limit: number): Promise<Uint8Array | null> {
  const src = await openSource(file);
  try {
    const parts: Uint8Array[] = [];
    let n = 0;
    for (let c = await src.next(); c; c = await src.next()) {
      n += c.length;
      if (n > limit) return null;
      parts.push(c);
    }
    return concatBytes(parts);
  } finally {
    await src.close();
  }
}

/** A Buffer seen as a plain Uint8Array (same memory). */
export function asBytes(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

const utf8Decoder = new TextDecoder('utf-8');
export function decodeUtf8(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return utf8Decoder.decode(bytes.subarray(start, end));
}

export function stripBom(s: string): string {
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

/** A whole data file as text (BOM dropped); `.gz` decompressed, other compressions refused. */
export async function readDataText(file: string): Promise<string> {
  let buf: Buffer;
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    throw new DataError(`${file}: ${(e as Error).message}`, file);
  }
  const compression = compressionOf(file);
  if (compression === '.gz') buf = zlib.gunzipSync(asBytes(buf));
  else if (compression !== null) throw new DataError(`${file}: only .gz compression is read here`, file);
  return stripBom(buf.toString('utf8'));
}
