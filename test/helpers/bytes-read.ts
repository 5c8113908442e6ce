/**
 * Bytes this process read through read(2) and friends while a call ran: Linux's `rchar` (/proc/self/io), which
 * counts every thread, libuv's file-system pool included. A count of the work a reader did, where a stopwatch
 * would measure the machine; the probe's own read of /proc/self/io adds well under 1 KiB.
 */
import { readFileSync } from 'node:fs';

function rchar(): number {
  const m = /^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  if (!m) throw new Error('/proc/self/io has no rchar line');
  return Number(m[1]);
}

export async function bytesReadDuring<T>(call: () => Promise<T>): Promise<{ result: T; bytes: number }> {
  const before = rchar();
  const result = await call();
  return { result, bytes: rchar() - before };
}
