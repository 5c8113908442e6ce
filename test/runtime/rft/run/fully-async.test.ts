/**
 * Trinity 0.6's asynchronous RL through the real CLI (dist/cli.js run), each with the metrics Trinity logs for it:
 * `synchronizer.sync_style: fully_async` with `algorithm.sample_strategy: staleness_control` (the explorer never
 * waits for the trainer; no experience is trained more than `max_staleness` versions behind), `explorer.over_rollout`
 * (a step goes on once enough tasks are back) and `explorer.dynamic_timeout` (main's `warmup_min_steps`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import { killAll, start } from './cli-process';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';

interface MetricsLine {
  role: string;
  step: number;
  values: Record<string, number>;
}

/** The tiny GRPO stage without evals (Trinity refuses eval tasksets with fully_async), `steps` explorer steps. */
function stage(steps: number): string {
  return topLevel(GRPO_STAGE)
    .replace(/ {4}eval_tasksets:[\s\S]*?temperature: 0\.0}\n/, '')
    .replace('eval_on_startup: true', 'eval_on_startup: false')
    .replace('total_steps: 4', `total_steps: ${steps}`)
    .replace('save_interval: 2', 'save_interval: 100');
}

/** Runs `config` through the CLI to the end; its metrics.jsonl and the log lines of its event stream. */
async function runCli(job: TinyJob, name: string, text: string): Promise<{ lines: MetricsLine[]; logs: string[] }> {
  const config = job.write(`${name}.yaml`, text);
  const run = start(config);
  const { code } = await run.exit;
  assert.equal(code, 0, run.stderr().slice(-3000));
  assert.deepEqual(run.events[run.events.length - 1], { type: 'done', status: 'finished' });
  const lines = readFileSync(join(job.dir, 'checkpoints', 'tests', name, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as MetricsLine);
  const logs = run.events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
  return { lines, logs };
}

const of = (lines: MetricsLine[], role: string) => lines.filter((l) => l.role === role);

/** Per explorer step: the tasks that came back, and the experiences they gave. */
const tasksAndExperiences = (lines: MetricsLine[]): number[][] =>
  of(lines, 'explorer').map((l) => [
    l.values['rollout/finished_task_count'],
    l.values['experience_pipeline/experience_count'],
  ]);

after(() => killAll());

describe('fully_async with staleness_control (max_staleness 1, sync_interval 2)', () => {
  let lines: MetricsLine[];
  let logs: string[];
  let text: string;

  test('runs to the end through the CLI', async () => {
    const job = tinyJob(11);
    text =
      header(job, 'fully-async') +
      stage(6).replace(
        'repeat_times: 4',
        'repeat_times: 4\n  sample_strategy: staleness_control\n  sample_strategy_args: {max_staleness: 1}',
      ) +
      'synchronizer:\n  sync_style: fully_async\n  sync_interval: 2\n';
    ({ lines, logs } = await runCli(job, 'fully-async', text));
    assert.ok(
      logs.some((m) => m.startsWith('fully_async: the explorer keeps up to 2 batch(es) in flight')),
      logs.join('\n'),
    );
  });

  test('logs Trinity’s rollout and sample metrics, each one metric-names.ts predicts', async () => {
    const checked = await checkConfig(text);
    const predicted = metricNames(checked.runs[0].resolved, checked.loaded.release);
    const trainer = of(lines, 'trainer');
    assert.ok(trainer.length >= 3, `${trainer.length} trainer steps`);
    for (const k of ['mean', 'max', 'min'].flatMap((s) => [
      `sample/model_version/${s}`,
      `sample/model_version_drift/${s}`,
    ])) {
      assert.ok(
        trainer.every((l) => k in l.values),
        `every trainer step logs ${k}`,
      );
      assert.ok(predicted.trainer.includes(k), `metric-names.ts predicts ${k}`);
    }
    // Weights reach the explorer between batches, so no task sees them change.
    assert.ok(trainer.every((l) => l.values['sample/model_version_drift/max'] === 0));
    const explorer = of(lines, 'explorer');
    assert.deepEqual(
      explorer.map((l) => l.step),
      [1, 2, 3, 4, 5, 6],
    );
    assert.ok(explorer.every((l) => 'rollout/model_version' in l.values));
    assert.ok(predicted.explorer.includes('rollout/model_version'));
  });

  test('the explorer does not wait for the trainer: step 3 ran on the initial weights', () => {
    // With the fixed style the explorer would wait at step 2 for trainer step 2's weights. Here batch 3 was queued
    // (2 in flight) before trainer step 2 could run, and weights arrive only between batches.
    const v = (step: number) => of(lines, 'explorer').find((l) => l.step === step)!.values['rollout/model_version'];
    assert.equal(v(3), 0);
    assert.ok(v(6) >= 2, `explorer step 6 ran on version ${v(6)}`);
  });

  test('the lag bound holds: trainer step s trains no experience older than version (s − 1) − max_staleness', () => {
    for (const l of of(lines, 'trainer')) {
      const lag = l.step - 1 - l.values['sample/model_version/min'];
      assert.ok(lag <= 1, `trainer step ${l.step} trained an experience ${lag} versions behind`);
    }
    // And the bound did something: explorer step 3's experiences (version 0) were passed over at trainer step 3,
    // which would have trained them 2 versions behind.
    const step3 = of(lines, 'trainer').find((l) => l.step === 3)!;
    assert.ok(step3.values['sample/model_version/min'] >= 1, JSON.stringify(step3.values));
  });
});

describe('explorer.over_rollout and explorer.dynamic_timeout', () => {
  test('over_rollout ratio 0.5, wait_after_min 0: each step goes on with the first 2 of its 4 tasks', async () => {
    const job = tinyJob(12);
    // One runner: the tasks go one after another (on more, this tiny model's four tasks finish at the same decode
    // step, and all four are back together with the second).
    const text =
      header(job, 'over-rollout') +
      stage(2).replace(
        'eval_on_startup: false',
        'eval_on_startup: false\n  runner_per_model: 1\n  over_rollout: {ratio: 0.5, wait_after_min: 0}',
      ) +
      'synchronizer:\n  sync_style: explorer_driven\n';
    const { lines, logs } = await runCli(job, 'over-rollout', text);
    assert.deepEqual(tasksAndExperiences(lines), [
      [2, 8],
      [2, 8],
    ]);
    assert.equal(
      logs.filter((m) => /^over_rollout: step \d goes on with 2 of 4 tasks \(2 dropped\)$/.test(m)).length,
      2,
    );
    // train_batch_size stays batch_size × repeat_times (16): the two short steps fill one trainer step.
    assert.deepEqual(
      of(lines, 'trainer').map((l) => l.step),
      [1],
    );
  });

  test('dynamic_timeout warmup_min_steps 2: from step 3 a task may take its mean time × ratio, and times out', async () => {
    const job = tinyJob(13);
    const text =
      header(job, 'dynamic-timeout') +
      stage(3)
        .replace('batch_size: 4', 'batch_size: 2')
        .replace('repeat_times: 4', 'repeat_times: 2')
        .replace(
          'eval_on_startup: false',
          'eval_on_startup: false\n  max_retry_times: 0\n  dynamic_timeout: {enable: true, warmup_min_steps: 2, ratio: 0.000001}',
        );
    const { lines, logs } = await runCli(job, 'dynamic-timeout', text);
    // Every task counts as finished; only those of step 3 come back empty (timed out).
    assert.deepEqual(tasksAndExperiences(lines), [
      [2, 4],
      [2, 4],
      [2, 0],
    ]);
    assert.equal(logs.filter((m) => /^Timeout when running task [01] of batch 3 at attempt 1/.test(m)).length, 2);
  });
});
