/**
 * The monitor's files across a resume: a run that logs a role from an earlier step than the job's files reach marks
 * the restart (metrics.jsonl's restart line, a SessionLog.START), and every reader (metrics.jsonl, the TensorBoard
 * files alone, the dashboard's rollouts and evaluations' records) then shows each step once, with the resumed run's
 * values; a fresh job carries no restart line; a line torn by a killed writer is cut before the next run appends.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { evalRolloutStepsOnDisk, rolloutStepsOnDisk } from '../../../../client/dashboard/series';
import { readAllMetrics } from '../../../../runtime/metrics/job-metrics';
import type { ScalarRow } from '../../../../runtime/metrics/types';
import { Monitor } from '../../../../runtime/rft/monitor/run-monitor';

const lines = (job: string, file = 'metrics.jsonl'): Record<string, unknown>[] =>
  readFileSync(join(job, 'monitor', file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const keys = (rows: ScalarRow[]): string[] => rows.map((r) => `${r.run} ${r.tag} ${r.step}`);

function logSteps(m: Monitor, role: 'trainer' | 'explorer', from: number, to: number, base: number): void {
  for (let s = from; s <= to; s++) m.log(role, s, { loss: base + s });
}

describe('the monitor across a resume', () => {
  test('a fresh job: one line per step, no restart line', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-steplog-'));
    const m = new Monitor(job);
    logSteps(m, 'trainer', 1, 3, 0);
    assert.deepEqual(
      lines(job).map((l) => [l.step, l.restart]),
      [
        [1, undefined],
        [2, undefined],
        [3, undefined],
      ],
    );
  });

  test('resumed at step 4 after an abandoned run reached 5: each reader shows steps 1..6 once, 4 and 5 from the resumed run', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-steplog-'));
    const first = new Monitor(job);
    logSteps(first, 'trainer', 1, 5, 0);
    logSteps(first, 'explorer', 1, 5, 0);
    first.rollouts(5, [{ prompt: 'p', response: 'old', reward: 0 }]);
    const resumed = new Monitor(job);
    logSteps(resumed, 'trainer', 4, 6, 100);
    logSteps(resumed, 'explorer', 6, 6, 100); // the explorer had not gone past its checkpointed step
    resumed.rollouts(5, [{ prompt: 'p', response: 'new', reward: 1 }]);

    assert.deepEqual(
      lines(job)
        .filter((l) => l.restart)
        .map((l) => [l.role, l.step, l.values]),
      [['trainer', 4, {}]],
    );
    for (const [name, rows] of [
      ['metrics.jsonl', readAllMetrics([job]).rows],
      ['TensorBoard files', readAllMetrics([join(job, 'monitor', 'tensorboard')]).rows],
    ] as const) {
      assert.deepEqual(
        keys(rows).sort(),
        [
          ...[1, 2, 3, 4, 5, 6].map((s) => `explorer loss ${s}`),
          ...[1, 2, 3, 4, 5, 6].map((s) => `trainer loss ${s}`),
        ].sort(),
        name,
      );
      const trainer = (s: number) => rows.find((r) => r.run === 'trainer' && r.step === s)?.value;
      assert.deepEqual([trainer(3), trainer(4), trainer(5), trainer(6)], [3, 104, 105, 106], name);
    }
    assert.deepEqual(
      rolloutStepsOnDisk(job, 10).map((r) => [r.step, r.samples[0].response]),
      [[5, 'new']],
      'the abandoned rollouts of step 5 are not shown',
    );
  });

  test("evaluations' records: each role and taskset is its own timeline; a resumed one voids only its own later lines", () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-steplog-'));
    const sample = (response: string) => [{ prompt: 'p', response, reward: 0 }];
    const first = new Monitor(job);
    for (const step of [0, 2, 4]) {
      first.evalRollouts(step, 'explorer', 'held-out', sample(`old ${step}`));
      first.evalRollouts(step, 'explorer', 'other', sample(`other ${step}`));
    }
    first.evalRollouts(4, 'bench', 'held-out', sample('bench 4'));
    first.rollouts(4, sample('step 4'));
    // Resumed from the checkpoint of step 2: the explorer evaluates held-out again there (the other taskset's
    // evaluation of that timeline is not repeated in this run).
    const resumed = new Monitor(job);
    resumed.evalRollouts(2, 'explorer', 'held-out', sample('new 2'));

    const shown = evalRolloutStepsOnDisk(job, 20).map(
      (r) => `${r.eval?.role} ${r.eval?.taskset} ${r.step}: ${r.samples[0].response}`,
    );
    assert.deepEqual(shown, [
      'explorer held-out 0: old 0',
      'explorer other 0: other 0',
      'explorer other 2: other 2',
      'explorer other 4: other 4',
      'bench held-out 4: bench 4',
      'explorer held-out 2: new 2',
    ]);
    assert.deepEqual(
      rolloutStepsOnDisk(job, 10).map((r) => [r.step, r.eval]),
      [[4, undefined]],
      "the explorer's own records are apart",
    );
    assert.deepEqual(
      evalRolloutStepsOnDisk(job, 2).map((r) => r.samples[0].response),
      ['bench 4', 'new 2'],
      'the last lines only',
    );
  });

  test('a last line torn by a killed writer is cut before the next run appends', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-steplog-'));
    logSteps(new Monitor(job), 'trainer', 1, 2, 0);
    appendFileSync(join(job, 'monitor', 'metrics.jsonl'), '{"role":"trainer","step":3,"ti');
    logSteps(new Monitor(job), 'trainer', 3, 3, 0);
    const got = readAllMetrics([job]);
    assert.deepEqual(got.problems, []);
    assert.deepEqual(keys(got.rows), ['trainer loss 1', 'trainer loss 2', 'trainer loss 3']);
  });
});
