/**
 * The trainer's settings from the resolved config: the actor's optimizer and schedule (`algorithm.optimizer`,
 * `trainer`), how it scores sequences, and PPO's critic, with veRL's actor and critic settings from
 * `trainer.trainer_config`. Only the trainer side (trainer-side.ts) reads them; the sections exist from v0.3.2, the
 * first release whose trainer runs here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../../config/types.generated';
import { loadValueModel, type ValueModel } from '../../../engine/lm/value-head';
import { warmupSteps } from '../../../engine/train/schedule';
import type { AlgorithmSetup, CriticSetup, TrainerOptions } from '../../trainer/train-step';
import { localPath } from '../stage/config-paths';
import { RunSetupError } from '../stage/stage-context';

/** veRL's actor settings in `trainer.trainer_config` (`actor_rollout_ref.actor`), empty when unset. */
function actorSettings(cfg: Config): Record<string, unknown> {
  return ((cfg.trainer.trainer_config as Record<string, any> | null)?.actor_rollout_ref?.actor ?? {}) as Record<
    string,
    unknown
  >;
}

/**
 * The temperature the trainer scores sequences at: veRL's `actor_rollout_ref.rollout.temperature`, which Trinity
 * sets to the first training taskset's `rollout_args.temperature` (the check fills it from `model.temperature`), or
 * 1.0 without a taskset (trinity/trainer/verl/verl_config.py at 10796ed, the same from v0.3.2). Train mode skips
 * the explorer input's check, which is what moves `taskset` into `tasksets`, so there only a written `tasksets`
 * list counts. A greedy taskset (temperature 0) would have veRL divide the logits by zero; its rollouts' log-probs
 * are the untempered ones (vLLM skips the division for greedy sampling, and so does the engine's sampler), so the
 * trainer scores those at 1.
 */
export function trainerTemperature(cfg: Config): number {
  const input = cfg.buffer.explorer_input;
  // `tasksets` is new in v0.3.2.
  const first = cfg.mode === 'train' ? input.tasksets?.[0] : (input.taskset ?? input.tasksets?.[0]);
  const t = first?.rollout_args.temperature ?? 1.0;
  return t > 0 ? t : 1;
}

/** How the trainer scores sequences: at `trainerTemperature`, veRL's actor micro-batch rows per forward. */
export function scoringOptions(cfg: Config): { temperature: number; microBatchSize?: number } {
  const actor = actorSettings(cfg);
  return {
    microBatchSize:
      typeof actor.ppo_micro_batch_size_per_gpu === 'number' ? actor.ppo_micro_batch_size_per_gpu : undefined,
    temperature: trainerTemperature(cfg),
  };
}

/** Trainer options from `algorithm.optimizer`, `trainer` and the veRL actor settings in `trainer.trainer_config`. */
export function trainerOptions(
  cfg: Config,
  algorithm: AlgorithmSetup,
  totalSteps: number,
  padTokenId: number,
): TrainerOptions {
  const o = cfg.algorithm.optimizer;
  const actor = actorSettings(cfg);
  // `warmup_style` up to v0.4.0; from v0.5.0 a deprecated alias of `lr_scheduler_type`.
  const style = (o.warmup_style ?? o.lr_scheduler_type) === 'cosine' ? 'cosine' : 'constant';
  return {
    algorithm,
    schedule: {
      lr: o.lr,
      style,
      warmupSteps: warmupSteps(totalSteps, o.lr_warmup_steps, o.lr_warmup_steps_ratio),
      totalSteps,
      // Optional (null allowed) up to v0.4.0.
      minLrRatio: o.min_lr_ratio ?? 0,
    },
    betas: [o.betas[0] ?? 0.9, o.betas[1] ?? 0.999],
    weightDecay: o.weight_decay,
    // `optimizer.clip_grad` from v0.4.0; `trainer.grad_clip` before.
    gradClip: o.clip_grad ?? cfg.trainer.grad_clip,
    ppoEpochs: typeof actor.ppo_epochs === 'number' ? actor.ppo_epochs : 1,
    ...scoringOptions(cfg),
    padTokenId,
  };
}

/**
 * PPO's critic from the resolved config: weights from `model.critic_model_path` (else `model_path`; a checkpoint's
 * `critic/` when resuming) with a value head, and veRL's `trainer_config.critic` settings (optim, ppo_epochs,
 * micro-batches, cliprange_value, loss_agg_mode) and `trainer_config.trainer.critic_warmup`.
 */
export function criticSetup(
  cfg: Config,
  algorithm: AlgorithmSetup,
  configDir: string,
  totalSteps: number,
  seed: number,
  resumeDir?: string,
): CriticSetup {
  const verl = cfg.trainer.trainer_config as Record<string, any>;
  const critic = (verl.critic ?? {}) as Record<string, any>;
  const optim = (critic.optim ?? {}) as Record<string, any>;
  const fromCheckpoint =
    resumeDir && existsSync(join(resumeDir, 'critic', 'config.json')) ? join(resumeDir, 'critic') : undefined;
  const source = fromCheckpoint ?? localPath(cfg.model.critic_model_path || cfg.model.model_path, configDir);
  let model: ValueModel;
  try {
    model = loadValueModel(source, seed);
  } catch (e) {
    throw new RunSetupError(`model.critic_model_path ${source}: ${(e as Error).message}`);
  }
  const lr = typeof optim.lr === 'number' ? optim.lr : 1e-5;
  const style = (optim.warmup_style ?? optim.lr_scheduler_type ?? 'constant') === 'cosine' ? 'cosine' : 'constant';
  return {
    model,
    schedule: {
      lr,
      style,
      warmupSteps: warmupSteps(totalSteps, optim.lr_warmup_steps, optim.lr_warmup_steps_ratio),
      totalSteps,
      minLrRatio: optim.min_lr_ratio ?? 0,
    },
    betas: Array.isArray(optim.betas) ? [optim.betas[0], optim.betas[1]] : [0.9, 0.999],
    weightDecay: typeof optim.weight_decay === 'number' ? optim.weight_decay : 0.01,
    gradClip: typeof critic.grad_clip === 'number' ? critic.grad_clip : cfg.trainer.grad_clip,
    ppoEpochs: typeof critic.ppo_epochs === 'number' && critic.ppo_epochs > 0 ? critic.ppo_epochs : 1,
    microBatchSize:
      typeof critic.ppo_micro_batch_size_per_gpu === 'number' ? critic.ppo_micro_batch_size_per_gpu : undefined,
    cliprangeValue: typeof critic.cliprange_value === 'number' ? critic.cliprange_value : 0.5,
    lossAggMode: typeof critic.loss_agg_mode === 'string' ? critic.loss_agg_mode : 'token-mean',
    // veRL's `trainer.critic_warmup` as written in `trainer_config`, else main's `trainer.critic_warmup` (the key
    // Trinity main adds to its own TrainerConfig for it; earlier releases have only veRL's, default 0).
    warmupSteps:
      typeof verl.trainer?.critic_warmup === 'number' ? verl.trainer.critic_warmup : (cfg.trainer.critic_warmup ?? 0),
    klPenaltyFn: algorithm.klPenaltyFn ?? 'none',
    klPenaltyFnArgs: cfg.algorithm.kl_penalty_fn_args,
  };
}
