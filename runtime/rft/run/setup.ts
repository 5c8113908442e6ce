/**
 * From one resolved stage config (what Trinity's check step leaves) to the runtime's parts: paths, models,
 * sampling limits, the trainer's options, the experience pipeline and the tasksets. No loop logic here.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Config, InferenceModelConfig } from '../../config/types.generated';
import type { Release } from '../../config/releases';
import { effectiveAlgorithmDefaults, algorithmTypeAt } from '../../config/model/algorithms';
import { loadPretrained, stopTokenIds, type Pretrained } from '../../engine/pretrained';
import { warmupSteps } from '../../engine/train/schedule';
import { createAdvantageFn, type GroupAdvantageFn } from '../algorithm';
import { readTasks, type Task } from '../data/tasks';
import { knownWorkflows } from '../workflows/registry';
import { ExperiencePipeline } from '../explorer/experience-pipeline';
import { Explorer, type ExplorerTask } from '../explorer/explore-step';
import { BatchReader, type SelectorFeedback } from '../data/reader';
import { feedbackAtSyncPoints } from './explorer-side/selector-feedback';
import { createReward, knownRewardNames } from '../rewards';
import { RolloutModel, type RolloutLimits } from '../models/rollout-model';
import { AuxiliaryModel } from '../models/auxiliary-model';
import type { AlgorithmSetup, CriticSetup, TrainerOptions } from '../trainer/train-step';
import { loadValueModel, type ValueModel } from '../../engine/lm/value-head';
import type { CausalLM } from '../../engine/lm/transformer';

export class RunSetupError extends Error {}

/** A local path from the config: tried against the config's directory, then the working directory. */
export function localPath(p: string, configDir: string): string {
  const expanded = p.replace(/^~(?=\/|$)/, process.env.HOME ?? '~');
  if (isAbsolute(expanded)) return expanded;
  for (const base of [configDir, process.cwd()]) {
    const candidate = resolve(base, expanded);
    if (existsSync(candidate)) return candidate;
  }
  return resolve(configDir, expanded);
}

export { jobDirOf } from '../../config/runs/job-dir';

export function loadModelFor(
  cfg: Config,
  configDir: string,
  modelPath = cfg.model.model_path,
  key = 'model.model_path',
): Pretrained {
  const p = localPath(modelPath, configDir);
  try {
    return loadPretrained(existsSync(p) ? p : modelPath);
  } catch (e) {
    throw new RunSetupError(`${key} ${modelPath}: ${(e as Error).message}`);
  }
}

/**
 * How the trainer loads its reference model when a batch first needs it: from the stage's starting weights on disk
 * (`modelPath`, what an up-front load read), never as a copy of the policy, which by then may have trained or been
 * resumed from a checkpoint.
 */
export function referenceLoader(
  cfg: Config,
  configDir: string,
  modelPath: string | undefined,
  log: RunLog,
): () => CausalLM {
  return () => {
    log('info', 'the trainer loads the reference model: a batch carries no reference log-probs');
    return loadModelFor(cfg, configDir, modelPath).model;
  };
}

/** The config with each auxiliary model's `model_path` that names a local directory made absolute (hub ids stay). */
export function withAbsoluteAuxiliaryPaths(cfg: Config, configDir: string): Config {
  const aux = cfg.explorer.auxiliary_models ?? [];
  if (!aux.length) return cfg;
  const absolute = (m: InferenceModelConfig): InferenceModelConfig => {
    if (!m.model_path) return m;
    const p = localPath(m.model_path, configDir);
    return existsSync(p) ? { ...m, model_path: p } : m;
  };
  return { ...cfg, explorer: { ...cfg.explorer, auxiliary_models: aux.map(absolute) } };
}

/**
 * An auxiliary model's sampling limits: its own values, else `model`'s (Trinity's check fills each unset one from
 * `model` with set_if_none; the checker here leaves them unset).
 */
export function auxiliaryLimits(cfg: Config, m: InferenceModelConfig): RolloutLimits {
  const base = rolloutLimits(cfg);
  return {
    maxPromptTokens: m.max_prompt_tokens ?? base.maxPromptTokens,
    maxResponseTokens: m.max_response_tokens ?? base.maxResponseTokens,
    minResponseTokens: m.min_response_tokens ?? base.minResponseTokens,
    enablePromptTruncation: m.enable_prompt_truncation ?? base.enablePromptTruncation,
    temperature: m.temperature ?? base.temperature,
    topP: m.top_p ?? base.topP,
    topK: m.top_k ?? base.topK,
    enableThinking: m.enable_thinking ?? base.enableThinking,
  };
}

/** `explorer.auxiliary_models`, each loaded whole, in config order. On a failure the ones already loaded are freed. */
export function loadAuxiliaryModels(cfg: Config, configDir: string, seed: number): AuxiliaryModel[] {
  const out: AuxiliaryModel[] = [];
  try {
    for (const [i, m] of (cfg.explorer.auxiliary_models ?? []).entries()) {
      const key = `explorer.auxiliary_models.${i}.model_path`;
      if (!m.model_path) throw new RunSetupError(`${key} is required`);
      const p = loadModelFor(cfg, configDir, m.model_path, key);
      out.push(new AuxiliaryModel(m.name ?? String(i), p, auxiliaryLimits(cfg, m), seed + i + 1, stopTokenIds(p)));
    }
  } catch (e) {
    for (const a of out) a.dispose();
    throw e;
  }
  return out;
}

export function rolloutLimits(cfg: Config): RolloutLimits {
  const m = cfg.model;
  return {
    maxPromptTokens: m.max_prompt_tokens ?? null,
    maxResponseTokens: m.max_response_tokens ?? 512,
    minResponseTokens: m.min_response_tokens ?? 0,
    enablePromptTruncation: m.enable_prompt_truncation,
    temperature: m.temperature ?? 1,
    topP: m.top_p ?? 1,
    topK: m.top_k ?? -1,
    enableThinking: m.enable_thinking ?? null,
  };
}

export function rolloutModel(cfg: Config, p: Pretrained, seed: number): RolloutModel {
  return new RolloutModel(p.model, p.tokenizer, rolloutLimits(cfg), seed, stopTokenIds(p));
}

export type RunLog = (level: 'info' | 'warning' | 'error', message: string) => void;

/**
 * The explorer of a run: rollout model, auxiliary models (loaded here, freed by `Explorer.dispose`; relative paths
 * against `configDir`), retries, reward factory, metric names of the release.
 */
export function createExplorer(
  cfg: Config,
  release: Release,
  p: Pretrained,
  seed: number,
  log: RunLog,
  configDir: string,
): Explorer {
  return new Explorer(rolloutModel(cfg, p, seed), {
    auxiliaryModels: loadAuxiliaryModels(cfg, configDir, seed),
    maxRetryTimes: cfg.explorer.max_retry_times ?? 0,
    createReward: (name, args) => createReward(name, args, { release }),
    samplesPerStep: 4,
    release,
    detailedStats: cfg.monitor?.detailed_stats === true,
    timeout: {
      maxTimeout: cfg.explorer.max_timeout,
      dynamic: cfg.explorer.dynamic_timeout,
      batchSize: cfg.buffer.batch_size,
    },
    log,
  });
}

export type TaskReader = BatchReader<ExplorerTask> & {
  /** After explorer step `step`: the step's pass rates (if any) for the selector, delivered as Trinity times them. */
  afterStep(step: number, feedback: readonly SelectorFeedback[] | undefined): void;
};

/** Reads the training taskset batch by batch (`buffer.batch_size`, epochs/total_steps, the taskset's selector). */
export function taskReader(cfg: Config, tasks: ExplorerTask[], offset: number): TaskReader {
  const input = cfg.buffer.explorer_input;
  const ts = input.taskset ?? input.tasksets?.[0];
  // `task_selector` up to v0.5.0; from v0.5.2 a deprecated alias that Trinity copies over `data_selector`.
  const written = ts?.task_selector ?? ts?.data_selector;
  const selector = written?.selector_type && written.selector_type !== 'sequential' ? written : null;
  // Trinity's TasksetScheduler (a selector, or several tasksets) adds the taskset to each task's index.
  const scheduled = selector !== null || (input.taskset ? 1 : 0) + (input.tasksets?.length ?? 0) > 1;
  const reader = new BatchReader(
    tasks.map((t, i) => ({ ...t, taskIndex: scheduled ? { index: i, taskset_id: 0 } : { index: i } })),
    {
      batchSize: cfg.buffer.batch_size,
      totalEpochs: cfg.buffer.total_epochs,
      totalSteps: cfg.buffer.total_steps,
      offset,
      selector,
      column: (key) => tasks.map((t) => t.raw[key]),
      name: ts?.name ?? 'taskset',
    },
  );
  return Object.assign(reader, { afterStep: feedbackAtSyncPoints(reader, cfg.synchronizer) });
}

/** Explorer steps a taskset of `tasks` rows allows: `buffer.total_steps`, else epochs × rows / batch_size. */
export function explorerTotalSteps(cfg: Config, tasks: number): number {
  return cfg.buffer.total_steps ?? Math.floor((tasks * (cfg.buffer.total_epochs ?? 1)) / cfg.buffer.batch_size);
}

/** Every eval taskset, as one metrics record (`<prefix>/<taskset>/…`). */
export async function evaluateAll(
  explorer: Explorer,
  evalSets: readonly { name: string; tasks: ExplorerTask[] }[],
  step: number,
  prefix = 'eval',
): Promise<Record<string, number>> {
  const metrics: Record<string, number> = {};
  for (const set of evalSets) Object.assign(metrics, await explorer.evaluate(set.name, set.tasks, step, prefix));
  return metrics;
}

/** The sample strategies the trainer implements (`mix` reads expert data through expert-sampler.ts). */
export const SAMPLE_STRATEGIES = ['default', 'warmup', 'mix'] as const;

/** The algorithm's six pieces: the resolved config's values, else the algorithm type's defaults. */
export function algorithmSetup(
  cfg: Config,
  release: Parameters<typeof effectiveAlgorithmDefaults>[1],
): AlgorithmSetup & {
  groupAdvantage?: GroupAdvantageFn;
  sampleStrategy: string;
  sampleStrategyArgs: Record<string, unknown>;
  useCritic: boolean;
} {
  const a = cfg.algorithm;
  const defaults = effectiveAlgorithmDefaults(a.algorithm_type, release);
  const spec = algorithmTypeAt(a.algorithm_type, release);
  if (!defaults || !spec)
    throw new RunSetupError(`algorithm.algorithm_type ${a.algorithm_type} is not known to the local runtime`);
  const advantageName = a.advantage_fn ?? defaults.advantage_fn;
  const sampleStrategy = a.sample_strategy ?? defaults.sample_strategy;
  if (!(SAMPLE_STRATEGIES as readonly string[]).includes(sampleStrategy)) {
    throw new RunSetupError(
      `algorithm.sample_strategy ${sampleStrategy} is not available in the local runtime (${SAMPLE_STRATEGIES.join(', ')})`,
    );
  }
  // Trinity consults the advantage function on the side the algorithm says: in the trainer (ppo-style), or as the
  // last explorer pipeline operator when it is a group advantage. RAFT's inherited `ppo` is used on neither.
  const advantage = spec.schema === 'experience' ? createAdvantageFn(advantageName, a.advantage_fn_args) : undefined;
  return {
    policyLossFn: a.policy_loss_fn ?? defaults.policy_loss_fn,
    policyLossFnArgs: a.policy_loss_fn_args,
    klLossFn: a.kl_loss_fn ?? defaults.kl_loss_fn,
    klLossFnArgs: a.kl_loss_fn_args,
    entropyLossFn: a.entropy_loss_fn ?? defaults.entropy_loss_fn,
    entropyLossFnArgs: a.entropy_loss_fn_args,
    lossAggMode: a.loss_agg_mode ?? 'token-mean',
    useReference: spec.useReference,
    trainerAdvantageFn: spec.computeAdvantageInTrainer && advantage?.computeInTrainer ? advantageName : undefined,
    trainerAdvantageFnArgs: a.advantage_fn_args,
    groupAdvantage: !spec.computeAdvantageInTrainer && advantage && !advantage.computeInTrainer ? advantage : undefined,
    sampleStrategy,
    sampleStrategyArgs: a.sample_strategy_args ?? {},
    useCritic: spec.useCritic,
    klPenaltyFn: a.kl_penalty_fn ?? defaults.kl_penalty_fn,
  };
}

/** veRL's actor settings in `trainer.trainer_config` (`actor_rollout_ref.actor`), empty when unset. */
function actorSettings(cfg: Config): Record<string, unknown> {
  return ((cfg.trainer.trainer_config as Record<string, any> | null)?.actor_rollout_ref?.actor ?? {}) as Record<
    string,
    unknown
  >;
}

/** How the trainer scores sequences: at `model.temperature`, veRL's actor micro-batch rows per forward. */
export function scoringOptions(cfg: Config): { temperature: number; microBatchSize?: number } {
  const actor = actorSettings(cfg);
  return {
    microBatchSize:
      typeof actor.ppo_micro_batch_size_per_gpu === 'number' ? actor.ppo_micro_batch_size_per_gpu : undefined,
    temperature: cfg.model.temperature ?? 1,
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
  const style = (o.warmup_style ?? o.lr_scheduler_type ?? 'constant') === 'cosine' ? 'cosine' : 'constant';
  return {
    algorithm,
    schedule: {
      lr: o.lr,
      style,
      warmupSteps: warmupSteps(totalSteps, o.lr_warmup_steps, o.lr_warmup_steps_ratio),
      totalSteps,
      minLrRatio: o.min_lr_ratio ?? 0,
    },
    betas: [o.betas[0] ?? 0.9, o.betas[1] ?? 0.999],
    weightDecay: o.weight_decay,
    gradClip: o.clip_grad ?? cfg.trainer.grad_clip ?? 1,
    ppoEpochs: typeof actor.ppo_epochs === 'number' ? actor.ppo_epochs : 1,
    ...scoringOptions(cfg),
    padTokenId,
  };
}

export function experiencePipeline(
  cfg: Config,
  groupAdvantage: GroupAdvantageFn | undefined,
  release?: Release,
): ExperiencePipeline {
  const ops = (cfg.data_processor?.experience_pipeline?.operators ?? []) as {
    name: string;
    args: Record<string, unknown>;
  }[];
  return new ExperiencePipeline(ops, groupAdvantage, release);
}

/** Trinity's Task -> what the explorer runs. */
export function explorerTask(t: Task): ExplorerTask {
  const text = (v: unknown): string | undefined =>
    v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
  return {
    raw: t.raw,
    taskDesc: text(t.taskDesc),
    truth: text(t.truth),
    systemPrompt: t.format.system_prompt,
    replyPrefix: t.format.reply_prefix,
    rolloutArgs: {
      temperature: t.rolloutArgs.temperature,
      top_p: t.rolloutArgs.top_p,
      top_k: t.rolloutArgs.top_k,
      max_tokens: t.rolloutArgs.max_tokens,
    },
    workflowArgs: t.workflowArgs,
    rewardFnArgs: t.rewardFnArgs,
    rewardFn: t.rewardFn,
    isEval: t.isEval,
    workflow: t.workflow,
    repeatTimes: t.repeatTimes,
  };
}

export async function tasksOf(
  cfg: Config,
  configDir: string,
  which: 'train' | 'eval',
): Promise<{ name: string; tasks: ExplorerTask[]; warnings: string[] }[]> {
  const input = cfg.buffer.explorer_input;
  const list =
    which === 'train'
      ? [...(input.taskset ? [input.taskset] : []), ...(input.tasksets ?? [])]
      : (input.eval_tasksets ?? []);
  const out: { name: string; tasks: ExplorerTask[]; warnings: string[] }[] = [];
  for (const [i, ts] of list.entries()) {
    const r = await readTasks(ts, {
      baseDir: configDir,
      position: i,
      explorerInput: input,
      algorithmRepeatTimes: which === 'train' ? cfg.algorithm.repeat_times : undefined,
      buffer: cfg.buffer,
      workflows: knownWorkflows(),
      rewardFns: knownRewardNames(),
    });
    out.push({ name: r.taskset.name, tasks: r.tasks.map(explorerTask), warnings: r.warnings });
  }
  return out;
}

/** A buffer section with its `path` made absolute against the config's directory (plain paths and sqlite URLs). */
export function withAbsolutePath<T extends { path: string | null }>(section: T, configDir: string): T {
  const p = section.path;
  if (!p) return section;
  const sqlite = /^sqlite:\/\/\/(.*)$/.exec(p);
  if (sqlite) {
    const file = sqlite[1];
    return file.startsWith('/') ? section : { ...section, path: `sqlite:///${resolve(configDir, file)}` };
  }
  if (/^[a-z]+:\/\//.test(p)) return section;
  return { ...section, path: isAbsolute(p) ? p : resolve(configDir, p) };
}

/**
 * PPO's critic from the resolved config: weights from `model.critic_model_path` (else `model_path`; a checkpoint's
 * `critic/` when resuming) with a value head, and veRL's `trainer_config.critic` settings (optim, ppo_epochs,
 * micro-batches, cliprange_value, loss_agg_mode) and `trainer_config.trainer.critic_warmup`.
 */
export function criticSetup(
  cfg: Config,
  configDir: string,
  totalSteps: number,
  seed: number,
  resumeDir?: string,
): CriticSetup {
  const verl = (cfg.trainer.trainer_config ?? {}) as Record<string, any>;
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
    gradClip: typeof critic.grad_clip === 'number' ? critic.grad_clip : (cfg.trainer.grad_clip ?? 1),
    ppoEpochs: typeof critic.ppo_epochs === 'number' && critic.ppo_epochs > 0 ? critic.ppo_epochs : 1,
    microBatchSize:
      typeof critic.ppo_micro_batch_size_per_gpu === 'number' ? critic.ppo_micro_batch_size_per_gpu : undefined,
    cliprangeValue: typeof critic.cliprange_value === 'number' ? critic.cliprange_value : 0.5,
    lossAggMode: typeof critic.loss_agg_mode === 'string' ? critic.loss_agg_mode : 'token-mean',
    warmupSteps: typeof verl.trainer?.critic_warmup === 'number' ? verl.trainer.critic_warmup : 0,
    klPenaltyFn: cfg.algorithm.kl_penalty_fn ?? 'none',
    klPenaltyFnArgs: cfg.algorithm.kl_penalty_fn_args,
  };
}
