/**
 * Which config keys drive each metric a Trinity run logs: data, read from where Trinity and veRL compute the metric
 * (trinity/trainer/verl/dp_actor.py and utils.py, trinity/algorithm/*_fn, trinity/explorer/explorer.py and
 * scheduler.py, trinity/buffer/pipelines/experience_pipeline.py, veRL's metric_utils.compute_data_metrics).
 *
 * A row's `metric` is a glob over the metric name (`*` matches any run of characters, `/` included); the first row
 * that matches a name is its row, so specific rows come before the prefix rows that would also match. A key is a
 * dotted path from the config root; a key under a function's `*_args` names that function's constructor argument.
 * `keys` are main's names; `formerKeys` the names older releases had (`trainer.actor_grad_clip` before
 * `trainer.grad_clip`). Keys absent from a release are left out when the table is read for it (`metricDrivers`).
 */
import type { Release } from '../releases';
import { ALGORITHM_PIECES, FN_SPECS, fnSpecAt } from './algorithms';
import { schemaAt } from './index';
import { someWorkflowReads } from './workflow-args';

export interface MetricDriverRow {
  /** Glob over metric names: `actor/pg_clipfrac*`, `response_length/*`. */
  metric: string;
  /** Dotted config paths from the root, most direct first. */
  keys: readonly string[];
  /** Names older releases had for some of these keys (absent from main). */
  formerKeys?: readonly string[];
  /** Why these keys move the metric (one sentence, shown in hovers). */
  why: string;
}

const TEMPERATURE = ['model.temperature', 'buffer.explorer_input.taskset.rollout_args.temperature'];
const REWARD_FN = [
  'buffer.explorer_input.taskset.default_reward_fn_type',
  'buffer.explorer_input.default_reward_fn_type',
  'buffer.explorer_input.taskset.reward_fn_args',
];
const CLIP = [
  'algorithm.policy_loss_fn',
  'algorithm.policy_loss_fn_args.clip_range',
  'algorithm.policy_loss_fn_args.clip_range_low',
  'algorithm.policy_loss_fn_args.clip_range_high',
];
/** The taskset's `workflow_args` an agent workflow reads (model/workflow-args.ts: FrozenLake, ALFWorld). */
const WA = 'buffer.explorer_input.taskset.workflow_args';

const LR = [
  'algorithm.optimizer.lr',
  'algorithm.optimizer.lr_warmup_steps',
  'algorithm.optimizer.lr_scheduler_type',
  'algorithm.optimizer.warmup_style',
  'algorithm.optimizer.min_lr_ratio',
  'trainer.trainer_config.actor_rollout_ref.actor.optim.lr',
];

export const METRIC_DRIVERS: readonly MetricDriverRow[] = [
  // Trainer: veRL's compute_data_metrics over the trained batch.
  {
    metric: 'response_length/*',
    keys: ['model.max_response_tokens', 'buffer.explorer_input.taskset.rollout_args.max_tokens'],
    why: "Responses are cut at `max_response_tokens`; `clip_ratio` is the share of a batch's responses as long as its longest (Trinity pads a batch to its longest), so it means cut-off answers where `response_length/max` is the limit.",
  },
  {
    metric: 'prompt_length/*',
    keys: ['model.max_prompt_tokens'],
    why: "Prompts are truncated to `max_prompt_tokens`; `clip_ratio` is the share of a batch's prompts as long as its longest (1 when all are the same length), so it means truncated prompts where `prompt_length/max` is the limit.",
  },
  // Trainer: the policy loss fn's own metrics.
  {
    metric: 'actor/pg_clipfrac*',
    keys: CLIP,
    why: 'The share of tokens whose ratio left [1 − clip_range_low, 1 + clip_range_high].',
  },
  {
    metric: 'actor/ppo_kl*',
    keys: [...CLIP, 'algorithm.optimizer.lr'],
    why: 'How far one update moved the policy from the rollout policy: the learning rate and the clip range bound it.',
  },
  { metric: 'actor/pg_loss', keys: CLIP, why: 'The clipped policy-gradient loss of the policy loss fn.' },
  { metric: 'actor/usual/*', keys: CLIP, why: 'The RL part of the mixed policy loss (`mix`, `mix_chord`).' },
  {
    metric: 'actor/expert/*',
    keys: ['algorithm.policy_loss_fn_args.mu', 'algorithm.sample_strategy_args.expert_data_ratio'],
    why: 'The SFT part of the mixed policy loss, weighted by `mu`.',
  },
  // Trainer: entropy and KL terms (trinity/algorithm/entropy_loss_fn, kl_fn).
  {
    metric: 'actor/entropy*',
    keys: ['algorithm.entropy_loss_fn', 'algorithm.entropy_loss_fn_args.entropy_coef', ...TEMPERATURE],
    why: "The policy's token entropy; `entropy_coef` rewards keeping it, and the sampling temperature scales the logits it is computed from.",
  },
  {
    metric: 'actor/kl_*',
    keys: ['algorithm.kl_loss_fn', 'algorithm.kl_loss_fn_args.kl_coef'],
    why: 'The KL loss to the reference model and its weight `kl_coef`.',
  },
  {
    metric: 'critic/kl*',
    keys: ['algorithm.kl_penalty_fn', 'algorithm.kl_penalty_fn_args.kl_coef'],
    why: 'The KL penalty subtracted from the rewards, and its coefficient.',
  },
  // Trainer: optimiser.
  {
    metric: 'actor/grad_norm',
    keys: ['trainer.grad_clip', 'algorithm.optimizer.lr'],
    formerKeys: ['trainer.actor_grad_clip'],
    why: "The actor's gradient norm before clipping; updates are clipped to `grad_clip`.",
  },
  { metric: 'actor/lr', keys: LR, why: 'The learning rate the schedule gives at this step.' },
  {
    metric: 'actor/*',
    keys: ['algorithm.policy_loss_fn', 'algorithm.policy_loss_fn_args', 'algorithm.optimizer.lr'],
    why: 'A metric of the policy loss fn.',
  },
  // Trainer: critic (PPO) and advantages.
  {
    metric: 'critic/advantages/*',
    keys: ['algorithm.advantage_fn', 'algorithm.advantage_fn_args', 'algorithm.repeat_times'],
    why: 'The advantages the advantage fn computed (group-relative ones need `repeat_times` > 1).',
  },
  {
    metric: 'critic/score/*',
    keys: [...REWARD_FN, 'algorithm.repeat_times'],
    why: 'The rewards of the trained batch, from the reward fn.',
  },
  {
    metric: 'critic/rewards/*',
    keys: [...REWARD_FN, 'algorithm.kl_penalty_fn_args.kl_coef'],
    why: 'The rewards after the KL penalty.',
  },
  {
    metric: 'critic/*',
    keys: [
      'trainer.trainer_config.critic.optim.lr',
      'trainer.trainer_config.critic.cliprange_value',
      'trainer.trainer_config.critic.grad_clip',
    ],
    why: "The value model's loss and optimiser (veRL's critic).",
  },
  // Trainer: the sample strategy's model versions (trinity/algorithm/sample_strategy/sample_strategy.py).
  {
    metric: 'sample/model_version*',
    keys: [
      'algorithm.sample_strategy_args.max_staleness',
      'synchronizer.sync_style',
      'synchronizer.sync_interval',
      'explorer.max_inflight_batches',
    ],
    why: 'The weights versions the trained experiences came from: `staleness_control` drops those more than `max_staleness` versions behind; a fully asynchronous explorer runs ahead by up to `max_inflight_batches` batches and more.',
  },
  // Explorer: rollout metrics (trinity/explorer/explorer.py, scheduler.py).
  {
    metric: 'rollout/model_version',
    keys: ['synchronizer.sync_interval', 'synchronizer.sync_offset', 'synchronizer.sync_method'],
    why: 'The weights version the explorer samples with: updated every `sync_interval` steps, `sync_offset` behind.',
  },
  {
    metric: 'rollout/finished_task_count',
    keys: [
      'buffer.batch_size',
      'explorer.max_timeout',
      'explorer.over_rollout.ratio',
      'explorer.over_rollout.wait_after_min',
    ],
    why: 'Tasks finished in the step: `batch_size` of them unless some time out, or over-rollout stops waiting after `(1 − ratio) × batch_size`.',
  },
  {
    metric: 'rollout/time/*',
    keys: ['model.max_response_tokens', 'algorithm.repeat_times', 'explorer.runner_per_model'],
    why: 'Time per task: longer and more responses take longer; more runners run more at once.',
  },
  // Explorer: an agent episode's info (frozen_lake_workflow: env_steps, env_done, test_score; envs/frozen_lake/workflow.py
  // @8b7fce3) and a reward-propagation run's actual_env_steps (step_wise_workflow.py @e9cc93a), per episode.
  {
    metric: 'rollout/env_steps/*',
    keys: [`${WA}.agent_max_steps`, `${WA}.env_max_steps`, 'model.max_model_len'],
    why: 'Turns an episode took: at most `agent_max_steps`; fewer when it reaches G or a hole, or when its tokens run out (the budget after the first prompt, within `max_model_len`).',
  },
  {
    metric: 'rollout/actual_env_steps/*',
    keys: [`${WA}.max_env_steps`, 'model.max_response_tokens'],
    why: 'Model calls a step-wise episode made: at most `max_env_steps`; it stops early at the end of the game or on a response cut at `max_response_tokens`.',
  },
  {
    metric: 'rollout/env_done/*',
    keys: [`${WA}.agent_max_steps`, `${WA}.env_max_steps`, `${WA}.is_slippery`, 'model.max_model_len'],
    why: 'Share of episodes that ended at G or a hole, rather than at the turn limit (`agent_max_steps`) or the token budget.',
  },
  {
    metric: 'rollout/test_score/*',
    keys: [
      `${WA}.env_max_steps`,
      `${WA}.agent_max_steps`,
      `${WA}.is_slippery`,
      `${WA}.desc`,
      'algorithm.repeat_times',
      ...TEMPERATURE,
    ],
    why: "FrozenLake's final reward, 1 at the goal: the success rate. Closer goals (`env_max_steps`), more turns and ice that does not slip make it easier.",
  },
  {
    metric: 'rollout/*',
    keys: [...REWARD_FN, 'algorithm.repeat_times', ...TEMPERATURE],
    why: "Per-task reward components, averaged over the task's `repeat_times` responses.",
  },
  // Explorer: the experience pipeline (names per release: `pipeline/` up to v0.3.1).
  {
    metric: '*pipeline/group_advantages/reward_std*',
    keys: ['algorithm.repeat_times', ...TEMPERATURE, ...REWARD_FN],
    why: 'The spread of rewards within a group: zero when every response of a task scores the same (no learning signal).',
  },
  {
    metric: '*pipeline/group_advantages/*',
    keys: ['algorithm.advantage_fn', 'algorithm.advantage_fn_args', 'algorithm.repeat_times'],
    why: 'Per-group statistics of the group advantage fn.',
  },
  {
    metric: 'time/experience_pipeline/*',
    keys: ['data_processor.experience_pipeline.operators'],
    why: 'Time spent in each experience operator.',
  },
  {
    metric: '*pipeline/*',
    keys: ['data_processor.experience_pipeline.operators', 'buffer.batch_size', 'algorithm.repeat_times'],
    why: 'Experiences the pipeline kept or filtered: `batch_size` × `repeat_times` go in.',
  },
  // Evaluation.
  {
    metric: 'eval/*',
    keys: ['buffer.explorer_input.eval_tasksets', 'explorer.eval_interval'],
    why: 'Evaluation on the eval tasksets, every `eval_interval` steps.',
  },
  { metric: 'bench/*', keys: ['buffer.explorer_input.eval_tasksets'], why: 'Benchmark results on the eval tasksets.' },
  // Timers.
  {
    metric: 'time/sync_weight',
    keys: ['synchronizer.sync_method', 'synchronizer.sync_interval'],
    why: "Time to hand the trainer's weights to the explorer.",
  },
  {
    metric: 'time/save_checkpoint',
    keys: ['trainer.save_interval'],
    why: 'Time spent saving checkpoints, every `save_interval` steps.',
  },
  {
    metric: 'time/eval',
    keys: ['explorer.eval_interval', 'buffer.explorer_input.eval_tasksets'],
    why: 'Wall time of an evaluation.',
  },
  {
    metric: 'time/*',
    keys: ['buffer.batch_size', 'buffer.train_batch_size', 'algorithm.repeat_times', 'model.max_response_tokens'],
    why: 'Step time grows with the batch and the response budget.',
  },
  {
    metric: 'perf/*memory*',
    keys: [
      'model.model_path',
      'trainer.max_token_len_per_gpu',
      'trainer.use_dynamic_bsz',
      'buffer.train_batch_size',
      'model.max_model_len',
    ],
    why: "Memory (veRL's peak allocator figures; the machine's memory in use): the model's weights, gradients and AdamW state, plus a micro-batch's activations, which grow with its tokens.",
  },
  {
    metric: 'perf/*',
    keys: ['buffer.train_batch_size', 'trainer.use_dynamic_bsz', 'trainer.max_token_len_per_gpu'],
    why: 'Trainer throughput: tokens per step and how they are packed into micro-batches.',
  },
];

const compiled = new Map<string, RegExp>();

/** Whether `metric` matches a row's glob. */
export function metricMatches(glob: string, metric: string): boolean {
  let re = compiled.get(glob);
  if (!re) {
    re = new RegExp(
      `^${glob
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    compiled.set(glob, re);
  }
  return re.test(metric);
}

/** A metric's row (the first that matches), or undefined for a metric the table does not know. */
export function metricDriverRow(metric: string): MetricDriverRow | undefined {
  return METRIC_DRIVERS.find((r) => metricMatches(r.metric, metric));
}

/** The config keys that drive `metric` in `release`: its row's keys that exist there. */
export function metricDrivers(metric: string, release: Release): string[] {
  const row = metricDriverRow(metric);
  return row ? [...row.keys, ...(row.formerKeys ?? [])].filter((k) => configKeyExists(k, release)) : [];
}

/** The metric names among `metrics` whose drivers include `key` (a dotted path) in `release`. */
export function metricsDrivenBy(key: string, metrics: Iterable<string>, release: Release): string[] {
  const out: string[] = [];
  for (const m of metrics) if (metricDrivers(m, release).includes(key)) out.push(m);
  return out;
}

/**
 * Whether a dotted path names a key of the config model in `release`: a field of a section, or an argument of some
 * function that the `*_args` dict it is under configures.
 */
export function configKeyExists(key: string, release: Release): boolean {
  const path = key.split('.');
  if (schemaAt(path, release).field) return true;
  const argsAt = path.findIndex((p) => p.endsWith('_args'));
  if (argsAt < 1 || argsAt !== path.length - 2) return false;
  if (path[argsAt] === 'workflow_args')
    return (
      schemaAt(path.slice(0, argsAt + 1), release).field !== undefined && someWorkflowReads(path[argsAt + 1], release)
    );
  const holder = schemaAt(path.slice(0, argsAt + 1), release);
  if (!holder.field || holder.type?.kind !== 'dict') return false;
  const fnKey = path[argsAt].slice(0, -'_args'.length);
  const piece = ALGORITHM_PIECES.find((p) => p.key === fnKey);
  if (!piece || path[0] !== 'algorithm') return false;
  const arg = path[argsAt + 1];
  return FN_SPECS.some(
    (f) => f.registry === piece.registry && fnSpecAt(f.registry, f.name, release)?.params.some((p) => p.name === arg),
  );
}
