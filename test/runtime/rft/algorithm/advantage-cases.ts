/**
 * The inputs of the advantage tests (advantage.test.ts) and of their float64 reference (reference/advantage.ts):
 * explorer-side experiences, the trainer-side batch, and each case's registry name and arguments.
 */
import type { AdvantageBatch } from '../../../../runtime/rft/algorithm/advantage/types';

export type Row = [task: number, run: number, step: number, reward: number, mask: number[], logprobs: number[]];

// Explorer-side experiences (batch 0): task 0 has four runs with rewards 1, 0, 1, 0.5; task 1 two runs with the
// same reward 0.2 (zero std); task 2 a single run. Listed interleaved; groups keep first-seen order.
export const EXPS: Row[] = [
  [0, 0, 0, 1.0, [1, 1, 1, 0], [-0.1, -0.2, -0.3, 0.0]],
  [0, 1, 0, 0.0, [1, 1, 0, 0], [-1.0, -0.5, 0.0, 0.0]],
  [1, 0, 0, 0.2, [1, 1, 1, 1], [-0.4, -0.4, -0.4, -0.4]],
  [0, 2, 0, 1.0, [1, 0, 1, 0], [-0.3, -0.9, -0.2, 0.0]],
  [2, 0, 0, 0.7, [1, 1, 1, 0], [-0.2, -0.2, -0.2, 0.0]],
  [0, 3, 0, 0.5, [1, 1, 1, 1], [-2.0, -0.1, -0.1, -0.1]],
  [1, 1, 0, 0.2, [1, 1, 0, 0], [-0.6, -0.6, 0.0, 0.0]],
];
export const MULTI = EXPS.filter((r) => r[0] !== 2);
// one positive (1.0) and three negatives around the mean 0.325
export const BAL: Row[] = [1.0, 0.0, 0.1, 0.2].map((reward, run) => [5, run, 0, reward, [1, 1, 0, 0], [0, 0, 0, 0]]);
// multi-step runs: task 0 run 0 has three steps (last reward 1.0), run 1 two (last 0.0), run 2 one (0.5);
// task 1 a single run of two steps (last 0.8)
export const STEP: Row[] = [
  [0, 0, 0, 0.0, [1, 1, 0, 0], [0, 0, 0, 0]],
  [0, 0, 1, 0.0, [1, 0, 0, 0], [0, 0, 0, 0]],
  [0, 0, 2, 1.0, [1, 1, 1, 0], [0, 0, 0, 0]],
  [0, 1, 0, 0.3, [1, 1, 1, 1], [0, 0, 0, 0]],
  [0, 1, 1, 0.0, [1, 1, 0, 0], [0, 0, 0, 0]],
  [0, 2, 0, 0.5, [1, 0, 1, 0], [0, 0, 0, 0]],
  [1, 0, 0, 0.9, [1, 1, 0, 0], [0, 0, 0, 0]],
  [1, 0, 1, 0.8, [1, 1, 1, 0], [0, 0, 0, 0]],
];

export const experiences = (rows: Row[]) =>
  rows.map(([task, run, step, reward, actionMask, logprobs]) => ({
    eid: { batch: 0, task, run, step },
    reward,
    actionMask,
    logprobs,
  }));

export const GROUP_CASES: [string, string, Record<string, unknown> | null, Row[], (() => number)?][] = [
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

// Trainer-side batch: 5 rows x 4 tokens; uid groups a = rows 0, 1, 3; b = row 2; c = row 4.
export const BATCH: AdvantageBatch = {
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

export const TRAINER_CASES: [string, string, Record<string, unknown> | null][] = [
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
