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
