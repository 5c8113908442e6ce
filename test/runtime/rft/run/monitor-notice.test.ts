/**
 * A config naming a monitor the local runtime never reaches (wandb) gets TRN241 as information at the key, and its
 * run says so once at its start, naming the metrics file it writes instead, which holds the run's metrics.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { checkConfig } from '../../../../runtime/config/check-config';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('monitor_type wandb in a local run', () => {
  test('information at the key; one log line at the start names where the metrics go; the metrics are there', async () => {
    const job = tinyJob(31);
    const yaml =
      header(job, 'wandb') +
      topLevel(GRPO_STAGE)
        .replace('total_steps: 4', 'total_steps: 1')
        .replace('eval_on_startup: true', 'eval_on_startup: false')
        .replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '') +
      'monitor:\n  monitor_type: wandb\n';
    assert.ok(yaml.includes('total_steps: 1') && !yaml.includes('eval_tasksets'), 'the edits applied');
    const checked = await checkConfig(yaml, { datasets: false });
    const info = checked.diagnostics.filter((d) => d.code === 'TRN241');
    assert.deepEqual(
      info.map((d) => [d.severity, yaml.slice(0, d.range[0]).split('\n').length]),
      [['information', yaml.split('\n').indexOf('  monitor_type: wandb') + 1]],
    );
    assert.match(info[0].message, /logs nothing to wandb; its metrics go to `monitor\/metrics\.jsonl`/);
    const logs: string[] = [];
    const r = await runJob(job.write('wandb.yaml', yaml), { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'finished', r.error);
    const metrics = join(job.dir, 'checkpoints', 'tests', 'wandb', 'monitor', 'metrics.jsonl');
    const said = logs.filter((m) => m.includes('the local runtime logs nothing to wandb'));
    assert.equal(said.length, 1, logs.join('\n'));
    assert.ok(said[0].includes(metrics), said[0]);
    assert.ok(existsSync(metrics) && readFileSync(metrics, 'utf8').includes('"trainer"'), 'the metrics are written');
  });
});
