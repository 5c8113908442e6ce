/** Whether a process is still there (signal 0 probes without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it is there, but not ours to signal.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A /proc stat line (`/proc/<pid>/stat` or a thread's) as its command name and nice value (proc(5): field 19). */
export function parseProcStat(stat: string): { name: string; nice: number } {
  const close = stat.lastIndexOf(')'); // the name may hold spaces and parentheses
  const fields = stat.slice(close + 2).split(' '); // fields[0] is field 3
  return { name: stat.slice(stat.indexOf('(') + 1, close), nice: Number(fields[16]) };
}
