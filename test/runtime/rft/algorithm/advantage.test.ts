/**
 * Advantage functions, float64 on the host: for each registered name (and its main argument variants) the
 * per-experience scores / per-token arrays and Trinity's metrics, compared with rtol 1e-12. Expected values:
 * Trinity's own functions run in float64 (see helpers.ts; its random draws fixed: `randint` → 0, `randperm` →
 * identity, matched here by the injected `random`), with hand derivations in comments for the simple ones.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createAdvantageFn,
  type GroupAdvantageFn,
  type TrainerAdvantageFn,
} from '../../../../runtime/rft/algorithm/registry';
import { maskedWhiten } from '../../../../runtime/rft/algorithm/advantage/stats';
import { outcomeTokenRewards, taskId, type AdvantageBatch } from '../../../../runtime/rft/algorithm/advantage/types';
import { assertAllClose, assertClose, assertMetrics, F64 } from './helpers';

type Row = [task: number, run: number, step: number, reward: number, mask: number[], logprobs: number[]];

// Explorer-side experiences (batch 0): task 0 has four runs with rewards 1, 0, 1, 0.5; task 1 two runs with the
// same reward 0.2 (zero std); task 2 a single run. Listed interleaved; groups keep first-seen order.
const EXPS: Row[] = [
  [0, 0, 0, 1.0, [1, 1, 1, 0], [-0.1, -0.2, -0.3, 0.0]],
  [0, 1, 0, 0.0, [1, 1, 0, 0], [-1.0, -0.5, 0.0, 0.0]],
  [1, 0, 0, 0.2, [1, 1, 1, 1], [-0.4, -0.4, -0.4, -0.4]],
  [0, 2, 0, 1.0, [1, 0, 1, 0], [-0.3, -0.9, -0.2, 0.0]],
  [2, 0, 0, 0.7, [1, 1, 1, 0], [-0.2, -0.2, -0.2, 0.0]],
  [0, 3, 0, 0.5, [1, 1, 1, 1], [-2.0, -0.1, -0.1, -0.1]],
  [1, 1, 0, 0.2, [1, 1, 0, 0], [-0.6, -0.6, 0.0, 0.0]],
];
const MULTI = EXPS.filter((r) => r[0] !== 2);
// one positive (1.0) and three negatives around the mean 0.325
const BAL: Row[] = [1.0, 0.0, 0.1, 0.2].map((reward, run) => [5, run, 0, reward, [1, 1, 0, 0], [0, 0, 0, 0]]);
// multi-step runs: task 0 run 0 has three steps (last reward 1.0), run 1 two (last 0.0), run 2 one (0.5);
// task 1 a single run of two steps (last 0.8)
const STEP: Row[] = [
  [0, 0, 0, 0.0, [1, 1, 0, 0], [0, 0, 0, 0]],
  [0, 0, 1, 0.0, [1, 0, 0, 0], [0, 0, 0, 0]],
  [0, 0, 2, 1.0, [1, 1, 1, 0], [0, 0, 0, 0]],
  [0, 1, 0, 0.3, [1, 1, 1, 1], [0, 0, 0, 0]],
  [0, 1, 1, 0.0, [1, 1, 0, 0], [0, 0, 0, 0]],
  [0, 2, 0, 0.5, [1, 0, 1, 0], [0, 0, 0, 0]],
  [1, 0, 0, 0.9, [1, 1, 0, 0], [0, 0, 0, 0]],
  [1, 0, 1, 0.8, [1, 1, 1, 0], [0, 0, 0, 0]],
];

const experiences = (rows: Row[]) =>
  rows.map(([task, run, step, reward, actionMask, logprobs]) => ({
    eid: { batch: 0, task, run, step },
    reward,
    actionMask,
    logprobs,
  }));

interface GroupExpected {
  /** `<tid>#<run>#<step>` of each returned experience, in order */
  order: string[];
  /** the advantage of each returned experience (its per-token advantages are score · action_mask) */
  scores: number[];
  metrics: Record<string, number>;
}

const GROUP: Record<string, GroupExpected> = {
  grpo: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [0.7833478154404222, -1.3055796924007037, 0.7833478154404222, -0.26111593848014075, 0, 0, 0.6999993000007],
    metrics: {
      'group_advantages/reward_mean/mean': 0.27499999999999997,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.49290451795938967,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0,
      filtered_count: 0,
    },
  },
  grpo_thr: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0'],
    scores: [0.7833478154404222, -1.3055796924007037, 0.7833478154404222, -0.26111593848014075],
    metrics: {
      'group_advantages/reward_mean/mean': 0.27499999999999997,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.49290451795938967,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0,
      filtered_count: 3.0,
    },
  },
  grpo_batch: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [
      0.9310253101407641, -1.5517088502346068, 0.9310253101407641, -0.3103417700469214, 0, 0, 1.7379139122627594,
    ],
    metrics: {
      'group_advantages/reward_mean/mean': 0.27499999999999997,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.49290451795938967,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0,
      filtered_count: 0,
    },
  },
  grpo_rank: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [
      1.6159919231897208, -1.4258752263438714, 1.6159919231897208, 0.09505834842292475, 0.707086781752217,
      0.707086781752217, 0.6999993000007,
    ],
    metrics: {
      'group_advantages/reward_mean/mean': 0.21458333333333335,
      'group_advantages/reward_mean/max': 0.46875,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.45469993133963343,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0.03535533905932737,
      filtered_count: 0,
    },
  },
  grpo_dup: {
    order: [
      '0/0#0#0',
      '0/0#1#0',
      '0/0#2#0',
      '0/0#3#0',
      '0/0#0#0',
      '0/0#1#0',
      '0/0#2#0',
      '0/0#3#0',
      '0/0#0#0',
      '0/0#1#0',
      '0/0#2#0',
      '0/0#3#0',
    ],
    scores: [
      0.7833478154404222, -1.3055796924007037, 0.7833478154404222, -0.26111593848014075, 0.7833478154404222,
      -1.3055796924007037, 0.7833478154404222, -0.26111593848014075, 0.7833478154404222, -1.3055796924007037,
      0.7833478154404222, -0.26111593848014075,
    ],
    metrics: {
      'group_advantages/reward_mean/mean': 0.27499999999999997,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.49290451795938967,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0,
      filtered_count: 3.0,
    },
  },
  opmd: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [0.375, -0.625, 0.375, -0.125, 0, 0, 0.7],
    metrics: {
      'group_advantages/group_baseline/mean': 0.27499999999999997,
      'group_advantages/group_baseline/max': 0.625,
      'group_advantages/group_baseline/min': 0,
      'group_advantages/reward_mean/mean': 0.5083333333333333,
      'group_advantages/reward_mean/max': 0.7,
      'group_advantages/reward_mean/min': 0.2,
    },
  },
  opmd_lae: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [0.23435928276534657, -0.7656407172346534, 0.23435928276534657, -0.26564071723465343, 0, 0, 0.7],
    metrics: {
      'group_advantages/group_baseline/mean': 0.32188023907821783,
      'group_advantages/group_baseline/max': 0.7656407172346534,
      'group_advantages/group_baseline/min': 0,
      'group_advantages/reward_mean/mean': 0.5083333333333333,
      'group_advantages/reward_mean/max': 0.7,
      'group_advantages/reward_mean/min': 0.2,
    },
  },
  asymre: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [0.475, -0.525, 0.475, -0.025000000000000022, 0.1, 0.1, 0.7],
    metrics: {
      'group_advantages/group_baseline/mean': 0.20833333333333334,
      'group_advantages/group_baseline/max': 0.525,
      'group_advantages/group_baseline/min': 0,
      'group_advantages/reward_mean/mean': 0.3083333333333333,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0.1,
    },
  },
  reinforce: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0', '0/2#0#0'],
    scores: [1.0, 0, 1.0, 0.5, 0.2, 0.2, 0.7],
    metrics: {
      'group_advantages/reward_mean/mean': 0.5083333333333333,
      'group_advantages/reward_mean/max': 0.7,
      'group_advantages/reward_mean/min': 0.2,
    },
  },
  rec: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0'],
    scores: [0.375, -0.625, 0.375, -0.125, 0, 0],
    metrics: {
      'group_advantages/drop_balance/mean': 0,
      'group_advantages/drop_balance/max': 0,
      'group_advantages/drop_balance/min': 0,
      'group_advantages/reward_mean/mean': 0.4125,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0.2,
      'group_advantages/reward_std/mean': 0.2072890493972125,
      'group_advantages/reward_std/max': 0.414578098794425,
      'group_advantages/reward_std/min': 0,
    },
  },
  rec_std: {
    order: ['0/0#0#0', '0/0#1#0', '0/0#2#0', '0/0#3#0', '0/1#0#0', '0/1#1#0'],
    scores: [0.9045318519203719, -1.507553086533953, 0.9045318519203719, -0.30151061730679063, 0, 0],
    metrics: {
      'group_advantages/drop_balance/mean': 0,
      'group_advantages/drop_balance/max': 0,
      'group_advantages/drop_balance/min': 0,
      'group_advantages/reward_mean/mean': 0.4125,
      'group_advantages/reward_mean/max': 0.625,
      'group_advantages/reward_mean/min': 0.2,
      'group_advantages/reward_std/mean': 0.2072890493972125,
      'group_advantages/reward_std/max': 0.414578098794425,
      'group_advantages/reward_std/min': 0,
    },
  },
  rec_balance: {
    order: ['0/5#0#0', '0/5#1#0', '0/5#2#0', '0/5#3#0'],
    scores: [0.9999975000062501, 0, 0, -0.9999975000062499],
    metrics: {
      'group_advantages/drop_balance/mean': 0.5,
      'group_advantages/drop_balance/max': 0.5,
      'group_advantages/drop_balance/min': 0.5,
      'group_advantages/reward_mean/mean': 0.6,
      'group_advantages/reward_mean/max': 0.6,
      'group_advantages/reward_mean/min': 0.6,
      'group_advantages/reward_std/mean': 0.4,
      'group_advantages/reward_std/max': 0.4,
      'group_advantages/reward_std/min': 0.4,
    },
  },
  step: {
    order: ['0/0#0#0', '0/0#0#1', '0/0#0#2', '0/0#1#0', '0/0#1#1', '0/0#2#0', '0/1#0#0', '0/1#0#1'],
    scores: [
      0.999998000004, 0.999998000004, 0.999998000004, -0.999998000004, -0.999998000004, 0, 0.7999992000008002,
      0.7999992000008002,
    ],
    metrics: {
      'group_advantages/reward_mean/mean': 0.25,
      'group_advantages/reward_mean/max': 0.5,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.75,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0.5,
      experience_count: 8.0,
      filtered_count: 0,
      skipped_group_ratio: 0,
    },
  },
  step_norm_batch: {
    order: ['0/0#0#0', '0/0#0#1', '0/0#0#2', '0/0#1#0', '0/0#1#1', '0/0#2#0', '0/1#0#0', '0/1#0#1'],
    scores: [
      0.3831999515644307, 0.3831999515644307, 0.3831999515644307, -0.5747999273466461, -0.5747999273466461, 0,
      0.9196798837546337, 0.9196798837546337,
    ],
    metrics: {
      'group_advantages/reward_mean/mean': 0.25,
      'group_advantages/reward_mean/max': 0.5,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.75,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0.5,
      experience_count: 8.0,
      filtered_count: 0,
      skipped_group_ratio: 0,
    },
  },
  step_thr: {
    order: ['0/0#0#0', '0/0#0#1', '0/0#0#2', '0/0#1#0', '0/0#1#1', '0/0#2#0'],
    scores: [0.999998000004, 0.999998000004, 0.999998000004, -0.999998000004, -0.999998000004, 0],
    metrics: {
      'group_advantages/reward_mean/mean': 0.25,
      'group_advantages/reward_mean/max': 0.5,
      'group_advantages/reward_mean/min': 0,
      'group_advantages/reward_std/mean': 0.75,
      'group_advantages/reward_std/max': 1.0,
      'group_advantages/reward_std/min': 0.5,
      experience_count: 6.0,
      filtered_count: 2.0,
      skipped_group_ratio: 0.5,
    },
  },
};

const GROUP_CASES: [string, string, Record<string, unknown> | null, Row[], (() => number)?][] = [
  ['grpo', 'grpo', null, EXPS],
  ['grpo_thr', 'grpo', { std_threshold: 0.0 }, EXPS],
  ['grpo_batch', 'grpo', { std_cal_level: 'batch', epsilon: 1e-3 }, EXPS],
  ['grpo_rank', 'grpo', { rank_penalty: 0.5 }, EXPS],
  ['grpo_dup', 'grpo', { std_threshold: 0.0, duplicate_experiences: true }, EXPS, () => 0],
  ['opmd', 'opmd', null, EXPS],
  ['opmd_lae', 'opmd', { opmd_baseline: 'logavgexp', tau: 0.5 }, EXPS],
  ['asymre', 'asymre', null, EXPS],
  ['reinforce', 'reinforce', null, EXPS],
  ['rec', 'rec', null, MULTI],
  ['rec_std', 'rec', { std_normalize: true }, MULTI],
  // random() = 0.9999 makes our Fisher-Yates shuffle the identity, like the fixed randperm: the first two negatives go
  ['rec_balance', 'rec', { drop: 'balance', std_normalize: true }, BAL, () => 0.9999],
  ['step', 'step_wise_grpo', null, STEP],
  ['step_norm_batch', 'step_wise_grpo', { enable_step_norm: true, std_cal_level: 'batch' }, STEP],
  ['step_thr', 'step_wise_grpo', { std_threshold: 0.1 }, STEP],
];

describe('explorer-side (group) advantages against Trinity', () => {
  for (const [key, name, args, rows, random] of GROUP_CASES) {
    test(`${key} (${name})`, () => {
      const fn = createAdvantageFn(name, args, random ? { random } : {}) as GroupAdvantageFn;
      assert.equal(fn.computeInTrainer, false);
      const input = experiences(rows);
      const { exps, metrics } = fn.process(input);
      const exp = GROUP[key];
      assert.deepEqual(
        exps.map((e) => `${taskId(e.eid)}#${e.eid.run}#${e.eid.step}`),
        exp.order,
        'which experiences, in which order',
      );
      exps.forEach((e, i) => {
        const want = Array.from(e.actionMask, (m) => m * exp.scores[i]);
        assertAllClose(e.advantages, want, F64, `${key} advantages[${i}]`);
        assertAllClose(e.returns, want, F64, `${key} returns[${i}]`);
      });
      assertMetrics(metrics, exp.metrics, F64, key);
    });
  }
});

describe('group advantages by hand', () => {
  test('grpo: (r - mean)/(Bessel std + 1e-6) per task; a single run gets mean 0, std 1', () => {
    // task 0: rewards 1, 0, 1, 0.5 → mean 0.625; Σ(r - m)² = 0.140625·2 + 0.390625 + 0.015625 = 0.6875 → std √(0.6875/3)
    const std = Math.sqrt(0.6875 / 3);
    const fn = createAdvantageFn('grpo') as GroupAdvantageFn;
    const { exps } = fn.process(experiences(EXPS));
    assertClose(exps[0].advantages[0], 0.375 / (std + 1e-6), F64, 'task 0 run 0');
    assertClose(exps[1].advantages[0], -0.625 / (std + 1e-6), F64, 'task 0 run 1');
    assertClose(exps[6].advantages[0], 0.7 / (1 + 1e-6), F64, 'task 2 (single run)');
  });

  test('opmd logavgexp: baseline τ·(logsumexp(r/τ) - log n)', () => {
    // task 0, τ = 0.5: 0.5·log((e² + 1 + e² + e)/4)
    const base = 0.5 * Math.log((2 * Math.exp(2) + 1 + Math.exp(1)) / 4);
    const fn = createAdvantageFn('opmd', { opmd_baseline: 'logavgexp', tau: 0.5 }) as GroupAdvantageFn;
    const { exps } = fn.process(experiences(EXPS));
    assertClose(exps[1].advantages[0], 0 - base, F64, 'run 1');
  });

  test('asymre: a single-run group reports reward_mean = -baseline_shift', () => {
    const fn = createAdvantageFn('asymre') as GroupAdvantageFn;
    const { exps, metrics } = fn.process(experiences([[7, 0, 0, 0.9, [1, 1], []]]));
    assert.deepEqual(exps[0].advantages, [0.9, 0.9]); // baseline 0
    assertClose(metrics['group_advantages/reward_mean/mean'], 0.1, F64);
  });

  test('rec fails on a single-experience group, as Trinity does', () => {
    const fn = createAdvantageFn('rec') as GroupAdvantageFn;
    assert.throws(() => fn.process(experiences(EXPS)), /single experience.*UnboundLocalError/);
  });

  test('an empty batch', () => {
    assert.deepEqual((createAdvantageFn('grpo') as GroupAdvantageFn).process([]), {
      exps: [],
      metrics: { filtered_count: 0 },
    });
    assert.deepEqual((createAdvantageFn('step_wise_grpo') as GroupAdvantageFn).process([]), { exps: [], metrics: {} });
  });

  test('inputs are not modified; extra fields are kept', () => {
    const input = experiences(EXPS).map((e, i) => ({ ...e, id: i }));
    const { exps } = (createAdvantageFn('grpo') as GroupAdvantageFn).process(input);
    assert.equal(exps[0].id, 0);
    assert.ok(!('advantages' in input[0]));
  });

  test('bad arguments fail at creation', () => {
    assert.throws(
      () => createAdvantageFn('grpo', { std_cal_level: 'global' }),
      /std_cal_level must be either 'group' or 'batch'/,
    );
    assert.throws(() => createAdvantageFn('rec', { drop: 'all' }), /Invalid drop: all/);
  });
});

// Trainer-side batch: 5 rows x 4 tokens; uid groups a = rows 0, 1, 3; b = row 2; c = row 4.
const BATCH: AdvantageBatch = {
  tokenLevelRewards: [
    [0, 0, 1.0, 0],
    [0, 0.5, 0, 0.5],
    [0, 0, 0, 0.0],
    [0.2, 0, 0.3, 0],
    [0, 0, 0, 0.7],
  ],
  responseMask: [
    [1, 1, 1, 0],
    [1, 1, 1, 1],
    [1, 1, 1, 1],
    [1, 1, 1, 0],
    [1, 1, 1, 1],
  ],
  uid: ['a', 'a', 'b', 'a', 'c'],
  values: [
    [0.1, 0.2, 0.3, 0.4],
    [0.5, 0.4, 0.3, 0.2],
    [0.0, 0.1, 0.0, 0.1],
    [0.3, 0.3, 0.3, 0.3],
    [0.2, 0.1, 0.4, 0.3],
  ],
  rewardBaselines: [0.4, 0.2, 0.1, 0.3, 0.5],
  oldLogprobs: [
    [-0.5, -1.0, -0.2, -2.0],
    [-0.3, -0.7, -1.5, -0.1],
    [-0.9, -0.4, -0.6, -0.8],
    [-1.2, -0.2, -0.3, -0.4],
    [-0.1, -0.5, -2.5, -0.6],
  ],
  teacherLogprobs: [
    [-0.4, -1.3, -0.1, -1.0],
    [-0.6, -0.7, -1.0, -0.3],
    [-0.5, -0.4, -0.9, -0.2],
    [-1.0, -0.6, -0.3, -0.9],
    [-0.2, -0.2, -1.5, -0.7],
  ],
  entropys: [
    [0.5, 1.2, 0.3, 0.9],
    [0.8, 0.1, 1.5, 0.4],
    [0.2, 0.6, 0.9, 1.1],
    [1.3, 0.4, 0.2, 0.5],
    [0.7, 0.9, 2.0, 0.3],
  ],
  necs: [
    [0.1, 0.4, -0.2, 0.3],
    [0.9, -0.5, 0.2, 0.0],
    [0.3, 0.3, 0.1, 0.6],
    [-0.4, 0.2, 0.5, 0.1],
    [0.2, 1.5, 0.0, 0.4],
  ],
};
BATCH.rolloutLogprobs = BATCH.oldLogprobs;

interface TrainerExpected {
  adv: number[][];
  ret: number[][];
  mask?: number[][];
  metrics: Record<string, number>;
}

const TRAINER: Record<string, TrainerExpected> = {
  ppo: {
    adv: [
      [1.8106011916523461, 1.49722790857884, 1.1838546255053337, -2.2632514883032355],
      [0.557108059358322, 0.8704813424318282, -0.3830117898621973, -0.06963850678869109],
      [-1.00975835600921, -1.3231316390827161, -1.00975835600921, -1.3231316390827161],
      [-0.3830117898621973, -1.00975835600921, -1.00975835600921, -1.949878205229729],
      [0.5571080593583215, 0.8704813424318278, -0.06963850678869125, 0.24373477628481516],
    ],
    ret: [
      [0.9999999999999998, 0.9999999999999998, 0.9999999999999998, 0],
      [1.0, 1.0, 0.5, 0.5],
      [0, 0, 0, 0],
      [0.5, 0.3, 0.3, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    metrics: {},
  },
  ppo_gl: {
    adv: [
      [1.2132141145402757, 1.5967358842407111, 2.185336967237498, -2.534425411472376],
      [-0.21414512256733728, 0.8447955844517109, -0.536983312632702, 0.284545292535228],
      [-0.8135195061746413, -1.2741038807206333, -0.8510971910792638, -1.3262951097548314],
      [-0.2132301652188366, -0.8878243522514768, -0.7061215548731583, -2.131715310899861],
      [-0.28284424404420394, 0.5815842627175151, -0.28730305027774294, 0.6872553931077428],
    ],
    ret: [
      [0.6306048000000002, 0.8258400000000001, 1.072, 0],
      [0.6761664000000001, 0.8391200000000001, 0.396, 0.5],
      [0.0273312, 0.01296, 0.018000000000000002, 0],
      [0.4763936000000001, 0.30888000000000004, 0.35400000000000004, 0],
      [0.35910720000000007, 0.47376000000000007, 0.558, 0.7],
    ],
    metrics: {},
  },
  rpp: {
    adv: [
      [0.9538043057660961, 1.2211242902016184, 1.5181464951299766, 0],
      [0.967170304987872, 1.2359754004480363, -0.11547563197599399, 0.033035470488185135],
      [-1.4520755541536063, -1.4520755541536063, -1.4520755541536063, -1.4520755541536063],
      [-0.13626718632097892, -0.6501156008470389, -0.5610089393685315, 0],
      [0.0636287575958063, 0.2320403477901854, 0.41916433689505095, 0.6270798803449016],
    ],
    ret: [
      [0.81, 0.9, 1.0, 0],
      [0.8145, 0.905, 0.45, 0.5],
      [0, 0, 0, 0],
      [0.44300000000000006, 0.27, 0.3, 0],
      [0.5103000000000001, 0.5670000000000001, 0.63, 0.7],
    ],
    metrics: {},
  },
  remax: {
    adv: [
      [0.6, 0.6, 0.6, 0],
      [0.8, 0.8, 0.3, 0.3],
      [-0.1, -0.1, -0.1, -0.1],
      [0.2, 0, 0, 0],
      [0.19999999999999996, 0.19999999999999996, 0.19999999999999996, 0.19999999999999996],
    ],
    ret: [
      [1.0, 1.0, 1.0, 0],
      [1.0, 1.0, 0.5, 0.5],
      [0, 0, 0, 0],
      [0.5, 0.3, 0.3, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    metrics: {},
  },
  rloo: {
    adv: [
      [0.25, 0.25, 0.25, 0],
      [0.25, 0.25, 0.25, 0.25],
      [0, 0, 0, 0],
      [-0.5, -0.5, -0.5, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    ret: [
      [0.25, 0.25, 0.25, 0],
      [0.25, 0.25, 0.25, 0.25],
      [0, 0, 0, 0],
      [-0.5, -0.5, -0.5, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    metrics: {},
  },
  grpo_verl: {
    adv: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    ret: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    metrics: {},
  },
  opmd_verl: {
    adv: [
      [0.15318565405911588, 0.15318565405911588, 0.15318565405911588, 0],
      [0.15318565405911588, 0.15318565405911588, 0.15318565405911588, 0.15318565405911588],
      [0, 0, 0, 0],
      [-0.3468143459408841, -0.3468143459408841, -0.3468143459408841, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    ret: [
      [0.15318565405911588, 0.15318565405911588, 0.15318565405911588, 0],
      [0.15318565405911588, 0.15318565405911588, 0.15318565405911588, 0.15318565405911588],
      [0, 0, 0, 0],
      [-0.3468143459408841, -0.3468143459408841, -0.3468143459408841, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    metrics: {},
  },
  asymre_verl: {
    adv: [
      [0.2666666666666666, 0.2666666666666666, 0.2666666666666666, 0],
      [0.2666666666666666, 0.2666666666666666, 0.2666666666666666, 0.2666666666666666],
      [0, 0, 0, 0],
      [-0.2333333333333334, -0.2333333333333334, -0.2333333333333334, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    ret: [
      [0.2666666666666666, 0.2666666666666666, 0.2666666666666666, 0],
      [0.2666666666666666, 0.2666666666666666, 0.2666666666666666, 0.2666666666666666],
      [0, 0, 0, 0],
      [-0.2333333333333334, -0.2333333333333334, -0.2333333333333334, 0],
      [0.7, 0.7, 0.7, 0.7],
    ],
    metrics: {},
  },
  opd: {
    adv: [
      [0.04999999999999999, -0.15000000000000002, 0.05, 0],
      [-0.15, 0, 0.25, -0.09999999999999999],
      [0.2, 0, -0.15000000000000002, 0.30000000000000004],
      [0.09999999999999998, -0.19999999999999998, 0, 0],
      [-0.05, 0.15, 0.5, -0.04999999999999999],
    ],
    ret: [
      [0.04999999999999999, -0.15000000000000002, 0.05, 0],
      [-0.15, 0, 0.25, -0.09999999999999999],
      [0.2, 0, -0.15000000000000002, 0.30000000000000004],
      [0.09999999999999998, -0.19999999999999998, 0, 0],
      [-0.05, 0.15, 0.5, -0.04999999999999999],
    ],
    metrics: { 'kl/mean': -0.30000000000000004, 'kl/std': 0.570087712549569, 'advantages/mean': 0.15000000000000002 },
  },
  jsd: {
    adv: [
      [0.0012494795136255843, 0.011208063908581978, 0.001249479513625626, 0],
      [0.011208063908581783, 1.1102230246251565e-16, 0.03092980362016129, 0.00499168882164662],
      [0.019868071840007218, 0, 0.011208063908581756, 0.044340769925940354],
      [0.004991688821646689, 0.019868071840007245, 5.551115123125783e-17, 0],
      [0.001249479513625626, 0.011208063908581672, 0.12011450695827741, 0.0012494795136256953],
    ],
    ret: [
      [0.0012494795136255843, 0.011208063908581978, 0.001249479513625626, 0],
      [0.011208063908581783, 1.1102230246251565e-16, 0.03092980362016129, 0.00499168882164662],
      [0.019868071840007218, 0, 0.011208063908581756, 0.044340769925940354],
      [0.004991688821646689, 0.019868071840007245, 5.551115123125783e-17, 0],
      [0.001249479513625626, 0.011208063908581672, 0.12011450695827741, 0.0012494795136256953],
    ],
    metrics: {
      'jsd/mean': -0.05898695510330334,
      'jsd/std': 0.04802523405103889,
      'advantages/mean': 0.05898695510330334,
    },
  },
  jsd_t: {
    adv: [
      [0.0005284708975390774, 0.0046283578663006, 0.000528470897539126, 0],
      [0.004628357866300642, 1.1102230246251565e-16, 0.0135426562767397, 0.002071566261290868],
      [0.00861604061368669, 0, 0.004628357866300829, 0.019614002900401203],
      [0.0021275237297822616, 0.008169398892580004, 5.551115123125783e-17, 0],
      [0.0005214722273164697, 0.004817035162781952, 0.055650227875271324, 0.000521472227316546],
    ],
    ret: [
      [0.0005284708975390774, 0.0046283578663006, 0.000528470897539126, 0],
      [0.004628357866300642, 1.1102230246251565e-16, 0.0135426562767397, 0.002071566261290868],
      [0.00861604061368669, 0, 0.004628357866300829, 0.019614002900401203],
      [0.0021275237297822616, 0.008169398892580004, 5.551115123125783e-17, 0],
      [0.0005214722273164697, 0.004817035162781952, 0.055650227875271324, 0.000521472227316546],
    ],
    metrics: {
      'jsd/mean': -0.013059341156114745,
      'jsd/std': 0.011181356267210535,
      'advantages/mean': 0.02611868231222949,
    },
  },
  jsd_0: {
    adv: [
      [0.09999999999999998, -0.30000000000000004, 0.1, 0],
      [-0.3, 0, 0.5, -0.19999999999999998],
      [0.4, 0, -0.30000000000000004, 0.6000000000000001],
      [0.19999999999999996, -0.39999999999999997, 0, 0],
      [-0.1, 0.3, 1.0, -0.09999999999999998],
    ],
    ret: [
      [0.09999999999999998, -0.30000000000000004, 0.1, 0],
      [-0.3, 0, 0.5, -0.19999999999999998],
      [0.4, 0, -0.30000000000000004, 0.6000000000000001],
      [0.19999999999999996, -0.39999999999999997, 0, 0],
      [-0.1, 0.3, 1.0, -0.09999999999999998],
    ],
    metrics: { 'jsd/mean': -0.30000000000000004, 'jsd/std': 0.570087712549569, 'advantages/mean': 0.30000000000000004 },
  },
  jsd_1: {
    adv: [
      [-0.09999999999999998, 0.30000000000000004, -0.1, 0],
      [0.3, 0, -0.5, 0.19999999999999998],
      [-0.4, 0, 0.30000000000000004, -0.6000000000000001],
      [-0.19999999999999996, 0.39999999999999997, 0, 0],
      [0.1, -0.3, -1.0, 0.09999999999999998],
    ],
    ret: [
      [-0.09999999999999998, 0.30000000000000004, -0.1, 0],
      [0.3, 0, -0.5, 0.19999999999999998],
      [-0.4, 0, 0.30000000000000004, -0.6000000000000001],
      [-0.19999999999999996, 0.39999999999999997, 0, 0],
      [0.1, -0.3, -1.0, 0.09999999999999998],
    ],
    metrics: { 'jsd/mean': 0.30000000000000004, 'jsd/std': 0.570087712549569, 'advantages/mean': -0.30000000000000004 },
  },
  clipb: {
    adv: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    ret: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    mask: [
      [1.0, 1.0, 1.0, 0],
      [1.0, 1.0, 1.0, 1.0],
      [1.0, 1.0, 1.0, 1.0],
      [1.0, 1.0, 0, 0],
      [1.0, 1.0, 1.0, 1.0],
    ],
    metrics: {
      frac_clipped: 0.05555555555555558,
      frac_clipped_pos: 0,
      frac_clipped_neg: 0.33333333333333337,
      ES: 0.07488211215422708,
      varS: 0.042816659298590715,
    },
  },
  clipv: {
    adv: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    ret: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    mask: [
      [1.0, 1.0, 1.0, 0],
      [1.0, 1.0, 1.0, 1.0],
      [0, 1.0, 1.0, 0],
      [1.0, 1.0, 0, 0],
      [1.0, 1.0, 1.0, 1.0],
    ],
    metrics: {
      frac_clipped: 0.16666666666666663,
      frac_clipped_pos: 0,
      frac_clipped_neg: 0.33333333333333337,
      stdD: 0.41954276222638975,
    },
  },
  clipv_cap: {
    adv: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    ret: [
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0],
      [0.5773482691965539, 0.5773482691965539, 0.5773482691965539, 0.5773482691965539],
      [0, 0, 0, 0],
      [-1.1546965383931083, -1.1546965383931083, -1.1546965383931083, 0],
      [0.6999993000007, 0.6999993000007, 0.6999993000007, 0.6999993000007],
    ],
    mask: [
      [1.0, 1.0, 1.0, 0],
      [1.0, 1.0, 1.0, 1.0],
      [0, 0, 1.0, 0],
      [1.0, 1.0, 0, 0],
      [1.0, 1.0, 1.0, 1.0],
    ],
    metrics: {
      frac_clipped: 0.2222222222222222,
      frac_clipped_pos: 0,
      frac_clipped_neg: 0.33333333333333337,
      stdD: 0.41954276222638975,
    },
  },
};

const TRAINER_CASES: [string, string, Record<string, unknown> | null][] = [
  ['ppo', 'ppo', null],
  ['ppo_gl', 'ppo', { gamma: 0.9, lam: 0.8 }],
  ['rpp', 'reinforceplusplus', { gamma: 0.9 }],
  ['remax', 'remax', null],
  ['rloo', 'rloo', null],
  ['grpo_verl', 'grpo_verl', { epsilon: 1e-6 }],
  ['opmd_verl', 'opmd_verl', { opmd_baseline: 'logavgexp', tau: 2.0 }],
  ['asymre_verl', 'asymre_verl', { baseline_shift: -0.1 }],
  ['opd', 'on_policy_distill', { kl_coef: 0.5 }],
  ['jsd', 'jsd', null],
  ['jsd_t', 'jsd', { lambda_coef: 0.3, kl_coef: 2.0, temperature: 2.0, chunk_size: 3 }],
  ['jsd_0', 'jsd', { lambda_coef: 0.0 }],
  ['jsd_1', 'jsd', { lambda_coef: 1.0 }],
  ['clipb', 'clipb', { epsilon: 1e-6, mu: 0.5 }],
  ['clipv', 'clipv', { epsilon: 1e-6, mu: 0.5, max_frac: 0.5 }],
  ['clipv_cap', 'clipv', { epsilon: 1e-6, mu: 0.0, max_frac: 0.05 }],
];

describe('trainer-side advantages against Trinity', () => {
  for (const [key, name, args] of TRAINER_CASES) {
    test(`${key} (${name})`, () => {
      const fn = createAdvantageFn(name, args) as TrainerAdvantageFn;
      assert.equal(fn.computeInTrainer, true);
      const r = fn.compute(BATCH);
      const exp = TRAINER[key];
      assertAllClose(r.advantages, exp.adv, F64, `${key} advantages`);
      assertAllClose(r.returns, exp.ret, F64, `${key} returns`);
      if (exp.mask) assertAllClose(r.responseMask!, exp.mask, F64, `${key} response mask`);
      else assert.equal(r.responseMask, undefined);
      assertMetrics(r.metrics, exp.metrics, F64, key);
    });
  }
});

describe('trainer-side advantages by hand', () => {
  test('rloo: s·n/(n-1) - mean·n/(n-1); a singleton keeps its raw score', () => {
    // uid a: scores 1.0, 1.0, 0.5 → mean 2.5/3; row 0: 1.5 - 1.25 = 0.25; row 3: 0.75 - 1.25 = -0.5; row 4 (alone): 0.7
    const r = (createAdvantageFn('rloo') as TrainerAdvantageFn).compute(BATCH);
    assertAllClose(r.advantages[0], [0.25, 0.25, 0.25, 0], F64, 'row 0');
    assertAllClose(r.advantages[3], [-0.5, -0.5, -0.5, 0], F64, 'row 3');
    assertAllClose(r.advantages[4], [0.7, 0.7, 0.7, 0.7], F64, 'row 4');
  });

  test('remax: reverse cumulative masked rewards minus the baseline', () => {
    const r = (createAdvantageFn('remax') as TrainerAdvantageFn).compute(BATCH);
    assertAllClose(r.returns[1], [1.0, 1.0, 0.5, 0.5], F64, 'returns row 1');
    assertAllClose(r.advantages[1], [0.8, 0.8, 0.3, 0.3], F64, 'advantages row 1');
  });

  test('ppo GAE (γ = λ = 1): A_t = Σ_{t′≥t} r - V_t, returns = A + V = reward-to-go', () => {
    const r = (createAdvantageFn('ppo') as TrainerAdvantageFn).compute(BATCH);
    assertAllClose(r.returns[0], [1, 1, 1, 0], F64, 'returns row 0');
    assertAllClose(r.returns[1], [1, 1, 0.5, 0.5], F64, 'returns row 1');
  });

  test('masked_whiten: Bessel variance over the mask, applied at every position; raises on Σ mask ≤ 1', () => {
    // values 1, 2, 3 (mask 1) and 10 (mask 0): mean 2, var (1 + 0 + 1)/2 = 1 (up to the 1e-8 in masked_mean's
    // denominator, which moves the mean by 6.7e-9)
    const w = maskedWhiten([[1, 2, 3, 10]], [[1, 1, 1, 0]]);
    const s = 1 / Math.sqrt(1 + 1e-8);
    assertAllClose(w[0], [-s, 0, s, 8 * s], { rtol: 1e-7, atol: 1e-7 }, 'whitened');
    assert.throws(() => maskedWhiten([[1, 2]], [[1, 0]]), /sum of the mask is one/);
    assert.throws(() => maskedWhiten([[1, 2]], [[0, 0]]), /At least one element/);
  });

  test('grouped trainer functions need uid; ppo needs values; remax needs baselines', () => {
    const { uid: _u, values: _v, rewardBaselines: _b, ...bare } = BATCH;
    for (const name of ['grpo_verl', 'rloo', 'opmd_verl', 'asymre_verl', 'clipb', 'clipv']) {
      assert.throws(() => (createAdvantageFn(name) as TrainerAdvantageFn).compute(bare), /needs 'uid'/, name);
    }
    assert.throws(() => (createAdvantageFn('ppo') as TrainerAdvantageFn).compute(bare), /needs 'values'/);
    assert.throws(() => (createAdvantageFn('remax') as TrainerAdvantageFn).compute(bare), /needs 'rewardBaselines'/);
  });

  test('opmd_verl rejects an unknown baseline (NotImplementedError in Trinity)', () => {
    assert.throws(
      () => (createAdvantageFn('opmd_verl', { opmd_baseline: 'max', tau: 1 }) as TrainerAdvantageFn).compute(BATCH),
      /not implemented/,
    );
  });

  test('outcomeTokenRewards puts each reward on the last attended position', () => {
    assert.deepEqual(
      outcomeTokenRewards(
        [0.5, 2],
        [
          [1, 1, 0],
          [1, 1, 1],
        ],
      ),
      [
        [0, 0.5, 0],
        [0, 0, 2],
      ],
    );
  });
});
