/** The experience pipeline: Trinity's filters and reward shaping, then the group advantage, with the release's metric names
 * (`experience_pipeline/…` from v0.3.2, the default being main; `pipeline/…` before) and, from v0.3.2, its timers
 * `time/experience_pipeline/…`. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAdvantageFn, type GroupAdvantageFn } from '../../../../runtime/rft/algorithm';
import type { Experience } from '../../../../runtime/rft/experience';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import { pipelineTimeKeys } from '../../../../runtime/config/runs/metric-names';

const untimed = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/')));

function exp(task: number, run: number, reward: number, info: Record<string, unknown> = {}): Experience {
  return {
    eid: { batch: 1, task, run, step: 0, suffix: `${task}${run}` },
    tokens: [1, 2, 3, 4],
    promptLength: 2,
    reward,
    info,
  };
}

describe('experience pipeline', () => {
  test('reward_filter keeps rewards ≥ threshold and counts the rest', () => {
    const r = new ExperiencePipeline([{ name: 'reward_filter', args: { threshold: 0.5 } }], undefined).process([
      exp(0, 0, 1),
      exp(0, 1, 0.2),
      exp(1, 0, 0.5),
    ]);
    assert.deepEqual(
      r.exps.map((e) => e.reward),
      [1, 0.5],
    );
    assert.deepEqual(untimed(r.metrics), {
      'experience_pipeline/filtered_count': 1,
      'experience_pipeline/experience_count': 2,
    });
  });

  test('reward_std_filter drops single-run groups and groups with equal rewards (population std)', () => {
    const r = new ExperiencePipeline([{ name: 'reward_std_filter', args: {} }], undefined).process([
      exp(0, 0, 1),
      exp(0, 1, 1),
      exp(1, 0, 1),
      exp(1, 1, 0),
      exp(2, 0, 3),
    ]);
    assert.deepEqual(
      r.exps.map((e) => e.eid.task),
      [1, 1],
    );
    assert.equal(r.metrics['experience_pipeline/filtered_count'], 3);
  });

  test('reward_shaping_mapper applies each op in order and reports the reward change', () => {
    const r = new ExperiencePipeline(
      [
        {
          name: 'reward_shaping_mapper',
          args: {
            reward_shaping_configs: [
              { stats_key: 'quality', op_type: 'ADD', weight: 0.5 },
              { stats_key: 'scale', op_type: 'MUL', weight: 1 },
            ],
          },
        },
      ],
      undefined,
    ).process([exp(0, 0, 1, { quality: 2, scale: 3 }), exp(0, 1, 0, {})]);
    // (1 + 0.5·2)·3 = 6; the second has no stats: unchanged.
    assert.deepEqual(
      r.exps.map((e) => e.reward),
      [6, 0],
    );
    assert.deepEqual(
      [
        r.metrics['experience_pipeline/reward_diff/mean'],
        r.metrics['experience_pipeline/reward_diff/max'],
        r.metrics['experience_pipeline/reward_diff/min'],
      ],
      [2.5, 5, 0],
    );
  });

  test('the group advantage runs last: GRPO advantages over the filtered groups', () => {
    const grpo = createAdvantageFn('grpo', null) as GroupAdvantageFn;
    const r = new ExperiencePipeline([{ name: 'reward_filter', args: { threshold: 0 } }], grpo).process([
      exp(0, 0, 1),
      exp(0, 1, 0),
      exp(0, 2, -1),
    ]);
    // rewards 1, 0 (−1 filtered): mean 0.5, unbiased std √0.5; A = ±0.5/(√0.5 + 1e-6) on both response tokens.
    const a = 0.5 / (Math.sqrt(0.5) + 1e-6);
    assert.equal(r.exps.length, 2);
    assert.ok(Math.abs(r.exps[0].advantages![0] - a) < 1e-12 && Math.abs(r.exps[1].advantages![1] + a) < 1e-12);
    // Later operators' metrics replace earlier ones of the same name (Trinity's dict.update): GRPO's own
    // filtered_count (groups dropped by std_threshold: none) is what is reported.
    assert.equal(r.metrics['experience_pipeline/filtered_count'], 0);
    assert.equal(r.metrics['experience_pipeline/group_advantages/reward_mean/mean'], 0.5);
  });

  test('metric names follow the release: pipeline/ up to v0.3.1, experience_pipeline/ from v0.3.2', () => {
    const grpo = createAdvantageFn('grpo', null) as GroupAdvantageFn;
    const run = (release: 'v0.3.1' | 'v0.3.2' | 'main') =>
      Object.keys(
        untimed(
          new ExperiencePipeline([{ name: 'reward_filter', args: { threshold: 0 } }], grpo, release).process([
            exp(0, 0, 1),
            exp(0, 1, 0),
          ]).metrics,
        ),
      ).sort();
    const old = run('v0.3.1');
    assert.ok(
      old.includes('pipeline/experience_count') && old.includes('pipeline/group_advantages/reward_mean/mean'),
      old.join(', '),
    );
    assert.ok(old.every((k) => k.startsWith('pipeline/')));
    assert.deepEqual(run('v0.3.2'), old.map((k) => k.replace(/^pipeline\//, 'experience_pipeline/')).sort());
    assert.deepEqual(run('main'), run('v0.3.2'));
  });

  test('time/experience_pipeline/…: each operator as <index>_<Trinity class> (the wrapper class from v0.5.2), write, total', () => {
    const grpo = createAdvantageFn('grpo', null) as GroupAdvantageFn;
    const ops = [
      { name: 'reward_filter', args: { threshold: 0 } },
      { name: 'reward_shaping_mapper', args: {} },
    ];
    const times = (release: 'v0.3.1' | 'v0.3.2' | 'v0.5.0' | 'v0.5.2' | 'main') => {
      const m = new ExperiencePipeline(ops, grpo, release).process([exp(0, 0, 1), exp(0, 1, 0)]).metrics;
      return Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('time/')));
    };
    assert.deepEqual(times('v0.3.1'), {});
    for (const release of ['v0.3.2', 'v0.5.0'] as const) {
      assert.deepEqual(Object.keys(times(release)).sort(), [
        'time/experience_pipeline/operator/0_RewardFilter',
        'time/experience_pipeline/operator/1_RewardShapingMapper',
        'time/experience_pipeline/operator/2_GRPOGroupedAdvantage',
        'time/experience_pipeline/total',
        'time/experience_pipeline/write',
      ]);
    }
    for (const release of ['v0.5.2', 'main'] as const) {
      const t = times(release);
      assert.deepEqual(
        Object.keys(t).sort(),
        [0, 1, 2]
          .map((i) => `time/experience_pipeline/operator/${i}_ExperienceOperatorV1Wrapper`)
          .concat('time/experience_pipeline/total', 'time/experience_pipeline/write'),
      );
      const parts = Object.entries(t).filter(([k]) => !k.endsWith('/total'));
      assert.ok(parts.every(([, v]) => v >= 0));
      assert.ok(t['time/experience_pipeline/total'] >= parts.reduce((a, [, v]) => a + v, 0) - 1e-9);
      // the names the config-level prediction gives for the same pipeline
      assert.deepEqual(
        Object.keys(t).sort(),
        pipelineTimeKeys(release, ['reward_filter', 'reward_shaping_mapper'], 'grpo').sort(),
      );
    }
  });

  test('write: the buffer hand-off given to process() is timed as time/experience_pipeline/write', () => {
    let written: Experience[] = [];
    const r = new ExperiencePipeline([], undefined).process([exp(0, 0, 1)], (exps) => {
      const until = performance.now() + 20;
      while (performance.now() < until);
      written = exps;
    });
    assert.equal(written.length, 1);
    assert.ok(
      r.metrics['time/experience_pipeline/write'] >= 0.02 &&
        r.metrics['time/experience_pipeline/total'] >= r.metrics['time/experience_pipeline/write'],
    );
  });

  test('unknown operators are named, with a hint for data_juicer', () => {
    assert.throws(
      () => new ExperiencePipeline([{ name: 'data_juicer', args: {} }], undefined),
      /data_juicer.*Data-Juicer service/,
    );
    assert.throws(
      () => new ExperiencePipeline([{ name: 'nope', args: {} }], undefined),
      /"nope" is not available locally \(known: reward_filter/,
    );
  });
});
