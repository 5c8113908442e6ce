/**
 * A writer process that ends without finishing (an explorer killed or crashed), on the sql and file storages: its
 * readers wait for a writer to take its place (the restarted explorer) instead of ending the stream at once, and
 * end it after the grace period when none comes. Before this, a trainer that polled between the kill and the
 * restarted explorer's start ended "finished" and never read the restarted explorer's rows.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BufferStopError,
  JsonlExperienceReader,
  JsonlExperienceWriter,
  SqlExperienceReader,
  SqlExperienceWriter,
  type ExperienceReader,
  type ExperienceWriter,
} from '../../../../runtime/rft/buffer';
import type { Experience } from '../../../../runtime/rft/experience';
import { exp, spawnChild, tmp, uid } from './helpers';

const B = 3;
const batchOf = (k: number): Experience[] => Array.from({ length: B }, (_, i) => exp(k, i, 0, { modelVersion: k }));
const ids = (xs: Experience[]): string[] => xs.map(uid);

interface Storage {
  name: 'sql' | 'file';
  child: string;
  path(dir: string): string;
  reader(path: string, graceMs: number, warnings?: string[]): ExperienceReader;
  writer(path: string): ExperienceWriter;
}

const storages: Storage[] = [
  {
    name: 'sql',
    child: 'sql-write',
    path: (dir) => `sqlite:///${join(dir, 'buf.db')}`,
    reader: (path, graceMs, warnings = []) =>
      new SqlExperienceReader(path, 'exps', {
        policy: 'priority',
        maxReadTimeoutS: 60,
        pollIntervalMs: 5,
        deadWriterGraceMs: graceMs,
        logger: { warn: (m) => warnings.push(m) },
      }),
    writer: (path) => new SqlExperienceWriter(path, 'exps'),
  },
  {
    name: 'file',
    child: 'file-write',
    path: (dir) => join(dir, 'exps.jsonl'),
    reader: (path, graceMs, warnings = []) =>
      new JsonlExperienceReader(path, {
        maxReadTimeoutS: 60,
        pollIntervalMs: 5,
        deadWriterGraceMs: graceMs,
        logger: { warn: (m) => warnings.push(m) },
      }),
    writer: (path) => new JsonlExperienceWriter(path),
  },
];

/** A writer process that writes batches 0 and 1 and exits without finishing. */
async function writerThatDies(s: Storage, path: string): Promise<void> {
  const child = spawnChild(s.child, { path, table: 'exps', batches: 2, batchSize: B, tokens: 4, finish: false });
  await child.waitFor(/^done$/);
  const { code } = await child.exited;
  assert.equal(code, 0);
  assert.ok(child.lines.includes('committed 1'), child.lines.join('\n'));
}

const stopReason = (e: unknown): string => (e instanceof BufferStopError ? `${e.reason}: ${e.message}` : String(e));

for (const s of storages) {
  describe(`${s.name} storage: a writer that died without finishing`, () => {
    test('holds the stream open for a writer that takes its place, whose rows are read; its finish ends the stream', async () => {
      const path = s.path(tmp(`dead-${s.name}`));
      await writerThatDies(s, path);
      const warnings: string[] = [];
      const r = s.reader(path, 30_000, warnings);
      const first = await r.read(2 * B);
      assert.deepEqual(ids(first).sort(), ids([...batchOf(0), ...batchOf(1)]).sort());

      let settled: string | undefined;
      const pending = r.read(B).then(
        (xs) => ((settled = 'read'), xs),
        (e: unknown) => {
          settled = stopReason(e);
          throw e;
        },
      );
      // The reader polls every 5 ms: by now it has looked many times and found no live writer.
      await new Promise((res) => setTimeout(res, 400));
      assert.equal(settled, undefined, 'the reader still waits while no writer is live');
      // It says why, once (the log of a trainer whose explorer was killed).
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(
        warnings[0],
        /: every writer died without finishing: waiting up to 30 s for a writer to take its place \(a restarted explorer\)$/,
      );

      const w = s.writer(path); // the restarted explorer
      await w.write(batchOf(2));
      await w.finish();
      assert.deepEqual(ids(await pending).sort(), ids(batchOf(2)).sort());

      const t0 = Date.now();
      await assert.rejects(
        r.read(1),
        (e: unknown) =>
          e instanceof BufferStopError && e.reason === 'finished' && /all writers finished/.test(e.message),
      );
      assert.ok(Date.now() - t0 < 10_000, 'the writer that took over finished: no grace period is waited');
      r.close();
    });

    test('with no writer in its place, the stream ends after the grace period, saying why', async () => {
      const path = s.path(tmp(`dead-alone-${s.name}`));
      await writerThatDies(s, path);
      const r = s.reader(path, 300);
      // The grace period runs from the reader's first look at the writers (in this first read), not from each read.
      const t0 = Date.now();
      assert.equal((await r.read(2 * B)).length, 2 * B);
      await assert.rejects(r.read(1), (e: unknown) => {
        assert.ok(e instanceof BufferStopError && e.reason === 'finished', stopReason(e));
        assert.match(e.message, /every writer died without finishing and none took over within 0\.3 s, with 0 of 1/);
        return true;
      });
      assert.ok(Date.now() - t0 >= 300, 'ended only after the grace period');
      r.close();
    });
  });
}
