/**
 * Keys the exact sweep (unread-keys.test.ts) found read by no code, whose names other keys share, now honoured
 * (issue 38): the rollout model's `seed` seeds the local sampler as `--seed` does, and main's `trainer.critic_warmup`
 * holds the actor back as veRL's `trainer_config.trainer.critic_warmup` does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { checkConfig } from '../../../../runtime/config/check-config';
import type { Config } from '../../../../runtime/config/types.generated';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { algorithmSetup } from '../../../../runtime/rft/run/stage/algorithm-setup';
import { criticSetup } from '../../../../runtime/rft/run/trainer-side/trainer-settings';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';

let job: TinyJob;
before(async () => {
  await initBackend({ prefer: 'wasm' });
  job = tinyJob(5);
});

/** One explorer step and one trainer step, no evaluation. */
const oneStep = (name: string): string =>
  (header(job, name) + topLevel(GRPO_STAGE))
    .replace('total_steps: 4', 'total_steps: 1')
    .replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '')
    .replace('eval_on_startup: true', 'eval_on_startup: false');

async function responses(name: string, yaml: string, seed?: number): Promise<string[]> {
  const r = await runJob(job.write(`${name}.yaml`, yaml), { backend: 'wasm', seed });
  assert.equal(r.status, 'finished', r.error);
  return readFileSync(join(r.stages[0].jobDir, 'monitor', 'rollouts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .flatMap((l) => (JSON.parse(l) as { samples: { response: string }[] }).samples.map((s) => s.response));
}

describe('settings read since the exact sweep', () => {
  test('explorer.rollout_model.seed samples as --seed does', async () => {
    const written = oneStep('seed-written').replace('explorer:\n', 'explorer:\n  rollout_model:\n    seed: 7\n');
    assert.ok(written.includes('    seed: 7'), 'the edit applied');
    const fromConfig = await responses('seed-written', written);
    const fromOption = await responses('seed-option', oneStep('seed-option'), 7);
    assert.ok(fromConfig.length > 0);
    assert.deepEqual(fromConfig, fromOption);
  });

  test("trainer.critic_warmup is the critic's warm-up unless veRL's trainer_config sets its own", async () => {
    const ppo = (trainer: string) =>
      (header(job, 'warmup') + topLevel(GRPO_STAGE))
        .replace('algorithm_type: grpo', 'algorithm_type: ppo')
        .replace('trainer:\n', `trainer:\n${trainer}`);
    const warmup = async (yaml: string): Promise<number> => {
      const checked = await checkConfig(yaml, { datasets: false });
      assert.deepEqual(
        checked.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message),
        [],
      );
      const cfg = checked.runs[0].resolved as Config;
      const critic = criticSetup(cfg, algorithmSetup(cfg, checked.loaded.release), job.dir, 4, 42);
      critic.model.dispose();
      return critic.warmupSteps;
    };
    assert.equal(await warmup(ppo('  critic_warmup: 2\n')), 2);
    assert.equal(await warmup(ppo('  critic_warmup: 2\n  trainer_config:\n    trainer:\n      critic_warmup: 1\n')), 1);
    assert.equal(await warmup(ppo('')), 0);
  });
});
