/**
 * `gigpo` against a hand-computed float64 example: three FrozenLake-like runs of one task with per-step rewards and
 * state hashes, and a task whose single run carries only its propagated final reward (no `step_reward`). Every
 * expected number is derived in the comments from gigpo_advantage.py's rules (@0fcd37e), not from our code.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAdvantageFn, type GroupAdvantageFn } from '../../../../runtime/rft/algorithm/registry';
import { assertAllClose, assertClose, assertMetrics, F64 } from './helpers';

interface Step {
  task: number;
  run: number;
  step: number;
  reward: number;
  mask: number[];
  info: Record<string, unknown>;
}

const STEPS: Step[] = [
  // task 0, run 0: rewards 0, 0, 1 through states A, B, C (listed out of step order: GiGPO sorts by eid.step)
  { task: 0, run: 0, step: 2, reward: 1, mask: [1, 1, 0], info: { step_reward: 1, env_state_hash: 'C' } },
  { task: 0, run: 0, step: 0, reward: 1, mask: [1, 0, 0], info: { step_reward: 0, env_state_hash: 'A' } },
  { task: 0, run: 0, step: 1, reward: 1, mask: [1, 1, 1], info: { step_reward: 0, env_state_hash: 'B' } },
  // task 0, run 1: rewards 0, 0 through A, D
  { task: 0, run: 1, step: 0, reward: 0, mask: [1, 1, 0], info: { step_reward: 0, env_state_hash: 'A' } },
  { task: 0, run: 1, step: 1, reward: 0, mask: [0, 1, 1], info: { step_reward: 0, env_state_hash: 'D' } },
  // task 0, run 2: reward 1 from A
  { task: 0, run: 2, step: 0, reward: 1, mask: [1, 1, 1], info: { step_reward: 1, env_state_hash: 'A' } },
  // task 1, run 0: no step_reward: r = (0, 0.5), the last step's reward; states B, then none
  { task: 1, run: 0, step: 0, reward: 0.5, mask: [1, 1, 0], info: { env_state_hash: 'B' } },
  { task: 1, run: 0, step: 1, reward: 0.5, mask: [1, 0, 0], info: {} },
];

function experiences() {
  return STEPS.map((s) => ({
    eid: { batch: 0, task: s.task, run: s.run, step: s.step },
    reward: s.reward,
    actionMask: s.mask,
    info: s.info,
  }));
}

const EPS = 1e-6;

describe('gigpo', () => {
  test('episode score plus ω × anchor-state step score (fnorm none, γ 0.9, ω 0.5)', () => {
    const fn = createAdvantageFn('gigpo', { omega: 0.5, gamma: 0.9 }) as GroupAdvantageFn;
    assert.equal(fn.computeInTrainer, false);
    const { exps, metrics } = fn.process(experiences());
    // A^E: task 0 returns (1, 0, 1), mean 2/3, denom 1; task 1 one run: mean 0, denom 1, return 0.5.
    const aeT0 = [1 - 2 / 3, 0 - 2 / 3, 1 - 2 / 3].map((x) => x / (1 + EPS));
    const aeT1 = 0.5 / (1 + EPS);
    // Discounted returns R_t: run 0 (0.81, 0.9, 1), run 1 (0, 0), run 2 (1), task 1 (0.45, 0.5).
    // Anchor A = {0.81, 0, 1}: mean 1.81/3; anchor B = {0.9, 0.45}: mean 0.675; C, D alone; task 1 step 1 has none.
    const mA = 1.81 / 3;
    const as = {
      r0s0: (0.81 - mA) / (1 + EPS),
      r1s0: (0 - mA) / (1 + EPS),
      r2s0: (1 - mA) / (1 + EPS),
      r0s1: (0.9 - 0.675) / (1 + EPS),
      t1s0: (0.45 - 0.675) / (1 + EPS),
    };
    const combined = [
      aeT0[0] + 0, // run 0 step 2 (C alone)
      aeT0[0] + 0.5 * as.r0s0,
      aeT0[0] + 0.5 * as.r0s1,
      aeT0[1] + 0.5 * as.r1s0,
      aeT0[1] + 0, // D alone
      aeT0[2] + 0.5 * as.r2s0,
      aeT1 + 0.5 * as.t1s0,
      aeT1 + 0,
    ];
    exps.forEach((e, i) => {
      const want = STEPS[i].mask.map((m) => m * combined[i]);
      assertAllClose(e.advantages, want, F64, `advantages[${i}]`);
      assertAllClose(e.returns, want, F64, `returns[${i}]`);
    });
    const absE = (3 * Math.abs(aeT0[0]) + 2 * Math.abs(aeT0[1]) + Math.abs(aeT0[2]) + 2 * aeT1) / 8;
    const absS =
      (Math.abs(as.r0s0) + Math.abs(as.r1s0) + Math.abs(as.r2s0) + Math.abs(as.r0s1) + Math.abs(as.t1s0)) / 8;
    assertMetrics(
      metrics,
      {
        'gigpo/episode_reward_mean/mean': (2 / 3 + 0) / 2,
        'gigpo/episode_reward_mean/max': 2 / 3,
        'gigpo/episode_reward_mean/min': 0,
        'gigpo/episode_reward_std/mean': 1,
        'gigpo/episode_reward_std/max': 1,
        'gigpo/episode_reward_std/min': 1,
        'gigpo/anchor_groups_total': 4,
        'gigpo/anchor_groups_size_gt1': 2,
        'gigpo/anchor_group_hit_ratio': 0.5,
        'gigpo/mean_abs_A_E': absE,
        'gigpo/mean_abs_A_S': absS,
        experience_count: 8,
      },
      F64,
    );
  });

  test('fnorm std divides by the Bessel std of each group (a single-run task keeps denom 1)', () => {
    const fn = createAdvantageFn('gigpo', { fnorm: 'std' }) as GroupAdvantageFn;
    const { exps, metrics } = fn.process(experiences());
    // γ 1: run 0 R_t = (1, 1, 1); anchor A = {1, 0, 1} (mean 2/3, std √(1/3)); B = {1, 0.5} (mean 0.75, std √0.125).
    const sT0 = Math.sqrt(1 / 3);
    const aeRun0 = (1 - 2 / 3) / (sT0 + EPS);
    const asR0s1 = (1 - 0.75) / (Math.sqrt(0.125) + EPS);
    assertAllClose(
      exps[2].advantages,
      [1, 1, 1].map((m) => m * (aeRun0 + asR0s1)),
      F64,
      'run 0 step 1',
    );
    const asT1s0 = (0.5 - 0.75) / (Math.sqrt(0.125) + EPS);
    assertAllClose(
      exps[6].advantages,
      [1, 1, 0].map((m) => m * (0.5 / (1 + EPS) + asT1s0)),
      F64,
      'task 1 step 0',
    );
    assertClose(metrics['gigpo/episode_reward_std/min'], sT0, F64, 'std');
    assert.equal(metrics['gigpo/episode_reward_std/max'], 1);
  });

  test('an fnorm other than std or none is refused, as Trinity raises', () => {
    assert.throws(
      () => (createAdvantageFn('gigpo', { fnorm: 'batch' }) as GroupAdvantageFn).process(experiences()),
      /fnorm must be 'std' or 'none'/,
    );
  });
});
