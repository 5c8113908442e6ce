/**
 * A run stopped between checkpoints and resumed: the steps after the checkpoint are logged twice, once by the
 * abandoned timeline and once by the resumed one; every reader (metrics.jsonl, the TensorBoard files alone, the
 * rollouts) shows each (run, tag, step) once, with the resumed run's values. In process, on the tiny job.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { rolloutStepsOnDisk } from '../../../../client/dashboard/series';
import { initBackend } from '../../../../runtime/engine/backend';
import { readAllMetrics } from '../../../../runtime/metrics/job-metrics';
import type { ScalarRow } from '../../../../runtime/metrics/types';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { runJob } from '../../../../runtime/rft/run/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

const duplicates = (rows: ScalarRow[]): string[] => {
  const seen = new Set<string>();
  return rows.map((r) => `${r.run} ${r.tag} ${r.step}`).filter((k) => seen.has(k) || !seen.add(k));
};

describe('a resumed run’s curves', () => {
  test('stopped after trainer step 5 with the checkpoint at 4, then resumed: no step has two values in any reader', async () => {
    const job = tinyJob(9);
    const body = topLevel(GRPO_STAGE)
      .replace('total_steps: 4', 'total_steps: 7')
      .replace('eval_on_startup: true', 'eval_on_startup: false');
    const config = job.write('curves.yaml', header(job, 'curves') + body);
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'curves');

    const stop = new AbortController();
    const first = await runJob(config, {
      backend: 'wasm',
      signal: stop.signal,
      progress: (role, step) => {
        if (role === 'trainer' && step >= 5) stop.abort();
      },
    });
    assert.equal(first.status, 'stopped');
    assert.equal(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'), '4\n');

    const events: RuntimeEvent[] = [];
    const second = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
    assert.equal(second.status, 'finished', second.error);
    const resumedAt5 = events.find((e) => e.type === 'metrics' && e.role === 'trainer' && e.step === 5);
    assert.ok(resumedAt5 && resumedAt5.type === 'metrics', 'the resumed run trains step 5 again');

    const all = readAllMetrics([jobDir]);
    assert.deepEqual(all.problems, []);
    assert.deepEqual(duplicates(all.rows), [], 'metrics.jsonl');
    const loss5 = all.rows.find((r) => r.run === 'trainer' && r.tag === 'actor/pg_loss' && r.step === 5);
    assert.equal(loss5?.value, resumedAt5.values['actor/pg_loss'], "step 5 shows the resumed run's value");
    assert.deepEqual(
      [...new Set(all.rows.filter((r) => r.run === 'trainer').map((r) => r.step))].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const tb = readAllMetrics([join(jobDir, 'monitor', 'tensorboard')]);
    assert.deepEqual(duplicates(tb.rows), [], 'TensorBoard files');
    const rollouts = rolloutStepsOnDisk(jobDir, 100).map((r) => r.step);
    assert.deepEqual(
      rollouts,
      [...new Set(rollouts)].sort((a, b) => a - b),
      'rollouts.jsonl',
    );
  });
});
