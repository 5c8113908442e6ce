/**
 * Trinity's algorithm types and the pluggable functions behind them, per release.
 *
 * How Trinity resolves `algorithm.*` (all modelled releases work the same way; the code lives in
 * `Config._check_algorithm` up to v0.4.0 and in `AlgorithmConfigValidator` from v0.5.0):
 *  1. the algorithm type's own check runs (DPO, and SFT from v0.5.0, adjust the config there);
 *  2. a base dict ({@link BASE_ALGORITHM_DEFAULTS}) is updated with the type's `default_config()`, and every key
 *     whose config value is null is filled from it (`repeat_times` is declared `int = 1`, never null, so the
 *     type's `repeat_times` is never applied);
 *  3. for each function name, an unknown name raises; a null `<fn>_args` is replaced by the class's
 *     `default_args()` ({@link FnSpec.defaultArgs}). A user-supplied `<fn>_args` replaces those defaults wholesale,
 *     so missing keys fall back to the constructor defaults ({@link FnSpec.params}), which sometimes differ.
 *  4. from v0.4.0, when `policy_loss_fn_args` has a `loss_agg_mode` key it is overwritten with
 *     `algorithm.loss_agg_mode` (itself defaulting to {@link BASE_LOSS_AGG_MODE}).
 */
import { inRange, type Release } from '../releases';

export interface AlgorithmDefaults {
  sample_strategy?: string;
  advantage_fn?: string;
  policy_loss_fn?: string;
  kl_penalty_fn?: string;
  kl_loss_fn?: string;
  entropy_loss_fn?: string;
}

/** `<fn>_args` keys an algorithm's `default_config()` may fill in (applied only when the config leaves them null). */
export type FnArgsKey =
  | 'advantage_fn_args'
  | 'policy_loss_fn_args'
  | 'kl_penalty_fn_args'
  | 'kl_loss_fn_args'
  | 'entropy_loss_fn_args'
  | 'sample_strategy_args';

/** What decides whether the trainer loads the frozen reference model. */
export interface ReferenceUse {
  /** The algorithm type's `use_reference`. */
  useReference: boolean;
  klLossFn: string;
  policyLossFn: string;
  klPenaltyFn?: string;
}

/** Whether the trainer reads reference log-probs: for a KL loss, DPO, or a KL penalty on rewards. */
export function needsReference(a: ReferenceUse): boolean {
  return a.useReference && (a.klLossFn !== 'none' || a.policyLossFn === 'dpo' || (a.klPenaltyFn ?? 'none') !== 'none');
}

export interface AlgorithmTypeSpec {
  name: string;
  since?: Release;
  until?: Release;
  useCritic: boolean;
  useReference: boolean;
  /** Declared only by `mix`/`mix_chord` (false elsewhere); Trinity never reads it. */
  useRollout: boolean;
  computeAdvantageInTrainer: boolean;
  canBalanceBatch: boolean;
  schema: 'experience' | 'sft' | 'dpo';
  /** the algorithm's own default_config() (its repeat_times too, although Trinity never applies it) */
  repeatTimes?: number;
  defaults: AlgorithmDefaults;
  /**
   * `<fn>_args` values in the algorithm's `default_config()`. Unlike `repeatTimes` these DO apply (when the user
   * leaves that `_args` null) and take precedence over the function's `default_args()`.
   */
  fnArgs?: Partial<Record<FnArgsKey, Record<string, unknown>>>;
  /** per-release differences, later entries win */
  versions?: ({ since?: Release; until?: Release } & Partial<Omit<AlgorithmTypeSpec, 'name' | 'versions'>>)[];
  /** Where it was read, for types newer than the release commits (`main` past 10796ed). */
  source?: string;
}

/**
 * The base dict Trinity starts from before the algorithm's default_config() (in config.py `_check_algorithm`
 * for <=0.4, config_validator.py AlgorithmConfigValidator for >=0.5), per release. Identical in every modelled
 * release. (Its `sample_strategy: warmup` never shows through: every algorithm type sets its own.)
 */
export const BASE_ALGORITHM_DEFAULTS: { since?: Release; until?: Release; defaults: Required<AlgorithmDefaults> }[] = [
  {
    defaults: {
      sample_strategy: 'warmup',
      advantage_fn: 'ppo',
      policy_loss_fn: 'ppo',
      kl_penalty_fn: 'none',
      kl_loss_fn: 'k2',
      entropy_loss_fn: 'default',
    },
  },
];

/**
 * From v0.4.0 the base dict also sets `loss_agg_mode` (when the config leaves it null), and that value then
 * overwrites any `loss_agg_mode` key of `policy_loss_fn_args` — including one coming from `default_args()`
 * (e.g. `gspo`'s `seq-mean-token-mean` becomes `token-mean` unless `algorithm.loss_agg_mode` is set).
 */
export const BASE_LOSS_AGG_MODE: { since: Release; value: string } = { since: 'v0.4.0', value: 'token-mean' };

// ---------------------------------------------------------------------------------------------------------------
// Algorithm types
// ---------------------------------------------------------------------------------------------------------------

/** Full default set shared by most RL types (KL loss k2, entropy bonus, no KL penalty). */
const RL_FNS = { kl_penalty_fn: 'none', kl_loss_fn: 'k2', entropy_loss_fn: 'default' } as const;
/** No reference-model terms at all. */
const NO_REG_FNS = { kl_penalty_fn: 'none', kl_loss_fn: 'none', entropy_loss_fn: 'none' } as const;
/** v0.3.0 used the (then not deprecated) `warmup` sample strategy where later releases use `default`. */
const WARMUP_IN_030 = [{ until: 'v0.3.0' as Release, defaults: { sample_strategy: 'warmup' } }];

const rl = (name: string, o: Partial<AlgorithmTypeSpec> & Pick<AlgorithmTypeSpec, 'defaults'>): AlgorithmTypeSpec => ({
  name,
  useCritic: false,
  useReference: true,
  useRollout: false,
  computeAdvantageInTrainer: false,
  canBalanceBatch: true,
  schema: 'experience',
  ...o,
});

export const ALGORITHM_TYPES: AlgorithmTypeSpec[] = [
  rl('grpo', {
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'grpo', policy_loss_fn: 'ppo', ...RL_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('ppo', {
    useCritic: true,
    computeAdvantageInTrainer: true,
    repeatTimes: 1,
    defaults: { sample_strategy: 'default', advantage_fn: 'ppo', policy_loss_fn: 'ppo', ...RL_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('sft', {
    useReference: false,
    schema: 'sft',
    defaults: { sample_strategy: 'default', policy_loss_fn: 'sft', kl_loss_fn: 'none', entropy_loss_fn: 'none' },
  }),
  rl('dpo', {
    canBalanceBatch: false,
    schema: 'dpo',
    defaults: { sample_strategy: 'default', policy_loss_fn: 'dpo', kl_loss_fn: 'k2', entropy_loss_fn: 'default' },
    versions: WARMUP_IN_030,
  }),
  rl('gspo', {
    since: 'v0.4.0',
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'grpo', policy_loss_fn: 'gspo', ...RL_FNS },
  }),
  rl('rloo', {
    since: 'v0.4.0',
    computeAdvantageInTrainer: true,
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'rloo', policy_loss_fn: 'ppo', ...RL_FNS },
  }),
  rl('reinforceplusplus', {
    since: 'v0.4.0',
    computeAdvantageInTrainer: true,
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'reinforceplusplus', policy_loss_fn: 'ppo', ...RL_FNS },
  }),
  rl('opmd', {
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'opmd', policy_loss_fn: 'opmd', ...RL_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('asymre', {
    useReference: false,
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'asymre', policy_loss_fn: 'opmd', ...NO_REG_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('topr', {
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'reinforce', policy_loss_fn: 'topr', ...RL_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('cispo', {
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'grpo', policy_loss_fn: 'cispo', ...RL_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('sapo', {
    since: 'v0.4.0',
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'grpo', policy_loss_fn: 'sapo', ...RL_FNS },
  }),
  rl('rec', {
    since: 'v0.3.1',
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'rec', policy_loss_fn: 'rec', ...RL_FNS },
    versions: [{ until: 'v0.3.2', defaults: { kl_loss_fn: 'none', entropy_loss_fn: 'none' } }],
  }),
  rl('sppo', {
    useReference: false,
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'opmd', policy_loss_fn: 'sppo', ...NO_REG_FNS },
    versions: WARMUP_IN_030,
  }),
  rl('multi_step_grpo', {
    since: 'v0.3.1',
    repeatTimes: 8,
    defaults: { sample_strategy: 'default', advantage_fn: 'step_wise_grpo', policy_loss_fn: 'ppo', ...RL_FNS },
  }),
  // `mix`/`mix_chord` set no KL functions: kl_penalty_fn/kl_loss_fn come from the base dict (none / k2).
  rl('mix', {
    useRollout: true,
    repeatTimes: 8,
    defaults: { sample_strategy: 'mix', advantage_fn: 'grpo', policy_loss_fn: 'mix', entropy_loss_fn: 'mix' },
  }),
  rl('mix_chord', {
    useRollout: true,
    repeatTimes: 8,
    defaults: { sample_strategy: 'mix', advantage_fn: 'grpo', policy_loss_fn: 'mix_chord', entropy_loss_fn: 'mix' },
  }),
  // `raft` sets no advantage_fn, so the base `ppo` (a trainer-side fn) applies even though the type computes
  // advantages on the explorer side.
  rl('raft', {
    useReference: false,
    defaults: { sample_strategy: 'default', policy_loss_fn: 'sft', kl_loss_fn: 'none', entropy_loss_fn: 'none' },
  }),
  rl('on_policy_distill', {
    since: 'v0.4.0',
    useReference: false,
    computeAdvantageInTrainer: true,
    repeatTimes: 8,
    defaults: { sample_strategy: 'default', advantage_fn: 'on_policy_distill', policy_loss_fn: 'ppo', ...NO_REG_FNS },
    fnArgs: { advantage_fn_args: { kl_coef: 1.0 } },
  }),
  rl('jsd', {
    since: 'v0.5.2',
    useReference: false,
    computeAdvantageInTrainer: true,
    repeatTimes: 8,
    defaults: { sample_strategy: 'default', advantage_fn: 'jsd', policy_loss_fn: 'ppo', ...NO_REG_FNS },
    fnArgs: { advantage_fn_args: { kl_coef: 1.0, lambda_coef: 0.5 } },
  }),
  rl('grpo_verl', {
    since: 'v0.5.2',
    computeAdvantageInTrainer: true,
    repeatTimes: 2,
    defaults: { sample_strategy: 'default', advantage_fn: 'grpo', policy_loss_fn: 'ppo', ...RL_FNS },
  }),
  // `cpt` and `m2po` are registered too (1d52c85), but their classes were not among the sources read: the checker
  // treats them like a plugin's algorithm (defaults unknown, nothing filled in).
  rl('dapo', {
    since: 'main',
    useReference: false,
    repeatTimes: 16,
    defaults: {
      sample_strategy: 'default',
      advantage_fn: 'grpo',
      policy_loss_fn: 'ppo',
      kl_penalty_fn: 'none',
      kl_loss_fn: 'none',
      entropy_loss_fn: 'default',
    },
    source: '0fcd37e trinity/algorithm/algorithm.py DAPOAlgorithm',
  }),
  rl('gigpo', {
    since: 'main',
    repeatTimes: 8,
    defaults: { sample_strategy: 'default', advantage_fn: 'gigpo', policy_loss_fn: 'ppo', ...RL_FNS },
    fnArgs: {
      advantage_fn_args: { omega: 1.0, gamma: 1.0, fnorm: 'none', epsilon: 1e-6 },
      policy_loss_fn_args: { clip_range_low: 0.2, clip_range_high: 0.2, loss_agg_mode: 'token-mean' },
    },
    source: '0fcd37e trinity/algorithm/algorithm.py GiGPOAlgorithm',
  }),
];

// ---------------------------------------------------------------------------------------------------------------
// Function constructors
// ---------------------------------------------------------------------------------------------------------------

export interface FnArgSpec {
  name: string;
  default?: unknown;
  required: boolean;
  doc?: string;
}

export interface FnSpec {
  registry: 'advantage_fn' | 'policy_loss_fn' | 'kl_fn' | 'entropy_loss_fn' | 'sample_strategy';
  name: string;
  since?: Release;
  until?: Release;
  /** what default_args() returns (JSON), i.e. what Trinity fills in when `<x>_args` is null */
  defaultArgs: Record<string, unknown>;
  /** the constructor's keyword parameters: those without a default are required (a user's partial `_args` missing them crashes the constructor) */
  params: FnArgSpec[];
  /** true if the constructor takes **kwargs (unknown keys accepted) */
  acceptsExtraKwargs: boolean;
  /** per-release differences; each field given replaces the base one wholesale, later entries win */
  versions?: ({ since?: Release; until?: Release } & Partial<
    Pick<FnSpec, 'defaultArgs' | 'params' | 'acceptsExtraKwargs'>
  >)[];
  /** Where it was read, for functions newer than the release commits (`main` past 10796ed). */
  source?: string;
}

const opt = (name: string, def: unknown, doc?: string): FnArgSpec =>
  doc === undefined ? { name, default: def, required: false } : { name, default: def, required: false, doc };
const req = (name: string, doc?: string): FnArgSpec =>
  doc === undefined ? { name, required: true } : { name, required: true, doc };

const AGG_DOC =
  'How token losses are reduced (token-mean, seq-mean-token-sum, seq-mean-token-mean, seq-mean-token-sum-norm).';
const lossAgg = (def = 'token-mean'): FnArgSpec => opt('loss_agg_mode', def, AGG_DOC);

const CLIP_DOC = 'Symmetric ratio clip range; used for a side whose own bound is null. Both sides must end up set.';
const clipTriple = (): FnArgSpec[] => [
  opt('clip_range', null, CLIP_DOC),
  opt('clip_range_low', null, 'Lower clip bound (1 - low); overrides clip_range.'),
  opt('clip_range_high', null, 'Upper clip bound (1 + high); overrides clip_range.'),
];

const EPS_DOC = 'Added to the group standard deviation before dividing.';
const STD_LEVEL_DOC = "Where the std used for normalisation comes from: 'group' or 'batch'.";

/** Mini-batch bookkeeping the mix losses need; set them to match the trainer (they are not filled in automatically). */
const mixBatchParams = (): FnArgSpec[] => [
  opt('use_dynamic_bsz', null, 'Whether the trainer uses dynamic (token-budget) micro-batches.'),
  opt('ppo_mini_batch_size', 1, 'Trainer mini-batch size, used to weight the two loss terms.'),
  opt('ppo_micro_batch_size_per_gpu', 1, 'Trainer micro-batch size per GPU.'),
  opt('ngpus_trainer', 1, 'Number of trainer GPUs.'),
  opt('train_batch_size_usual', 1, 'Rollout (non-expert) rows per batch.'),
  opt('train_batch_size_expert', 1, 'Expert (SFT) rows per batch.'),
];
const mixAggParams = (r: 'v030' | 'v031' | 'v040'): FnArgSpec[] =>
  r === 'v030'
    ? [opt('use_token_level_loss_in_sft', true, 'Average the SFT term over tokens rather than sequences.')]
    : r === 'v031'
      ? [
          opt('sft_loss_agg_mode', 'token-mean', 'loss_agg_mode of the SFT term.'),
          opt('grpo_loss_agg_mode', 'token-mean', 'loss_agg_mode of the RL (PPO) term.'),
        ]
      : [
          lossAgg(),
          opt('sft_loss_agg_mode', null, 'loss_agg_mode of the SFT term (falls back to loss_agg_mode).'),
          opt('grpo_loss_agg_mode', null, 'loss_agg_mode of the RL (PPO) term (falls back to loss_agg_mode).'),
        ];

const KL_PARAMS: FnArgSpec[] = [
  opt('adaptive', false, 'Adapt kl_coef towards target_kl (needs target_kl and horizon).'),
  opt('kl_coef', 0.001, 'Weight of the KL term.'),
  opt('target_kl', null, 'Target KL for the adaptive controller.'),
  opt('horizon', null, 'Horizon of the adaptive controller.'),
];
const KL_DEFAULTS = { adaptive: false, kl_coef: 0.001 };
const klFn = (name: string, since?: Release): FnSpec => ({
  registry: 'kl_fn',
  name,
  ...(since ? { since } : {}),
  defaultArgs: KL_DEFAULTS,
  params: KL_PARAMS,
  acceptsExtraKwargs: false,
});

const entropyFn = (name: string): FnSpec => ({
  registry: 'entropy_loss_fn',
  name,
  defaultArgs: { entropy_coef: 0.0 },
  params: [req('entropy_coef', 'Weight of the entropy bonus. Required: the constructor has no default.')],
  acceptsExtraKwargs: false,
});

const GRPO_030_PARAMS: FnArgSpec[] = [
  opt('epsilon', 1e-6, EPS_DOC),
  opt('std_threshold', null, 'Drop groups whose reward std is at most this value (and single-rollout groups).'),
  opt('duplicate_experiences', false, 'With std_threshold, refill dropped groups by duplicating kept ones.'),
  opt('rank_penalty', null, 'Scale rewards down by rank of mean log-prob within the group.'),
];

/** Arguments of the SFT losses (`sft`, `sft_is`), which took `use_token_level_loss` before v0.3.1. */
const SFT_ARGS = {
  defaultArgs: { loss_agg_mode: 'token-mean' },
  params: [lossAgg()],
  acceptsExtraKwargs: false,
  versions: [
    {
      until: 'v0.3.0' as const,
      defaultArgs: { use_token_level_loss: true },
      params: [opt('use_token_level_loss', true, 'Average over tokens rather than sequences.')],
    },
  ],
};

/** Arguments shared by a group advantage and its trainer-side (`_verl`) twin. */
const OPMD_ARGS = {
  defaultArgs: { opmd_baseline: 'mean', tau: 1.0 },
  params: [
    opt('opmd_baseline', 'mean', "Group baseline: 'mean' or 'logavgexp'."),
    opt('tau', 1.0, 'Temperature of the logavgexp baseline.'),
  ],
  acceptsExtraKwargs: false,
};
const ASYMRE_ARGS = {
  defaultArgs: { baseline_shift: -0.1 },
  params: [opt('baseline_shift', -0.1, 'Added to the group mean reward to form the baseline.')],
  acceptsExtraKwargs: false,
};

export const FN_SPECS: FnSpec[] = [
  // ---- advantage functions ----
  {
    registry: 'advantage_fn',
    name: 'grpo',
    defaultArgs: {
      epsilon: 1e-6,
      std_threshold: null,
      duplicate_experiences: false,
      rank_penalty: null,
      std_cal_level: 'group',
    },
    params: [...GRPO_030_PARAMS, opt('std_cal_level', 'group', STD_LEVEL_DOC)],
    acceptsExtraKwargs: false,
    versions: [{ until: 'v0.3.0', defaultArgs: { epsilon: 1e-6 }, params: GRPO_030_PARAMS }],
  },
  {
    registry: 'advantage_fn',
    name: 'ppo',
    defaultArgs: { gamma: 1.0, lam: 1.0 },
    params: [opt('gamma', 1.0, 'Discount factor.'), opt('lam', 1.0, 'GAE lambda.')],
    acceptsExtraKwargs: false,
  },
  { registry: 'advantage_fn', name: 'reinforce', defaultArgs: {}, params: [], acceptsExtraKwargs: false },
  { registry: 'advantage_fn', name: 'rloo', defaultArgs: {}, params: [], acceptsExtraKwargs: false },
  {
    registry: 'advantage_fn',
    name: 'reinforceplusplus',
    defaultArgs: { gamma: 1.0 },
    params: [opt('gamma', 1.0, 'Discount factor.')],
    acceptsExtraKwargs: false,
  },
  { registry: 'advantage_fn', name: 'remax', defaultArgs: {}, params: [], acceptsExtraKwargs: false },
  {
    // Takes **kwargs but forwards them to a base that accepts none, so unknown keys still fail.
    registry: 'advantage_fn',
    name: 'opmd',
    ...OPMD_ARGS,
  },
  {
    // Takes **kwargs but forwards them to a base that accepts none, so unknown keys still fail.
    registry: 'advantage_fn',
    name: 'asymre',
    ...ASYMRE_ARGS,
  },
  {
    registry: 'advantage_fn',
    name: 'step_wise_grpo',
    defaultArgs: { epsilon: 1e-6, enable_step_norm: false, std_threshold: null, std_cal_level: 'group' },
    params: [
      opt('epsilon', 1e-6, EPS_DOC),
      opt('enable_step_norm', false, "Divide each step's advantage by the number of steps in its run."),
      opt('std_cal_level', 'group', STD_LEVEL_DOC),
      opt('std_threshold', null, 'Drop tasks whose final-reward std is at most this value.'),
    ],
    acceptsExtraKwargs: true,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { epsilon: 1e-6, enable_step_norm: false },
        params: [
          opt('epsilon', 1e-6, EPS_DOC),
          opt('enable_step_norm', false, "Divide each step's advantage by the number of steps in its run."),
        ],
      },
      {
        since: 'v0.3.1',
        until: 'v0.3.1',
        defaultArgs: { epsilon: 1e-6, enable_step_norm: false },
        params: [
          opt('epsilon', 1e-6, EPS_DOC),
          opt('enable_step_norm', false, "Divide each step's advantage by the number of steps in its run."),
          opt('std_cal_level', 'group', STD_LEVEL_DOC),
        ],
      },
    ],
  },
  {
    registry: 'advantage_fn',
    name: 'rec',
    since: 'v0.3.1',
    defaultArgs: { epsilon: 1e-6, std_normalize: false, drop: null },
    params: [
      opt('epsilon', 1e-6, EPS_DOC),
      opt('std_normalize', false, 'Also divide by the group reward std.'),
      opt('drop', null, "null or 'balance' (drop samples to balance positive and negative advantages)."),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'advantage_fn',
    name: 'on_policy_distill',
    since: 'v0.4.0',
    defaultArgs: { kl_coef: 1.0 },
    params: [opt('kl_coef', 1.0, 'Scale of the teacher-minus-student log-prob advantage.')],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'advantage_fn',
    name: 'jsd',
    since: 'v0.5.2',
    defaultArgs: { lambda_coef: 0.5, kl_coef: 1.0, temperature: 1.0, chunk_size: null },
    params: [
      opt('lambda_coef', 0.5, 'Mixture weight between teacher and student (0 and 1 give the two plain KLs).'),
      opt('kl_coef', 1.0, 'Scale of the divergence advantage.'),
      opt('temperature', 1.0, 'Softmax temperature for both distributions.'),
      opt('chunk_size', null, 'Process the vocabulary dimension in chunks of this size to save memory.'),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'advantage_fn',
    name: 'clipb',
    since: 'v0.5.2',
    defaultArgs: { epsilon: 1e-6, mu: 2.5 },
    params: [opt('epsilon', 1e-6, EPS_DOC), opt('mu', 2.5, 'Clipping threshold in units of the entropy-signal std.')],
    acceptsExtraKwargs: false,
  },
  {
    // default_args() says mu 8.5, the constructor 2.0.
    registry: 'advantage_fn',
    name: 'clipv',
    since: 'v0.5.2',
    defaultArgs: { epsilon: 1e-6, mu: 8.5, max_frac: 1e-4 },
    params: [
      opt('epsilon', 1e-6, EPS_DOC),
      opt('mu', 2.0, 'Clipping threshold in units of the signal std (default_args() uses 8.5).'),
      opt('max_frac', 1e-4, 'Upper bound on the fraction of tokens that may be clipped.'),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'advantage_fn',
    name: 'gigpo',
    since: 'main',
    defaultArgs: {
      omega: 1.0,
      gamma: 1.0,
      fnorm: 'none',
      epsilon: 1e-6,
      step_reward_key: 'step_reward',
      env_state_hash_key: 'env_state_hash',
    },
    params: [
      opt('omega', 1.0, 'Weight of the step-level (anchor-state) advantage added to the episode-level one.'),
      opt('gamma', 1.0, 'Discount of the per-step returns the step-level advantage compares.'),
      opt('fnorm', 'none', "Normalisation of both advantages: 'none' (mean only) or 'std'; anything else raises."),
      opt('epsilon', 1e-6, EPS_DOC),
      opt('step_reward_key', 'step_reward', 'Experience info key holding the per-step reward (else the final reward).'),
      opt('env_state_hash_key', 'env_state_hash', 'Experience info key identifying the environment state of a step.'),
    ],
    acceptsExtraKwargs: true,
    source: '0fcd37e trinity/algorithm/advantage_fn/gigpo_advantage.py',
  },
  {
    registry: 'advantage_fn',
    name: 'grpo_verl',
    defaultArgs: { epsilon: 1e-6 },
    params: [opt('epsilon', 1e-6, EPS_DOC)],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'advantage_fn',
    name: 'opmd_verl',
    ...OPMD_ARGS,
  },
  {
    registry: 'advantage_fn',
    name: 'asymre_verl',
    ...ASYMRE_ARGS,
  },

  // ---- policy loss functions (the constructor's leading `backend` is supplied by the trainer) ----
  {
    registry: 'policy_loss_fn',
    name: 'ppo',
    defaultArgs: {
      clip_range: 0.2,
      clip_ratio_c: 3.0,
      loss_agg_mode: 'token-mean',
      enable_sequence_masking: false,
      delta_sequence_masking: 0.1,
      fallback_to_policy_gradient: false,
    },
    params: [
      ...clipTriple(),
      opt('clip_ratio_c', 3.0, 'Dual-clip bound for negative advantages; must be > 1.'),
      lossAgg(),
      opt('enable_sequence_masking', false, 'Mask whole sequences whose policy drift is too large.'),
      opt('delta_sequence_masking', 0.1, 'Drift threshold for sequence masking.'),
      opt('fallback_to_policy_gradient', false, 'Use a plain policy-gradient term where the ratio is clipped.'),
    ],
    acceptsExtraKwargs: false,
    versions: [
      { until: 'v0.3.0', defaultArgs: { clip_range: 0.2 }, params: clipTriple() },
      {
        since: 'v0.3.1',
        until: 'v0.3.2',
        defaultArgs: { clip_range: 0.2, loss_agg_mode: 'token-mean' },
        params: [...clipTriple(), lossAgg()],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'gspo',
    defaultArgs: { clip_range_low: 0.0003, clip_range_high: 0.0004, loss_agg_mode: 'seq-mean-token-mean' },
    params: [...clipTriple(), lossAgg('seq-mean-token-mean')],
    acceptsExtraKwargs: false,
    versions: [
      { until: 'v0.3.0', defaultArgs: { clip_range_low: 0.0003, clip_range_high: 0.0004 }, params: clipTriple() },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'sft',
    ...SFT_ARGS,
  },
  {
    registry: 'policy_loss_fn',
    name: 'dpo',
    defaultArgs: { beta: 0.1, label_smoothing: 0.0 },
    params: [
      opt('beta', 0.1, 'DPO temperature on the reward margin.'),
      opt('label_smoothing', 0.0, 'Conservative-DPO label smoothing.'),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'policy_loss_fn',
    name: 'opmd',
    defaultArgs: { tau: 1.0, loss_agg_mode: 'token-mean' },
    params: [opt('tau', 1.0, 'The loss is divided by 1 + tau.'), lossAgg()],
    acceptsExtraKwargs: false,
    versions: [
      { until: 'v0.3.0', defaultArgs: { tau: 1.0 }, params: [opt('tau', 1.0, 'The loss is divided by 1 + tau.')] },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'topr',
    defaultArgs: { advantage_threshold: 0.0, loss_agg_mode: 'token-mean' },
    params: [
      opt('advantage_threshold', 0.0, 'Ratios are truncated to at most 1 for advantages at or below this.'),
      lossAgg(),
    ],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { advantage_threshold: 0.0 },
        params: [opt('advantage_threshold', 0.0, 'Ratios are truncated to at most 1 for advantages at or below this.')],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'cispo',
    defaultArgs: {
      clip_range_low: 1.0,
      clip_range_high: 0.28,
      enable_mask_clip: false,
      mask_clip_range_low: 1.0,
      mask_clip_range_high: 0.28,
      loss_agg_mode: 'token-mean',
    },
    params: [
      opt('clip_range_low', 1.0, 'Lower bound (1 - low) of the clipped importance weight.'),
      opt('clip_range_high', 0.28, 'Upper bound (1 + high) of the clipped importance weight.'),
      opt('enable_mask_clip', false, 'Also zero out tokens outside the mask clip range.'),
      opt('mask_clip_range_low', 1.0, 'Lower bound of the masking range.'),
      opt('mask_clip_range_high', 0.28, 'Upper bound of the masking range.'),
      lossAgg(),
    ],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: {
          clip_range_low: 1.0,
          clip_range_high: 0.28,
          enable_mask_clip: false,
          mask_clip_range_low: 1.0,
          mask_clip_range_high: 0.28,
        },
        params: [
          opt('clip_range_low', 1.0, 'Lower bound (1 - low) of the clipped importance weight.'),
          opt('clip_range_high', 0.28, 'Upper bound (1 + high) of the clipped importance weight.'),
          opt('enable_mask_clip', false, 'Also zero out tokens outside the mask clip range.'),
          opt('mask_clip_range_low', 1.0, 'Lower bound of the masking range.'),
          opt('mask_clip_range_high', 0.28, 'Upper bound of the masking range.'),
        ],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'sapo',
    since: 'v0.4.0',
    defaultArgs: { tau_pos: 1.0, tau_neg: 1.05, loss_agg_mode: 'token-mean' },
    params: [
      opt('tau_pos', 1.0, 'Gate temperature for positive advantages.'),
      opt('tau_neg', 1.05, 'Gate temperature for negative advantages; must be >= tau_pos.'),
      lossAgg(),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'policy_loss_fn',
    name: 'sppo',
    defaultArgs: { epsilon: 0.3, loss_agg_mode: 'token-mean' },
    params: [opt('epsilon', 0.3, 'Trust region: tokens with ratio outside [1/(1+eps), 1+eps] are masked.'), lossAgg()],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { epsilon: 0.3 },
        params: [opt('epsilon', 0.3, 'Trust region: tokens with ratio outside [1/(1+eps), 1+eps] are masked.')],
      },
    ],
  },
  {
    // default_args() and the constructor disagree on epsilon_low_prime (0.6 vs 0.4) and epsilon_high_prime (2 vs 0.4).
    registry: 'policy_loss_fn',
    name: 'rec',
    since: 'v0.3.1',
    defaultArgs: {
      epsilon_low: 0.2,
      epsilon_high: 0.2,
      epsilon_low_prime: 0.6,
      epsilon_high_prime: 2,
      clip_mode: 'none',
      weight: 'none',
      regularizer: 'none',
      regularizer_coef: 0.0,
      temp: 1.0,
    },
    params: [
      opt('epsilon_low', 0.2, 'Inner lower clip bound, in (0, 1].'),
      opt('epsilon_high', 0.2, 'Inner upper clip bound, > 0.'),
      opt('epsilon_low_prime', 0.4, "Outer lower bound for 'ring' clipping, in (0, 1] (default_args() uses 0.6)."),
      opt('epsilon_high_prime', 0.4, "Outer upper bound for 'ring' clipping, > 0 (default_args() uses 2)."),
      opt('clip_mode', 'none', "'none', 'one-side', 'two-side' or 'ring' ('gspo-one-side' from v0.4.0)."),
      opt('weight', 'none', "'none', 'importance_sampling' or 'advantage' ('gspo_importance_sampling' from v0.4.0)."),
      opt('regularizer', 'none', "'none', 'k2' or 'forward-kl'."),
      opt('regularizer_coef', 0.0, 'Weight of the regulariser, >= 0.'),
      opt('temp', 1.0, 'Temperature of the advantage weighting, > 0.'),
    ],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'policy_loss_fn',
    name: 'importance_sampling',
    since: 'v0.4.0',
    defaultArgs: { loss_agg_mode: 'token-mean' },
    params: [lossAgg()],
    acceptsExtraKwargs: false,
  },
  {
    registry: 'policy_loss_fn',
    name: 'mix',
    defaultArgs: { mu: 0.1, clip_range: 0.2, loss_agg_mode: 'token-mean' },
    params: [
      opt('mu', 0.1, 'Weight of the expert SFT term.'),
      ...clipTriple(),
      ...mixBatchParams(),
      ...mixAggParams('v040'),
    ],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { mu: 0.1, clip_range: 0.2 },
        params: [
          opt('mu', 0.1, 'Weight of the expert SFT term.'),
          ...clipTriple(),
          ...mixBatchParams(),
          ...mixAggParams('v030'),
        ],
      },
      {
        since: 'v0.3.1',
        until: 'v0.3.2',
        defaultArgs: { mu: 0.1, clip_range: 0.2 },
        params: [
          opt('mu', 0.1, 'Weight of the expert SFT term.'),
          ...clipTriple(),
          ...mixBatchParams(),
          ...mixAggParams('v031'),
        ],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'mix_chord',
    defaultArgs: {
      mu_warmup_steps: 0,
      mu_decay_steps: 0,
      mu_peak: 0.1,
      mu_valley: 0.1,
      clip_range: 0.2,
      enable_phi_function: true,
      loss_agg_mode: 'token-mean',
    },
    params: [...chordHead(), ...clipTriple(), ...mixBatchParams(), ...mixAggParams('v040')],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: {
          mu_warmup_steps: 0,
          mu_decay_steps: 0,
          mu_peak: 0.1,
          mu_valley: 0.1,
          clip_range: 0.2,
          enable_phi_function: true,
        },
        params: [...chordHead(), ...clipTriple(), ...mixBatchParams(), ...mixAggParams('v030')],
      },
      {
        since: 'v0.3.1',
        until: 'v0.3.2',
        defaultArgs: {
          mu_warmup_steps: 0,
          mu_decay_steps: 0,
          mu_peak: 0.1,
          mu_valley: 0.1,
          clip_range: 0.2,
          enable_phi_function: true,
        },
        params: [...chordHead(), ...clipTriple(), ...mixBatchParams(), ...mixAggParams('v031')],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'sft_is',
    ...SFT_ARGS,
  },
  {
    registry: 'policy_loss_fn',
    name: 'sft_phi',
    defaultArgs: { loss_agg_mode: 'token-mean', cutoff_prob: 1.0 },
    params: [lossAgg(), opt('cutoff_prob', 1.0, 'Token probabilities are capped at this value, in [0, 1].')],
    acceptsExtraKwargs: false,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { use_token_level_loss: true, cutoff_prob: 1.0 },
        params: [
          opt('use_token_level_loss', true, 'Average over tokens rather than sequences.'),
          opt('cutoff_prob', 1.0, 'Token probabilities are capped at this value, in [0, 1].'),
        ],
      },
    ],
  },
  {
    registry: 'policy_loss_fn',
    name: 'm2po',
    since: 'main',
    defaultArgs: { m2_threshold: 0.04, loss_agg_mode: 'token-mean', log_ratio_clip: 20.0 },
    params: [
      opt(
        'm2_threshold',
        0.04,
        'Upper bound on the mean squared log-ratio of the kept trust-region tokens; finite, >= 0.',
      ),
      opt('loss_agg_mode', 'token-mean', 'Must be `token-mean`: the constructor raises for any other mode.'),
      opt('log_ratio_clip', 20.0, 'Clamp of the log-ratio before exponentiation; finite, > 0.'),
    ],
    acceptsExtraKwargs: false,
    source: '3a41dc2 trinity/algorithm/policy_loss_fn/m2po_policy_loss.py',
  },

  // ---- KL functions (used for both kl_loss_fn and kl_penalty_fn) ----
  klFn('k2'),
  klFn('k3'),
  klFn('low_var_kl', 'v0.4.0'),
  klFn('k1'),
  klFn('abs'),
  klFn('corrected_k3', 'v0.4.0'),
  klFn('none'),

  // ---- entropy loss functions ----
  entropyFn('default'),
  entropyFn('none'),
  entropyFn('mix'),

  // ---- sample strategies (the constructor's leading `buffer_config` is supplied by the trainer) ----
  { registry: 'sample_strategy', name: 'default', defaultArgs: {}, params: [], acceptsExtraKwargs: true },
  {
    registry: 'sample_strategy',
    name: 'staleness_control',
    since: 'v0.4.0',
    defaultArgs: {},
    params: [
      {
        name: 'max_staleness',
        required: false,
        doc: 'Skip experiences from models more than this many versions behind the current step (no limit when absent).',
      },
    ],
    acceptsExtraKwargs: true,
  },
  {
    registry: 'sample_strategy',
    name: 'mix',
    defaultArgs: { expert_data_ratio: 0.5, sft_dataset_name: 'sft_dataset' },
    params: [
      opt('expert_data_ratio', 0.5, 'Share of each batch taken from the expert (SFT) data, rounded up.'),
      opt('sft_dataset_name', 'sft_dataset', 'Name of the expert dataset in buffer.trainer_input.auxiliary_buffers.'),
    ],
    acceptsExtraKwargs: true,
    versions: [
      {
        until: 'v0.3.0',
        defaultArgs: { expert_data_ratio: 0.5 },
        params: [opt('expert_data_ratio', 0.5, 'Share of each batch taken from the SFT warmup dataset, rounded up.')],
      },
    ],
  },
  { registry: 'sample_strategy', name: 'warmup', defaultArgs: {}, params: [], acceptsExtraKwargs: true },
];

function chordHead(): FnArgSpec[] {
  return [
    opt('mu_warmup_steps', 0, 'Steps over which the expert weight rises linearly to mu_peak.'),
    opt('mu_decay_steps', 0, 'Steps over which it then decays (cosine) to mu_valley.'),
    opt('mu_peak', 0.1, 'Peak expert weight.'),
    opt('mu_valley', 0.1, 'Final expert weight.'),
    opt('enable_phi_function', true, 'Use the phi-weighted SFT loss (sft_phi) instead of plain SFT.'),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Lookups
// ---------------------------------------------------------------------------------------------------------------

/** The algorithm type as it is at `release` (undefined when not registered there); `defaults`/`fnArgs` merge key by key. */
export function algorithmTypeAt(name: string, release: Release): AlgorithmTypeSpec | undefined {
  const spec = ALGORITHM_TYPES.find((a) => a.name === name && inRange(release, a.since, a.until));
  if (!spec) return undefined;
  const { versions, ...base } = spec;
  let out: AlgorithmTypeSpec = { ...base, defaults: { ...base.defaults } };
  for (const v of versions ?? []) {
    if (!inRange(release, v.since, v.until)) continue;
    const { since: _s, until: _u, defaults, fnArgs, ...rest } = v;
    out = {
      ...out,
      ...rest,
      defaults: { ...out.defaults, ...defaults },
      ...(fnArgs ? { fnArgs: { ...out.fnArgs, ...fnArgs } } : {}),
    };
  }
  return out;
}

/** The function's constructor/default-args spec at `release` (undefined when not registered there). */
export function fnSpecAt(registry: FnSpec['registry'], name: string, release: Release): FnSpec | undefined {
  const spec = FN_SPECS.find((f) => f.registry === registry && f.name === name && inRange(release, f.since, f.until));
  if (!spec) return undefined;
  const { versions, ...base } = spec;
  let out: FnSpec = base;
  for (const v of versions ?? []) {
    if (!inRange(release, v.since, v.until)) continue;
    const { since: _s, until: _u, ...rest } = v;
    out = { ...out, ...rest };
  }
  return out;
}

/** The base defaults Trinity starts from at `release`. */
export function baseDefaultsAt(release: Release): Required<AlgorithmDefaults> {
  const hit = BASE_ALGORITHM_DEFAULTS.find((b) => inRange(release, b.since, b.until)) ?? BASE_ALGORITHM_DEFAULTS[0];
  return { ...hit.defaults };
}

/**
 * What Trinity ends up with for the six function names when the config leaves them all null:
 * the base defaults overlaid with the algorithm type's own.
 */
export function effectiveAlgorithmDefaults(name: string, release: Release): Required<AlgorithmDefaults> | undefined {
  const spec = algorithmTypeAt(name, release);
  if (!spec) return undefined;
  const merged = { ...baseDefaultsAt(release) };
  for (const [k, v] of Object.entries(spec.defaults) as [keyof AlgorithmDefaults, string | undefined][]) {
    if (v !== undefined) merged[k] = v;
  }
  return merged;
}

/**
 * Advantage functions whose class computes on the explorer side (a GroupAdvantage / ExperienceOperator, with
 * `compute_in_trainer() == False`), in every modelled release. The rest compute in the trainer.
 */
export const EXPLORER_SIDE_ADVANTAGES: ReadonlySet<string> = new Set([
  'grpo',
  'step_wise_grpo',
  'reinforce',
  'opmd',
  'asymre',
  'rec',
  'gigpo', // main only (0fcd37e gigpo_advantage.py)
]);

/** The six pluggable pieces of an algorithm: the config key naming each, and the registry it is looked up in. */
/** The algorithm's pluggable pieces, each named by a key of `algorithm` with its `<key>_args` beside it. */
export type AlgorithmPieceKey =
  | 'sample_strategy'
  | 'policy_loss_fn'
  | 'advantage_fn'
  | 'kl_loss_fn'
  | 'kl_penalty_fn'
  | 'entropy_loss_fn';

export const ALGORITHM_PIECES: readonly { key: AlgorithmPieceKey; registry: FnSpec['registry'] }[] = [
  { key: 'sample_strategy', registry: 'sample_strategy' },
  { key: 'policy_loss_fn', registry: 'policy_loss_fn' },
  { key: 'advantage_fn', registry: 'advantage_fn' },
  { key: 'kl_loss_fn', registry: 'kl_fn' },
  { key: 'kl_penalty_fn', registry: 'kl_fn' },
  { key: 'entropy_loss_fn', registry: 'entropy_loss_fn' },
];
