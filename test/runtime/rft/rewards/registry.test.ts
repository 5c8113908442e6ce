/** The reward registry: Trinity's names per release, errors for unknown names, plugin registration. */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import {
  RewardArgsError,
  UnknownRewardError,
  createReward,
  knownRewardNames,
  registerReward,
  rewardRegistry,
  totalReward,
  trinityRewardNamesAt,
  unregisterReward,
} from '../../../../runtime/rft/rewards';
import { registryNamesAt } from '../../../../runtime/config/model/registries';
import { RELEASES } from '../../../../runtime/config/releases';

const BUILTIN = [
  'accuracy_reward',
  'countdown_reward',
  'format_reward',
  'math_boxed_reward',
  'math_dapo_reward',
  'math_reward',
];

describe('reward registry', () => {
  afterEach(() => {
    unregisterReward('length_reward');
    unregisterReward('my_pkg.rewards.Custom');
  });

  test("Trinity's registered names", () => {
    assert.deepEqual(knownRewardNames(), BUILTIN);
    for (const n of BUILTIN) assert.ok(rewardRegistry.get(n)?.builtin);
    assert.equal(rewardRegistry.get('math_reward')?.trinityClass, 'trinity.common.rewards.math_reward.MathRewardFn');
  });

  test('names per release: rm_gallery_reward up to v0.5.2 and again on main, the OpenJudge and RLCR rewards on main', () => {
    assert.deepEqual(trinityRewardNamesAt('v0.3.0'), [...BUILTIN, 'rm_gallery_reward'].sort());
    assert.deepEqual(trinityRewardNamesAt('v0.5.2'), [...BUILTIN, 'rm_gallery_reward'].sort());
    assert.deepEqual(
      trinityRewardNamesAt('main'),
      [
        ...BUILTIN,
        'rm_gallery_reward',
        'openjudge_reward',
        'openjudge_multi_grader_reward',
        'openjudge_trajectory_accuracy_reward',
        'trajectory_accuracy_grader_reward',
        'rlcr_reward',
      ].sort(),
    );
  });

  test("the names per release agree with the config model's reward registry", () => {
    for (const release of RELEASES) {
      assert.deepEqual(trinityRewardNamesAt(release), registryNamesAt('reward_fn', release).sort(), release);
    }
  });

  test('an unknown name lists the known ones', () => {
    assert.throws(
      () => createReward('math_rewards'),
      (e: unknown) =>
        e instanceof UnknownRewardError &&
        e.rewardName === 'math_rewards' &&
        /unknown reward function 'math_rewards'; known: accuracy_reward, countdown_reward, format_reward, math_boxed_reward, math_dapo_reward, math_reward/.test(
          e.message,
        ),
    );
  });

  test('rm_gallery_reward and dotted Python paths explain themselves', () => {
    assert.throws(() => createReward('rm_gallery_reward', {}, { release: 'v0.5.2' }), /RM-Gallery/);
    assert.throws(() => createReward('rm_gallery_reward', {}, { release: 'main' }), /OpenJudge/);
    assert.throws(
      () => createReward('openjudge_reward', {}, { release: 'v0.5.2' }),
      /not registered in Trinity v0.5.2/,
    );
    assert.throws(() => createReward('my_pkg.rewards.Custom'), /dotted name as a Python class.*registerReward/);
  });

  test('reward_fn_args must be a mapping; null means none', () => {
    assert.throws(() => createReward('format_reward', [] as unknown as Record<string, unknown>), RewardArgsError);
    assert.doesNotThrow(() => createReward('format_reward', null));
  });

  test('plugins register more names', () => {
    registerReward('length_reward', (args) => {
      const limit = Number(args.limit ?? 10);
      return ({ response }) => ({ length_ok: response.length <= limit ? 1 : 0, brevity: -response.length / 100 });
    });
    assert.ok(knownRewardNames().includes('length_reward'));
    const d = createReward('length_reward', { limit: 3 })({ response: 'abcd' });
    assert.deepEqual(d, { length_ok: 0, brevity: -0.04 });
    assert.equal(totalReward(d), -0.04);
    assert.equal(rewardRegistry.get('length_reward')?.builtin, false);
  });

  test('registering a name twice needs force (Trinity: KeyError unless force=True)', () => {
    registerReward('length_reward', () => () => ({ a: 1 }));
    assert.throws(() => registerReward('length_reward', () => () => ({ a: 2 })), /already registered/);
    registerReward('length_reward', () => () => ({ a: 3 }), { force: true });
    assert.deepEqual(createReward('length_reward')({ response: '' }), { a: 3 });
    assert.throws(() => registerReward('math_reward', () => () => ({})), /already registered/);
  });

  test('a plugin may claim a dotted name', () => {
    registerReward('my_pkg.rewards.Custom', () => () => ({ custom: 0.5 }));
    assert.deepEqual(createReward('my_pkg.rewards.Custom')({ response: '' }), { custom: 0.5 });
  });

  test('built-ins cannot be unregistered', () => {
    assert.equal(unregisterReward('math_reward'), false);
    assert.ok(rewardRegistry.has('math_reward'));
  });

  test('bad registrations', () => {
    assert.throws(() => registerReward('', () => () => ({})), TypeError);
    assert.throws(() => registerReward('x', 'nope' as never), TypeError);
  });

  test('the factory sees the release', () => {
    let seen: string | undefined;
    registerReward('length_reward', (_args, ctx) => {
      seen = ctx.release;
      return () => ({});
    });
    createReward('length_reward', {}, { release: 'v0.4.0' });
    assert.equal(seen, 'v0.4.0');
  });

  test('totalReward sums the dict like sum(reward_dict.values())', () => {
    assert.equal(totalReward({}), 0);
    assert.ok(Math.abs(totalReward({ accuracy: 1, format_score: 0.1 }) - 1.1) < 1e-12);
  });
});
