/**
 * TFRecord framing, read side: `u64 length, u32 masked crc32c(length bytes), payload, u32 masked crc32c(payload)`,
 * all little-endian. A record cut off at the end of the bytes is not an error: the writer may still be appending
 * it, so the caller reads it again once the file has grown.
 */
import { maskedCrc32c } from './crc32c';

const HEADER = 12;
const FOOTER = 4;

export interface TfRecord {
  /** Byte offset of the record's length field, relative to the start of the bytes given. */
  offset: number;
  payload: Uint8Array;
}

export type FramingProblem =
  /** The length's CRC does not match: the framing is lost, nothing after this offset can be trusted. */
  | { kind: 'length-crc'; offset: number }
  /** The length is intact but the payload's CRC does not match: this one record is damaged. */
  | { kind: 'payload-crc'; offset: number; length: number };

export interface FramedRecords {
  records: TfRecord[];
  /** Offset just after the last whole record read (where the next read starts). */
  end: number;
  /** Damaged records met on the way (a `length-crc` problem is always the last thing read). */
  problems: FramingProblem[];
  /** Whether the framing was lost (`length-crc`): `end` then points at the damaged record. */
  lost: boolean;
}

/**
 * Reads whole records from `bytes`. A record whose payload CRC fails is reported and stepped over (its length
 * was intact, so the next record's position is known); a length whose CRC fails stops the read there.
 */
export function readTfRecords(bytes: Uint8Array): FramedRecords {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: TfRecord[] = [];
  const problems: FramingProblem[] = [];
  let at = 0;
  while (bytes.length - at >= HEADER) {
    if (view.getUint32(at + 8, true) !== maskedCrc32c(bytes.subarray(at, at + 8))) {
      problems.push({ kind: 'length-crc', offset: at });
      return { records, end: at, problems, lost: true };
    }
    const length = view.getBigUint64(at, true);
    if (length > BigInt(bytes.length - at - HEADER - FOOTER)) break; // not all written yet
    const n = Number(length);
    const payload = bytes.subarray(at + HEADER, at + HEADER + n);
    if (view.getUint32(at + HEADER + n, true) !== maskedCrc32c(payload))
      problems.push({ kind: 'payload-crc', offset: at, length: n });
    else records.push({ offset: at, payload });
    at += HEADER + n + FOOTER;
  }
  return { records, end: at, problems, lost: false };
}
