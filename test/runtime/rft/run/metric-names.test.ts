/**
 * The explorer's metric names follow the config's Trinity release (runtime/config/runs/metric-names.ts): v0.3.2 logs
 * `time_per_task`/`task_run_time` and eval `{mean,max,min}` (its pipeline prefix is already `experience_pipeline/`;
 * v0.3.0–v0.3.1's `pipeline/` is covered in test/runtime/rft/explorer/experience-pipeline.test.ts); v0.4.0 `experience_pipeline/…`,
 * `time/run_execution` and eval `<key>/{mean,best,worst}@k/{mean,max,min}`; main eval `<key>/mean@n`, `std@n` and the
 * bootstrapped `best@k`/`worst@k`. From v0.3.2 the pipeline's timers `time/experience_pipeline/…` name each operator's
 * class (the V1 wrapper from v0.5.2). Every rollout/pipeline/eval name the runtime logs is one metricNames() predicts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { checkConfig } from '../../../../runtime/config/check-config';
import {
  evalKs,
  evalMetricKeys,
  metricNames,
  pipelineMetricKey,
  runMetricKeys,
} from '../../../../runtime/config/runs/metric-names';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

const FAMILY = /^(rollout|pipeline|experience_pipeline|eval|bench|time\/experience_pipeline)\//;

async function explorerNames(
  release: string,
): Promise<{ names: Set<string>; predicted: Set<string>; values: Record<string, number>[] }> {
  const job = tinyJob(5);
  const stage = topLevel(GRPO_STAGE)
    .replace('total_steps: 4', 'total_steps: 2')
    .replace('rollout_args: {temperature: 0.0}', 'rollout_args: {temperature: 0.0}\n        repeat_times: 2');
  const text =
    header(job, `names-${release}`).replace('# trinity-version: main', `# trinity-version: ${release}`) + stage;
  const config = job.write(`names-${release}.yaml`, text);
  const r = await runJob(config, { backend: 'wasm' });
  assert.equal(r.status, 'finished', r.error);
  const lines = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { role: string; values: Record<string, number> })
    .filter((l) => l.role === 'explorer');
  const checked = await checkConfig(text);
  assert.equal(checked.loaded.release, release);
  const predicted = new Set(metricNames(checked.runs[0].resolved, checked.loaded.release).explorer);
  return { names: new Set(lines.flatMap((l) => Object.keys(l.values))), predicted, values: lines.map((l) => l.values) };
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('explorer metric names by release', () => {
  for (const release of ['v0.3.2', 'v0.4.0', 'main'] as const) {
    test(`${release}: the names Trinity ${release} logs, each predicted by metricNames()`, async () => {
      const { names, predicted } = await explorerNames(release);
      const has = (k: string) => assert.ok(names.has(k), `${release} logs ${k} (got ${[...names].sort().join(', ')})`);
      const lacks = (k: string) => assert.ok(!names.has(k), `${release} does not log ${k}`);
      for (const k of [
        'experience_pipeline/experience_count',
        'experience_pipeline/group_advantages/reward_mean/mean',
        'time/eval',
      ])
        has(k);
      assert.ok(![...names].some((k) => k.startsWith('pipeline/')));
      lacks('eval/total_time');
      for (const k of ['time/experience_pipeline/write', 'time/experience_pipeline/total']) has(k);
      has(
        `time/experience_pipeline/operator/0_${release === 'main' ? 'ExperienceOperatorV1Wrapper' : 'GRPOGroupedAdvantage'}`,
      );
      if (release === 'v0.3.2') {
        for (const k of ['rollout/time_per_task/mean', 'rollout/task_run_time/max']) has(k);
        for (const s of ['mean', 'max', 'min']) has(`eval/sums-eval/accuracy/${s}`);
        for (const k of ['rollout/finished_task_count', 'eval/sums-eval/finished_task_count']) lacks(k);
        assert.ok(![...names].some((k) => k.includes('@') || k.includes('time/run_execution')));
      } else {
        for (const k of [
          'rollout/time/run_execution/mean',
          'rollout/time/task_execution/min',
          'rollout/finished_task_count',
          'eval/sums-eval/finished_task_count',
        ])
          has(k);
        assert.ok(![...names].some((k) => k.includes('time_per_task') || k.includes('task_run_time')));
      }
      if (release === 'v0.4.0') {
        for (const k of [
          'accuracy/mean@2/mean',
          'accuracy/best@2/max',
          'accuracy/worst@2/min',
          'time/run_execution/mean',
        ])
          has(`eval/sums-eval/${k}`);
        lacks('eval/sums-eval/accuracy/mean');
      }
      if (release === 'main') {
        for (const k of [
          'accuracy/mean@2',
          'accuracy/std@2',
          'accuracy/best@2',
          'accuracy/worst@2',
          'time/run_execution',
          'time/task_execution',
        ])
          has(`eval/sums-eval/${k}`);
        for (const k of ['accuracy/mean', 'accuracy/mean@2/mean', 'accuracy/best@2/max']) lacks(`eval/sums-eval/${k}`);
      }
      const unpredicted = [...names].filter((k) => FAMILY.test(k) && !predicted.has(k));
      assert.deepEqual(unpredicted, [], `${release}: logged but not predicted by metricNames()`);
    });
  }

  test('main: greedy eval runs agree, so std@n is 0 and mean@n = best@n = worst@n lies in [0, 1]', async () => {
    const { values } = await explorerNames('main');
    const ev = values.find((v) => 'eval/sums-eval/accuracy/mean@2' in v)!;
    assert.equal(ev['eval/sums-eval/accuracy/std@2'], 0);
    assert.ok(ev['eval/sums-eval/accuracy/mean@2'] >= 0 && ev['eval/sums-eval/accuracy/mean@2'] <= 1);
    assert.equal(ev['eval/sums-eval/accuracy/best@2'], ev['eval/sums-eval/accuracy/mean@2']);
    assert.equal(ev['eval/sums-eval/accuracy/worst@2'], ev['eval/sums-eval/accuracy/mean@2']);
  });

  test('the naming helpers', () => {
    assert.equal(pipelineMetricKey('v0.3.1', 'experience_count'), 'pipeline/experience_count');
    assert.equal(pipelineMetricKey('v0.3.2', 'experience_count'), 'experience_pipeline/experience_count');
    assert.equal(pipelineMetricKey('main', 'time/experience_pipeline/total'), 'time/experience_pipeline/total');
    assert.deepEqual(runMetricKeys('v0.3.2'), { run: 'time_per_task', task: 'task_run_time' });
    assert.deepEqual(runMetricKeys('v0.4.0'), { run: 'time/run_execution', task: 'time/task_execution' });
    assert.deepEqual([evalKs(1), evalKs(2), evalKs(5), evalKs(8)], [[1], [2], [2, 4, 5], [2, 4, 8]]);
    assert.deepEqual(evalMetricKeys('v0.3.0', 'eval', 't', 'accuracy', 4), [
      'eval/t/accuracy/mean',
      'eval/t/accuracy/max',
      'eval/t/accuracy/min',
    ]);
    assert.deepEqual(evalMetricKeys('main', 'bench', 't', 'accuracy', 1), [
      'bench/t/accuracy/mean@1',
      'bench/t/accuracy/std@1',
    ]);
    assert.deepEqual(evalMetricKeys('main', 'eval', 't', 'accuracy', 4), [
      'eval/t/accuracy/mean@4',
      'eval/t/accuracy/std@4',
      'eval/t/accuracy/best@2',
      'eval/t/accuracy/worst@2',
      'eval/t/accuracy/best@4',
      'eval/t/accuracy/worst@4',
    ]);
    assert.deepEqual(evalMetricKeys('v0.5.0', 'eval', 't', 'time/run_execution', 4, true), [
      'eval/t/time/run_execution/mean',
      'eval/t/time/run_execution/max',
      'eval/t/time/run_execution/min',
      'eval/t/time/run_execution/std',
    ]);
  });
});
