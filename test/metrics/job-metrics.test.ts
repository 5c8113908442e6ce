/**
 * MetricsReader over a job: Trinity's layout written by the independent Python writer (plain and staged jobs,
 * entered at any level), the local runtime's own monitor files, metrics.jsonl on its own, and a job that grows.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MetricsReader, readAllMetrics } from '../../runtime/metrics/job-metrics';
import { Monitor } from '../../runtime/rft/monitor/run-monitor';
import { writeEvents } from '../helpers/tfevents';

const EVENTS = 'events.out.tfevents.1700000000.node-0';

/** `<job>/monitor/tensorboard/<role>/events…` as Trinity's TensorboardMonitor lays it out. */
function trinityJob(job: string, steps = 2): void {
  for (const role of ['explorer', 'trainer']) {
    const dir = join(job, 'monitor', 'tensorboard', role);
    mkdirSync(dir, { recursive: true });
    const tag = role === 'explorer' ? 'rollout/reward' : 'actor/pg_loss';
    writeEvents(join(dir, EVENTS), [
      { file_version: true },
      ...Array.from({ length: steps }, (_, i) => ({ scalar: tag, value: (i + 1) / 4, step: i + 1 })),
    ]);
  }
  // Checkpoints sit beside the monitor folder; they hold no metrics.
  mkdirSync(join(job, 'global_step_2', 'actor'), { recursive: true });
}

const triples = (rows: { run: string; tag: string; step: number; value: number }[]) =>
  rows.map((r) => `${r.run} ${r.tag} ${r.step} ${r.value}`).sort();

describe('MetricsReader', () => {
  test('a Trinity job dir gives every series, run = role folder', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-job-'));
    trinityJob(job);
    const got = readAllMetrics([job]);
    assert.deepEqual(got.problems, []);
    assert.deepEqual(triples(got.rows), [
      'explorer rollout/reward 1 0.25',
      'explorer rollout/reward 2 0.5',
      'trainer actor/pg_loss 1 0.25',
      'trainer actor/pg_loss 2 0.5',
    ]);
    assert.ok(got.rows.every((r) => typeof r.wallTime === 'number' && r.wallTime > 1.6e9));
  });

  test('the same run names from the tensorboard dir, a role dir and a single file', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-job-'));
    trinityJob(job, 1);
    const tb = join(job, 'monitor', 'tensorboard');
    assert.deepEqual(triples(readAllMetrics([tb]).rows), [
      'explorer rollout/reward 1 0.25',
      'trainer actor/pg_loss 1 0.25',
    ]);
    assert.deepEqual(triples(readAllMetrics([join(tb, 'trainer')]).rows), ['trainer actor/pg_loss 1 0.25']);
    assert.deepEqual(triples(readAllMetrics([join(tb, 'explorer', EVENTS)]).rows), ['explorer rollout/reward 1 0.25']);
  });

  test('a staged job: run names carry the stage folder', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-job-'));
    trinityJob(join(job, 'sft_warmup'), 1);
    trinityJob(join(job, 'grpo'), 1);
    assert.deepEqual(triples(readAllMetrics([job]).rows), [
      'grpo/explorer rollout/reward 1 0.25',
      'grpo/trainer actor/pg_loss 1 0.25',
      'sft_warmup/explorer rollout/reward 1 0.25',
      'sft_warmup/trainer actor/pg_loss 1 0.25',
    ]);
  });

  test("our own monitor's files: each value once, exact (metrics.jsonl wins over its TensorBoard copy), with wall time", () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-own-'));
    const monitor = new Monitor(job);
    monitor.log('trainer', 1, { 'actor/pg_loss': 0.1 + 0.2, 'actor/grad_norm': 3 });
    monitor.log('explorer', 1, { 'rollout/reward': 0.5 });
    monitor.log('trainer', 2, { 'actor/pg_loss': -1 / 3, 'actor/grad_norm': 2 });
    const got = readAllMetrics([job]);
    assert.deepEqual(got.problems, []);
    assert.deepEqual(triples(got.rows), [
      'explorer rollout/reward 1 0.5',
      `trainer actor/grad_norm 1 3`,
      'trainer actor/grad_norm 2 2',
      `trainer actor/pg_loss 1 ${0.1 + 0.2}`,
      `trainer actor/pg_loss 2 ${-1 / 3}`,
    ]);
    assert.ok(got.rows.every((r) => r.wallTime !== null && Math.abs(r.wallTime - Date.now() / 1000) < 60));
    // Its TensorBoard files alone hold the same series, in float32.
    const tb = readAllMetrics([join(job, 'monitor', 'tensorboard')]);
    assert.deepEqual(tb.problems, []);
    assert.deepEqual(triples(tb.rows), [
      'explorer rollout/reward 1 0.5',
      'trainer actor/grad_norm 1 3',
      'trainer actor/grad_norm 2 2',
      'trainer actor/pg_loss 1 0.3',
      `trainer actor/pg_loss 2 -0.33333334`,
    ]);
  });

  test('metrics.jsonl: a line still being written waits; a bad line is reported with its byte offset', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-jsonl-'));
    const file = join(dir, 'metrics.jsonl');
    const good = `${JSON.stringify({ role: 'explorer', step: 1, time: 0.5, values: { 'rollout/reward': 0.5 } })}\n`;
    writeFileSync(file, `${good}not json\n{"role": "trainer", "step": 2, "ti`);
    const reader = new MetricsReader([dir]);
    const first = reader.read();
    assert.deepEqual(first.rows, [{ run: 'explorer', tag: 'rollout/reward', step: 1, wallTime: null, value: 0.5 }]);
    assert.equal(first.problems.length, 1);
    assert.equal(first.problems[0].offset, good.length);
    assert.match(first.problems[0].message, /metrics\.jsonl: the line at byte \d+ is not JSON; skipped/);
    appendFileSync(file, `me": 1, "values": {"actor/pg_loss": 2}}\n`);
    assert.deepEqual(reader.read(), {
      rows: [{ run: 'trainer', tag: 'actor/pg_loss', step: 2, wallTime: null, value: 2 }],
      problems: [],
      purges: [],
    });
  });

  test('a growing job: new steps and a role folder that appears later are picked up, nothing twice', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-grow-'));
    const reader = new MetricsReader([job]);
    assert.deepEqual(reader.read(), { rows: [], problems: [], purges: [] });
    const explorer = join(job, 'monitor', 'tensorboard', 'explorer');
    mkdirSync(explorer, { recursive: true });
    writeEvents(join(explorer, EVENTS), [{ scalar: 'rollout/reward', value: 0.25, step: 1 }]);
    assert.deepEqual(triples(reader.read().rows), ['explorer rollout/reward 1 0.25']);
    const trainer = join(job, 'monitor', 'tensorboard', 'trainer');
    mkdirSync(trainer, { recursive: true });
    writeEvents(join(trainer, EVENTS), [{ scalar: 'actor/pg_loss', value: 1, step: 1 }]);
    writeEvents(join(explorer, EVENTS), [{ scalar: 'rollout/reward', value: 0.5, step: 2 }]);
    assert.deepEqual(triples(reader.read().rows), ['explorer rollout/reward 2 0.5', 'trainer actor/pg_loss 1 1']);
    assert.deepEqual(reader.read().rows, []);
  });

  test('skipExisting: what was in the job before is not returned, what is appended after is', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-skip-'));
    trinityJob(job, 2);
    const reader = new MetricsReader([job], { skipExisting: true });
    assert.deepEqual(reader.read().rows, []);
    writeEvents(join(job, 'monitor', 'tensorboard', 'trainer', EVENTS), [
      { scalar: 'actor/pg_loss', value: 0.75, step: 3 },
    ]);
    assert.deepEqual(triples(reader.read().rows), ['trainer actor/pg_loss 3 0.75']);
  });

  test('a missing root gives nothing (a job dir not created yet), a damaged file names itself', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-bad-'));
    const dir = join(job, 'monitor', 'tensorboard', 'trainer');
    mkdirSync(dir, { recursive: true });
    const offsets = writeEvents(join(dir, EVENTS), [
      { scalar: 'x', value: 1, step: 1 },
      { scalar: 'x', value: 2, step: 2, corrupt: 'payload' },
    ]);
    const got = readAllMetrics([join(job, 'not-yet'), job]);
    assert.deepEqual(triples(got.rows), ['trainer x 1 1']);
    assert.equal(got.problems.length, 1);
    assert.equal(got.problems[0].file, join(dir, EVENTS));
    assert.equal(got.problems[0].offset, offsets[1]);
  });
});
