/**
 * Settings about scale (several engines, tensor parallelism, NCCL weight sync) are accepted by a local run and not
 * used: TRN319 says so as information at each written key, and the run says so in one line at its start, both from
 * the one table (runtime/config/check/scale-settings.ts); the run still finishes.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { checkConfig } from '../../../../runtime/config/check-config';
import { SCALE_SETTINGS } from '../../../../runtime/config/check/scale-settings';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('settings about scale in a local run', () => {
  test('information at each written key; one line at the start names each and why; the run finishes', async () => {
    const job = tinyJob(32);
    const yaml =
      header(job, 'scale').replace('gpu_per_node: 2', 'gpu_per_node: 5') +
      topLevel(GRPO_STAGE)
        .replace('total_steps: 4', 'total_steps: 1')
        .replace('eval_on_startup: true', 'eval_on_startup: false')
        .replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '')
        .replace('explorer:\n', 'explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 2\n') +
      'synchronizer:\n  sync_method: nccl\n';
    assert.ok(yaml.includes('total_steps: 1') && yaml.includes('engine_num: 2'), 'the edits applied');
    const lines = yaml.split('\n');
    const checked = await checkConfig(yaml, { datasets: false });
    assert.deepEqual(
      checked.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message),
      [],
    );
    const info = checked.diagnostics.filter((d) => d.code === 'TRN319');
    assert.deepEqual(
      info.map((d) => [d.severity, yaml.slice(0, d.range[0]).split('\n').length]),
      [
        ['information', lines.indexOf('    engine_num: 2') + 1],
        ['information', lines.indexOf('    tensor_parallel_size: 2') + 1],
        ['information', lines.indexOf('  sync_method: nccl') + 1],
      ],
    );
    assert.match(info[0].message, /`explorer\.rollout_model\.engine_num: 2`: a local run does not use this/);
    const logs: string[] = [];
    const r = await runJob(job.write('scale.yaml', yaml), { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'finished', r.error);
    const said = logs.filter((m) => m.startsWith('settings about scale'));
    assert.equal(said.length, 1, logs.join('\n'));
    for (const [i, s] of SCALE_SETTINGS.slice(0, 3).entries()) {
      assert.ok(said[0].includes(s.path), s.path);
      assert.ok(said[0].includes(s.why) && info[i].message.includes(s.why), `${s.path}: the same words both places`);
    }
    assert.ok(!logs.some((m) => /nccl runs as memory sync/.test(m)), 'NCCL is said once');
  });

  test('a config at the defaults hears nothing of scale', async () => {
    const job = tinyJob(33);
    const yaml = header(job, 'plain') + topLevel(GRPO_STAGE);
    const checked = await checkConfig(yaml, { datasets: false });
    assert.deepEqual(
      checked.diagnostics.filter((d) => d.code === 'TRN319'),
      [],
    );
  });
});
