/**
 * Policy losses: for every registered name (and the main variants of its arguments), the loss, Trinity's metrics
 * and the full gradient w.r.t. the log-probs on the shared 3x4 batch (helpers.ts), compared in float32 with
 * rtol 1e-5 / atol 1e-6. Expected values: Trinity's own functions run in float64 (see helpers.ts); hand checks in
 * comments where they are short.
 *
 * Useful facts about the batch: ratio ρ = exp(ℓ - ℓ_old) is, on the masked tokens,
 *   row 0 (A = 1.5):  e^0.1 = 1.105, e^-0.1 = 0.905, e^-0.5 = 0.607
 *   row 1 (A = -0.8): 1, e^-0.2 = 0.819, e^1.3 = 3.669, e^-1 = 0.368
 *   row 2 (A = 0.4, then 0): e^0.3 = 1.350, 1
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { createPolicyLossFn, knownNames } from '../../../../runtime/rft/algorithm/registry';
import { muSchedule } from '../../../../runtime/rft/algorithm/policy-loss/mix';
import { ppoPolicyLoss } from '../../../../runtime/rft/algorithm/policy-loss/ppo';
import type { PolicyLossInputs } from '../../../../runtime/rft/algorithm/policy-loss/types';
import {
  ADV,
  assertAllClose,
  assertClose,
  assertMetrics,
  F32,
  num,
  LP,
  MASK,
  OLD,
  REF,
  scalarOf,
  t2,
  useCpu,
} from './helpers';

before(useCpu);

interface Expected {
  loss: number;
  metrics: Record<string, number>;
  grad: number[][];
}

const EXPECTED: Record<string, Expected> = {
  ppo: {
    loss: -0.03442487677,
    metrics: {
      pg_clipfrac: 0.222222222,
      pg_clipfrac_lower: 0.111111111,
      ppo_kl: 0.0111111111,
      pg_loss: -0.03442487677,
    },
    grad: [
      [-0.1841951528, -0.1508062362, -0.1010884432, 0],
      [0.08888888879, 0.07277606686, 0, 0],
      [0, -0.0444444444, 0, 0],
    ],
  },
  ppo_asym: {
    loss: -0.2680898312,
    metrics: { pg_clipfrac: 0.333333333, pg_clipfrac_lower: 0.111111111, ppo_kl: 0.0111111111, pg_loss: -0.2680898312 },
    grad: [
      [-0.1841951524, -0.1508062358, -0.1010884429, 0],
      [0.0666666665, 0, 0, 0],
      [0, -0.06666666633, 0, 0],
    ],
  },
  ppo_seqmask: {
    loss: -0.5338676098,
    metrics: {
      pg_clipfrac: 0.222222222,
      pg_clipfrac_lower: 0.111111111,
      ppo_kl: 0.0111111111,
      pg_loss: -0.5338676098,
      'seq_mask/masked_tokens': 0.4444444444,
      'seq_mask/mean_sequence_kl': -0.002777777777,
    },
    grad: [
      [-0.1841951528, -0.1508062362, -0.1010884432, 0],
      [0, 0, 0, 0],
      [0, -0.0444444444, 0, 0],
    ],
  },
  ppo_fallback: {
    loss: -0.2333333331,
    metrics: { pg_clipfrac: 0, pg_clipfrac_lower: 0, ppo_kl: 0, pg_loss: -0.2333333331 },
    grad: [
      [-0.1666666665, -0.1666666665, -0.1666666665, 0],
      [0.08888888879, 0.08888888879, 0.08888888879, 0.08888888879],
      [-0.0444444444, -0.0444444444, 0, 0],
    ],
  },
  gspo: {
    loss: -0.2832101625,
    metrics: { pg_clipfrac: 0.222222222, ppo_kl: 0.0111111111, pg_loss: -0.2832101625, ppo_kl_seq: -0.002777777692 },
    grad: [
      [-0.1410802871, -0.1410802871, -0.1410802871, 0],
      [0.06835434119, 0.06835434119, 0.06835434119, 0.06835434119],
      [0, 0, 0, 0],
    ],
  },
  gspo_wide: {
    loss: -0.1619585301,
    metrics: { pg_clipfrac: 0, ppo_kl: 0.0111111111, pg_loss: -0.1619585301, ppo_kl_seq: -0.002777777692 },
    grad: [
      [-0.1410802874, -0.1410802874, -0.1410802874, 0],
      [0.09113912172, 0.09113912172, 0.09113912172, 0.09113912172],
      [-0.05163707736, -0.05163707736, 0, 0],
    ],
  },
  opmd: {
    loss: 0.08499999991,
    metrics: { opmd_loss: 0.08499999991 },
    grad: [
      [-0.08333333324, -0.08333333324, -0.08333333324, 0],
      [0.0444444444, 0.0444444444, 0.0444444444, 0.0444444444],
      [-0.0222222222, -0.0222222222, 0, 0],
    ],
  },
  opmd_seqsum: {
    loss: 0.34,
    metrics: { opmd_loss: 0.34 },
    grad: [
      [-0.3333333333, -0.3333333333, -0.3333333333, 0],
      [0.1777777778, 0.1777777778, 0.1777777778, 0.1777777778],
      [-0.08888888889, -0.08888888889, 0, 0],
    ],
  },
  sft: {
    loss: 1.088888888,
    metrics: { sft_loss: 1.088888888 },
    grad: [
      [-0.111111111, -0.111111111, -0.111111111, 0],
      [-0.111111111, -0.111111111, -0.111111111, -0.111111111],
      [-0.111111111, -0.111111111, 0, 0],
    ],
  },
  sft_is: {
    loss: 0.2835692908,
    metrics: { sft_is_loss: 0.2835692908 },
    grad: [
      [-0.04087549342, -0.06739229545, -0.01503725368, 0],
      [-0.0551761448, -0.03346602351, -0.08231313554, -0.005531896479],
      [-0.09097008357, -0.04517440659, 0, 0],
    ],
  },
  sft_phi: {
    loss: 0.1622027958,
    metrics: { sft_phi_loss: 0.1622027958 },
    grad: [
      [-0.02583823974, -0.02651680203, -0.01300218269, 0],
      [-0.02777648217, -0.02338625093, -0.02133406493, -0.005256479571],
      [-0.01649007854, -0.02680786347, 0, 0],
    ],
  },
  sft_phi_cut: {
    loss: 0.1838439046,
    metrics: { sft_phi_loss: 0.1838439046 },
    grad: [
      [-0.02583823974, 0, -0.01300218269, 0],
      [-0.02777648217, -0.02338625093, 0, -0.005256479571],
      [0, -0.02680786347, 0, 0],
    ],
  },
  topr: {
    loss: 0.3579008683,
    metrics: { topr_loss: 0.3579008683, avg_alpha: 0.9096233539, avg_ratio: 1.202478295 },
    grad: [
      [-0.1666666665, -0.1666666665, -0.1666666665, 0],
      [0.08888888879, 0.07277606686, 0.08888888879, 0.03270039473],
      [-0.0444444444, -0.0444444444, 0, 0],
    ],
  },
  cispo: {
    loss: 0.2313649151,
    metrics: { cispo_loss: 0.2313649151, ppo_kl: 0.0111111111, unmasked_frac: 0.9999999989 },
    grad: [
      [-0.1841951528, -0.1508062362, -0.1010884432, 0],
      [0.08888888879, 0.07277606686, 0.1137777777, 0.03270039473],
      [-0.05688888883, -0.0444444444, 0, 0],
    ],
  },
  cispo_mask: {
    loss: 0.3825781015,
    metrics: { cispo_loss: 0.3825781015, ppo_kl: 0.0111111111, unmasked_frac: 0.7777777769 },
    grad: [
      [-0.1841951528, -0.1508062362, -0.1333333332, 0],
      [0.08888888879, 0.07277606686, 0.1137777777, 0],
      [0, -0.0444444444, 0, 0],
    ],
  },
  sppo: {
    loss: -0.01777777776,
    metrics: { pg_clipfrac: 0.444444444, pg_loss: -0.01777777776 },
    grad: [
      [-0.1666666665, -0.1666666665, 0, 0],
      [0.08888888879, 0.08888888879, 0, 0],
      [0, -0.0444444444, 0, 0],
    ],
  },
  rec: {
    loss: 0.1699999998,
    metrics: { pg_clipfrac: 0, pg_loss: 0.1699999998 },
    grad: [
      [-0.1666666665, -0.1666666665, -0.1666666665, 0],
      [0.08888888879, 0.08888888879, 0.08888888879, 0.08888888879],
      [-0.0444444444, -0.0444444444, 0, 0],
    ],
  },
  rec_two_is_k2: {
    loss: 0.1843781018,
    metrics: { pg_clipfrac: 0.444444444, pg_loss: 0.1843781018 },
    grad: [
      [-0.1819729306, -0.1530284584, -0.0111111111, 0],
      [0.08888888879, 0.06833162242, 0.02888888886, -0.0222222222],
      [0.006666666659, -0.0444444444, 0, 0],
    ],
  },
  rec_one_adv_fkl: {
    loss: 1.207132421,
    metrics: { pg_clipfrac: 0.222222222, pg_loss: 1.207132421 },
    grad: [
      [-0.3583888913, -0.3583888913, -0.3583888913, 0],
      [0.05402844848, 0.05402844848, 0.05402844848, -0.005555555549],
      [-0.005555555549, -0.05984012252, 0, 0],
    ],
  },
  rec_ring: {
    loss: 0.4277777773,
    metrics: { pg_clipfrac: 0.222222222, pg_loss: 0.4277777773 },
    grad: [
      [-0.1666666665, -0.1666666665, -0.1666666665, 0],
      [0.08888888879, 0.08888888879, 0.08888888879, 0],
      [0, -0.0444444444, 0, 0],
    ],
  },
  rec_gspo: {
    loss: 0.1383384306,
    metrics: { pg_clipfrac: 0.222222222, pg_loss: 0.1383384306 },
    grad: [
      [-0.1410802871, -0.1410802871, -0.1410802871, 0],
      [0.06835434119, 0.06835434119, 0.06835434119, 0.06835434119],
      [0, 0, 0, 0],
    ],
  },
  sapo: {
    loss: 0.4041277522,
    metrics: {
      sapo_loss: 0.4041277522,
      ppo_kl: 0.0111111111,
      avg_soft_gate: 2.053692036,
      avg_ratio: 1.202478295,
      pos_adv_frac: 0.5555555549,
    },
    grad: [
      [-0.3508456804, -0.3174848611, -0.2685882713, 0],
      [0.1693121691, 0.1532478143, 0.319263447, 0.1150994227],
      [-0.1042814825, -0.08888888879, 0, 0],
    ],
  },
  is: {
    loss: -0.02000294745,
    metrics: { pg_loss: -0.02000294745, 'ratio/mean': 1.202478295, approx_kl: 0.0111111111 },
    grad: [
      [-0.1841951528, -0.1508062362, -0.1010884432, 0],
      [0.08888888879, 0.07277606686, 0.3261597034, 0.03270039473],
      [-0.05999372471, -0.0444444444, 0, 0],
    ],
  },
  dpo: {
    loss: 0.668459648,
    metrics: { chosen_reward: 0, rejected_reward: -0.05, accuracy_mean: 1, dpo_loss: 0.668459648 },
    grad: [
      [-0.04875026035, -0.04875026035, -0.04875026035, 0],
      [0.04875026035, 0.04875026035, 0.04875026035, 0.04875026035],
      [-0.04875026035, -0.04875026035, 0, 0],
      [0.04875026035, 0.04875026035, 0.04875026035, 0],
    ],
  },
  dpo_ls: {
    loss: 0.6259394199,
    metrics: { chosen_reward: 0, rejected_reward: -0.25, accuracy_mean: 1, dpo_loss: 0.6259394199 },
    grad: [
      [-0.1189117496, -0.1189117496, -0.1189117496, 0],
      [0.1189117496, 0.1189117496, 0.1189117496, 0.1189117496],
      [-0.1189117496, -0.1189117496, 0, 0],
      [0.1189117496, 0.1189117496, 0.1189117496, 0],
    ],
  },
  mix: {
    loss: -1.599731055,
    metrics: {
      'usual/pg_clipfrac': 0.3999999992,
      'usual/pg_clipfrac_lower': 0,
      'usual/ppo_kl': 0.07999999984,
      'usual/pg_loss': -1.921923394,
      'expert/sft_loss': 1.299999997,
      loss: -1.599731055,
    },
    grad: [
      [-0.5967922946, -0.4886122048, -0.3275265556, 0],
      [-0.02499999994, -0.02499999994, -0.02499999994, -0.02499999994],
      [0, -0.1439999997, 0, 0],
    ],
  },
  mix_weighted: {
    loss: -1.013795169,
    metrics: {
      'usual/pg_clipfrac': 0.5333333323,
      'usual/pg_clipfrac_lower': 0,
      'usual/ppo_kl': 0.1066666665,
      'usual/pg_loss': -2.562564525,
      'expert/sft_loss': 2.599999993,
      loss: -1.013795169,
    },
    grad: [
      [-0.6188957129, -0.5067089531, -0.3396571688, 0],
      [-0.1499999996, -0.1499999996, -0.1499999996, -0.1499999996],
      [0, -0.149333333, 0, 0],
    ],
  },
  mix_dyn: {
    loss: -0.3379317231,
    metrics: {
      'usual/pg_clipfrac': 0.1777777774,
      'usual/pg_clipfrac_lower': 0,
      'usual/ppo_kl': 0.03555555548,
      'usual/pg_loss': -0.854188175,
      'expert/sft_loss': 0.8666666645,
      loss: -0.3379317231,
    },
    grad: [
      [-0.206298571, -0.1689029844, -0.1132190563, 0],
      [-0.04999999987, -0.04999999987, -0.04999999987, -0.04999999987],
      [0, -0.04977777768, 0, 0],
    ],
  },
  mix_chord: {
    loss: -1.714053798,
    metrics: {
      'usual/pg_clipfrac': 0.3999999992,
      'usual/pg_clipfrac_lower': 0,
      'usual/ppo_kl': 0.07999999984,
      'usual/pg_loss': -1.921923394,
      'expert/sft_phi_loss': 0.1567725677,
      loss: -1.714053798,
      mu: 0.1,
    },
    grad: [
      [-0.5967922946, -0.4886122048, -0.3275265556, 0],
      [-0.006249708481, -0.005261906452, -0.004800164603, -0.001182707902],
      [0, -0.1439999997, 0, 0],
    ],
  },
  mix_chord_sched: {
    loss: -0.576586566,
    metrics: {
      'usual/pg_clipfrac': 0.3999999992,
      'usual/pg_clipfrac_lower': 0,
      'usual/ppo_kl': 0.07999999984,
      'usual/pg_loss': -1.921923394,
      'expert/sft_loss': 1.299999997,
      loss: -0.576586566,
      mu: 0.4175570505,
    },
    grad: [
      [-0.3862194048, -0.3162097041, -0.2119617034, 0],
      [-0.1043892624, -0.1043892624, -0.1043892624, -0.1043892624],
      [0, -0.09319087174, 0, 0],
    ],
  },
};

/** [case, registry name, <fn>_args (null: default_args()), extra inputs] */
const CASES: [string, string, Record<string, unknown> | null, Partial<PolicyLossInputs>?][] = [
  ['ppo', 'ppo', null],
  [
    'ppo_asym',
    'ppo',
    {
      clip_range: 0.2,
      clip_range_low: 0.1,
      clip_range_high: 0.28,
      clip_ratio_c: 2.0,
      loss_agg_mode: 'seq-mean-token-mean',
    },
  ],
  ['ppo_seqmask', 'ppo', { clip_range: 0.2, enable_sequence_masking: true, delta_sequence_masking: -0.05 }],
  ['ppo_fallback', 'ppo', { clip_range: 0.2, fallback_to_policy_gradient: true }],
  ['gspo', 'gspo', null],
  ['gspo_wide', 'gspo', { clip_range: 0.2, loss_agg_mode: 'token-mean' }],
  ['opmd', 'opmd', null],
  ['opmd_seqsum', 'opmd', { tau: 0.5, loss_agg_mode: 'seq-mean-token-sum' }],
  ['sft', 'sft', null],
  ['sft_is', 'sft_is', null],
  ['sft_phi', 'sft_phi', null],
  ['sft_phi_cut', 'sft_phi', { loss_agg_mode: 'token-mean', cutoff_prob: 0.5 }],
  ['topr', 'topr', null],
  ['cispo', 'cispo', null],
  [
    'cispo_mask',
    'cispo',
    {
      clip_range_low: 0.2,
      clip_range_high: 0.28,
      enable_mask_clip: true,
      mask_clip_range_low: 0.2,
      mask_clip_range_high: 0.28,
    },
  ],
  ['sppo', 'sppo', null],
  ['rec', 'rec', null],
  [
    'rec_two_is_k2',
    'rec',
    { clip_mode: 'two-side', weight: 'importance_sampling', regularizer: 'k2', regularizer_coef: 0.1 },
  ],
  [
    'rec_one_adv_fkl',
    'rec',
    { clip_mode: 'one-side', weight: 'advantage', temp: 2.0, regularizer: 'forward-kl', regularizer_coef: 0.05 },
  ],
  ['rec_ring', 'rec', { clip_mode: 'ring', epsilon_low_prime: 0.3, epsilon_high_prime: 1.5 }],
  [
    'rec_gspo',
    'rec',
    { clip_mode: 'gspo-one-side', weight: 'gspo_importance_sampling', epsilon_low: 0.1, epsilon_high: 0.1 },
  ],
  ['sapo', 'sapo', null],
  ['is', 'importance_sampling', null],
  ['mix', 'mix', null, { expertMask: [false, true, false] }],
  [
    'mix_weighted',
    'mix',
    {
      mu: 0.3,
      clip_range: 0.2,
      ppo_mini_batch_size: 8,
      ppo_micro_batch_size_per_gpu: 2,
      ngpus_trainer: 2,
      train_batch_size_usual: 6,
      train_batch_size_expert: 4,
      sft_loss_agg_mode: 'seq-mean-token-mean',
    },
    { expertMask: [false, true, false] },
  ],
  [
    'mix_dyn',
    'mix',
    {
      mu: 0.3,
      clip_range: 0.2,
      use_dynamic_bsz: true,
      ppo_mini_batch_size: 8,
      ngpus_trainer: 2,
      train_batch_size_usual: 6,
      train_batch_size_expert: 4,
    },
    { expertMask: [false, true, false] },
  ],
  ['mix_chord', 'mix_chord', null, { expertMask: [false, true, false], step: [5, 5, 5] }],
  [
    'mix_chord_sched',
    'mix_chord',
    {
      mu_warmup_steps: 4,
      mu_decay_steps: 10,
      mu_peak: 0.5,
      mu_valley: 0.1,
      clip_range: 0.2,
      enable_phi_function: false,
    },
    { expertMask: [false, true, false], step: 7 },
  ],
];

// DPO uses 4 rows: (chosen, rejected) pairs (0, 1) and (2, 3).
const LP4 = [...LP, [-0.4, -0.4, -0.8, -1.0]];
const REF4 = [...REF, [-0.5, -0.3, -0.9, -1.1]];
const MASK4 = [...MASK, [1, 1, 1, 0]];
const DPO_CASES: [string, Record<string, unknown> | null][] = [
  ['dpo', null],
  ['dpo_ls', { beta: 0.5, label_smoothing: 0.2 }],
];

function run(
  name: string,
  args: Record<string, unknown> | null,
  extra: Partial<PolicyLossInputs> = {},
  lp = LP,
  ref = REF,
  mask = MASK,
) {
  const fn = createPolicyLossFn(name, args);
  const inputs = { oldLogprob: t2(OLD), refLogprob: t2(ref), advantages: t2(ADV), actionMask: t2(mask), ...extra };
  const result = fn({ ...inputs, logprob: t2(lp) });
  const grad = tf.grad((x: tf.Tensor) => fn({ ...inputs, logprob: x as tf.Tensor2D }).loss)(t2(lp));
  return { result, grad: grad.arraySync() as number[][] };
}

describe('policy losses against Trinity (loss, metrics, gradient)', () => {
  for (const [key, name, args, extra] of CASES) {
    test(`${key} (${name})`, () => {
      const { result, grad } = run(name, args, extra);
      const exp = EXPECTED[key];
      assertClose(scalarOf(result.loss), exp.loss, F32, `${key} loss`);
      assertMetrics(result.metrics, exp.metrics, F32, key);
      assertAllClose(grad, exp.grad, F32, `${key} grad`);
    });
  }
  for (const [key, args] of DPO_CASES) {
    test(`${key} (dpo)`, () => {
      const { result, grad } = run('dpo', args, {}, LP4, REF4, MASK4);
      const exp = EXPECTED[key];
      assertClose(scalarOf(result.loss), exp.loss, F32, `${key} loss`);
      assertMetrics(result.metrics, exp.metrics, F32, key);
      assertAllClose(grad, exp.grad, F32, `${key} grad`);
    });
  }
});

describe('hand checks', () => {
  test('ppo: token losses and the clip fractions', () => {
    // row 0 (A=1.5): -1.5ρ, ρ inside [0.8, 1.2] or below it (no lower clip for A > 0): -1.6578, -1.3573, -0.9098
    // row 1 (A=-0.8): 0.8·max(ρ, clip(ρ)): 0.8, 0.8·0.8187 = 0.6550, dual clip min(0.8·1.2 … 0.8·3.669, 0.8·3) = 2.4, 0.8·0.8 = 0.64
    // row 2 (A=0.4): max(-0.4·1.3499, -0.4·1.2) = -0.48, -0.4
    const token = [
      -1.5 * Math.exp(0.1),
      -1.5 * Math.exp(-0.1),
      -1.5 * Math.exp(-0.5),
      0.8,
      0.8 * Math.exp(-0.2),
      2.4,
      0.64,
      -0.48,
      -0.4,
    ];
    const r = ppoPolicyLoss({ logprob: t2(LP), oldLogprob: t2(OLD), advantages: t2(ADV), actionMask: t2(MASK) });
    assertClose(scalarOf(r.loss), token.reduce((a, b) => a + b) / 9, F32, 'pg_loss');
    // clipped (L2 > L1): row 1 token 3 (ρ = 0.368 < 0.8) and row 2 token 0 (ρ = 1.35 > 1.2): 2/9; dual-clipped: 1/9
    assertClose(num(r.metrics.pg_clipfrac), 2 / 9, F32, 'pg_clipfrac');
    assertClose(num(r.metrics.pg_clipfrac_lower), 1 / 9, F32, 'pg_clipfrac_lower');
    // ppo_kl = masked mean of ℓ_old - ℓ: row 0: -0.1 + 0.1 + 0.5; row 1: 0 + 0.2 - 1.3 + 1.0; row 2: -0.3 + 0 → 0.1/9
    assertClose(num(r.metrics.ppo_kl), 0.1 / 9, F32, 'ppo_kl');
  });

  test('dpo: z = β·(Δ_chosen - Δ_rejected) pooled over both pairs', () => {
    // Δ_chosen = Σ rows 0,2 of m(ℓ - ℓ_ref) = -0.2 + 0.2 = 0; Δ_rejected = rows 1,3 = -0.6 + 0.1 = -0.5
    // z = 0.1·0.5 = 0.05; loss = -log σ(0.05) = log(1 + e^-0.05)
    const { result } = run('dpo', null, {}, LP4, REF4, MASK4);
    assertClose(scalarOf(result.loss), Math.log(1 + Math.exp(-0.05)), F32, 'loss');
    assertClose(num(result.metrics.rejected_reward), -0.05, F32, 'rejected_reward');
  });

  test('opmd: agg(-A·ℓ)/(1 + τ)', () => {
    // Σ masked -A·ℓ = 1.5·3.5 - 0.8·5.2 + 0.4·1.1 = 5.25 - 4.16 + 0.44 = 1.53; /9 /2
    const { result } = run('opmd', null);
    assertClose(scalarOf(result.loss), 1.53 / 9 / 2, F32, 'loss');
  });

  test('mix_chord mu schedule: warm-up, cosine decay, valley', () => {
    assertClose(muSchedule(2, 4, 10, 0.5, 0.1), 0.25, { rtol: 1e-15, atol: 0 });
    assertClose(muSchedule(7, 4, 10, 0.5, 0.1), 0.4 * 0.5 * (1 + Math.cos((Math.PI * 3) / 10)) + 0.1, {
      rtol: 1e-15,
      atol: 0,
    });
    assert.equal(muSchedule(14, 4, 10, 0.5, 0.1), 0.1);
    assert.equal(muSchedule(0, 0, 0, 0.1, 0.1), 0.1);
  });
});

describe('gradient sanity', () => {
  const names = knownNames('policy_loss_fn');
  for (const name of names) {
    test(`${name}: finite, zero on padding, raising ℓ of a positive-advantage token lowers the loss`, () => {
      const dpo = name === 'dpo';
      const extra: Partial<PolicyLossInputs> = name.startsWith('mix')
        ? { expertMask: [false, true, false], step: 1 }
        : {};
      const { grad } = dpo ? run('dpo', null, {}, LP4, REF4, MASK4) : run(name, null, extra);
      for (const row of grad) for (const g of row) assert.ok(Number.isFinite(g), `${name}: non-finite gradient`);
      assert.ok(grad[0][3] === 0, 'padding gets no gradient');
      // token (0, 0): A = 1.5, ρ = 1.105 (inside every clip range); for dpo row 0 is a chosen answer; for sft-like
      // losses the gradient of -ℓ is negative anyway
      assert.ok(grad[0][0] < 0, `${name}: d loss / d ℓ[0][0] = ${grad[0][0]} should be < 0`);
    });
  }

  test('ppo: a dual-clipped token (A < 0, ρ = 3.67 > c = 3) gets no gradient; an unclipped one does', () => {
    const { grad } = run('ppo', null);
    assert.ok(grad[1][2] === 0);
    assert.ok(grad[1][0] > 0);
  });

  test('no tensors leak from a call', () => {
    const inputs = {
      logprob: t2(LP),
      oldLogprob: t2(OLD),
      advantages: t2(ADV),
      actionMask: t2(MASK),
      refLogprob: t2(REF),
      expertMask: [false, true, false],
      step: 3,
    };
    for (const name of names) {
      if (name === 'dpo') continue;
      const before = tf.memory().numTensors;
      const r = createPolicyLossFn(name)(inputs);
      r.loss.dispose();
      tf.dispose(Object.values(r.metrics)); // the metrics are device scalars the caller owns
      assert.equal(tf.memory().numTensors, before, name);
    }
  });
});

describe('argument checks (Trinity’s constructor asserts)', () => {
  test('ppo needs both clip bounds and clip_ratio_c > 1', () => {
    assert.throws(() => createPolicyLossFn('ppo', { clip_ratio_c: 3.0 }), /clip_range_low must be specified/);
    assert.throws(
      () => createPolicyLossFn('ppo', { clip_range: 0.2, clip_ratio_c: 1.0 }),
      /clip_ratio_c must be greater than 1.0/,
    );
  });
  test('gspo needs a clip range', () => {
    assert.throws(
      () => createPolicyLossFn('gspo', { loss_agg_mode: 'token-mean' }),
      /Either clip_range or clip_range_low must be specified/,
    );
  });
  test('sapo needs tau_neg ≥ tau_pos', () => {
    assert.throws(
      () => createPolicyLossFn('sapo', { tau_pos: 2, tau_neg: 1 }),
      /tau_neg \(1\) should be >= tau_pos \(2\)/,
    );
  });
  test('rec validates its modes and bounds', () => {
    assert.throws(() => createPolicyLossFn('rec', { clip_mode: 'both' }), /Invalid clip_mode: both/);
    assert.throws(() => createPolicyLossFn('rec', { epsilon_low: 1.5 }), /Invalid epsilon_low: 1.5/);
    const f = createPolicyLossFn('rec', { weight: 'gspo_importance_sampling' });
    assert.throws(
      () => f({ logprob: t2(LP), oldLogprob: t2(OLD), advantages: t2(ADV), actionMask: t2(MASK) }),
      /needs clip_mode 'gspo-one-side'/,
    );
  });
  test('sft_phi cutoff_prob in [0, 1]', () => {
    assert.throws(() => createPolicyLossFn('sft_phi', { cutoff_prob: 1.5 }), /cutoff_prob must be in \[0, 1\]/);
  });
  test('mix needs expert_mask; mix_chord one step for all rows', () => {
    const inputs = { logprob: t2(LP), oldLogprob: t2(OLD), advantages: t2(ADV), actionMask: t2(MASK) };
    assert.throws(() => createPolicyLossFn('mix')(inputs), /needs 'expert_mask'/);
    assert.throws(
      () => createPolicyLossFn('mix_chord')({ ...inputs, expertMask: [false, true, false], step: [1, 2, 1] }),
      /2 != 1/,
    );
  });
  test('a loss without its inputs says which', () => {
    assert.throws(
      () => createPolicyLossFn('ppo')({ logprob: t2(LP), actionMask: t2(MASK), advantages: t2(ADV) }),
      /policy_loss_fn 'ppo': needs 'old_logprob'/,
    );
  });
});
