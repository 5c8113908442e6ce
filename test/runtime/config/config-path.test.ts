/**
 * Typed config paths: a misspelt path in a check does not compile (the `@ts-expect-error` lines fail `npm run
 * typecheck` if it ever does), and a path built at run time is refused unless some release holds it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configPath, type ConfigPath, type ConfigValueAt } from '../../../runtime/config/config-path';
import { CheckContext } from '../../../runtime/config/check/check-context';
import { loadConfig } from '../../../runtime/config/load/load-config';

test('misspelt and absent paths do not compile (nor pass configPath); values are typed from the model', () => {
  const ok: ConfigPath[] = [
    'algorithm.algorithm_type',
    'buffer.explorer_input.tasksets.2.format.prompt_key',
    'buffer.trainer_input.auxiliary_buffers.sft_dataset.path',
    'algorithm.policy_loss_fn_args.clip_range',
    'trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
  ];
  // @ts-expect-error a typo
  const typo: ConfigPath = 'algorithm.algoritm_type';
  // @ts-expect-error a list item needs an index
  const noIndex: ConfigPath = 'buffer.explorer_input.tasksets.format';
  const repeat: ConfigValueAt<'algorithm.repeat_times'> = 8;
  // @ts-expect-error repeat_times is a number
  const wrong: ConfigValueAt<'algorithm.repeat_times'> = 'eight';
  // The type and the runtime patterns agree: what compiles as a ConfigPath is accepted at run time, and the
  // paths the type refuses are refused there too.
  for (const p of ok) assert.equal(configPath(p), p);
  for (const p of [typo, noIndex]) assert.throws(() => configPath(p), /not a config path/);
  assert.deepEqual([repeat, wrong], [8, 'eight']);
});

test('configPath accepts what a release holds and refuses the rest, naming the path', () => {
  for (const p of [
    'buffer.explorer_input.tasksets.11.default_workflow_type',
    'buffer.explorer_input.taskset.default_eval_workflow_type', // v0.3's single taskset
    'buffer.trainer_input.sft_warmup_dataset.format.prompt_key', // removed after v0.3
    'algorithm.kl_loss_fn_args.adaptive',
  ])
    assert.equal(configPath(p), p);
  for (const p of [
    'buffer.explorer_input.tasksets.x.name',
    'buffer.explorer_input.tasksets.0.default_eval_workflow_type', // only eval tasksets hold it
    'algorithm.nope',
  ])
    assert.throws(
      () => configPath(p),
      new RegExp(`not a config path of any modelled release: ${p.replace(/\./g, '\\.')}`),
    );
});

test('CheckContext.get reads through typed paths, undefined past a missing section', () => {
  const loaded = loadConfig('algorithm:\n  algorithm_type: grpo\n  repeat_times: 4\n', { release: 'main' });
  const ctx = new CheckContext(loaded, structuredClone(loaded.value as Record<string, unknown>));
  assert.equal(ctx.get('algorithm.repeat_times'), 4);
  assert.equal(ctx.get('buffer.explorer_input.tasksets.5.name'), undefined);
});
