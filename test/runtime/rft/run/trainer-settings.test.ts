/**
 * The temperature the trainer scores at, from the resolved config as Trinity derives veRL's
 * `actor_rollout_ref.rollout.temperature`: the first training taskset's rollout temperature, else 1.0.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkConfig } from '../../../../runtime/config/check-config';
import type { Config } from '../../../../runtime/config/types.generated';
import { trainerTemperature } from '../../../../runtime/rft/run/trainer-side/trainer-settings';

const TASKSET = 'name: sums\n    storage_type: file\n    path: data/train.jsonl';

async function temperatureOf(body: string): Promise<number> {
  const checked = await checkConfig(
    `# trinity-version: main\nmodel:\n  model_path: model\n  temperature: 0.7\ncluster: {node_num: 1, gpu_per_node: 2}\n${body}`,
  );
  return trainerTemperature(checked.runs[0].resolved as Config);
}

test("the first training taskset's rollout temperature, as written", async () => {
  const t = await temperatureOf(
    `algorithm: {algorithm_type: grpo}\nbuffer:\n  batch_size: 2\n  explorer_input:\n    taskset:\n      ${TASKSET.replace(/\n/g, '\n  ')}\n      rollout_args: {temperature: 1.5}\n`,
  );
  assert.equal(t, 1.5);
});

test('a taskset without one takes model.temperature (the check fills it)', async () => {
  const t = await temperatureOf(
    `algorithm: {algorithm_type: grpo}\nbuffer:\n  batch_size: 2\n  explorer_input:\n    tasksets:\n      - ${TASKSET.replace(/\n/g, '\n    ')}\n      - name: more\n        storage_type: file\n        path: data/more.jsonl\n        rollout_args: {temperature: 1.2}\n`,
  );
  assert.equal(t, 0.7);
});

test('train mode: no training taskset, so 1.0 whatever model.temperature says', async () => {
  const t = await temperatureOf(
    `mode: train\nalgorithm: {algorithm_type: sft}\nbuffer:\n  train_batch_size: 2\n  trainer_input:\n    experience_buffer: {name: demos, storage_type: file, path: data/sft.jsonl}\n  explorer_input:\n    taskset:\n      ${TASKSET.replace(/\n/g, '\n  ')}\n      rollout_args: {temperature: 1.5}\n`,
  );
  assert.equal(t, 1.0);
});

test('a greedy taskset (temperature 0) is scored untempered', async () => {
  const t = await temperatureOf(
    `algorithm: {algorithm_type: grpo}\nbuffer:\n  batch_size: 2\n  explorer_input:\n    taskset:\n      ${TASKSET.replace(/\n/g, '\n  ')}\n      rollout_args: {temperature: 0.0}\n`,
  );
  assert.equal(t, 1);
});
