/**
 * The inputs of the policy-loss tests (policy-loss.test.ts) and of their float64 reference (reference/policy-loss.ts):
 * each case's registry name, its `<fn>_args` and the inputs beyond helpers.ts' 3x4 batch.
 */
import { LP, MASK, REF } from './helpers';

/** What mix and mix_chord read besides the batch. */
export interface ExtraInputs {
  expertMask?: boolean[];
  step?: number | number[];
}

/** [case, registry name, <fn>_args (null: default_args()), extra inputs] */
export const CASES: [string, string, Record<string, unknown> | null, ExtraInputs?][] = [
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
export const LP4 = [...LP, [-0.4, -0.4, -0.8, -1.0]];
export const REF4 = [...REF, [-0.5, -0.3, -0.9, -1.1]];
export const MASK4 = [...MASK, [1, 1, 1, 0]];
export const DPO_CASES: [string, Record<string, unknown> | null][] = [
  ['dpo', null],
  ['dpo_ls', { beta: 0.5, label_smoothing: 0.2 }],
];
