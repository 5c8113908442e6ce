/**
 * One writer per job folder. A run takes its job before any work: an exclusive SQLite lock on `state/lock*.db`, held
 * open until the run ends (the kernel releases it when the process exits, even by SIGKILL, so a dead run never keeps
 * the job), then `state/lock*.json` naming the run (protocol.ts `JobLockHolder`) for the refusal message and for the
 * editor. A second run finds the lock taken and is refused, named by the holder and how to stop it; a holder file
 * whose run is gone (the lock was free) is taken over with a line saying so. A holder on another host is refused
 * too, since this machine cannot tell whether it still runs. The explore and train processes of one asynchronous job
 * share its folder and take one lock each (`mode`), as they keep one run record each.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { jobLockPath, PROTOCOL_VERSION, type JobLockHolder, type JobRefusal } from '../../../protocol';
import { writeFileAtomically } from '../../../engine/named-write';
import { withIo } from '../../io-failure';

export class JobLocked extends Error {
  override name = 'JobLocked';
  constructor(readonly refusal: JobRefusal) {
    super(refusalMessage(refusal));
  }
}

export interface JobLock {
  readonly holder: JobLockHolder;
  /** Removes the holder file and releases the lock (idempotent). */
  release(): void;
}

type Log = (level: 'info' | 'warning', message: string) => void;

/** Takes the job folder for this run, or throws JobLocked naming the run that has it. */
export function takeJobLock(
  jobDir: string,
  mode: string | undefined,
  run: { runId: string; config: string },
  log: Log,
): JobLock {
  const lockFile = join(jobDir, jobLockPath(mode));
  const dbFile = lockFile.replace(/\.json$/, '.db');
  withIo('job lock', dbFile, () => mkdirSync(dirname(lockFile), { recursive: true }));
  const db = withIo('job lock', dbFile, () => new Database(dbFile, { timeout: 0 }));
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    throw new JobLocked({ reason: 'job-locked', lockFile, holder: holderOf(lockFile) ?? unknownHolder() });
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    try {
      if (readHolder(lockFile)?.runId === run.runId) rmSync(lockFile, { force: true });
    } finally {
      db.exec('ROLLBACK');
      db.close();
    }
  };
  try {
    const left = readHolder(lockFile);
    if (left && left.host !== hostname()) throw new JobLocked({ reason: 'job-locked', lockFile, holder: left });
    if (left)
      log(
        'warning',
        `took over the job from run ${left.runId} (pid ${left.pid}, started ${left.startedAt}), which ended without releasing it`,
      );
    const holder: JobLockHolder = {
      protocol: PROTOCOL_VERSION,
      runId: run.runId,
      pid: process.pid,
      host: hostname(),
      startedAt: new Date().toISOString(),
      config: run.config,
    };
    withIo('job lock', lockFile, () => writeFileAtomically(lockFile, `${JSON.stringify(holder, null, 1)}\n`));
    return { holder, release };
  } catch (e) {
    released = true;
    db.exec('ROLLBACK');
    db.close();
    throw e;
  }
}

function readHolder(lockFile: string): JobLockHolder | undefined {
  if (!existsSync(lockFile)) return undefined;
  try {
    const h = JSON.parse(readFileSync(lockFile, 'utf8')) as JobLockHolder;
    return typeof h?.pid === 'number' && typeof h.host === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

/** The holder of a lock just found taken: its file is written right after the lock, so it may take a moment. */
function holderOf(lockFile: string): JobLockHolder | undefined {
  for (let i = 0; i < 20; i++) {
    const h = readHolder(lockFile);
    if (h) return h;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
  }
  return undefined;
}

function unknownHolder(): JobLockHolder {
  return { protocol: PROTOCOL_VERSION, runId: 'unknown', pid: 0, host: 'unknown', startedAt: 'unknown', config: '' };
}

function refusalMessage(r: JobRefusal): string {
  const h = r.holder;
  const here = h.host === hostname();
  const who = `run ${h.runId} (pid ${h.pid}${here ? '' : ` on host ${h.host}`}, started ${h.startedAt}${h.config ? `, config ${h.config}` : ''})`;
  const stop = here
    ? `Stop it first (Stop in the editor, or \`kill ${h.pid}\`: it stops after its current step, and its last checkpoint stays) or wait for it to finish`
    : `Stop it on ${h.host} first; if it no longer runs, delete ${r.lockFile}`;
  return `another run is writing ${dirname(dirname(r.lockFile))}: ${who}. ${stop}, then run this again; to run beside it, give this config another \`name\`.`;
}
