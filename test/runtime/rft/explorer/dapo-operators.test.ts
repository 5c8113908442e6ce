/**
 * DAPO's experience operators in the real pipeline (main's metric names), on hand-built groups whose outcome is
 * worked out in the comments from reward_filter.py's rules (@04052a4): dynamic sampling keeps only groups with some
 * but not all rollouts correct (by `accuracy`, else the reward; above `correct_threshold`), and masking zeroes the
 * action mask of response_truncated experiences, so GRPO's advantages on them vanish.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAdvantageFn, type GroupAdvantageFn } from '../../../../runtime/rft/algorithm';
import type { Experience } from '../../../../runtime/rft/experience';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';

const untimed = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time/')));

function exp(task: number, run: number, reward: number, extra: Partial<Experience> = {}): Experience {
  return {
    eid: { batch: 3, task, run, step: 0, suffix: `${task}${run}` },
    tokens: [5, 6, 7, 8, 9],
    promptLength: 2,
    reward,
    ...extra,
  };
}

const acc = (a: number) => ({ metrics: { accuracy: a } });

describe('dapo_dynamic_sampling', () => {
  test('keeps the mixed groups; counts all-correct and all-wrong drops; a group of one just goes', () => {
    const r = new ExperiencePipeline(
      [{ name: 'dapo_dynamic_sampling', args: { correct_threshold: 0.5 } }],
      undefined,
    ).process([
      // task 0: accuracy 1, 0, 1, 0 (the reward, 0 everywhere, is not what counts): mixed → kept
      exp(0, 0, 0, acc(1)),
      exp(0, 1, 0, acc(0)),
      exp(1, 0, 0, acc(1)),
      exp(0, 2, 0, acc(1)),
      exp(0, 3, 0, acc(0)),
      // task 1: all three correct → dropped_all_correct 3
      exp(1, 1, 0, acc(0.9)),
      exp(1, 2, 0, acc(0.6)),
      // task 2: no accuracy, rewards 0.5 and -1, neither above 0.5 → dropped_all_wrong 2
      exp(2, 0, 0.5),
      exp(2, 1, -1),
      // task 3: one rollout → filtered, in neither count
      exp(3, 0, 1, acc(1)),
      // task 4: accuracy 0.4 and 0.6 around the threshold → kept
      exp(4, 0, 0, acc(0.4)),
      exp(4, 1, 0, acc(0.6)),
    ]);
    assert.deepEqual(
      r.exps.map((e) => `${e.eid.task}/${e.eid.run}`),
      ['0/0', '0/1', '0/2', '0/3', '4/0', '4/1'],
    );
    assert.deepEqual(untimed(r.metrics), {
      'experience_pipeline/filtered_count': 6,
      'experience_pipeline/dropped_all_correct': 3,
      'experience_pipeline/dropped_all_wrong': 2,
      'experience_pipeline/experience_count': 6,
    });
  });

  test('an experience with neither the metric nor a reward fails the step, naming the key', () => {
    const p = new ExperiencePipeline([{ name: 'dapo_dynamic_sampling', args: { metric_key: 'solved' } }], undefined);
    assert.throws(
      () => p.process([exp(0, 0, 1), { ...exp(0, 1, 0), reward: undefined }]),
      /no 'solved' in its metrics and no reward/,
    );
  });
});

describe('mask_response_truncated', () => {
  test('truncated experiences get an all-zero mask, so their GRPO advantages are 0', () => {
    const grpo = createAdvantageFn('grpo', null) as GroupAdvantageFn;
    const r = new ExperiencePipeline([{ name: 'mask_response_truncated', args: {} }], grpo).process([
      exp(0, 0, 1, { truncated: true }),
      exp(0, 1, 0, { actionMask: [1, 0, 1] }),
      exp(0, 2, 0.5, { truncated: true, actionMask: [1, 1, 0] }),
      exp(0, 3, 0.5, { truncated: false }),
    ]);
    assert.deepEqual(
      r.exps.map((e) => e.actionMask),
      [
        [0, 0, 0],
        [1, 0, 1],
        [0, 0, 0],
        [1, 1, 1],
      ],
    );
    // GRPO over rewards (1, 0, 0.5, 0.5): mean 0.5, Bessel std √(1/6); run 0 and 2 carry nothing now.
    const s = Math.sqrt(1 / 6) + 1e-6;
    assert.deepEqual(r.exps[0].advantages, [0, 0, 0]);
    assert.deepEqual(r.exps[2].advantages, [0, 0, 0]);
    assert.ok(Math.abs(r.exps[1].advantages![0] - -0.5 / s) < 1e-12);
    assert.equal(r.metrics['experience_pipeline/masked_truncated_count'], 2);
  });
});
