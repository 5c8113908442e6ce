/**
 * Registries keyed by Trinity's names (the `__init__.py` of each trinity/algorithm sub-package at main):
 * `advantage_fn`, `policy_loss_fn`, `kl_fn` (both `kl_loss_fn` and `kl_penalty_fn`) and `entropy_loss_fn`.
 *
 * `create*(name, args)` resolves `args` the way Trinity builds the class from a config (see args.ts: null →
 * default_args(); written args replace them, constructor defaults fill the rest; unknown or missing keywords
 * raise) and returns the bound function. The caller passes the `<fn>_args` as the resolved config holds them —
 * in particular after Trinity's launch check has overwritten `policy_loss_fn_args.loss_agg_mode` with
 * `algorithm.loss_agg_mode` — and passes `algorithm.loss_agg_mode` to the KL loss and the entropy loss.
 */
import { EXPLORER_SIDE_ADVANTAGES } from '../../config/model/algorithms';
import { resolveFnArgs, type AlgorithmFnKind, type FnArgs } from './args';
import { asymreAdvantage, asymreVerlAdvantage } from './advantage/asymre';
import { clipbAdvantage, clipvAdvantage } from './advantage/clip';
import { jsdAdvantage, onPolicyDistillAdvantage } from './advantage/distill';
import { gigpoAdvantage } from './advantage/gigpo';
import { grpoAdvantage, type GroupAdvantageOptions } from './advantage/grpo';
import { grpoVerlAdvantage } from './advantage/grpo-verl';
import { opmdAdvantage, opmdVerlAdvantage } from './advantage/opmd';
import { ppoAdvantage } from './advantage/ppo';
import { recAdvantage } from './advantage/rec';
import { reinforceAdvantage } from './advantage/reinforce';
import { reinforcePlusPlusAdvantage } from './advantage/reinforce-plus-plus';
import { remaxAdvantage } from './advantage/remax';
import { rlooAdvantage } from './advantage/rloo';
import { stepWiseGrpoAdvantage } from './advantage/step-wise-grpo';
import type {
  AdvantageBatch,
  AdvantageExperience,
  GroupAdvantageResult,
  TrainerAdvantageResult,
} from './advantage/types';
import { ENTROPY_LOSS_FN_NAMES, entropyLoss, type EntropyLossInputs, type EntropyLossResult } from './entropy';
import { KL_FN_NAMES, KlFn } from './kl';
import { cispoPolicyLoss } from './policy-loss/cispo';
import { dpoLoss } from './policy-loss/dpo';
import { gspoArgs, gspoPolicyLoss } from './policy-loss/gspo';
import { importanceSamplingLoss } from './policy-loss/importance-sampling';
import { mixChordPolicyLoss, mixPolicyLoss } from './policy-loss/mix';
import { opmdPolicyLoss } from './policy-loss/opmd';
import { ppoArgs, ppoPolicyLoss } from './policy-loss/ppo';
import { recArgs, recPolicyLoss } from './policy-loss/rec';
import { sapoArgs, sapoPolicyLoss } from './policy-loss/sapo';
import { sftIsLoss, sftLoss, sftPhiArgs, sftPhiLoss } from './policy-loss/sft';
import { sppoPolicyLoss } from './policy-loss/sppo';
import { toprPolicyLoss } from './policy-loss/topr';
import type { PolicyLossInputs, PolicyLossKey, PolicyLossResult } from './policy-loss/types';

/** Config keys accepted as kinds (`kl_loss_fn`/`kl_penalty_fn` read the `kl_fn` registry). */
export type RegistryKey = AlgorithmFnKind | 'kl_loss_fn' | 'kl_penalty_fn';

export class UnknownAlgorithmFnError extends Error {
  constructor(
    readonly key: RegistryKey,
    readonly fnName: string,
    readonly known: readonly string[],
  ) {
    super(`Unknown ${key} '${fnName}'. Known ${key} names: ${known.join(', ')}`);
    this.name = 'UnknownAlgorithmFnError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// policy_loss_fn
// ---------------------------------------------------------------------------------------------------------------

type LossImpl = (inputs: PolicyLossInputs, args: FnArgs) => PolicyLossResult;

interface PolicyLossEntry {
  fn: LossImpl;
  /** the inputs it reads besides logprob (Trinity's select_keys) */
  keys: readonly PolicyLossKey[];
  /** constructor checks that run at creation (Trinity's asserts in __init__) */
  validate?: (args: FnArgs) => void;
}

const RL: readonly PolicyLossKey[] = ['old_logprob', 'action_mask', 'advantages'];

const POLICY_LOSSES: Record<string, PolicyLossEntry> = {
  ppo: { fn: ppoPolicyLoss, keys: RL, validate: (a) => void ppoArgs(a) },
  opmd: { fn: opmdPolicyLoss, keys: ['action_mask', 'advantages'] },
  dpo: { fn: dpoLoss, keys: ['ref_logprob', 'action_mask'] },
  sft: { fn: sftLoss, keys: ['action_mask'] },
  mix: { fn: mixPolicyLoss, keys: [...RL, 'expert_mask'], validate: (a) => void ppoArgs(a, 'mix') },
  gspo: { fn: gspoPolicyLoss, keys: RL, validate: (a) => void gspoArgs(a) },
  topr: { fn: toprPolicyLoss, keys: RL },
  cispo: { fn: cispoPolicyLoss, keys: RL },
  sft_is: { fn: sftIsLoss, keys: ['action_mask'] },
  sft_phi: { fn: sftPhiLoss, keys: ['action_mask'], validate: (a) => void sftPhiArgs(a) },
  mix_chord: {
    fn: mixChordPolicyLoss,
    keys: [...RL, 'expert_mask', 'step'],
    validate: (a) => void ppoArgs(a, 'mix_chord'),
  },
  sppo: { fn: sppoPolicyLoss, keys: RL },
  rec: { fn: recPolicyLoss, keys: RL, validate: (a) => void recArgs(a) },
  sapo: { fn: sapoPolicyLoss, keys: RL, validate: (a) => void sapoArgs(a) },
  importance_sampling: { fn: importanceSamplingLoss, keys: RL },
};

export interface PolicyLossFn {
  name: string;
  /** the resolved constructor arguments */
  args: FnArgs;
  /** the inputs read besides logprob */
  selectKeys: readonly PolicyLossKey[];
  (inputs: PolicyLossInputs): PolicyLossResult;
}

export function createPolicyLossFn(name: string, args?: FnArgs | null): PolicyLossFn {
  const entry = POLICY_LOSSES[name];
  if (!entry) throw new UnknownAlgorithmFnError('policy_loss_fn', name, Object.keys(POLICY_LOSSES));
  const resolved = resolveFnArgs('policy_loss_fn', name, args);
  entry.validate?.(resolved);
  const f = ((inputs: PolicyLossInputs) => entry.fn(inputs, resolved)) as PolicyLossFn;
  Object.defineProperty(f, 'name', { value: name });
  f.args = resolved;
  f.selectKeys = entry.keys;
  return f;
}

// ---------------------------------------------------------------------------------------------------------------
// advantage_fn
// ---------------------------------------------------------------------------------------------------------------

type GroupImpl = <E extends AdvantageExperience>(
  exps: readonly E[],
  args: FnArgs,
  options: GroupAdvantageOptions,
) => GroupAdvantageResult<E>;
type TrainerImpl = (batch: AdvantageBatch, args: FnArgs) => TrainerAdvantageResult;

const GROUP_ADVANTAGES: Record<string, GroupImpl> = {
  grpo: grpoAdvantage,
  step_wise_grpo: stepWiseGrpoAdvantage,
  gigpo: gigpoAdvantage,
  reinforce: (exps) => reinforceAdvantage(exps),
  opmd: opmdAdvantage,
  asymre: asymreAdvantage,
  rec: recAdvantage,
};

const TRAINER_ADVANTAGES: Record<string, TrainerImpl> = {
  ppo: ppoAdvantage,
  grpo_verl: grpoVerlAdvantage,
  reinforceplusplus: reinforcePlusPlusAdvantage,
  remax: (batch) => remaxAdvantage(batch),
  rloo: (batch) => rlooAdvantage(batch),
  opmd_verl: opmdVerlAdvantage,
  asymre_verl: asymreVerlAdvantage,
  on_policy_distill: onPolicyDistillAdvantage,
  jsd: jsdAdvantage,
  clipb: clipbAdvantage,
  clipv: clipvAdvantage,
};

/**
 * What a trainer-side advantage reads of the current policy beyond the batch: clipb and clipv filter tokens by its
 * entropy (and clipv by its recomputed log-probs and `necs`), which the trainer computes before the update.
 */
export type PolicySignal = 'entropys' | 'necs';

const TRAINER_SIGNALS: Record<string, readonly PolicySignal[]> = {
  clipb: ['entropys'],
  clipv: ['entropys', 'necs'],
};

/** An explorer-side (group) advantage: a list of experiences in, the kept ones with advantages out. */
export interface GroupAdvantageFn {
  name: string;
  computeInTrainer: false;
  args: FnArgs;
  process<E extends AdvantageExperience>(exps: readonly E[]): GroupAdvantageResult<E>;
}

/** A trainer-side advantage: a padded batch in, [B][T] advantages and returns out. */
export interface TrainerAdvantageFn {
  name: string;
  computeInTrainer: true;
  args: FnArgs;
  /** What it needs of the current policy (policy-signals.ts), beyond the batch. */
  signals: readonly PolicySignal[];
  compute(batch: AdvantageBatch): TrainerAdvantageResult;
}

export type AdvantageFn = GroupAdvantageFn | TrainerAdvantageFn;

export function createAdvantageFn(
  name: string,
  args?: FnArgs | null,
  options: GroupAdvantageOptions = {},
): AdvantageFn {
  const group = GROUP_ADVANTAGES[name];
  const trainer = TRAINER_ADVANTAGES[name];
  if (!group && !trainer) throw new UnknownAlgorithmFnError('advantage_fn', name, knownNames('advantage_fn'));
  const resolved = resolveFnArgs('advantage_fn', name, args);
  if (group) {
    // run once on nothing so argument errors (std_cal_level, drop, …) surface at creation, as in __init__
    group([], resolved, options);
    return {
      name,
      computeInTrainer: false,
      args: resolved,
      process: (exps) => group(exps, resolved, options),
    };
  }
  return {
    name,
    computeInTrainer: true,
    args: resolved,
    signals: TRAINER_SIGNALS[name] ?? [],
    compute: (batch) => trainer(batch, resolved),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// kl_fn, entropy_loss_fn
// ---------------------------------------------------------------------------------------------------------------

export function createKlFn(
  name: string,
  args?: FnArgs | null,
  key: 'kl_fn' | 'kl_loss_fn' | 'kl_penalty_fn' = 'kl_fn',
): KlFn {
  if (!(KL_FN_NAMES as readonly string[]).includes(name)) throw new UnknownAlgorithmFnError(key, name, KL_FN_NAMES);
  return new KlFn(name, resolveFnArgs('kl_fn', name, args));
}

export interface EntropyLossFn {
  name: string;
  args: FnArgs;
  (inputs: EntropyLossInputs): EntropyLossResult;
}

export function createEntropyLossFn(name: string, args?: FnArgs | null): EntropyLossFn {
  if (!(ENTROPY_LOSS_FN_NAMES as readonly string[]).includes(name))
    throw new UnknownAlgorithmFnError('entropy_loss_fn', name, ENTROPY_LOSS_FN_NAMES);
  const resolved = resolveFnArgs('entropy_loss_fn', name, args);
  const f = ((inputs: EntropyLossInputs) => entropyLoss(name, inputs, resolved)) as EntropyLossFn;
  Object.defineProperty(f, 'name', { value: name });
  f.args = resolved;
  return f;
}

// ---------------------------------------------------------------------------------------------------------------
// names
// ---------------------------------------------------------------------------------------------------------------

/** The names implemented for a registry (in Trinity's registration order). */
export function knownNames(key: RegistryKey): string[] {
  switch (key) {
    case 'advantage_fn':
      return ADVANTAGE_FN_ORDER.filter((n) => n in GROUP_ADVANTAGES || n in TRAINER_ADVANTAGES);
    case 'policy_loss_fn':
      return Object.keys(POLICY_LOSSES);
    case 'kl_fn':
    case 'kl_loss_fn':
    case 'kl_penalty_fn':
      return [...KL_FN_NAMES];
    case 'entropy_loss_fn':
      return [...ENTROPY_LOSS_FN_NAMES];
  }
}

const ADVANTAGE_FN_ORDER = [
  'ppo',
  'grpo',
  'grpo_verl',
  'step_wise_grpo',
  'reinforceplusplus',
  'reinforce',
  'remax',
  'rloo',
  'opmd',
  'opmd_verl',
  'asymre',
  'asymre_verl',
  'rec',
  'on_policy_distill',
  'jsd',
  'clipb',
  'clipv',
  'gigpo',
];

/** Whether an advantage function runs on the explorer side (agrees with the config model's list). */
export function isExplorerSideAdvantage(name: string): boolean {
  return name in GROUP_ADVANTAGES || EXPLORER_SIDE_ADVANTAGES.has(name);
}
