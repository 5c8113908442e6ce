/**
 * One event file read by EventFileReader, written by the independent Python writer: both scalar encodings,
 * what is skipped, a record still being written, damaged records, and a file that grows between reads.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { EventFileReader } from '../../runtime/metrics/event-file';
import { writeEvents } from '../helpers/tfevents';

const fresh = (name = 'events.out.tfevents.1700000000.host') => join(mkdtempSync(join(tmpdir(), 'twb-ev-')), name);
const values = (r: { rows: { tag: string; step: number; value: number }[] }) =>
  r.rows.map((x) => [x.tag, x.step, x.value]);

describe('EventFileReader', () => {
  test('legacy simple_value scalars (what SummaryWriter.add_scalar writes), with step and wall time', () => {
    const file = fresh();
    writeEvents(file, [
      { file_version: true },
      { scalar: 'actor/pg_loss', value: 0.1, step: 1, wall_time: 1700000001.5 },
      { scalar: 'actor/pg_loss', value: -2.5, step: 2, wall_time: 1700000002.25 },
    ]);
    const got = new EventFileReader(file, 'trainer').read();
    assert.deepEqual(got.problems, []);
    // 0.1 is stored as float32; it comes back as 0.1, not 0.10000000149011612.
    assert.deepEqual(got.rows, [
      { run: 'trainer', tag: 'actor/pg_loss', step: 1, wallTime: 1700000001.5, value: 0.1 },
      { run: 'trainer', tag: 'actor/pg_loss', step: 2, wallTime: 1700000002.25, value: -2.5 },
    ]);
  });

  test('TF2 tensor scalars in float_val, double_val and tensor_content (float32 and float64)', () => {
    const file = fresh();
    writeEvents(file, [
      { tensor: 'a', value: 0.25, step: 1, encoding: 'float_val' },
      { tensor: 'b', value: 0.1, step: 1, encoding: 'double_val' },
      { tensor: 'c', value: 1.5e-3, step: 1, encoding: 'content_f32' },
      { tensor: 'd', value: 1 / 3, step: 1, encoding: 'content_f64' },
    ]);
    const got = new EventFileReader(file, 'explorer').read();
    assert.deepEqual(got.problems, []);
    assert.deepEqual(values(got), [
      ['a', 1, 0.25],
      ['b', 1, 0.1],
      ['c', 1, 1.5e-3],
      ['d', 1, 1 / 3],
    ]);
  });

  test('histograms, graphs and file_version records are skipped, scalars around them kept', () => {
    const file = fresh();
    writeEvents(file, [
      { file_version: true },
      { graph: true },
      { histogram: 'weights', values: [1, 2, 3], step: 1 },
      { scalar: 'rollout/reward', value: 0.75, step: 1 },
      { histogram: 'weights', values: [4, 5], step: 2 },
    ]);
    const got = new EventFileReader(file, 'explorer').read();
    assert.deepEqual(got.problems, []);
    assert.deepEqual(values(got), [['rollout/reward', 1, 0.75]]);
  });

  test('a half-written last record is "not yet": no error, and read whole on the next call, at every cut point', () => {
    const whole = fresh();
    writeEvents(whole, [
      { file_version: true },
      { scalar: 'x', value: 1, step: 1 },
      { tensor: 'y', value: 2, step: 2, encoding: 'double_val' },
      { scalar: 'z', value: 3, step: 3 },
    ]);
    const bytes = new Uint8Array(readFileSync(whole));
    for (let cut = 0; cut <= bytes.length; cut++) {
      const file = fresh();
      writeFileSync(file, bytes.subarray(0, cut));
      const reader = new EventFileReader(file, 'r');
      const first = reader.read();
      appendFileSync(file, bytes.subarray(cut));
      const second = reader.read();
      assert.deepEqual([...first.problems, ...second.problems], [], `cut at ${cut}`);
      assert.deepEqual(
        [...values(first), ...values(second)],
        [
          ['x', 1, 1],
          ['y', 2, 2],
          ['z', 3, 3],
        ],
        `cut at ${cut}`,
      );
      assert.equal(reader.position, bytes.length);
    }
  });

  test('a record cut off by the writer waits at its offset', () => {
    const file = fresh();
    const offsets = writeEvents(file, [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2, cut: 20 },
    ]);
    const reader = new EventFileReader(file, 'r');
    const got = reader.read();
    assert.deepEqual(values(got), [['x', 1, 1]]);
    assert.deepEqual(got.problems, []);
    assert.equal(reader.position, offsets[1]);
  });

  test('a bad data checksum is reported with the file and byte offset, that record skipped, reading goes on', () => {
    const file = fresh();
    const offsets = writeEvents(file, [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2, corrupt: 'payload' },
      { scalar: 'x', value: 3, step: 3 },
    ]);
    const reader = new EventFileReader(file, 'r');
    const got = reader.read();
    assert.deepEqual(values(got), [
      ['x', 1, 1],
      ['x', 3, 3],
    ]);
    assert.equal(got.problems.length, 1);
    assert.equal(got.problems[0].file, file);
    assert.equal(got.problems[0].offset, offsets[1]);
    assert.match(
      got.problems[0].message,
      new RegExp(`${file.replace(/[.]/g, '\\.')}: bad data checksum in the record at byte ${offsets[1]}`),
    );
    // Reported once: the next read starts after it.
    writeEvents(file, [{ scalar: 'x', value: 4, step: 4 }]);
    const next = reader.read();
    assert.deepEqual(values(next), [['x', 4, 4]]);
    assert.deepEqual(next.problems, []);
  });

  test('a bad length checksum stops at that file: reported once with its offset, nothing after it read, no throw', () => {
    const file = fresh();
    const offsets = writeEvents(file, [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2, corrupt: 'length' },
      { scalar: 'x', value: 3, step: 3 },
    ]);
    const reader = new EventFileReader(file, 'r');
    const got = reader.read();
    assert.deepEqual(values(got), [['x', 1, 1]]);
    assert.equal(got.problems.length, 1);
    assert.equal(got.problems[0].offset, offsets[1]);
    assert.match(
      got.problems[0].message,
      new RegExp(`bad length checksum in the record at byte ${offsets[1]}; the rest of the file is not read`),
    );
    assert.equal(reader.lost, true);
    writeEvents(file, [{ scalar: 'x', value: 4, step: 4 }]);
    assert.deepEqual(reader.read(), { rows: [], problems: [], purges: [] });
  });

  test('a growing file: each read returns only the scalars appended since the last', () => {
    const file = fresh();
    const reader = new EventFileReader(file, 'explorer');
    writeEvents(file, [{ file_version: true }, { scalar: 'rollout/reward', value: 0.5, step: 1 }]);
    assert.deepEqual(values(reader.read()), [['rollout/reward', 1, 0.5]]);
    assert.deepEqual(values(reader.read()), []);
    writeEvents(file, [
      { scalar: 'rollout/reward', value: 0.625, step: 2 },
      { scalar: 'rollout/reward', value: 0.75, step: 3 },
    ]);
    assert.deepEqual(values(reader.read()), [
      ['rollout/reward', 2, 0.625],
      ['rollout/reward', 3, 0.75],
    ]);
  });

  test('a reader started at an offset reads only what comes after it', () => {
    const file = fresh();
    const offsets = writeEvents(file, [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2 },
    ]);
    assert.deepEqual(values(new EventFileReader(file, 'r', offsets[1]).read()), [['x', 2, 2]]);
  });
});
