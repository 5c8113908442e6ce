/**
 * `sql` storage on a real SQLite file: exact round trips (Float64 BLOB logprobs), WAL mode, Trinity's FIFO and
 * priority read policies (hand-worked), all-or-nothing batches, resumable positions (close/reopen, and a reader
 * killed between taking a batch and recording it), a writer process killed mid-write, a writer and readers in two
 * processes at once, and corrupt rows reported with file and row id.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  BufferConfigError,
  BufferStopError,
  CorruptRecordError,
  SqlExperienceReader,
  SqlExperienceWriter,
  openBuffer,
  type BufferPosition,
  type BufferSectionConfig,
} from '../../../../runtime/rft/buffer';
import type { Experience } from '../../../../runtime/rft/experience';
import { bits, exp, oddExperiences, spawnChild, tmp, uid } from './helpers';

const ids = (xs: Experience[]) => xs.map(uid);
const batchOf = (b: number, n: number, mv = 0) =>
  Array.from({ length: n }, (_, i) => exp(b, i, 0, { modelVersion: mv }));

function sqlBuffer(dir: string, extra: BufferSectionConfig = {}) {
  const path = `sqlite:///${join(dir, 'buf.db')}`;
  return openBuffer({ name: 'exps', storage_type: 'sql', path, max_read_timeout: 2, ...extra }, { pollIntervalMs: 5 });
}

function raw(dir: string): Database.Database {
  return new Database(join(dir, 'buf.db'));
}

describe('sql storage', () => {
  test('round-trips every experience shape exactly; logprobs are Float64 BLOBs; the file is in WAL mode', async () => {
    const dir = tmp('sql');
    const buf = sqlBuffer(dir, { schema_type: 'sft' });
    const w = buf.writer();
    const xs = oddExperiences();
    await w.write(xs);
    const r = buf.reader();
    const back = await r.read(4);
    assert.deepEqual(back, xs);
    for (let i = 0; i < xs.length; i++) {
      assert.deepEqual(bits(back[i].logprobs), bits(xs[i].logprobs));
      assert.deepEqual(bits(back[i].teacherLogprobs), bits(xs[i].teacherLogprobs));
    }
    await w.finish();
    r.close();
    const db = raw(dir);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    const row = db
      .prepare(
        'SELECT typeof(logprobs) t, length(logprobs) n, task_id, run_id, msg_id, model_version, reward, consumed FROM exps WHERE id = 1',
      )
      .get();
    assert.deepEqual(row, {
      t: 'blob',
      n: 48,
      task_id: 'gsm8k/7',
      run_id: 2,
      msg_id: 'a1b2c3',
      model_version: 12,
      reward: null,
      consumed: 0,
    });
    assert.equal(
      (db.prepare('SELECT logprobs FROM exps WHERE id = 3').get() as { logprobs: unknown }).logprobs,
      null,
      'SFT: no logprobs',
    );
    assert.deepEqual(
      db.prepare('SELECT typeof(teacher_logprobs) t, length(teacher_logprobs) n FROM exps WHERE id = 1').get(),
      { t: 'blob', n: 24 },
    );
    assert.ok(
      !(
        'teacher_logprobs' in
        JSON.parse((db.prepare('SELECT experience FROM exps WHERE id = 1').get() as { experience: string }).experience)
      ),
      'float arrays live in their BLOB columns only',
    );
    db.close();
  });

  test('a table written before teacher_logprobs existed: its rows read as before, and it gets the column', async () => {
    const dir = tmp('oldlayout');
    const db = raw(dir);
    // The layout of the first release of this storage, with one row as that release wrote it.
    db.exec(`CREATE TABLE exps (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
      task_id TEXT, run_id INTEGER, msg_id TEXT, model_version INTEGER, reward REAL, consumed INTEGER NOT NULL DEFAULT 0,
      experience TEXT NOT NULL, logprobs BLOB, advantages BLOB, returns BLOB)`);
    const old = exp(1, 0);
    const record = {
      eid: old.eid,
      type: 'single_turn',
      prompt_length: 3,
      response_length: 4,
      reward: old.reward,
      tokens: old.tokens,
    };
    db.prepare(
      'INSERT INTO exps (task_id, run_id, msg_id, model_version, reward, experience, logprobs) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(
      '0',
      0,
      old.eid.suffix,
      null,
      old.reward,
      JSON.stringify(record),
      Buffer.from(new Float64Array(old.logprobs!).buffer),
    );
    db.close();
    const buf = sqlBuffer(dir, { schema_type: 'sft' });
    const r = buf.reader();
    assert.deepEqual(await r.read(1), [old]);
    const w = buf.writer();
    const withTeacher = { ...exp(2, 0), teacherLogprobs: [-1.5, -0.25, -3, -0.125] };
    await w.write([withTeacher]);
    await w.finish();
    assert.deepEqual(await r.read(1), [withTeacher]);
    r.close();
    const check = raw(dir);
    assert.ok(
      (check.prepare('PRAGMA table_info(exps)').all() as { name: string }[]).some((c) => c.name === 'teacher_logprobs'),
    );
    check.close();
  });

  test('a batch is all or nothing', async () => {
    const dir = tmp('atomic');
    const buf = sqlBuffer(dir, { schema_type: 'sft' });
    const w = buf.writer();
    await w.write(batchOf(0, 2));
    const db = raw(dir);
    // Fails the 3rd insert of the next batch inside SQLite, after two rows of it went in.
    db.exec(`CREATE TRIGGER boom BEFORE INSERT ON exps WHEN NEW.task_id = '2' BEGIN SELECT RAISE(ABORT, 'boom'); END;`);
    await assert.rejects(w.write(batchOf(1, 4)), /boom/);
    await assert.rejects(w.write([exp(2, 0), { ...exp(2, 1), tokens: [1.5] }]), /experience 1 of the batch/);
    assert.equal((db.prepare('SELECT COUNT(*) c FROM exps').get() as { c: number }).c, 2);
    db.exec('DROP TRIGGER boom');
    await w.write(batchOf(3, 3));
    await w.finish();
    db.close();
    const r = buf.reader();
    assert.deepEqual(ids(await r.read(5)), ['0/0/0', '0/1/0', '3/0/0', '3/1/0', '3/2/0']);
    r.close();
  });

  test('FIFO (sft/dpo): id order from `index`, waits for rows, stops when writers finish or on timeout', async () => {
    const dir = tmp('fifo');
    const buf = sqlBuffer(dir, { schema_type: 'dpo' });
    const w = buf.writer();
    const r = buf.reader();
    await w.write(batchOf(0, 3));
    assert.deepEqual(ids(await r.read(2)), ['0/0/0', '0/1/0']);
    const pending = r.read(2);
    await new Promise((res) => setTimeout(res, 20));
    await w.write(batchOf(1, 1));
    assert.deepEqual(ids(await pending), ['0/2/0', '1/0/0']);
    await assert.rejects(
      r.read(1, { timeoutMs: 50 }),
      (e: unknown) => e instanceof BufferStopError && e.reason === 'timeout',
    );
    await w.write(batchOf(2, 1));
    await w.finish();
    await assert.rejects(
      r.read(2),
      (e: unknown) => e instanceof BufferStopError && e.reason === 'finished' && e.available === 1,
    );
    assert.deepEqual(ids(await r.read(1)), ['2/0/0'], 'a stopped read consumed nothing');
    assert.deepEqual(r.state(), {
      storage: 'sql',
      policy: 'fifo',
      path: join(dir, 'buf.db'),
      table: 'exps',
      lastId: 5,
      delivered: 5,
    });
    r.close();
    const fromIndex = openBuffer({
      name: 'exps',
      storage_type: 'sql',
      path: `sqlite:///${join(dir, 'buf.db')}`,
      schema_type: 'sft',
      index: 3,
    }).reader();
    assert.deepEqual(ids(await fromIndex.read(2)), ['1/0/0', '2/0/0']);
    fromIndex.close();
  });

  test('priority (experience schema): newest unconsumed first, marked consumed in the same transaction', async () => {
    const dir = tmp('prio');
    const buf = sqlBuffer(dir, { schema_type: 'experience' });
    const w = buf.writer();
    const r = buf.reader();
    await w.write(batchOf(0, 4)); // ids 1..4
    assert.deepEqual(ids(await r.read(3)), ['0/3/0', '0/2/0', '0/1/0']); // ORDER BY consumed, id DESC
    await w.write(batchOf(1, 2)); // ids 5, 6
    assert.deepEqual(ids(await r.read(2)), ['1/1/0', '1/0/0']);
    assert.deepEqual(ids(await r.read(1)), ['0/0/0']);
    const pending = r.read(1);
    await w.finish();
    await assert.rejects(
      pending,
      (e: unknown) => e instanceof BufferStopError && e.reason === 'finished' && e.available === 0,
    );
    const db = raw(dir);
    assert.deepEqual(
      db
        .prepare('SELECT consumed FROM exps ORDER BY id')
        .all()
        .map((x) => (x as { consumed: number }).consumed),
      [1, 1, 1, 1, 1, 1],
    );
    db.close();
    r.close();
  });

  test('priority with replay_buffer.enable: least consumed first, rows come back', async () => {
    const dir = tmp('replay');
    const buf = sqlBuffer(dir, { replay_buffer: { enable: true } });
    const w = buf.writer();
    await w.write(batchOf(0, 3)); // ids 1..3
    await w.finish();
    const r = buf.reader();
    assert.deepEqual(ids(await r.read(2)), ['0/2/0', '0/1/0']); // consumed: 0 1 1
    assert.deepEqual(ids(await r.read(2)), ['0/0/0', '0/2/0']); // 1 (c0), then 3 (c1, newest)  -> 1 1 2
    assert.deepEqual(ids(await r.read(2)), ['0/1/0', '0/0/0']); // -> 2 2 2
    const db = raw(dir);
    assert.deepEqual(
      db
        .prepare('SELECT consumed FROM exps ORDER BY id')
        .all()
        .map((x) => (x as { consumed: number }).consumed),
      [2, 2, 2],
    );
    db.close();
    r.close();
  });

  test('priority skips rows below minModelVersion', async () => {
    const dir = tmp('minver');
    const buf = sqlBuffer(dir, { max_read_timeout: 0.05 });
    const w = buf.writer();
    await w.write(batchOf(0, 1, 1));
    await w.write(batchOf(1, 1, 2));
    await w.write(batchOf(2, 1, 3));
    const r = buf.reader();
    assert.deepEqual(ids(await r.read(1, { minModelVersion: 3 })), ['2/0/0']);
    await assert.rejects(
      r.read(2, { minModelVersion: 2 }),
      (e: unknown) => e instanceof BufferStopError && e.reason === 'timeout' && e.available === 1,
    );
    assert.deepEqual(ids(await r.read(2)), ['1/0/0', '0/0/0']);
    await w.finish();
    r.close();
  });

  test('positions resume after close: FIFO by last id, priority by the read log (batches taken after the position are given back)', async () => {
    const dir = tmp('resume');
    const fifo = sqlBuffer(dir, { schema_type: 'sft' });
    const w = fifo.writer();
    await w.write(batchOf(0, 6));
    await w.finish();
    const f1 = fifo.reader();
    assert.deepEqual(ids(await f1.read(2)), ['0/0/0', '0/1/0']);
    const fpos: BufferPosition = JSON.parse(JSON.stringify(f1.state()));
    f1.close();
    const f2 = fifo.reader({ resumeFrom: fpos });
    assert.deepEqual(ids(await f2.read(4)), ['0/2/0', '0/3/0', '0/4/0', '0/5/0']);
    f2.close();

    const prio = sqlBuffer(dir, { schema_type: 'experience' });
    const p1 = prio.reader();
    const first = ids(await p1.read(2)); // seq 1
    const saved = JSON.parse(JSON.stringify(p1.state()));
    assert.equal(saved.seq, 1);
    const lost = ids(await p1.read(2)); // seq 2: taken, never recorded as done
    p1.close();
    const p2 = prio.reader({ resumeFrom: saved });
    const rest = [...ids(await p2.read(2)), ...ids(await p2.read(2))];
    assert.deepEqual(rest.slice(0, 2), lost, 'the unrecorded batch comes back first');
    assert.deepEqual([...first, ...rest].sort(), ids(batchOf(0, 6)).sort());
    await assert.rejects(p2.read(1), BufferStopError);
    assert.throws(() => prio.reader({ resumeFrom: fpos }), /fifo position/);
    p2.close();
  });

  test('corrupt rows are reported with file, table and row id; onCorrupt skips (priority quarantines them)', async () => {
    const dir = tmp('corrupt');
    const file = join(dir, 'buf.db');
    const buf = sqlBuffer(dir, { schema_type: 'sft' });
    const w = buf.writer();
    await w.write(batchOf(0, 4));
    await w.finish();
    const db = raw(dir);
    db.prepare("UPDATE exps SET experience = '{broken' WHERE id = 2").run();
    db.prepare("UPDATE exps SET logprobs = x'00010203040506' WHERE id = 3").run();
    const r = buf.reader();
    await assert.rejects(r.read(3), (e: unknown) => {
      assert.ok(e instanceof CorruptRecordError);
      assert.equal(e.file, file);
      assert.equal(e.table, 'exps');
      assert.equal(e.rowId, 2);
      assert.ok(e.message.startsWith(`${file}: table "exps" row id 2: corrupt experience record:`), e.message);
      return true;
    });
    const seen: CorruptRecordError[] = [];
    const r2 = buf.reader({ onCorrupt: (e) => seen.push(e) });
    assert.deepEqual(ids(await r2.read(2)), ['0/0/0', '0/3/0']);
    assert.deepEqual(
      seen.map((e) => e.rowId),
      [2, 3],
    );
    assert.match(seen[1].message, /7 bytes, not a multiple of 8/);
    r.close();
    r2.close();

    const p = sqlBuffer(dir, { schema_type: 'experience' }).reader({ onCorrupt: (e) => seen.push(e) });
    assert.deepEqual(ids(await p.read(2)), ['0/3/0', '0/0/0']);
    assert.deepEqual(
      db
        .prepare('SELECT consumed FROM exps ORDER BY id')
        .all()
        .map((x) => (x as { consumed: number }).consumed),
      [1, -1, -1, 1],
    );
    p.close();
    db.close();
  });

  test("a table of another layout (Trinity's pickled experience_bytes) is refused", () => {
    const dir = tmp('foreign');
    const db = raw(dir);
    db.exec('CREATE TABLE exps (id INTEGER PRIMARY KEY, experience_bytes BLOB, reward REAL, consumed INTEGER)');
    db.close();
    assert.throws(
      () => sqlBuffer(dir).reader(),
      /lacks model_version, experience, logprobs, advantages, returns.*experience_bytes/,
    );
  });

  test('only sqlite URLs open', () => {
    assert.throws(
      () => openBuffer({ storage_type: 'sql', path: 'postgresql://u@h/db' }),
      (e: unknown) =>
        e instanceof BufferConfigError &&
        e.key === 'buffer.trainer_input.experience_buffer.path' &&
        /only SQLite/.test(e.message),
    );
    assert.throws(() => openBuffer({ storage_type: 'sql' }), /`path` is required for SQL storage type/);
  });

  test('a writer process and two readers (FIFO and priority) at once, each reader gets everything once', async () => {
    const dir = tmp('concurrent');
    const path = `sqlite:///${join(dir, 'buf.db')}`;
    const child = spawnChild('sql-write', {
      path,
      table: 'exps',
      batches: 20,
      batchSize: 8,
      tokens: 64,
      delayMs: 5,
      finish: true,
    });
    await child.waitFor(/^begin 0$/); // the writer registered itself
    const fifo = new SqlExperienceReader(path, 'exps', { policy: 'fifo', maxReadTimeoutS: 10, pollIntervalMs: 5 });
    const prio = new SqlExperienceReader(path, 'exps', { policy: 'priority', maxReadTimeoutS: 10, pollIntervalMs: 5 });
    const drain = async (r: SqlExperienceReader) => {
      const got: Experience[] = [];
      for (;;) {
        try {
          got.push(...(await r.read(10)));
        } catch (e) {
          assert.ok(e instanceof BufferStopError && e.reason === 'finished', String(e));
          assert.equal(e.available, 0);
          return got;
        }
      }
    };
    const [a, b] = await Promise.all([drain(fifo), drain(prio)]);
    assert.equal((await child.exited).code, 0);
    const expected = Array.from({ length: 20 }, (_, k) =>
      Array.from({ length: 8 }, (_, i) => exp(k, i, 0, { tokens: 64, modelVersion: k })),
    ).flat();
    assert.deepEqual(a, expected, 'FIFO: every experience, in write order, intact');
    assert.deepEqual(ids(b).sort(), ids(expected).sort(), 'priority: every experience once');
    fifo.close();
    prio.close();
  });

  test('SIGKILL mid-write: every committed batch is complete, no partial batch, and readers end', async (t) => {
    const dir = tmp('kill');
    const path = `sqlite:///${join(dir, 'buf.db')}`;
    const B = 2000; // a batch's transaction takes ~10-30 ms here
    const child = spawnChild('sql-write', {
      path,
      table: 'exps',
      batches: -1,
      batchSize: B,
      tokens: 50,
      delayMs: 0,
      finish: false,
    });
    await child.waitFor(/^begin 3$/);
    await new Promise((res) => setTimeout(res, 8)); // most often inside batch 3's transaction
    child.proc.kill('SIGKILL');
    const { signal } = await child.exited;
    assert.equal(signal, 'SIGKILL');
    const begun = child.lines.filter((l) => l.startsWith('begin')).length;
    const printed = child.lines.filter((l) => l.startsWith('committed')).length;

    const db = raw(dir);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const perBatch = db
      .prepare('SELECT model_version AS k, COUNT(*) AS n FROM exps GROUP BY model_version ORDER BY k')
      .all() as { k: number; n: number }[];
    db.close();
    const batches = perBatch.length;
    assert.ok(
      batches >= printed && batches <= begun,
      `${batches} batches in the table; child began ${begun}, reported ${printed}`,
    );
    t.diagnostic(
      `killed after ${begun} batches begun, ${printed} reported committed, ${batches} in the table (${begun > batches ? `killed while writing batch ${batches}` : 'killed between batches'})`,
    );
    assert.deepEqual(
      perBatch,
      Array.from({ length: batches }, (_, k) => ({ k, n: B })),
      'batches 0..k-1, each with all its rows',
    );

    // The dead writer holds the stream open only for the grace period: a reader gets every committed row and stops.
    const r = new SqlExperienceReader(path, 'exps', {
      policy: 'fifo',
      maxReadTimeoutS: 10,
      pollIntervalMs: 5,
      deadWriterGraceMs: 100,
    });
    const got = await r.read(batches * B);
    assert.deepEqual(
      got.slice(-B),
      Array.from({ length: B }, (_, i) => exp(batches - 1, i, 0, { tokens: 50, modelVersion: batches - 1 })),
    );
    await assert.rejects(r.read(1), (e: unknown) => e instanceof BufferStopError && e.reason === 'finished');
    r.close();
  });

  for (const policy of ['priority', 'fifo'] as const) {
    test(`a ${policy} reader killed between taking a batch and recording it resumes without loss or repeats`, async () => {
      const dir = tmp(`rkill-${policy}`);
      const path = `sqlite:///${join(dir, 'buf.db')}`;
      const w = new SqlExperienceWriter(path, 'exps');
      for (let k = 0; k < 6; k++) await w.write(batchOf(k, 5));
      await w.finish();
      const statePath = join(dir, 'reader-state.json');
      const child = spawnChild('sql-read', { path, table: 'exps', policy, batchSize: 5, statePath, persistBatches: 2 });
      await child.waitFor(/^read-unpersisted$/);
      child.proc.kill('SIGKILL');
      await child.exited;
      const saved = JSON.parse(readFileSync(statePath, 'utf8')) as { position: BufferPosition; uids: string[] };
      assert.equal(saved.uids.length, 10);
      const r = new SqlExperienceReader(path, 'exps', {
        policy,
        maxReadTimeoutS: 10,
        pollIntervalMs: 5,
        resumeFrom: saved.position,
      });
      const rest: string[] = [];
      for (;;) {
        try {
          rest.push(...ids(await r.read(5)));
        } catch (e) {
          assert.ok(e instanceof BufferStopError && e.reason === 'finished' && e.available === 0, String(e));
          break;
        }
      }
      r.close();
      const all = [...saved.uids, ...rest];
      assert.equal(all.length, 30, 'no experience read twice');
      assert.deepEqual([...all].sort(), ids(Array.from({ length: 6 }, (_, k) => batchOf(k, 5)).flat()).sort());
    });
  }
});
