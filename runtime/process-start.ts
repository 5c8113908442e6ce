/**
 * When a process of this machine started (epoch ms), which tells a run's process from a later one the kernel gave
 * the same pid. Linux: /proc. macOS and the BSDs: `ps -o lstart=`. Windows: unknown, so a live pid is trusted there
 * (docs/reliability.md). Every reading is at most 1 s early (whole seconds), never late.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The start of process `pid`, or undefined where this system does not say it or the process is gone. */
export function processStartMs(pid: number): number | undefined {
  if (process.platform === 'linux') return procStartMs(pid);
  if (process.platform === 'win32') return undefined;
  return psStartMs(pid);
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's start time on every architecture Node runs on (proc(5)). */
const CLOCK_TICKS_PER_S = 100;

/**
 * From Linux's /proc: `starttime` (field 22 of /proc/<pid>/stat, clock ticks after boot) plus the boot time (`btime`
 * of /proc/stat, whole seconds, so up to 1 s early).
 */
export function procStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count the fields after its closing one.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && boot > 0 ? boot * 1000 + (ticks * 1000) / CLOCK_TICKS_PER_S : undefined;
  } catch {
    return undefined;
  }
}

/**
 * From `ps -o lstart= -p PID` (BSD ps on macOS, procps on Linux), in the C locale so that the names are English:
 * the start as local time to the second. Undefined when ps is missing, the process is gone or the line is not that.
 */
export function psStartMs(pid: number): number | undefined {
  const r = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
    timeout: 2000,
  });
  return r.status === 0 ? parseLstart(r.stdout) : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * `Sun Dec  6 18:12:00 2026`, ps's lstart (ctime's layout, this process's local time zone) -> epoch ms. An hour the
 * clock repeats (the end of summer time) reads as its earlier instance (ECMAScript's rule for a local date), which
 * keeps a running process trusted rather than taken for a later one.
 */
export function parseLstart(text: string): number | undefined {
  const m = /^\s*[A-Z][a-z]{2}\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/.exec(text);
  const month = m ? MONTHS.indexOf(m[1]) : -1;
  if (!m || month < 0) return undefined;
  return new Date(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])).getTime();
}
