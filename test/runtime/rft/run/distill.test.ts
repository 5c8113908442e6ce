/**
 * On-policy distillation end to end (runJob): a tiny student learns from a different tiny teacher loaded from
 * `explorer.auxiliary_models`. With `on_policy_distill` the mean per-token KL of the student's samples (student −
 * teacher log-prob, the workflow's `kl_divergence` summed per response, over the response tokens) falls over ten
 * steps; `jsd` runs with the explorer in a worker thread (the teacher loads there too). Every explorer and actor
 * metric the runs log is one runtime/config/runs/metric-names.ts predicts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import { header, saveTinyModel, tinyJob } from './helpers';

interface Line {
  role: string;
  step: number;
  values: Record<string, number>;
}

/** A job distilling the tiny student from a sharper teacher (its own seed) over the sums taskset. */
function distillJob(name: string, algorithm: string, steps: number, extra = ''): string {
  const job = tinyJob(21);
  saveTinyModel(join(job.dir, 'teacher'), 77, { sharpness: 10 });
  // Rollout model + teacher + trainer GPUs; the trainer's 2 divide the 64 experiences of a step.
  const yaml = `${header(job, name).replace('gpu_per_node: 2', 'gpu_per_node: 4')}mode: both
algorithm:
  algorithm_type: ${algorithm}
  repeat_times: 8
  optimizer:
    lr: 2e-2
buffer:
  batch_size: 8
  total_steps: ${steps}
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: on_policy_distill_workflow
explorer:
  auxiliary_models:
    - model_path: teacher
trainer:
  save_interval: ${steps}
${extra}`;
  return job.write(`${name}.yaml`, yaml);
}

async function run(
  config: string,
): Promise<{ lines: Line[]; logs: string[]; predicted: { explorer: Set<string>; trainer: Set<string> } }> {
  const logs: string[] = [];
  const r = await runJob(config, { backend: 'wasm', seed: 3, log: (_, m) => logs.push(m) });
  assert.equal(r.status, 'finished', r.error);
  const lines = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  const checked = await checkConfig(readFileSync(config, 'utf8'));
  const names = metricNames(checked.runs[0].resolved, checked.loaded.release);
  return { lines, logs, predicted: { explorer: new Set(names.explorer), trainer: new Set(names.trainer) } };
}

function assertPredicted(lines: Line[], predicted: { explorer: Set<string>; trainer: Set<string> }): void {
  const logged = (role: string) => [
    ...new Set(lines.filter((l) => l.role === role).flatMap((l) => Object.keys(l.values))),
  ];
  const explorer = logged('explorer').filter((k) =>
    /^(rollout|experience_pipeline|time\/experience_pipeline)\//.test(k),
  );
  assert.deepEqual(
    explorer.filter((k) => !predicted.explorer.has(k)),
    [],
    'explorer metrics metric-names.ts does not list',
  );
  assert.deepEqual(
    logged('trainer').filter((k) => k.startsWith('actor/') && !predicted.trainer.has(k)),
    [],
    'actor metrics metric-names.ts does not list',
  );
  for (const s of ['mean', 'max', 'min']) assert.ok(predicted.explorer.has(`rollout/kl_divergence/${s}`));
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('on-policy distillation', () => {
  test('on_policy_distill: the per-token KL to the teacher falls over ten steps', async (t) => {
    const { lines, predicted } = await run(distillJob('opd', 'on_policy_distill', 10));
    assertPredicted(lines, predicted);
    const trainer = lines.filter((l) => l.role === 'trainer');
    assert.equal(trainer.length, 10);
    for (const l of trainer) assert.ok(Number.isFinite(l.values['actor/pg_loss']) && l.values['actor/grad_norm'] > 0);
    // Step k's experiences are trainer step k's batch: KL summed over all responses ÷ their tokens.
    const kl = lines
      .filter((l) => l.role === 'explorer' && 'rollout/kl_divergence/mean' in l.values)
      .map(
        (l) =>
          l.values['rollout/kl_divergence/mean'] /
          trainer.find((x) => x.step === l.step)!.values['response_length/mean'],
      );
    assert.equal(kl.length, 10);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const [first, last] = [mean(kl.slice(0, 3)), mean(kl.slice(-3))];
    t.diagnostic(
      `per-token KL by step: ${kl.map((x) => x.toFixed(3)).join(' ')}; first 3 ${first.toFixed(3)}, last 3 ${last.toFixed(3)}`,
    );
    assert.ok(
      kl.every((x) => x > 0),
      'the student samples what the teacher finds less likely',
    );
    assert.ok(last < 0.5 * first, `per-token KL ${first} -> ${last}`);
  });

  test('jsd: runs with the explorer (and its teacher) in a worker thread', async () => {
    const { lines, logs, predicted } = await run(distillJob('jsd', 'jsd', 2, 'synchronizer:\n  sync_offset: 1\n'));
    assert.ok(
      logs.some((m) => /explorer runs in a worker thread/.test(m)),
      logs.join('\n'),
    );
    assertPredicted(lines, predicted);
    assert.ok(lines.some((l) => l.role === 'explorer' && Number.isFinite(l.values['rollout/kl_divergence/mean'])));
    const trainer = lines.filter((l) => l.role === 'trainer');
    assert.equal(trainer.length, 2);
    for (const l of trainer) assert.ok(Number.isFinite(l.values['actor/pg_loss']));
  });
});
