/**
 * The algorithm's pieces as both sides of a stage use them: the trainer's losses and advantage (when the trainer
 * computes it), the explorer pipeline's group advantage, the sample strategy, and whether a critic runs. Every name
 * is the resolved config's: Trinity's check fills each piece the user left null with the algorithm type's default
 * (runtime/config/check/rules/algorithm.ts), so nothing is re-derived here.
 */
import type { Config } from '../../../config/types.generated';
import type { Release } from '../../../config/releases';
import { algorithmTypeAt, type AlgorithmPieceKey } from '../../../config/model/algorithms';
import { createAdvantageFn, type GroupAdvantageFn } from '../../algorithm';
import type { AlgorithmSetup } from '../../trainer/train-step';
import { RunSetupError } from './stage-context';

/**
 * The sample strategies the trainer implements (`mix` reads expert data through trainer-side/expert-sampler.ts,
 * `staleness_control` bounds the model versions read: trainer-side/sample-strategy.ts).
 */
export const SAMPLE_STRATEGIES = ['default', 'warmup', 'staleness_control', 'mix'] as const;

export interface AlgorithmParts extends AlgorithmSetup {
  /** The advantage the explorer's pipeline computes last (group advantages), when the algorithm has one there. */
  groupAdvantage?: GroupAdvantageFn;
  sampleStrategy: string;
  sampleStrategyArgs: Record<string, unknown>;
  useCritic: boolean;
}

export function algorithmSetup(cfg: Config, release: Release): AlgorithmParts {
  const a = cfg.algorithm;
  const spec = algorithmTypeAt(a.algorithm_type, release);
  if (!spec) throw new RunSetupError(`algorithm.algorithm_type ${a.algorithm_type} is not known to the local runtime`);
  const piece = (key: AlgorithmPieceKey): string => {
    const name = a[key];
    if (typeof name !== 'string') throw new RunSetupError(`algorithm.${key} was not filled in by the config check`);
    return name;
  };
  const advantageName = piece('advantage_fn');
  const sampleStrategy = piece('sample_strategy');
  if (!(SAMPLE_STRATEGIES as readonly string[]).includes(sampleStrategy)) {
    throw new RunSetupError(
      `algorithm.sample_strategy ${sampleStrategy} is not available in the local runtime (${SAMPLE_STRATEGIES.join(', ')})`,
    );
  }
  // Trinity consults the advantage function on the side the algorithm says: in the trainer (ppo-style), or as the
  // last explorer pipeline operator when it is a group advantage. RAFT's inherited `ppo` is used on neither.
  const advantage = spec.schema === 'experience' ? createAdvantageFn(advantageName, a.advantage_fn_args) : undefined;
  return {
    policyLossFn: piece('policy_loss_fn'),
    policyLossFnArgs: a.policy_loss_fn_args,
    klLossFn: piece('kl_loss_fn'),
    klLossFnArgs: a.kl_loss_fn_args,
    entropyLossFn: piece('entropy_loss_fn'),
    entropyLossFnArgs: a.entropy_loss_fn_args,
    // `algorithm.loss_agg_mode` is new in v0.4.0; the trainer of earlier releases aggregates with veRL's token-mean.
    lossAggMode: a.loss_agg_mode ?? 'token-mean',
    useReference: spec.useReference,
    trainerAdvantageFn: spec.computeAdvantageInTrainer && advantage?.computeInTrainer ? advantageName : undefined,
    trainerAdvantageFnArgs: a.advantage_fn_args,
    groupAdvantage: !spec.computeAdvantageInTrainer && advantage && !advantage.computeInTrainer ? advantage : undefined,
    sampleStrategy,
    sampleStrategyArgs: a.sample_strategy_args ?? {},
    useCritic: spec.useCritic,
    klPenaltyFn: piece('kl_penalty_fn'),
  };
}
