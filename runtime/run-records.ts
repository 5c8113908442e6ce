/**
 * Reading the run records the runtime writes (`state/run*.json`, see `RunRecord` in protocol.ts), for every process
 * that follows a job it did not start: the extension's Runs view and dashboards, the language server's run health.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processStartMs } from './process-start';
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

/**
 * Whether the process `pid` of this machine is the one that wrote `since` (epoch ms: a run record's or a job lock's
 * start) as its start: alive, and not started after that. A run that died leaves its pid in its files, and the
 * kernel gives that pid to a later process; its start time tells them apart (where the system says it, see
 * process-start.ts; elsewhere a live pid is trusted).
 */
export function processRuns(pid: number, since?: number): boolean {
  if (!pidAlive(pid)) return false;
  const started = since !== undefined && Number.isFinite(since) ? processStartMs(pid) : undefined;
  return started === undefined || started <= since! + START_SLACK_MS;
}

/**
 * How much later than the start it wrote a process's start may read and still be that process. The start read from
 * /proc or ps is up to 1 s early, never late, unless the wall clock was stepped since it started; this covers a small
 * step.
 */
const START_SLACK_MS = 1000;

/** Whether a process runs: `pid`, and the start it wrote (epoch ms) when known (see {@link processRuns}). */
export type ProcessProbe = (pid: number, since?: number) => boolean;

/**
 * Whether a record says running and the process that wrote it is still there: a `running` record with no process
 * was killed, and one whose pid now names a later process too.
 */
export function isLive(record: RunRecord, alive: ProcessProbe = processRuns): boolean {
  return (
    record.status === 'running' && typeof record.pid === 'number' && alive(record.pid, Date.parse(record.startedAt))
  );
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
 * Whether a lock's holder runs: on this machine, its process is alive and started before it took the lock (not a
 * later process given the same pid); on another host this machine cannot tell, and says yes (as the runtime refuses
 * a second run then), without looking at this machine's pids.
 */
export function lockHolderLive(holder: JobLockHolder, alive: ProcessProbe = processRuns): boolean {
  return holder.host !== hostname() || alive(holder.pid, Date.parse(holder.startedAt));
}

/** One run of a job folder as its files say now: its record, and whether it runs (see {@link readJobRunsNow}). */
export interface JobRunNow {
  record: RunRecord;
  /** `explore` or `train` for the halves of an asynchronous job, as the record's file name carries it. */
  mode?: string;
  live: boolean;
  /** The run holding the job's lock, when it runs: the one writing the folder now, whatever the record says. */
  holder?: JobLockHolder;
  /** The run writing the folder, or that wrote it last: the holder's, else the record's. */
  runId: string;
}

/**
 * Every run of a job folder (one per run record) and whether it runs: a live lock holder (a terminal's, another
 * window's, another host's run) is the run, also while `run.json` is still an earlier run's, as the runtime writes
 * its lock before its record; else the record, when it says running and its process is alive. The one reading of a
 * job folder's liveness, shared by the editor's run board and the language server's run watcher.
 */
export function readJobRunsNow(jobDir: string, alive: ProcessProbe = processRuns): JobRunNow[] {
  return readRunRecords(jobDir).map(({ record, mode }) => {
    const holder = readJobLock(jobDir, mode);
    if (holder && lockHolderLive(holder, alive))
      return { record, ...(mode ? { mode } : {}), live: true, holder, runId: String(holder.runId) };
    return { record, ...(mode ? { mode } : {}), live: isLive(record, alive), runId: String(record.runId) };
  });
}
