/** The metric -> config table (runtime/config/model/metric-drivers.ts): its keys are the model's, and it covers what runs log. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { metricNames } from '../../../runtime/config/runs/metric-names';
import {
  configKeyExists,
  METRIC_DRIVERS,
  metricDriverRow,
  metricDrivers,
  metricMatches,
  metricsDrivenBy,
} from '../../../runtime/config/model/metric-drivers';
import { RELEASES } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';

const FIXTURE = 'test/fixtures/run-health/tiny-grpo/metrics.jsonl';

describe('metric drivers', () => {
  test('every key is a key of the model at main; every former key only of older releases', () => {
    for (const row of METRIC_DRIVERS) {
      assert.ok(row.keys.length > 0, row.metric);
      for (const k of row.keys) assert.ok(configKeyExists(k, 'main'), `${row.metric}: ${k} is not a key at main`);
      for (const k of row.formerKeys ?? []) {
        assert.ok(!configKeyExists(k, 'main'), `${k} still exists at main: list it in keys`);
        assert.ok(
          RELEASES.some((r) => configKeyExists(k, r)),
          `${k} exists in no release`,
        );
      }
    }
  });

  test('every row has a driver in every release', () => {
    for (const release of RELEASES)
      for (const row of METRIC_DRIVERS)
        assert.ok(metricDrivers(row.metric.replace(/\*/g, 'x'), release).length > 0, `${row.metric} at ${release}`);
  });

  test('names that are not keys are refused', () => {
    assert.equal(configKeyExists('model.max_response_token', 'main'), false);
    assert.equal(configKeyExists('algorithm.policy_loss_fn_args.clip_rang', 'main'), false);
    assert.equal(configKeyExists('algorithm.policy_loss_fn_args.clip_range', 'main'), true);
    assert.equal(configKeyExists('trainer.grad_clip', 'v0.3.1'), false);
  });

  test("the issue's examples, and the names per release", () => {
    assert.equal(metricDrivers('response_length/clip_ratio', 'main')[0], 'model.max_response_tokens');
    assert.ok(metricDrivers('actor/pg_clipfrac', 'main').includes('algorithm.policy_loss_fn_args.clip_range'));
    assert.ok(metricDrivers('actor/entropy_loss', 'main').includes('algorithm.entropy_loss_fn_args.entropy_coef'));
    assert.ok(metricDrivers('actor/kl_loss', 'main').includes('algorithm.kl_loss_fn_args.kl_coef'));
    assert.deepEqual(metricDrivers('actor/grad_norm', 'main'), ['trainer.grad_clip', 'algorithm.optimizer.lr']);
    assert.deepEqual(metricDrivers('actor/grad_norm', 'v0.3.1'), ['trainer.actor_grad_clip']);
    assert.ok(metricDrivers('rollout/accuracy/mean', 'main').includes('algorithm.repeat_times'));
    // Up to v0.3.1 the pipeline's keys are `pipeline/…`, after `experience_pipeline/…`: one row serves both.
    assert.equal(
      metricDriverRow('pipeline/group_advantages/reward_std/mean'),
      metricDriverRow('experience_pipeline/group_advantages/reward_std/mean'),
    );
    // The first row that matches wins: rollout timing is not a reward.
    assert.ok(
      !metricDrivers('rollout/time/run_execution/mean', 'main').includes(
        'buffer.explorer_input.default_reward_fn_type',
      ),
    );
    assert.ok(metricMatches('actor/pg_clipfrac*', 'actor/pg_clipfrac_lower'));
    assert.ok(!metricMatches('actor/pg_clipfrac*', 'xactor/pg_clipfrac'));
  });

  test('every metric of the recorded run and of the examples has a row', async () => {
    const names = new Set<string>();
    for (const line of readFileSync(FIXTURE, 'utf8').trim().split('\n'))
      for (const k of Object.keys(JSON.parse(line).values)) names.add(k);
    const examples = [
      'examples/grpo-arith.trinity.yaml',
      'examples/dpo-arith.trinity.yaml',
      'examples/sft-arith.trinity.yaml',
      'examples/countdown/countdown.trinity.yaml',
    ];
    for (const f of examples) {
      const checked = await checkConfig(readFileSync(f, 'utf8'));
      for (const run of checked.runs) {
        const m = metricNames(run.resolved, checked.loaded.release);
        for (const k of [...m.explorer, ...m.trainer]) names.add(k);
      }
    }
    assert.ok(names.size > 60, `only ${names.size} names`);
    assert.deepEqual(
      [...names].filter((n) => !metricDriverRow(n)),
      [],
    );
    assert.deepEqual(metricsDrivenBy('model.max_response_tokens', names, 'main').sort().slice(0, 2), [
      'response_length/clip_ratio',
      'response_length/max',
    ]);
  });
});
