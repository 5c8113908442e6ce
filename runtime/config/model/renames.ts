/**
 * Keys that were renamed, moved or removed between releases, keyed `Section.key`.
 * `to` is the replacement's path relative to the section holding the old key ('' = removed without replacement).
 * Used for "not in this release" messages; test/runtime/config/migrate.test.ts holds migrate() to every entry.
 */
import type { Release } from '../releases';

export interface Rename {
  to: string;
  /** The first release in which the old key is gone or deprecated. */
  in: Release;
  note?: string;
}

export const RENAMES: Record<string, Rename> = {
  'ExplorerConfig.runner_num': { to: 'runner_per_model', in: 'v0.3.0' },
  'ExplorerConfig.api_port': { to: 'proxy_port', in: 'v0.4.0' },
  'TrainerConfig.actor_grad_clip': { to: 'grad_clip', in: 'v0.3.2' },
  'OptimizerConfig.warmup_style': { to: 'lr_scheduler_type', in: 'v0.5.0' },
  'StorageConfig.use_priority_queue': { to: 'replay_buffer.enable', in: 'v0.3.2' },
  'StorageConfig.reuse_cooldown_time': { to: 'replay_buffer.reuse_cooldown_time', in: 'v0.3.2' },
  'StorageConfig.replay_buffer_kwargs': {
    to: 'replay_buffer',
    in: 'v0.3.2',
    note: '`priority_fn` moves to `replay_buffer.priority_fn` and the other keys to `replay_buffer.priority_fn_args`',
  },
  'StorageConfig.default_eval_workflow_type': {
    to: '',
    in: 'v0.3.2',
    note: 'set `buffer.explorer_input.default_eval_workflow_type`, or `default_workflow_type` on the eval taskset',
  },
  'StorageConfig.mm_data_kwargs': { to: '', in: 'v0.3.2', note: 'multi-modal settings moved to the workflow' },
  'TasksetConfig.task_selector': { to: 'data_selector', in: 'v0.5.2' },
  'ExplorerInput.system_prompt': { to: 'taskset.format.system_prompt', in: 'v0.3.2' },
  'ExplorerInput.reply_prefix': { to: 'taskset.format.reply_prefix', in: 'v0.3.2' },
  'TrainerInput.sft_warmup_steps': { to: '', in: 'v0.3.1', note: 'write an SFT stage under `stages` instead' },
  'TrainerInput.sft_warmup_dataset': { to: '', in: 'v0.3.1', note: 'write an SFT stage under `stages` instead' },
  'BufferConfig.pad_token_id': { to: '', in: 'v0.5.2', note: 'Trinity reads it from the tokenizer' },
  'AlgorithmConfig.use_token_level_loss': {
    to: 'loss_agg_mode',
    in: 'v0.3.1',
    note: 'token-level loss is `loss_agg_mode: token-mean`',
  },
  'OptimizerConfig.lr_warmup_init': { to: '', in: 'v0.5.0' },
  'OptimizerConfig.lr_decay_steps': { to: '', in: 'v0.5.0' },
  'OptimizerConfig.lr_decay_style': { to: 'lr_scheduler_type', in: 'v0.5.0' },
  'OptimizerConfig.min_lr': { to: 'min_lr_ratio', in: 'v0.5.0', note: '`min_lr_ratio` is a fraction of `lr`' },
  'TrainerConfig.trainer_config_path': { to: 'trainer_config', in: 'main', note: 'write the veRL settings inline' },
};
