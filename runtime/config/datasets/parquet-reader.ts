/**
 * Parquet files through hyparquet. The peek reads the footer and the first rows of the first row group(s), leaving
 * out columns it cannot or should not read, and never throws; the runtime reads every row (int64 → number where
 * exact) and throws DataError.
 */
import { promises as fsp } from 'node:fs';
import * as zlib from 'node:zlib';
import type { AsyncBuffer, Compressors, FileMetaData } from 'hyparquet' with { 'resolution-mode': 'import' };
import { DataError } from './data-error';
import { asBytes } from './file-bytes';
import { isPlainObject } from './json-records';
import { errorText, formatBytes } from './message-text';
import { peekFailure, type FilePeek, type PeekFailure, type PeekWarning } from './peek-result';

const MiB = 1024 * 1024;
/** A parquet column whose chunks for the first rows are bigger than this is listed but not read. */
const PARQUET_COLUMN_MAX_BYTES = 32 * MiB;

type Hyparquet = typeof import('hyparquet', { with: { 'resolution-mode': 'import' } });
let hyparquetModule: Promise<Hyparquet> | null = null;
function loadHyparquet(): Promise<Hyparquet> {
  hyparquetModule ??= import('hyparquet');
  return hyparquetModule;
}

/** Decompressors for hyparquet beyond its built-in snappy: gzip, brotli and (where Node has it) zstd. */
function compressors(): Compressors {
  const c: Compressors = {
    GZIP: (input) => asBytes(zlib.gunzipSync(input)),
    BROTLI: (input) => asBytes(zlib.brotliDecompressSync(input)),
  };
  const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Uint8Array) => Buffer }).zstdDecompressSync;
  if (typeof zstd === 'function') c.ZSTD = (input) => asBytes(zstd(input));
  return c;
}

/** The first `want` rows; values as hyparquet gives them (int64 `bigint`, binary `Uint8Array`). */
export async function peekParquetFile(file: string, want: number): Promise<FilePeek | PeekFailure> {
  let fh: Awaited<ReturnType<typeof fsp.open>> | null = null;
  try {
    const hp = await loadHyparquet();
    fh = await fsp.open(file, 'r');
    const handle = fh;
    const size = (await handle.stat()).size;
    if (size < 12) return peekFailure('unreadable', `${file} is not a parquet file (${size} bytes)`);
    const asyncBuffer: AsyncBuffer = {
      byteLength: size,
      async slice(start: number, end?: number): Promise<ArrayBuffer> {
        const stop = Math.min(end ?? size, size);
        const len = Math.max(0, stop - start);
        const ab = new ArrayBuffer(len);
        let off = 0;
        while (off < len) {
          const { bytesRead } = await handle.read(new Uint8Array(ab, off, len - off), 0, len - off, start + off);
          if (bytesRead === 0) break;
          off += bytesRead;
        }
        return ab;
      },
    };
    let metadata: FileMetaData;
    try {
      metadata = await hp.parquetMetadataAsync(asyncBuffer, { initialFetchSize: Math.min(size, 64 * 1024) });
    } catch (e) {
      return peekFailure('unreadable', `${file} is not a readable parquet file: ${errorText(e)}`);
    }
    const columns = hp.parquetSchema(metadata).children.map((c) => c.element.name);
    const warnings: PeekWarning[] = [];
    const rowEnd = Math.min(want, Number(metadata.num_rows));
    if (rowEnd <= 0) return { format: 'parquet', rows: [], columns, warnings };

    // Size and codec of each top-level column over the row groups holding the first rows.
    const supported = new Set(['UNCOMPRESSED', 'SNAPPY', ...Object.keys(compressors())]);
    const bytes = new Map<string, number>();
    const badCodec = new Map<string, string>();
    let start = 0;
    for (const rg of metadata.row_groups) {
      if (start >= rowEnd) break;
      start += Number(rg.num_rows);
      for (const chunk of rg.columns) {
        const md = chunk.meta_data;
        if (!md) continue;
        const top = md.path_in_schema[0];
        bytes.set(top, (bytes.get(top) ?? 0) + Number(md.total_compressed_size));
        if (!supported.has(md.codec)) badCodec.set(top, md.codec);
      }
    }
    const tooBig = columns.filter((c) => (bytes.get(c) ?? 0) > PARQUET_COLUMN_MAX_BYTES);
    const readable = columns.filter((c) => !tooBig.includes(c) && !badCodec.has(c));
    if (badCodec.size > 0) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: values of ${[...badCodec].map(([c, k]) => `'${c}' (${k})`).join(', ')} not read: compression codec not supported here`,
      });
    }
    if (tooBig.length > 0) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: values of ${tooBig.map((c) => `'${c}'`).join(', ')} not read: column chunks over ${formatBytes(PARQUET_COLUMN_MAX_BYTES)}`,
      });
    }
    if (readable.length === 0) return { format: 'parquet', rows: [], columns, warnings };
    let rows: Record<string, unknown>[];
    try {
      rows = await hp.parquetReadObjects({
        file: asyncBuffer,
        metadata,
        columns: readable.length === columns.length ? undefined : readable,
        rowStart: 0,
        rowEnd,
        utf8: false,
        compressors: compressors(),
        useOffsetIndex: true,
      });
    } catch (e) {
      warnings.push({
        code: 'rows-not-read',
        message: `${file}: rows not read (${errorText(e)}); columns come from the schema`,
      });
      rows = [];
    }
    return { format: 'parquet', rows: rows.map((r) => ({ ...r })), columns, warnings };
  } catch (e) {
    return peekFailure('unreadable', `${file}: ${errorText(e)}`);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** Every row of the file, read into memory whole. */
export async function readParquetRows(file: string): Promise<Record<string, unknown>[]> {
  const hp = await loadHyparquet();
  let buf: Buffer;
  try {
    buf = await fsp.readFile(file);
  } catch (e) {
    throw new DataError(`${file}: ${(e as Error).message}`, file);
  }
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  const asyncBuffer: AsyncBuffer = { byteLength: ab.byteLength, slice: (s: number, e?: number) => ab.slice(s, e) };
  try {
    const rows = await hp.parquetReadObjects({ file: asyncBuffer, compressors: compressors(), utf8: false });
    return rows.map((r) => normalizeParquetValue({ ...r }) as Record<string, unknown>);
  } catch (e) {
    throw new DataError(`${file}: not a readable parquet file: ${(e as Error).message}`, file);
  }
}

/** int64 (bigint) → number where exact, recursively; bytes, dates and other values unchanged. */
function normalizeParquetValue(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(normalizeParquetValue);
  if (isPlainObject(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = normalizeParquetValue(x);
    return o;
  }
  return v;
}
