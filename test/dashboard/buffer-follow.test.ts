/**
 * A Trinity-RFT run's episodes while it runs: its dashboard reads them from the run's SQLite experience buffer (a run
 * of Trinity or a Ray job reports no rollouts events, only the files), and reads them again when the buffer changes.
 * The buffer is written by the Trinity stand-in (test/fixtures/trinity-standin), read by the real CLI process.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BufferChanges, readBufferRollouts, rolloutsInEvents } from '../../client/dashboard/job-rollouts';
import { ROOT } from './harness';
import { writeTrinityBuffer, type TrinityBufferSpec } from '../helpers/trinity-buffer';

const step = (n: number): TrinityBufferSpec['rows'] =>
  [0, 1].map((run) => ({
    experience: {
      eid: { batch: n, task: 0, run, step: 0 },
      tokens: [72, 105, 33, 10],
      prompt_length: 2,
      reward: run,
      prompt_text: `prompt ${n}`,
      response_text: `response ${n}.${run}`,
    },
    model_version: n,
  }));

test('where a live run’s episodes come from: its events for our runtime, its files for Trinity and Ray jobs', () => {
  assert.equal(rolloutsInEvents('local'), true);
  assert.equal(rolloutsInEvents('trinity'), false);
  assert.equal(rolloutsInEvents('ray-job'), false);
});

test('a Trinity buffer that grows is seen to change, and a second read gives its new step', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'twb-follow-buffer-')), 'buffer.db');
  const spec = (n: number): TrinityBufferSpec => ({
    file,
    table: 'exp',
    layout: 'v0.4',
    format: 'trxp',
    rows: step(n),
  });
  const read = () => readBufferRollouts(process.execPath, join(ROOT, 'dist', 'cli.js'), { file, table: 'exp' }, 20);

  const changes = new BufferChanges(file);
  writeTrinityBuffer(spec(1));
  assert.equal(changes.changed(), true, 'the buffer appeared');
  assert.equal(changes.changed(), false, 'nothing new since');
  const first = await read();
  assert.equal(first.error, undefined);
  assert.deepEqual(
    first.steps.map((s) => s.step),
    [1],
  );

  writeTrinityBuffer(spec(2));
  assert.equal(changes.changed(), true, 'a step was appended');
  const second = await read();
  assert.deepEqual(
    second.steps.map((s) => [s.step, s.samples.map((x) => x.response)]),
    [
      [1, ['response 1.0', 'response 1.1']],
      [2, ['response 2.0', 'response 2.1']],
    ],
  );
  assert.equal(changes.changed(), false, 'reading it changes nothing');
});
