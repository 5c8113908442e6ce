/**
 * What Trinity's fully asynchronous setup needs between two processes of one job (trinity/cli/launcher.py `explore`
 * and `train`, same project/name, so the same job directory and experience buffer): Trinity passes it through Ray
 * actors (the Synchronizer's trainer status, the SQL storage's writer reference count); here the two processes meet
 * in files of the job directory and in the buffer itself.
 *
 * - `state/explorer.json`: the explorer's position (explorer step, taskset rows served), written after every batch
 *   committed to the buffer (Trinity: `<explorer>_meta.json`, written at sync points).
 * - `state/trainer.json`: the trainer's status (`running` / `stopped`, pid, host, step, waiting for data), which the
 *   explorer reads to decide whether to wait for a newer checkpoint (Trinity: `Synchronizer.trainer_status`).
 * - Explorer-driven sync (Trinity: the explorer's REQUIRE_SYNC status, which the trainer polls in `need_sync`): the
 *   explorer sets `requireSync` in `state/explorer.json` at a sync point; the trainer, after a step or while waiting
 *   for data, saves a checkpoint if it trained since its last one; an explorer whose trainer waits for data with
 *   nothing newer goes on with the weights it has.
 * - The buffer: the highest explorer step (`eid.batch`) it already holds closes the explorer's crash window between
 *   the committed write and the state file; the `<table>__writers` rows tell a finished explorer from a killed one.
 *   (These read the SQL layout of buffer/sql.ts and the JSON lines of buffer/file.ts directly.)
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExperienceBufferConfig, StorageConfig } from '../../../config/types.generated';
import { writeFileAtomically } from '../../../engine/named-write';
import { withIo } from '../../io-failure';
import { resolveBufferConfig, sqliteFile } from '../../buffer';
import { HOST, writerMayBeAlive } from '../../buffer/wait';

/**
 * For tests only: `TRINITY_WORKBENCH_TEST_KILL_EXPLORER_AFTER_WRITE=N` makes an explorer kill itself (SIGKILL) right
 * after explorer step N's batch is committed to the buffer and before `state/explorer.json` records it: the crash
 * window the restarted explorer must close by looking at the buffer.
 */
export const TEST_KILL_AFTER_WRITE_ENV = 'TRINITY_WORKBENCH_TEST_KILL_EXPLORER_AFTER_WRITE';

type BufferSection = ExperienceBufferConfig | StorageConfig;

/** How often a process of the asynchronous pair looks again (new checkpoint, restarted explorer). Trinity polls every 1 s. */
export const ASYNC_POLL_MS = 200;

export interface ExplorerState {
  /** The last explorer step whose batch is in the buffer. */
  explorerStep: number;
  /** Taskset rows served up to and including that step. */
  readerOffset: number;
  /** The taskset ran out and the explorer finished. */
  finished?: boolean;
  /** Explorer-driven sync: the explorer waits at a sync point for the trainer's current weights. */
  requireSync?: boolean;
}

function statePath(jobDir: string, name: string): string {
  return join(jobDir, 'state', `${name}.json`);
}

function writeState(jobDir: string, name: string, value: unknown): void {
  withIo('state write', statePath(jobDir, name), () => {
    mkdirSync(join(jobDir, 'state'), { recursive: true });
    writeFileAtomically(statePath(jobDir, name), JSON.stringify(value));
  });
}

function readState<T>(jobDir: string, name: string): T | undefined {
  const p = statePath(jobDir, name);
  if (!existsSync(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readExplorerState(jobDir: string): ExplorerState | undefined {
  return readState<ExplorerState>(jobDir, 'explorer');
}

export function writeExplorerState(jobDir: string, s: ExplorerState): void {
  writeState(jobDir, 'explorer', s);
}

export interface TrainerStatus {
  status: 'running' | 'stopped';
  pid: number;
  host: string;
  step: number;
  /** Blocked until the buffer holds a batch (an explorer-driven explorer then knows no newer weights are coming). */
  waiting?: boolean;
}

export function writeTrainerStatus(
  jobDir: string,
  status: TrainerStatus['status'],
  step: number,
  waiting = false,
): void {
  writeState(jobDir, 'trainer', {
    status,
    pid: process.pid,
    host: HOST,
    step,
    ...(waiting ? { waiting } : {}),
  } satisfies TrainerStatus);
}

export function readTrainerStatus(jobDir: string): TrainerStatus | undefined {
  return readState<TrainerStatus>(jobDir, 'trainer');
}

/** Whether a trainer of this job is running (said so and its process is alive): then an explorer waits for its weights. */
export function trainerRunning(jobDir: string): boolean {
  const s = readTrainerStatus(jobDir);
  return s?.status === 'running' && writerMayBeAlive(s.pid, s.host);
}

/** The SQLite file and table of an `sql` buffer section, else undefined. */
function sqlTable(section: BufferSection): { file: string; table: string } | undefined {
  const r = resolveBufferConfig(section);
  return r.storageType === 'sql' && r.path ? { file: sqliteFile(r.path), table: r.name } : undefined;
}

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

function withDb<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { fileMustExist: true, timeout: 10000 });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function tableExists(db: Database.Database, table: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined;
}

/**
 * The highest explorer step (numeric `eid.batch`) whose experiences are in the buffer (`sql` and `file`), 0 when none
 * or the storage cannot be looked into (`queue`).
 */
export function lastWrittenStep(section: BufferSection): number {
  const r = resolveBufferConfig(section);
  if (!r.path) return 0;
  if (r.storageType === 'sql') {
    const file = sqliteFile(r.path);
    if (!existsSync(file)) return 0;
    return withDb(file, (db) => {
      if (!tableExists(db, r.name)) return 0;
      // CASE, not AND: SQLite does not promise to skip json_type on a record that is not JSON.
      const row = db
        .prepare(
          `SELECT MAX(CASE WHEN json_valid(experience) THEN CASE WHEN json_type(experience, '$.eid.batch') = 'integer'
             THEN json_extract(experience, '$.eid.batch') END END) AS b FROM ${q(r.name)}`,
        )
        .get() as { b: number | null };
      return row.b ?? 0;
    });
  }
  if (r.storageType === 'file' && existsSync(r.path)) {
    let max = 0;
    for (const line of readFileSync(r.path, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const b = (JSON.parse(line) as { eid?: { batch?: unknown } }).eid?.batch;
        if (typeof b === 'number' && b > max) max = b;
      } catch {
        // a torn last line of a killed writer: not a written batch
      }
    }
    return max;
  }
  return 0;
}

/**
 * Whether the newest writer of an `sql` buffer died without finishing (an explorer killed or crashed): its readers
 * then wait for a restarted explorer instead of ending the stream (Trinity: a killed explorer never releases the SQL
 * storage, so the trainer waits up to `max_read_timeout`).
 */
export function lastWriterCrashed(section: BufferSection): boolean {
  const t = sqlTable(section);
  if (!t || !existsSync(t.file)) return false;
  return withDb(t.file, (db) => {
    const writers = `${t.table}__writers`;
    if (!tableExists(db, writers)) return false;
    const w = db.prepare(`SELECT pid, host, finished_at FROM ${q(writers)} ORDER BY id DESC LIMIT 1`).get() as
      | { pid: number; host: string; finished_at: string | null }
      | undefined;
    return w !== undefined && w.finished_at === null && !writerMayBeAlive(w.pid, w.host);
  });
}

/** For tests: SIGKILLs this process when `TEST_KILL_AFTER_WRITE_ENV` names this explorer step. */
export function testKillAfterWrite(explorerStep: number): void {
  const at = process.env[TEST_KILL_AFTER_WRITE_ENV];
  if (at === undefined || Number(at) !== explorerStep) return;
  process.kill(process.pid, 'SIGKILL');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000); // never returns: the signal lands first
}
