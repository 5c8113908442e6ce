/**
 * A damaged newest checkpoint (what a machine crash can leave): the resumed run names the damaged file, falls back to
 * the newest intact checkpoint and finishes from there; with none intact it stops before any work, saying which and
 * why. In process, on the tiny job.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

function grpo(job: TinyJob, steps: number): string {
  const body = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', `total_steps: ${steps}`)
    .replace('eval_on_startup: true', 'eval_on_startup: false')
    .replace('eval_interval: 2', 'eval_interval: 100')
    .replace('save_interval: 2', 'save_interval: 1');
  return job.write('grpo.yaml', header(job, 'damaged') + body);
}

async function run(
  config: string,
): Promise<{ status: string; error?: string; events: RuntimeEvent[]; logs: string[] }> {
  const events: RuntimeEvent[] = [];
  const logs: string[] = [];
  const r = await runJob(config, { backend: 'wasm', events: (e) => events.push(e), log: (_, m) => logs.push(m) });
  return { status: r.status, error: r.error, events, logs };
}
const trainerSteps = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === 'trainer' ? [e.step] : []));

describe('a damaged checkpoint', () => {
  test('a truncated optimizer.safetensors in the newest checkpoint: the resume names it and continues from the one before', async () => {
    const job = tinyJob(5);
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'damaged');
    assert.equal((await run(grpo(job, 3))).status, 'finished');
    truncateSync(join(jobDir, 'global_step_3', 'optimizer.safetensors'), 1000);

    const resumed = await run(grpo(job, 5));
    assert.equal(resumed.status, 'finished', resumed.error);
    const warning = resumed.logs.find((m) => m.includes('global_step_3 is damaged'));
    assert.match(
      warning ?? '',
      /^checkpoint global_step_3 is damaged: optimizer\.safetensors: 1000 bytes, the manifest says \d+; it is set aside as global_step_3\.damaged and the run resumes from global_step_2$/,
    );
    assert.deepEqual(trainerSteps(resumed.events), [3, 4, 5]);
    assert.ok(existsSync(join(jobDir, 'global_step_3.damaged')), 'the damaged checkpoint is kept aside');
    assert.equal(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'), '5\n');
  });

  test('no intact checkpoint: the run stops before any work, naming each checkpoint and why', async () => {
    const job = tinyJob(6);
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'damaged');
    assert.equal((await run(grpo(job, 1))).status, 'finished');
    truncateSync(join(jobDir, 'global_step_1', 'model.safetensors'), 64);
    const resumed = await run(grpo(job, 3));
    assert.equal(resumed.status, 'failed');
    assert.match(
      resumed.error ?? '',
      /no checkpoint in .* is intact, so the run cannot resume:\n {2}global_step_1: model\.safetensors: 64 bytes, the manifest says \d+\n/,
    );
    assert.deepEqual(trainerSteps(resumed.events), []);
  });
});
