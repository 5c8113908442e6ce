/**
 * Restarted runs read without their orphaned points, on event files from the independent Python writer: TensorBoard's
 * SessionLog.START purge (file_version 2), its out-of-order purge for files without a version, the restart of a
 * Trinity job (a second SummaryWriter file going back, no START), metrics.jsonl's restart lines; in one read and
 * across reads (purges of earlier rows).
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MetricsReader, readAllMetrics } from '../../runtime/metrics/job-metrics';
import { withoutPurged } from '../../runtime/metrics/restarts';
import type { ScalarRow } from '../../runtime/metrics/types';
import { writeEvents, type EventRecord } from '../helpers/tfevents';

const scalars = (tag: string, from: number, to: number, base: number): EventRecord[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ scalar: tag, value: base + from + i, step: from + i }));

/** `run tag step value`, sorted: what a chart shows. */
const shown = (rows: Pick<ScalarRow, 'run' | 'tag' | 'step' | 'value'>[]): string[] =>
  rows.map((r) => `${r.run} ${r.tag} ${r.step} ${r.value}`).sort();

function roleDir(): { job: string; dir: string } {
  const job = mkdtempSync(join(tmpdir(), 'twb-restart-'));
  const dir = join(job, 'monitor', 'tensorboard', 'trainer');
  mkdirSync(dir, { recursive: true });
  return { job, dir };
}

const FIRST = 'events.out.tfevents.1700000000.node-0.100.1';
const SECOND = 'events.out.tfevents.1700000100.node-0.200.1';

describe('restarted runs', () => {
  test('SessionLog.START at step 4 in the resumed file: steps 4 and 5 of the abandoned timeline are dropped', () => {
    const { job, dir } = roleDir();
    writeEvents(join(dir, FIRST), [
      { file_version: true },
      { session_start: true, step: 1 },
      ...scalars('actor/pg_loss', 1, 5, 0),
    ]);
    writeEvents(join(dir, SECOND), [
      { file_version: true },
      { session_start: true, step: 4 },
      ...scalars('actor/pg_loss', 4, 6, 100),
    ]);
    assert.deepEqual(shown(readAllMetrics([job]).rows), [
      'trainer actor/pg_loss 1 1',
      'trainer actor/pg_loss 2 2',
      'trainer actor/pg_loss 3 3',
      'trainer actor/pg_loss 4 104',
      'trainer actor/pg_loss 5 105',
      'trainer actor/pg_loss 6 106',
    ]);
  });

  test('across reads: the restart comes as a purge of what the earlier read returned', () => {
    const { job, dir } = roleDir();
    writeEvents(join(dir, FIRST), [
      { file_version: true },
      { session_start: true, step: 1 },
      ...scalars('x', 1, 5, 0),
      ...scalars('y', 1, 5, 10),
    ]);
    const reader = new MetricsReader([job]);
    let held = reader.read().rows;
    assert.equal(held.length, 10);
    writeEvents(join(dir, SECOND), [
      { file_version: true },
      { session_start: true, step: 3 },
      ...scalars('x', 3, 3, 100),
    ]);
    const got = reader.read();
    assert.deepEqual(got.purges, [{ run: 'trainer', fromStep: 3 }]);
    held = [...withoutPurged(held, got.purges), ...got.rows];
    assert.deepEqual(shown(held), [
      'trainer x 1 1',
      'trainer x 2 2',
      'trainer x 3 103',
      'trainer y 1 11',
      'trainer y 2 12',
    ]);
  });

  test('a Trinity job restarted on a cluster (a second SummaryWriter file, no START): the steps that went back replace the old ones, tag by tag', () => {
    const { job, dir } = roleDir();
    writeEvents(join(dir, FIRST), [
      { file_version: true },
      ...scalars('actor/pg_loss', 1, 12, 0),
      ...scalars('critic/score/mean', 1, 12, 50),
    ]);
    // Resumed from global_step_10; a bench in the same folder logs its own tag at low steps and purges nothing else.
    writeEvents(join(dir, SECOND), [
      { file_version: true },
      ...scalars('actor/pg_loss', 11, 13, 100),
      ...scalars('critic/score/mean', 11, 11, 150),
      ...scalars('bench/accuracy', 0, 1, 200),
    ]);
    const rows = readAllMetrics([job]).rows;
    const keys = rows.map((r) => `${r.tag}@${r.step}`);
    assert.equal(new Set(keys).size, keys.length, 'no (tag, step) twice');
    const at = (tag: string, step: number) => rows.find((r) => r.tag === tag && r.step === step)?.value;
    assert.equal(at('actor/pg_loss', 10), 10);
    assert.equal(at('actor/pg_loss', 11), 111);
    assert.equal(at('actor/pg_loss', 12), 112);
    assert.equal(at('actor/pg_loss', 13), 113);
    assert.equal(at('critic/score/mean', 11), 161);
    assert.equal(
      at('critic/score/mean', 12),
      undefined,
      'the abandoned timeline is dropped from the step that went back',
    );
    assert.equal(rows.filter((r) => r.tag === 'actor/pg_loss').length, 13);
  });

  test("files without a version: a summary below the most recent step purges its own tags (TensorBoard's out-of-order rule)", () => {
    const { job, dir } = roleDir();
    writeEvents(join(dir, FIRST), [...scalars('x', 1, 5, 0), ...scalars('y', 6, 6, 10), ...scalars('x', 3, 3, 100)]);
    assert.deepEqual(shown(readAllMetrics([job]).rows), [
      'trainer x 1 1',
      'trainer x 2 2',
      'trainer x 3 103',
      'trainer y 6 16',
    ]);
  });

  test("metrics.jsonl: a restart line drops its role's earlier lines from its step on, not another role's", () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-restart-'));
    mkdirSync(join(job, 'monitor'));
    const line = (role: string, step: number, v: number, restart = false) =>
      `${JSON.stringify({ role, step, time: 0, wallTime: 1, values: restart ? {} : { loss: v }, ...(restart ? { restart } : {}) })}\n`;
    const file = join(job, 'monitor', 'metrics.jsonl');
    writeFileSync(file, [1, 2, 3].map((s) => line('trainer', s, s) + line('explorer', s, s)).join(''));
    const reader = new MetricsReader([job]);
    let held = reader.read().rows;
    appendFileSync(file, line('trainer', 2, 0, true) + line('trainer', 2, 20) + line('trainer', 3, 30));
    const got = reader.read();
    assert.deepEqual(got.purges, [{ run: 'trainer', fromStep: 2 }]);
    held = [...withoutPurged(held, got.purges), ...got.rows];
    assert.deepEqual(shown(held), [
      'explorer loss 1 1',
      'explorer loss 2 2',
      'explorer loss 3 3',
      'trainer loss 1 1',
      'trainer loss 2 20',
      'trainer loss 3 30',
    ]);
    assert.deepEqual(shown(readAllMetrics([job]).rows), shown(held), 'one read from scratch shows the same');
  });
});
