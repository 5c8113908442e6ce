/**
 * Appends and reads on a full disk (a small tmpfs; mounting one needs root, else skipped with the reason): a buffer batch fails
 * whole, named by `buffer append` and its file, and every earlier row stays (SQLite rolls the transaction back; the
 * JSON-lines storage cuts the partial batch off); an SQL read that would mark rows consumed fails named, with nothing
 * marked, and a reader resumed from the last position takes every row once; the monitor's appends fail named by their file, and once there is
 * room again the next run's readers see no torn line.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { readAllMetrics } from '../../../runtime/metrics/job-metrics';
import { openBuffer } from '../../../runtime/rft/buffer';
import { quickCheck } from '../../../runtime/rft/buffer/integrity';
import { IoFailure } from '../../../runtime/rft/io-failure';
import { Monitor } from '../../../runtime/rft/monitor/run-monitor';
import { fillDisk, fullDiskUnavailable, smallTmpfs } from '../../helpers/full-disk';
import { exp } from './buffer/helpers';

const why = fullDiskUnavailable();
const mounts: ReturnType<typeof smallTmpfs>[] = [];
after(() => mounts.forEach((m) => m.unmount()));

function fullDisk(): { dir: string; free(): void } {
  const m = smallTmpfs('2m');
  mounts.push(m);
  return { dir: m.dir, free: () => rmSync(join(m.dir, 'filler')) };
}

const batch = (b: number) => Array.from({ length: 50 }, (_, i) => exp(b, i, 0, { tokens: 200 }));

/** The SQL buffer `exps` in `buf.db` on a fresh small disk. */
function sqlBufferOnSmallDisk() {
  const disk = fullDisk();
  const file = join(disk.dir, 'buf.db');
  const open = () => openBuffer({ name: 'exps', storage_type: 'sql', path: `sqlite:///${file}`, max_read_timeout: 1 });
  return { disk, file, open };
}

describe('appends on a full disk', () => {
  test(
    'sql buffer: the batch fails whole, named; earlier rows stay and the file passes quick_check',
    { skip: why },
    async () => {
      const { disk, file, open } = sqlBufferOnSmallDisk();
      const buffer = open();
      const writer = buffer.writer();
      await writer.write(batch(1));
      fillDisk(join(disk.dir, 'filler'));
      let failed: unknown;
      for (let b = 2; b < 40 && !failed; b++) await writer.write(batch(b)).catch((e: unknown) => (failed = e));
      assert.ok(failed instanceof IoFailure, String(failed));
      assert.equal(failed.message, `buffer append failed: ${file}: database or disk is full (SQLITE_FULL)`);
      disk.free();
      assert.deepEqual(quickCheck(file), []);
      const db = new Database(file, { readonly: true });
      const counts = db
        .prepare(`SELECT json_extract(experience, '$.eid.batch') AS b, COUNT(*) AS n FROM exps GROUP BY b`)
        .all() as { b: number; n: number }[];
      db.close();
      assert.ok(counts.length >= 1 && counts.every((c) => c.n === 50), `whole batches: ${JSON.stringify(counts)}`);
      await writer.finish();
    },
  );

  test(
    'sql buffer: a read on a full disk fails named and takes nothing; the resumed reader trains every row once',
    { skip: why },
    async () => {
      const { disk, file, open } = sqlBufferOnSmallDisk();
      const buffer = open();
      const writer = buffer.writer();
      await writer.write(batch(1));
      await writer.write(batch(2));
      const reader = buffer.reader();
      const first = await reader.read(50);
      const checkpointed = reader.state();
      // Empty the write-ahead log, as SQLite does once it has copied it into the database: marking the next batch
      // consumed then needs new blocks, which the full disk does not have.
      const db = new Database(file);
      db.pragma('wal_checkpoint(TRUNCATE)');
      fillDisk(join(disk.dir, 'filler'));
      await assert.rejects(reader.read(50), (e: Error) => {
        assert.ok(e instanceof IoFailure, e.stack);
        assert.equal(e.message, `buffer read failed: ${file}: database or disk is full (SQLITE_FULL)`);
        return true;
      });
      reader.close();
      const consumed = () =>
        db
          .prepare(`SELECT json_extract(experience, '$.eid.batch') AS b, SUM(consumed) AS n FROM exps GROUP BY b`)
          .all() as { b: number; n: number }[];
      // Priority reads take the newest rows first: the first read took batch 2, the failed one was taking batch 1.
      assert.deepEqual(
        consumed(),
        [
          { b: 1, n: 0 },
          { b: 2, n: 50 },
        ],
        'the failed read marked nothing consumed',
      );
      disk.free();
      const resumed = open().reader({ resumeFrom: checkpointed });
      const second = await resumed.read(50);
      resumed.close();
      await writer.finish();
      assert.deepEqual([...first, ...second].map((e) => e.eid.batch).sort(), [
        ...Array<number>(50).fill(1),
        ...Array<number>(50).fill(2),
      ]);
      assert.deepEqual(
        consumed(),
        [
          { b: 1, n: 50 },
          { b: 2, n: 50 },
        ],
        'every row trained on once',
      );
      db.close();
      assert.deepEqual(quickCheck(file), []);
    },
  );

  test('jsonl buffer: a batch the disk cut short is cut back to the rows before it', { skip: why }, async () => {
    const disk = fullDisk();
    const file = join(disk.dir, 'buf.jsonl');
    const writer = openBuffer({ name: 'exps', storage_type: 'file', path: file }).writer();
    await writer.write(batch(1));
    const before = readFileSync(file, 'utf8');
    fillDisk(join(disk.dir, 'filler'));
    await assert.rejects(writer.write(batch(2)), (e: Error) => {
      assert.ok(e instanceof IoFailure);
      assert.equal(e.message, `buffer append failed: ${file}: no space left on device (ENOSPC)`);
      return true;
    });
    assert.equal(readFileSync(file, 'utf8'), before, 'the rows before the failed batch, whole, nothing after');
    disk.free();
    await writer.finish();
  });

  test(
    'monitor: a failed append names its file; after the disk has room, the next run reads clean',
    { skip: why },
    () => {
      const disk = fullDisk();
      const monitor = new Monitor(disk.dir);
      monitor.log('trainer', 1, { loss: 1 });
      fillDisk(join(disk.dir, 'filler'));
      let failed: unknown;
      for (let step = 2; step < 10_000 && !failed; step++) {
        try {
          monitor.log('trainer', step, { loss: step, padding: Math.random() });
        } catch (e) {
          failed = e;
        }
      }
      assert.ok(failed instanceof IoFailure, String(failed));
      assert.match(
        failed.message,
        /^(metrics append failed: \S+\/monitor\/metrics\.jsonl|TensorBoard append failed: \S+\/events\.out\.tfevents\.\S+): no space left on device \(ENOSPC\)$/,
      );
      disk.free();
      new Monitor(disk.dir).log('trainer', 1, { loss: 10 });
      const got = readAllMetrics([disk.dir]);
      assert.deepEqual(got.problems, []);
      const loss = got.rows.filter((r) => r.tag === 'loss');
      assert.deepEqual(
        loss.map((r) => [r.step, r.value]),
        [[1, 10]],
        'the new run restarted at step 1: the abandoned steps are gone',
      );
    },
  );
});
