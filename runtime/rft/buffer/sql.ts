/**
 * `storage_type: sql` on a real SQLite file (better-sqlite3), mirroring trinity/buffer/storage/sql.py
 * (`SQLExperienceStorage`) and buffer/schema/sql_schema.py:
 *
 * - `path` is Trinity's database URL: `sqlite:///relative.db`, `sqlite:////absolute.db` (a plain file path is accepted
 *   too). Other databases (`postgresql://`, `mysql://`) are not available here. The table is the buffer's `name`.
 * - Table: `id INTEGER PRIMARY KEY AUTOINCREMENT` (ids never reused, so a position is stable), Trinity's
 *   `ExperienceModel` columns `timestamp`, `task_id`, `run_id`, `msg_id`, `model_version`, `reward`, `consumed`; the
 *   experience itself as the JSON record of codec.ts in `experience` and its float arrays as little-endian Float64
 *   BLOBs in `logprobs`, `advantages`, `returns`, `teacher_logprobs` (bit-exact doubles; Trinity pickles the whole
 *   experience into `experience_bytes`, which cannot be read here). One table layout serves every schema (experience,
 *   sft, dpo). A table written before `teacher_logprobs` existed gets the column on open; its rows read as before.
 * - The database is in WAL mode (`PRAGMA journal_mode = WAL`, `synchronous = NORMAL`: a committed batch survives the
 *   writer being killed), readers and writers in other processes work concurrently; `busy_timeout` waits for locks,
 *   and failed transactions are retried `max_retry_times` times `max_retry_interval` s apart (Trinity's
 *   `retry_session`).
 * - A write is one transaction: the batch is all there or not at all.
 * - Read policies (`SQLExperienceStorage.__init__`): schema `experience` reads by "priority" (`_read_priority`):
 *   waits until `n` candidate rows exist, takes `ORDER BY consumed ASC, id DESC LIMIT n` (newest of the least used)
 *   and adds 1 to their `consumed`, all in one transaction; candidates are unconsumed rows, or every row when
 *   `replay_buffer.enable` (experience replay), and rows of model versions below `minModelVersion` are skipped.
 *   Schemas `sft`/`dpo` read FIFO (`_read_fifo`): rows with `id > offset` in id order, `offset` starting at the
 *   config's `index`; FIFO reads change nothing in the table.
 * - Both wait at most `max_read_timeout` seconds without progress (the clock restarts whenever more rows become
 *   available), then stop (Trinity raises StopIteration). The stream also stops when every writer that registered
 *   in `<table>__writers` has finished (Trinity: the storage actor's reference count reaching 0); when the last live
 *   writer died without finishing, after `deadWriterGraceMs` with no live writer, so that a restarted explorer
 *   continues the stream its trainer is reading.
 * - Resuming: a FIFO position is the last id read. A priority reader logs every batch it takes in `<table>__reads`
 *   (reader name, sequence number, row-id ranges) in the same transaction that marks the rows consumed; resuming from a
 *   persisted position gives back (`consumed - 1`) the batches taken after it, which the caller never recorded as
 *   done, so nothing is lost or read twice. Resume from the latest persisted position only.
 * - A row whose record cannot be decoded is reported as CorruptRecordError (file, table, row id). With `onCorrupt`
 *   the reader reports and skips it (priority: the row is quarantined with `consumed = -1`).
 */
import Database from 'better-sqlite3';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Experience } from '../experience';
import {
  FLOAT_ARRAYS,
  RecordError,
  experienceToRecord,
  floatsFromRow,
  floatsToBlob,
  recordToExperience,
  validateExperience,
} from './codec';
import {
  BufferConfigError,
  BufferStopError,
  CorruptRecordError,
  type BufferPosition,
  type CorruptHandler,
  type ExperienceReader,
  type ExperienceWriter,
  type Logger,
  type ReadOptions,
} from './types';
import {
  HOST,
  WritersGone,
  abortReason,
  countWriters,
  checkBatchSize,
  linkSignals,
  readTimeoutMs,
  sleep,
  writerMayBeAlive,
  type WriterCount,
} from './wait';
import { makeDirs, withIo } from '../io-failure';

export type SqlReadPolicy = 'fifo' | 'priority';

const DB_URL_PREFIXES = ['sqlite:///', 'postgresql://', 'mysql://'];

/** Trinity's `is_database_url`. */
export function isDatabaseUrl(path: string): boolean {
  return DB_URL_PREFIXES.some((p) => path.startsWith(p));
}

/** The SQLite file a `path` names (`sqlite:///a.db` → ./a.db, `sqlite:////tmp/a.db` → /tmp/a.db). */
export function sqliteFile(path: string, key = 'path'): string {
  let file = path;
  if (path.startsWith('sqlite:///')) {
    file = path.slice('sqlite:///'.length).split('?')[0];
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new BufferConfigError(
      key,
      `\`${key}\` ${path}: only SQLite databases (\`sqlite:///<file>\`) can be opened here`,
    );
  }
  if (file === '' || file === ':memory:') {
    throw new BufferConfigError(
      key,
      `\`${key}\` ${path}: the sql storage needs a database file (readers and writers open it separately)`,
    );
  }
  return isAbsolute(file) ? file : resolve(file);
}

function checkTableName(table: string, key = 'name'): void {
  if (!table || /[\u0000]/.test(table))
    throw new BufferConfigError(key, `\`${key}\` must be a non-empty table name, got ${JSON.stringify(table)}`);
}

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

export interface SqlOptions {
  /** Milliseconds SQLite waits for another connection's lock (default 10000). */
  busyTimeoutMs?: number;
  /** Trinity's `max_retry_times` (attempts in all) and `max_retry_interval` (seconds). */
  maxRetryTimes?: number;
  maxRetryIntervalS?: number;
}

const REQUIRED_COLUMNS = ['id', 'consumed', 'model_version', 'experience', 'logprobs', 'advantages', 'returns'];
/** Float-array columns added after the first layout: added to an older table when it is opened. */
const ADDED_COLUMNS = ['teacher_logprobs'];
const FLOAT_COLUMNS = FLOAT_ARRAYS.map((a) => a.key);
const SELECT_COLUMNS = ['id', 'experience', ...FLOAT_COLUMNS].join(', ');

/** One connection to the buffer's database, with its tables ensured. */
class SqlConnection {
  readonly db: Database.Database;
  readonly t: string;
  readonly writers: string;
  readonly reads: string;

  constructor(
    readonly file: string,
    readonly table: string,
    readonly opts: SqlOptions,
  ) {
    checkTableName(table);
    this.t = q(table);
    this.writers = q(`${table}__writers`);
    this.reads = q(`${table}__reads`);
    this.db = withIo('buffer open', file, () => {
      makeDirs(dirname(file));
      return new Database(file, { timeout: opts.busyTimeoutMs ?? 10000 });
    });
    try {
      withIo('buffer open', file, () => {
        const mode = this.db.pragma('journal_mode = WAL', { simple: true });
        if (String(mode).toLowerCase() !== 'wal')
          throw new Error(`${file}: SQLite refused WAL mode (journal_mode = ${mode})`);
        this.db.pragma('synchronous = NORMAL');
        this.ensureSchema();
      });
    } catch (e) {
      this.db.close();
      throw e;
    }
  }

  private ensureSchema(): void {
    const idx = (col: string): string =>
      `CREATE INDEX IF NOT EXISTS ${q(`ix_${this.table}_${col}`)} ON ${this.t} (${col});`;
    this.retry(() =>
      this.db
        .transaction(() => {
          this.db.exec(`
          CREATE TABLE IF NOT EXISTS ${this.t} (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            timestamp TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
            task_id TEXT,
            run_id INTEGER,
            msg_id TEXT,
            model_version INTEGER,
            reward REAL,
            consumed INTEGER NOT NULL DEFAULT 0,
            experience TEXT NOT NULL,
            logprobs BLOB,
            advantages BLOB,
            returns BLOB,
            teacher_logprobs BLOB
          );`);
          const cols = (this.db.prepare(`PRAGMA table_info(${this.t})`).all() as { name: string }[]).map((c) => c.name);
          const missing = REQUIRED_COLUMNS.filter((c) => !cols.includes(c));
          if (missing.length) {
            throw new Error(
              `${this.file}: table "${this.table}" exists with columns (${cols.join(', ')}) and lacks ${missing.join(', ')}; ` +
                "it was not written by this storage (a table of Trinity's SQLAlchemy schema holds pickled `experience_bytes`, which cannot be read here)",
            );
          }
          for (const c of ADDED_COLUMNS)
            if (!cols.includes(c)) this.db.exec(`ALTER TABLE ${this.t} ADD COLUMN ${c} BLOB`);
          this.db.exec(`
          ${idx('consumed')} ${idx('model_version')} ${idx('task_id')}
          CREATE TABLE IF NOT EXISTS ${this.writers} (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            opened_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
            finished_at TEXT
          );
          CREATE TABLE IF NOT EXISTS ${this.reads} (
            reader TEXT NOT NULL,
            seq INTEGER NOT NULL,
            ids TEXT NOT NULL,
            PRIMARY KEY (reader, seq)
          );`);
        })
        .immediate(),
    );
  }

  /** Trinity's retry_session: `maxRetryTimes` attempts, `maxRetryIntervalS` apart, for lock/busy errors. */
  retry<T>(fn: () => T): T {
    const attempts = Math.max(1, this.opts.maxRetryTimes ?? 3);
    for (let i = 1; ; i++) {
      try {
        return fn();
      } catch (e) {
        const code = (e as { code?: string }).code ?? '';
        if (i >= attempts || !/^SQLITE_(BUSY|LOCKED)/.test(code)) throw e;
        const until = Date.now() + (this.opts.maxRetryIntervalS ?? 1) * 1000;
        while (Date.now() < until)
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(1, until - Date.now()));
      }
    }
  }

  private stmts = new Map<string, Database.Statement>();

  /** A prepared statement, cached per connection. */
  stmt(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.stmts.set(sql, st);
    }
    return st;
  }

  /** How many writers ever registered, how many may still be writing, how many died (countWriters). */
  writerStatus(): WriterCount {
    const rows = this.stmt(`SELECT pid, host, finished_at FROM ${this.writers} ORDER BY id`).all() as {
      pid: number;
      host: string;
      finished_at: string | null;
    }[];
    return countWriters(
      rows.map((r) => ({ finished: r.finished_at !== null, mayBeAlive: writerMayBeAlive(r.pid, r.host) })),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export class SqlExperienceWriter implements ExperienceWriter {
  readonly file: string;
  private readonly conn: SqlConnection;
  private readonly writerId: number;
  private readonly insert: Database.Statement;
  private finished = false;

  constructor(path: string, table: string, opts: SqlOptions = {}) {
    this.file = sqliteFile(path);
    this.conn = new SqlConnection(this.file, table, opts);
    try {
      const r = withIo('buffer open', this.file, () =>
        this.conn.retry(() =>
          this.conn.db.prepare(`INSERT INTO ${this.conn.writers} (pid, host) VALUES (?, ?)`).run(process.pid, HOST),
        ),
      );
      this.writerId = Number(r.lastInsertRowid);
    } catch (e) {
      this.conn.close();
      throw e;
    }
    this.insert = this.conn.db.prepare(
      `INSERT INTO ${this.conn.t} (task_id, run_id, msg_id, model_version, reward, experience, ${FLOAT_COLUMNS.join(', ')})
       VALUES (?, ?, ?, ?, ?, ?, ${FLOAT_COLUMNS.map(() => '?').join(', ')})`,
    );
  }

  async write(exps: Experience[]): Promise<void> {
    this.writeNow(exps);
  }

  /** `write` done before it returns (better-sqlite3 is synchronous): for callers that cannot wait on a promise. */
  writeNow(exps: Experience[]): void {
    if (this.finished) throw new Error(`${this.file}: write after finish()`);
    if (exps.length === 0) return;
    // Encode everything first: a bad experience fails the batch before the transaction starts.
    const rows = exps.map((e, i) => {
      validateExperience(e, `experience ${i} of the batch`);
      const mv =
        typeof e.modelVersion === 'number'
          ? e.modelVersion
          : typeof e.info?.model_version === 'number'
            ? e.info.model_version
            : null;
      return [
        String(e.eid.task),
        e.eid.run,
        e.eid.suffix,
        mv,
        typeof e.reward === 'number' && Number.isFinite(e.reward) ? e.reward : null,
        JSON.stringify(experienceToRecord(e, true)),
        ...FLOAT_ARRAYS.map(({ field }) => (e[field] === undefined ? null : floatsToBlob(e[field] as number[]))),
      ];
    });
    const tx = this.conn.db.transaction((all: unknown[][]) => {
      for (const r of all) this.insert.run(...r);
    });
    // A failed transaction (a full disk: SQLITE_FULL) is rolled back: the rows before it stay, none of this batch.
    withIo('buffer append', this.file, () => this.conn.retry(() => tx.immediate(rows)));
  }

  async finish(): Promise<void> {
    this.finishNow();
  }

  /** `finish` done before it returns. */
  finishNow(): void {
    if (this.finished) return;
    this.finished = true;
    try {
      withIo('buffer close', this.file, () =>
        this.conn.retry(() =>
          this.conn.db
            .prepare(`UPDATE ${this.conn.writers} SET finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = ?`)
            .run(this.writerId),
        ),
      );
    } finally {
      this.conn.close();
    }
  }
}

export interface SqlReaderOptions extends SqlOptions {
  policy: SqlReadPolicy;
  /** `replay_buffer.enable`: priority reads may take consumed rows again (least consumed first). */
  replay?: boolean;
  maxReadTimeoutS: number;
  resumeFrom?: BufferPosition;
  /** FIFO start when not resuming: rows with id > index (Trinity's `offset = config.index`). */
  index?: number;
  /** A priority reader's name in the read log (default: the resumed position's, else `trainer`). One reader per name. */
  readerName?: string;
  pollIntervalMs?: number;
  /** How long a dead writer's stream stays open for another writer (default DEAD_WRITER_GRACE_MS). */
  deadWriterGraceMs?: number;
  /** Where the reader says why it waits (a dead writer's grace period). */
  logger?: Logger;
  onCorrupt?: CorruptHandler;
}

/** Row ids as `[[first, last], ...]` (a priority batch is usually one run of consecutive ids), for the read log. */
export function compressRanges(ids: number[]): string {
  const sorted = [...ids].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const id of sorted) {
    const last = out[out.length - 1];
    if (last && id === last[1] + 1) last[1] = id;
    else out.push([id, id]);
  }
  return JSON.stringify(out);
}

export function expandRanges(text: string): number[] {
  const out: number[] = [];
  for (const [a, b] of JSON.parse(text) as [number, number][]) for (let i = a; i <= b; i++) out.push(i);
  return out;
}

interface Row {
  id: number;
  experience: string;
  logprobs: Uint8Array | null;
  advantages: Uint8Array | null;
  returns: Uint8Array | null;
  teacher_logprobs: Uint8Array | null;
}

export class SqlExperienceReader implements ExperienceReader {
  readonly file: string;
  readonly table: string;
  readonly policy: SqlReadPolicy;
  private readonly conn: SqlConnection;
  private readonly readerName: string;
  private lastId = 0;
  private seq = 0;
  private delivered = 0;
  private readonly closer = new AbortController();
  private reading = false;
  private readonly writersGone: WritersGone;

  constructor(
    path: string,
    table: string,
    private readonly opts: SqlReaderOptions,
  ) {
    this.file = sqliteFile(path);
    this.writersGone = new WritersGone(opts.deadWriterGraceMs, (what) =>
      opts.logger?.warn(`${this.file}: table "${table}": ${what}`),
    );
    this.table = table;
    this.policy = opts.policy;
    const p = opts.resumeFrom;
    this.readerName = opts.readerName ?? (p?.storage === 'sql' && p.policy === 'priority' ? p.reader : 'trainer');
    if (p !== undefined) {
      if (p.storage !== 'sql')
        throw new Error(`resumeFrom is a ${p.storage} position; this is an sql buffer (${this.file})`);
      if (p.table !== table) throw new Error(`resumeFrom is a position in table "${p.table}", not "${table}"`);
      if (p.policy !== this.policy)
        throw new Error(`resumeFrom is a ${p.policy} position; this reader reads by ${this.policy}`);
    }
    this.conn = new SqlConnection(this.file, table, opts);
    try {
      if (p?.policy === 'fifo') {
        this.lastId = p.lastId;
        this.delivered = p.delivered;
      } else if (p?.policy === 'priority') {
        if (p.reader !== this.readerName)
          throw new Error(`resumeFrom is the position of reader "${p.reader}", not "${this.readerName}"`);
        withIo('buffer resume (giving back the batches read after the checkpoint)', this.file, () =>
          this.undoReadsAfter(p.seq),
        );
        this.seq = p.seq;
        this.delivered = p.delivered;
      } else if (this.policy === 'fifo') {
        this.lastId = opts.index ?? 0;
      } else {
        const r = withIo(
          'buffer open',
          this.file,
          () =>
            this.conn.db
              .prepare(`SELECT MAX(seq) AS s FROM ${this.conn.reads} WHERE reader = ?`)
              .get(this.readerName) as { s: number | null },
        );
        this.seq = r.s ?? 0;
      }
    } catch (e) {
      this.conn.close();
      throw e;
    }
  }

  /** Gives back the batches taken after `seq` (taken, but never recorded as done by the caller). */
  private undoReadsAfter(seq: number): void {
    const db = this.conn.db;
    const later = db.prepare(`SELECT seq, ids FROM ${this.conn.reads} WHERE reader = ? AND seq > ? ORDER BY seq`);
    const giveBack = db.prepare(
      `UPDATE ${this.conn.t} SET consumed = consumed - 1 WHERE consumed > 0 AND id IN (SELECT value FROM json_each(?))`,
    );
    const forget = db.prepare(`DELETE FROM ${this.conn.reads} WHERE reader = ?`);
    this.conn.retry(() =>
      db
        .transaction(() => {
          for (const r of later.all(this.readerName, seq) as { seq: number; ids: string }[])
            giveBack.run(JSON.stringify(expandRanges(r.ids)));
          forget.run(this.readerName);
        })
        .immediate(),
    );
  }

  state(): BufferPosition {
    const base = { storage: 'sql' as const, path: this.file, table: this.table, delivered: this.delivered };
    return this.policy === 'fifo'
      ? { ...base, policy: 'fifo', lastId: this.lastId }
      : { ...base, policy: 'priority', reader: this.readerName, seq: this.seq };
  }

  close(): void {
    this.closer.abort();
    this.conn.close();
  }

  private decode(row: Row): Experience {
    try {
      return recordToExperience(JSON.parse(row.experience), floatsFromRow(row as unknown as Record<string, unknown>));
    } catch (e) {
      if (e instanceof RecordError || e instanceof SyntaxError) {
        throw new CorruptRecordError({ file: this.file, table: this.table, rowId: row.id }, e.message);
      }
      throw e;
    }
  }

  async read(batchSize: number, opts: ReadOptions = {}): Promise<Experience[]> {
    checkBatchSize(batchSize);
    if (this.closer.signal.aborted) throw new BufferStopError(`${this.file}: reader closed`, 'closed', 0, batchSize);
    if (this.policy === 'fifo' && opts.minModelVersion !== undefined) {
      throw new Error("minModelVersion is not supported by FIFO sql reads (Trinity's _read_fifo has no such argument)");
    }
    if (this.reading) throw new Error(`${this.file}: a read is already in progress`);
    this.reading = true;
    const link = linkSignals(opts.signal, this.closer.signal);
    try {
      return await this.readLoop(batchSize, opts, link.signal);
    } finally {
      link.dispose();
      this.reading = false;
    }
  }

  private async readLoop(n: number, opts: ReadOptions, signal: AbortSignal): Promise<Experience[]> {
    const timeout = readTimeoutMs(this.opts.maxReadTimeoutS, opts.timeoutMs);
    let deadline = Date.now() + timeout;
    let lastAvailable = -1;
    const fifo = this.policy === 'fifo' ? { cursor: this.lastId, got: [] as Experience[] } : undefined;
    const stopped = (): unknown =>
      opts.signal?.aborted
        ? abortReason(opts.signal)
        : new BufferStopError(`${this.file}: reader closed`, 'closed', 0, n);
    for (;;) {
      if (signal.aborted) throw stopped();
      const w = withIo('buffer read', this.file, () => this.conn.writerStatus());
      const writersDone = this.writersGone.over(w);
      let available: number;
      if (fifo) {
        const batch = withIo('buffer read', this.file, () => this.fifoStep(fifo, n));
        if (batch) return batch;
        available = fifo.got.length;
      } else {
        // The rows are marked consumed in the transaction that reads them: a read the disk failed is rolled back
        // whole, and nothing counts as taken.
        const r = withIo('buffer read', this.file, () => this.priorityStep(n, opts.minModelVersion ?? 0));
        if (Array.isArray(r)) return r;
        if (r === 'retry') continue;
        available = r;
      }
      if (available !== lastAvailable) {
        lastAvailable = available;
        deadline = Date.now() + timeout;
      }
      if (writersDone) {
        throw new BufferStopError(
          `${this.file}: table "${this.table}": ${WritersGone.describe(w, this.writersGone.graceMs)}, with ${available} of ${n} experiences left`,
          'finished',
          available,
          n,
        );
      }
      if (Date.now() >= deadline) {
        throw new BufferStopError(
          `${this.file}: table "${this.table}": max read timeout reached (${timeout / 1000} s), only ${available} of ${n} experiences`,
          'timeout',
          available,
          n,
        );
      }
      try {
        await sleep(Math.min(this.opts.pollIntervalMs ?? 100, Math.max(0, deadline - Date.now())), signal);
      } catch {
        throw stopped();
      }
    }
  }

  /** `_read_fifo`, one poll: extends the pending batch with every row there is; commits the position only when full. */
  private fifoStep(st: { cursor: number; got: Experience[] }, n: number): Experience[] | undefined {
    const select = this.conn.stmt(`SELECT ${SELECT_COLUMNS} FROM ${this.conn.t} WHERE id > ? ORDER BY id ASC LIMIT ?`);
    while (st.got.length < n) {
      const rows = select.all(st.cursor, n - st.got.length) as Row[];
      if (rows.length === 0) return undefined;
      for (const row of rows) {
        try {
          st.got.push(this.decode(row));
        } catch (e) {
          if (!(e instanceof CorruptRecordError) || !this.opts.onCorrupt) throw e;
          this.opts.onCorrupt(e);
        }
        st.cursor = row.id;
      }
    }
    this.lastId = st.cursor;
    this.delivered += n;
    return st.got;
  }

  /** `_read_priority`, one attempt: the batch, or how many candidate rows there are, or 'retry' after quarantining. */
  private priorityStep(n: number, minModelVersion: number): Experience[] | number | 'retry' {
    const db = this.conn.db;
    const where = ['consumed >= 0'];
    if (!this.opts.replay) where.push('consumed = 0');
    if (minModelVersion > 0) where.push('model_version >= @min');
    const select = this.conn.stmt(
      `SELECT ${SELECT_COLUMNS} FROM ${this.conn.t} WHERE ${where.join(' AND ')} ORDER BY consumed ASC, id DESC LIMIT @n`,
    );
    const mark = this.conn.stmt(
      `UPDATE ${this.conn.t} SET consumed = consumed + 1 WHERE id IN (SELECT value FROM json_each(?))`,
    );
    const quarantine = this.conn.stmt(`UPDATE ${this.conn.t} SET consumed = -1 WHERE id = ?`);
    const log = this.conn.stmt(`INSERT INTO ${this.conn.reads} (reader, seq, ids) VALUES (?, ?, ?)`);
    const corrupt: CorruptRecordError[] = [];
    const tx = db.transaction((): Experience[] | number | 'retry' => {
      const rows = select.all({ n, min: minModelVersion }) as Row[];
      if (rows.length < n) return rows.length;
      const exps: Experience[] = [];
      for (const row of rows) {
        try {
          exps.push(this.decode(row));
        } catch (e) {
          if (!(e instanceof CorruptRecordError) || !this.opts.onCorrupt) throw e; // rolls back: nothing consumed
          corrupt.push(e);
          quarantine.run(row.id);
        }
      }
      if (corrupt.length) return 'retry';
      const ids = rows.map((r) => r.id);
      mark.run(JSON.stringify(ids));
      log.run(this.readerName, this.seq + 1, compressRanges(ids));
      return exps;
    });
    const r = this.conn.retry(() => {
      corrupt.length = 0;
      return tx.immediate();
    });
    for (const e of corrupt) this.opts.onCorrupt!(e);
    if (Array.isArray(r)) {
      this.seq++;
      this.delivered += n;
    }
    return r;
  }
}
