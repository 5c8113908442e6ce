/**
 * The RL loop's phase times (runtime/rft/monitor/phase-times.ts, bench:rft's per-phase table): nothing is recorded
 * unless they are on (normal runs); on, a real GRPO run with the explorer in its worker thread brings the worker's
 * phases back to the trainer's thread beside the trainer's own, each part within its total.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { enablePhaseTimes, takePhaseTimes, timed, type PhaseTimes } from '../../../../runtime/rft/monitor/phase-times';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

/** A 2-step GRPO run with the explorer overlapped in its worker (sync_offset 1), without eval tasksets. */
async function overlappedRun(name: string): Promise<void> {
  const job = tinyJob(5);
  const body = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', 'total_steps: 2')
    .replace(/^( *)eval_tasksets:\n(?:\1 +.*\n)+/m, '')
    .replace('eval_on_startup: true', 'eval_on_startup: false');
  const config = job.write(`${name}.yaml`, header(job, name) + body + 'synchronizer:\n  sync_offset: 1\n');
  const r = await runJob(config, { backend: 'wasm' });
  assert.equal(r.status, 'finished', r.error);
}

test('phase times: off, nothing is recorded; on, the worker’s phases and the trainer’s come back, parts within totals', async () => {
  assert.equal(process.env.TRINITY_WORKBENCH_PHASE_TIMES, undefined);
  assert.equal(await timed('probe', () => Promise.resolve(1)), 1);
  assert.equal(
    timed('probe', () => 2),
    2,
  );
  assert.deepEqual(takePhaseTimes(), {});

  enablePhaseTimes();
  await overlappedRun('on');
  const t: PhaseTimes = takePhaseTimes();
  const phase = (name: string): PhaseTimes[string] => {
    assert.ok(t[name], `no phase "${name}" in ${Object.keys(t).join(', ')}`);
    return t[name];
  };
  const ms = (name: string): number => phase(name).ms;
  // 2 explorer steps of 4 tasks × 4 runs, in the worker; 2 trainer steps in this thread. A step's tasks go at once
  // (runner_per_model 8 by default), their chat calls as one engine call.
  assert.equal(phase('explorer: explore step (total)').calls, 2);
  assert.equal(phase('explorer: sampling (generate)').calls, 2);
  assert.equal(phase('explorer: rewards').calls, 2 * 4 * 4);
  assert.equal(phase('explorer: reference log-probs').calls, 2);
  assert.equal(phase('trainer: train step (total)').calls, 2);
  assert.equal(phase('trainer: forward and backward').calls, 2);
  assert.ok(phase('loop: weight sync (copy out)').calls >= 1);
  const explorerParts = [
    'explorer: sampling (generate)',
    'explorer: rewards',
    'explorer: experience pipeline (advantages)',
  ];
  assert.ok(explorerParts.reduce((a, p) => a + ms(p), 0) <= ms('explorer: explore step (total)'));
  const trainerParts = ['trainer: batching (pad)', 'trainer: forward and backward', 'trainer: optimizer (clip, AdamW)'];
  assert.ok(trainerParts.reduce((a, p) => a + ms(p), 0) <= ms('trainer: train step (total)'));
  assert.ok(ms('trainer: forward and backward') > 0);
  assert.ok(phase('trainer: forward and backward').cpuMs > 0);
});
