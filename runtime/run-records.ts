/**
 * Reading the run records the runtime writes (`state/run*.json`, see `RunRecord` in protocol.ts), for every process
 * that follows a job it did not start: the extension's Runs view and dashboards, the language server's run health.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { jobLockPath, RUN_RECORD_FILE, type JobLockHolder, type RunRecord } from './protocol';

/** Every run record of a job directory, oldest name first, with the mode its file name carries (`explore`, `train`). */
export function readRunRecords(jobDir: string): { record: RunRecord; mode?: string }[] {
  let names: string[];
  try {
    names = readdirSync(join(jobDir, 'state'))
      .filter((n) => RUN_RECORD_FILE.test(n))
      .sort();
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      const record = JSON.parse(readFileSync(join(jobDir, 'state', n), 'utf8')) as RunRecord;
      if (!record || typeof record !== 'object' || typeof record.status !== 'string') return [];
      const mode = RUN_RECORD_FILE.exec(n)?.[1]?.slice(1);
      return [{ record, ...(mode ? { mode } : {}) }];
    } catch {
      // Being replaced right now (records are written atomically), or not ours.
      return [];
    }
  });
}

/** Whether a process of this machine is alive (EPERM: alive, another user's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a record says running and its process is still there (a `running` record with no process was killed). */
export function isLive(record: RunRecord, alive: (pid: number) => boolean = pidAlive): boolean {
  return record.status === 'running' && typeof record.pid === 'number' && alive(record.pid);
}

/** The run holding a job folder's lock (`mode` as for jobLockPath), as its lock file names it; undefined when none. */
export function readJobLock(jobDir: string, mode?: string): JobLockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(join(jobDir, jobLockPath(mode)), 'utf8')) as JobLockHolder;
    return holder && typeof holder.pid === 'number' && typeof holder.host === 'string' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a lock's holder runs: on this machine, its pid is alive; on another host this machine cannot tell, and
 * says yes (a run from a terminal or another window shows as live).
 */
export function lockHolderLive(holder: JobLockHolder, alive: (pid: number) => boolean = pidAlive): boolean {
  return holder.host !== hostname() || alive(holder.pid);
}
