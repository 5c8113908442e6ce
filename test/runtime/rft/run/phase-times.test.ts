/**
 * The RL loop's phase times (runtime/rft/monitor/phase-times.ts, bench:rft's per-phase table): nothing is recorded
 * unless they are on; on, a real GRPO run with the explorer in its worker thread brings the worker's phases back to
 * the trainer's thread beside the trainer's own, each part within its total.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { enablePhaseTimes, takePhaseTimes, type PhaseTimes } from '../../../../runtime/rft/monitor/phase-times';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

/** A 2-step GRPO run with the explorer overlapped in its worker (sync_offset 1), no evals. */
async function overlappedRun(name: string): Promise<void> {
  const job = tinyJob(5);
  const body = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', 'total_steps: 2')
    .replace('eval_on_startup: true', 'eval_on_startup: false')
    .replace('eval_interval: 2', 'eval_interval: 100');
  const config = job.write(`${name}.yaml`, header(job, name) + body + 'synchronizer:\n  sync_offset: 1\n');
  const r = await runJob(config, { backend: 'wasm' });
  assert.equal(r.status, 'finished', r.error);
}

test('phase times: off, a run records none; on, the worker’s phases and the trainer’s come back, parts within totals', async () => {
  takePhaseTimes();
  await overlappedRun('off');
  assert.deepEqual(takePhaseTimes(), {});

  enablePhaseTimes();
  await overlappedRun('on');
  const t: PhaseTimes = takePhaseTimes();
  const ms = (phase: string): number => {
    assert.ok(t[phase], `no phase "${phase}" in ${Object.keys(t).join(', ')}`);
    return t[phase].ms;
  };
  // 2 explorer steps of 4 tasks × 4 runs, in the worker; 2 trainer steps in this thread.
  assert.equal(t['explorer: explore step (total)'].calls, 2);
  assert.ok(t['explorer: sampling (generate)'].calls >= 2 * 4);
  assert.ok(t['explorer: rewards'].calls >= 2 * 4 * 4);
  assert.equal(t['explorer: reference log-probs'].calls, 2);
  assert.equal(t['trainer: train step (total)'].calls, 2);
  assert.equal(t['trainer: forward and backward'].calls, 2);
  assert.ok(t['loop: weight sync (copy out)'].calls >= 1);
  const explorerParts = [
    'explorer: sampling (generate)',
    'explorer: rewards',
    'explorer: experience pipeline (advantages)',
  ];
  assert.ok(explorerParts.reduce((a, p) => a + ms(p), 0) <= ms('explorer: explore step (total)'));
  const trainerParts = ['trainer: batching (pad)', 'trainer: forward and backward', 'trainer: optimizer (clip, AdamW)'];
  assert.ok(trainerParts.reduce((a, p) => a + ms(p), 0) <= ms('trainer: train step (total)'));
  assert.ok(ms('trainer: forward and backward') > 0);
});
