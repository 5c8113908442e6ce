/** Reads up to `length` bytes of an open file from `offset` (fewer at the end of the file). */
import { fstatSync, readSync } from 'node:fs';

export function readAt(fd: number, offset: number, length = Infinity): Uint8Array {
  const size = fstatSync(fd).size;
  const buf = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}
