/**
 * The veRL trainer config that `trainer.trainer_config` is merged into at check time (Trinity's verl_config.py,
 * `veRLConfig`). It is free-form when the YAML is loaded and strict when Trinity checks it, so the validator checks
 * written keys against these sections.
 */
import { ANY, BOOL, DICT, FLOAT, INT, STR, listOf, mapOf, openSection, section, sectionOf } from './dsl';
import * as Trinity from './sections';
import type { SectionDef } from './types';

// in releases v0.5.0 .. v0.5.0
export const RolloutCorrection: SectionDef = section('RolloutCorrection', {
  rollout_is: { type: STR, optional: true, default: null },
  rollout_is_threshold: { type: FLOAT, default: 2.0 },
  rollout_rs: { type: STR, optional: true, default: null },
  rollout_rs_threshold: { type: FLOAT, optional: true, default: null },
  rollout_rs_threshold_lower: { type: FLOAT, optional: true, default: null },
  rollout_token_veto_threshold: { type: FLOAT, optional: true, default: null },
  bypass_mode: { type: BOOL, default: true },
  loss_type: { type: STR, default: 'ppo_clip' },
  rollout_is_batch_normalize: { type: BOOL, default: false },
});

// in releases v0.3.0 .. v0.5.0
export const OverrideTransformerConfig: SectionDef = section('OverrideTransformerConfig', {
  recompute_granularity: { type: STR, optional: true, default: 'full', versions: [{ until: 'v0.4.0', default: null }] },
  recompute_modules: { type: listOf(STR), default: ['core_attn'] },
  recompute_method: { type: STR, optional: true, default: 'uniform', versions: [{ until: 'v0.4.0', default: null }] },
  recompute_num_layers: { type: INT, optional: true, default: 1, versions: [{ until: 'v0.4.0', default: null }] },
});

export const MegatronConfig: SectionDef = section('MegatronConfig', {
  param_offload: { type: BOOL, default: false },
  grad_offload: { type: BOOL, default: false },
  optimizer_offload: { type: BOOL, default: false },
  tensor_model_parallel_size: { type: INT, default: 1 },
  expert_model_parallel_size: { type: INT, default: 1 },
  expert_tensor_parallel_size: { type: INT, optional: true, default: null },
  pipeline_model_parallel_size: { type: INT, default: 1 },
  virtual_pipeline_model_parallel_size: { type: INT, optional: true, default: null },
  context_parallel_size: { type: INT, default: 1 },
  sequence_parallel: { type: BOOL, default: true },
  use_distributed_optimizer: { type: BOOL, default: true },
  use_dist_checkpointing: { type: BOOL, default: false },
  dist_checkpointing_path: { type: STR, optional: true, default: null },
  seed: { type: INT, default: 42 },
  override_ddp_config: { type: DICT, default: {} },
  override_transformer_config: { type: sectionOf(OverrideTransformerConfig) },
  use_mbridge: { type: BOOL, default: false },
  dtype: { type: STR, default: 'bfloat16', since: 'v0.5.0' },
  use_remove_padding: { type: BOOL, default: true, since: 'v0.5.0' },
});

// in releases v0.3.0 .. v0.5.0
export const Checkpoint: SectionDef = section('Checkpoint', {
  load_contents: { type: listOf(STR), default: ['model', 'optimizer', 'extra'] },
  save_contents: { type: listOf(STR), default: ['model', 'optimizer', 'extra'] },
  async_save: { type: BOOL, default: false },
});

export const Data: SectionDef = section('Data', {
  train_batch_size: { type: INT, default: 1024 },
  trust_remote_code: { type: BOOL, default: false, since: 'v0.4.0' },
});

export const FusedKernelOptions: SectionDef = section('FusedKernelOptions', {
  impl_backend: { type: STR, optional: true, default: null },
});

export const ActorModel: SectionDef = section('ActorModel', {
  path: { type: STR, default: '' },
  external_lib: { type: STR, optional: true, default: null },
  override_config: { type: DICT, default: {} },
  enable_gradient_checkpointing: { type: BOOL, default: true },
  use_remove_padding: { type: BOOL, default: true },
  use_fused_kernels: { type: BOOL, default: false },
  fused_kernel_options: { type: sectionOf(FusedKernelOptions) },
  custom_chat_template: { type: STR, optional: true, default: null },
  enable_activation_offload: { type: BOOL, default: false, since: 'v0.3.1' },
  use_shm: { type: BOOL, default: false, since: 'v0.3.1' },
  trust_remote_code: { type: BOOL, default: false, since: 'v0.4.0' },
  lora_rank: { type: INT, default: 0, since: 'v0.3.1' },
  lora_alpha: { type: INT, default: 32, since: 'v0.3.1' },
  target_modules: { type: STR, optional: true, default: 'all-linear', since: 'v0.3.1' },
  exclude_modules: { type: STR, optional: true, default: null, since: 'v0.5.0' },
  lora_adapter_path: { type: STR, optional: true, default: null, since: 'v0.5.0' },
  mtp: { type: ANY /* MtpConfig (veRL class) */, default: {}, since: 'v0.5.2' },
  rope_scaling: { type: DICT, optional: true, default: null, since: 'v0.4.0' },
  rope_theta: { type: FLOAT, optional: true, default: null, since: 'v0.4.0' },
});

export const Optim: SectionDef = section('Optim', {
  optimizer: { type: STR, default: 'adam' },
  optimizer_impl: { type: STR, default: 'torch.optim', since: 'v0.5.0' },
  lr: { type: FLOAT, default: 1e-6 },
  lr_warmup_steps: { type: INT, default: -1 },
  lr_warmup_steps_ratio: { type: FLOAT, default: 0.0 },
  min_lr_ratio: { type: FLOAT, optional: true, default: 0.0 },
  warmup_style: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: 'constant' }],
  },
  lr_scheduler_type: { type: STR, default: 'constant', since: 'v0.5.0' },
  total_training_steps: { type: INT, default: -1 },
  betas: { type: listOf(FLOAT), default: [0.9, 0.999] },
  clip_grad: { type: FLOAT, default: 1.0 },
  lr_warmup_init: {
    type: FLOAT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: 0.0 }],
  },
  lr_decay_steps: { type: INT, optional: true, default: null },
  lr_decay_style: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: 'constant' }],
  },
  min_lr: {
    type: FLOAT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: 0.0 }],
  },
  weight_decay: { type: FLOAT, default: 0.01 },
  weight_decay_incr_style: { type: STR, default: 'constant' },
  lr_wsd_decay_style: { type: STR, default: 'exponential' },
  lr_wsd_decay_steps: { type: INT, optional: true, default: null },
  use_checkpoint_opt_param_scheduler: { type: BOOL, default: false },
  override_optimizer_config: { type: DICT, optional: true, default: null, since: 'v0.5.0' },
});

export const WrapPolicy: SectionDef = section('WrapPolicy', {
  min_num_params: { type: INT, default: 0 },
});

export const FSDPConfig: SectionDef = section('FSDPConfig', {
  _target_: { type: STR, default: 'verl.workers.config.FSDPEngineConfig', since: 'v0.5.0' },
  param_offload: { type: BOOL, default: false },
  optimizer_offload: { type: BOOL, default: false },
  offload_policy: { type: BOOL, default: false },
  reshard_after_forward: { type: BOOL, default: true },
  wrap_policy: { type: sectionOf(WrapPolicy) },
  fsdp_size: { type: INT, default: -1 },
  forward_prefetch: { type: BOOL, default: false },
  model_dtype: { type: STR, optional: true, default: null, since: 'v0.4.0' },
  dtype: { type: STR, default: 'bfloat16', since: 'v0.5.0' },
  mixed_precision: { type: DICT, default: {}, since: 'v0.5.0' },
});

// in releases v0.5.2 .. main
// Inherits fields from a veRL class that is not modelled: keys beyond these are not checked.
export const _CheckpointConfig: SectionDef = openSection('_CheckpointConfig', {
  mbridge_config: { type: DICT, default: {} },
});

// in releases v0.5.2 .. main
// Inherits fields from a veRL class that is not modelled: keys beyond these are not checked.
export const _McoreEngineConfig: SectionDef = openSection('_McoreEngineConfig', {
  vanilla_mbridge: { type: BOOL, default: true },
  max_token_len_per_gpu: { type: INT, optional: true, default: null },
  micro_batch_size_per_gpu: { type: INT, optional: true, default: null },
  infer_max_token_len_per_gpu: { type: INT, optional: true, default: null },
  infer_micro_batch_size_per_gpu: { type: INT, optional: true, default: null },
});

export const ProfileConfig: SectionDef = section('ProfileConfig', {
  use_profile: { type: BOOL, default: false },
  profile_ranks: { type: listOf(INT), optional: true, default: null },
  step_start: { type: INT, default: -1 },
  step_end: { type: INT, default: -1 },
  save_path: { type: STR, optional: true, default: null },
});

export const Actor: SectionDef = section('Actor', {
  strategy: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.2', optional: false, default: 'fsdp' }],
  },
  ppo_mini_batch_size: { type: INT, default: 256 },
  ppo_micro_batch_size: { type: INT, optional: true, default: null },
  ppo_micro_batch_size_per_gpu: { type: INT, default: 1 },
  use_dynamic_bsz: {
    type: BOOL,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: false }],
  },
  use_prefix_grouper: { type: BOOL, default: false, since: 'v0.5.2' },
  calculate_sum_pi_squared: { type: BOOL, default: false, since: 'v0.5.2' },
  sum_pi_squared_checkpointing: { type: BOOL, default: false, since: 'v0.5.2' },
  ppo_max_token_len_per_gpu: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 16384 }],
  },
  fix_actor_microbatch_loss_scale: { type: BOOL, optional: true, default: null, since: 'v0.3.2' },
  grad_clip: {
    type: FLOAT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 1.0 }],
  },
  ppo_epochs: { type: INT, default: 1 },
  shuffle: { type: BOOL, default: false },
  ulysses_sequence_parallel_size: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 1 }],
  },
  entropy_from_logits_with_chunking: { type: BOOL, default: false },
  entropy_checkpointing: { type: BOOL, default: false },
  checkpoint: { type: sectionOf(_CheckpointConfig), versions: [{ until: 'v0.5.0', type: sectionOf(Checkpoint) }] },
  optim: { type: sectionOf(Optim) },
  fsdp_config: { type: sectionOf(FSDPConfig) },
  megatron: { type: sectionOf(_McoreEngineConfig), versions: [{ until: 'v0.5.0', type: sectionOf(MegatronConfig) }] },
  profile: { type: sectionOf(ProfileConfig) },
  data_loader_seed: { type: INT, optional: true, default: null },
  load_weight: { type: BOOL, default: true },
  policy_loss: { type: ANY /* PolicyLossConfig (veRL class) */, default: {}, since: 'v0.5.0' },
  profiler: { type: DICT, default: {}, since: 'v0.5.0' },
  router_replay: { type: ANY /* RouterReplayConfig (veRL class) */, default: {}, since: 'v0.5.0' },
  loss_agg_mode: { type: STR, default: 'token-mean' },
  loss_scale_factor: { type: FLOAT, optional: true, default: null, since: 'v0.5.2' },
  clip_ratio: { type: FLOAT, default: 0.2 },
  clip_ratio_low: { type: FLOAT, optional: true, default: null },
  clip_ratio_high: { type: FLOAT, optional: true, default: null },
  entropy_coeff: { type: FLOAT, default: 0.001 },
  use_kl_loss: { type: BOOL, default: false },
  kl_loss_coef: { type: FLOAT, default: 0.0, until: 'v0.3.2', versions: [{ until: 'v0.3.0', default: 0.001 }] },
  kl_loss_type: { type: STR, default: 'low_var_kl', until: 'v0.3.2' },
});

export const Ref: SectionDef = section('Ref', {
  strategy: { type: STR, optional: true, default: null, since: 'v0.5.0' },
  fsdp_config: { type: sectionOf(FSDPConfig) },
  log_prob_micro_batch_size: { type: INT, optional: true, default: null },
  log_prob_micro_batch_size_per_gpu: { type: INT, default: 1 },
  log_prob_use_dynamic_bsz: {
    type: BOOL,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: true }],
  },
  use_prefix_grouper: { type: BOOL, default: false, since: 'v0.5.2' },
  log_prob_max_token_len_per_gpu: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 0 }],
  },
  ulysses_sequence_parallel_size: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 1 }],
  },
  entropy_from_logits_with_chunking: { type: BOOL, default: false },
  entropy_checkpointing: { type: BOOL, default: false },
  checkpoint: { type: sectionOf(_CheckpointConfig), versions: [{ until: 'v0.5.0', type: sectionOf(Checkpoint) }] },
  megatron: { type: sectionOf(_McoreEngineConfig), versions: [{ until: 'v0.5.0', type: sectionOf(MegatronConfig) }] },
  profile: { type: sectionOf(ProfileConfig) },
  load_weight: { type: BOOL, default: true },
  profiler: { type: DICT, default: {}, since: 'v0.5.0' },
  router_replay: { type: ANY /* RouterReplayConfig (veRL class) */, default: {}, since: 'v0.5.0' },
});

export const _ValKwargs: SectionDef = section('_ValKwargs', {
  do_sample: { type: BOOL, default: false },
});

export const _MultiTurn: SectionDef = section('_MultiTurn', {
  enable: { type: BOOL, default: false },
});

export const Rollout: SectionDef = section('Rollout', {
  val_kwargs: { type: sectionOf(_ValKwargs) },
  multi_turn: { type: sectionOf(_MultiTurn) },
  temperature: { type: FLOAT, default: 1.0 },
  n: { type: INT, default: 1 },
  log_prob_use_dynamic_bsz: {
    type: BOOL,
    optional: true,
    default: null,
    since: 'v0.3.1',
    versions: [{ until: 'v0.4.0', optional: false, default: true }],
  },
  log_prob_micro_batch_size: { type: INT, optional: true, default: null },
  log_prob_micro_batch_size_per_gpu: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.0', optional: false, default: 1 }],
  },
  log_prob_max_token_len_per_gpu: { type: INT, optional: true, default: null, since: 'v0.3.1' },
});

export const ActorRolloutRef: SectionDef = section('ActorRolloutRef', {
  hybrid_engine: { type: BOOL, default: true },
  model: { type: sectionOf(ActorModel) },
  actor: { type: sectionOf(Actor) },
  ref: { type: sectionOf(Ref) },
  rollout: { type: sectionOf(Rollout) },
  nccl_timeout: { type: FLOAT, default: 600, since: 'v0.5.0' },
  synchronizer: { type: sectionOf(Trinity.SynchronizerConfig), optional: true, default: null },
  explorer_name: { type: STR, default: 'explorer' },
});

export const CriticModel: SectionDef = section('CriticModel', {
  path: { type: STR, default: '' },
  tokenizer_path: { type: STR, default: '' },
  override_config: { type: mapOf(STR), default: {} },
  external_lib: { type: STR, optional: true, default: null },
  trust_remote_code: { type: BOOL, default: false, since: 'v0.4.0' },
  enable_gradient_checkpointing: { type: BOOL, default: true },
  use_remove_padding: { type: BOOL, default: true },
  fsdp_config: { type: sectionOf(FSDPConfig) },
  rope_scaling: { type: DICT, optional: true, default: null, since: 'v0.5.0' },
  rope_theta: { type: FLOAT, optional: true, default: null, since: 'v0.5.0' },
});

export const Critic: SectionDef = section('Critic', {
  enable: { type: BOOL, default: false, since: 'v0.5.0' },
  strategy: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.2', optional: false, default: 'fsdp' }],
  },
  optim: { type: sectionOf(Optim) },
  model: { type: sectionOf(CriticModel) },
  ppo_mini_batch_size: { type: INT, default: 0 },
  ppo_micro_batch_size: { type: INT, optional: true, default: null },
  ppo_micro_batch_size_per_gpu: { type: INT, default: 1 },
  forward_micro_batch_size: { type: INT, optional: true, default: null },
  forward_micro_batch_size_per_gpu: { type: INT, optional: true, default: null },
  use_dynamic_bsz: {
    type: BOOL,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: true }],
  },
  ppo_max_token_len_per_gpu: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 0 }],
  },
  forward_max_token_len_per_gpu: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 0 }],
  },
  ulysses_sequence_parallel_size: {
    type: INT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 1 }],
  },
  ppo_epochs: { type: INT, default: 1, versions: [{ until: 'v0.3.2', default: 0 }] },
  shuffle: { type: BOOL, default: false },
  grad_clip: {
    type: FLOAT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 0.0 }],
  },
  cliprange_value: { type: FLOAT, default: 0.0 },
  checkpoint: { type: sectionOf(_CheckpointConfig), versions: [{ until: 'v0.5.0', type: sectionOf(Checkpoint) }] },
  rollout_n: { type: INT, default: 1 },
  loss_agg_mode: { type: STR, default: 'token-mean' },
  megatron: { type: sectionOf(_McoreEngineConfig), versions: [{ until: 'v0.5.0', type: sectionOf(MegatronConfig) }] },
  profile: { type: sectionOf(ProfileConfig) },
  data_loader_seed: { type: INT, optional: true, default: null },
  load_weight: { type: BOOL, default: true },
  nccl_timeout: { type: FLOAT, default: 600, since: 'v0.5.0' },
  ray_namespace: { type: STR, default: '', since: 'v0.3.1' },
  profiler: { type: DICT, default: {}, since: 'v0.5.0' },
});

export const _RewardModel: SectionDef = section('_RewardModel', {
  input_tokenizer: { type: STR, optional: true, default: null },
  path: { type: STR, default: '' },
  external_lib: { type: STR, optional: true, default: null },
  use_remove_padding: { type: BOOL, default: false },
  fsdp_config: { type: sectionOf(FSDPConfig) },
});

export const RewardModel: SectionDef = section('RewardModel', {
  enable: { type: BOOL, default: false },
  strategy: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.2', optional: false, default: 'fsdp' }],
  },
  model: { type: sectionOf(_RewardModel) },
  micro_batch_size_per_gpu: { type: INT, default: 1 },
  max_length: { type: INT, optional: true, default: null },
  ulysses_sequence_parallel_size: { type: INT, default: 1 },
  use_dynamic_bsz: { type: BOOL, default: false },
  forward_max_token_len_per_gpu: { type: INT, default: 0 },
  reward_manager: { type: STR, default: 'naive' },
  use_reward_loop: { type: BOOL, default: true, since: 'v0.5.0' },
});

// in releases v0.5.2 .. main
export const Reward: SectionDef = section('Reward', {
  reward_model: { type: sectionOf(RewardModel) },
});

export const CustomRewardFunction: SectionDef = section('CustomRewardFunction', {
  path: { type: STR, optional: true, default: null },
  name: { type: STR, default: 'compute_score' },
});

export const KL_Ctrl: SectionDef = section('KL_Ctrl', {
  type: { type: STR, default: 'fixed' },
  kl_coef: { type: FLOAT, default: 0.001 },
  horizon: { type: FLOAT, default: 10000 },
  target_kl: { type: FLOAT, default: 0.1 },
});

// in releases v0.5.2 .. main
// Inherits fields from a veRL class that is not modelled: keys beyond these are not checked.
export const _RolloutCorrectionConfig: SectionDef = openSection('_RolloutCorrectionConfig', {
  bypass_mode: { type: BOOL, default: true },
});

export const Algorithm: SectionDef = section('Algorithm', {
  rollout_correction: {
    type: sectionOf(_RolloutCorrectionConfig),
    since: 'v0.5.0',
    versions: [{ until: 'v0.5.0', type: sectionOf(RolloutCorrection) }],
  },
  gamma: { type: FLOAT, default: 1.0 },
  lam: { type: FLOAT, default: 1.0 },
  adv_estimator: { type: STR, default: 'gae' },
  norm_adv_by_std_in_grpo: { type: BOOL, default: true },
  use_kl_in_reward: { type: BOOL, default: false },
  kl_penalty: { type: STR, default: 'kl' },
  kl_ctrl: { type: sectionOf(KL_Ctrl) },
});

export const Trainer: SectionDef = section('Trainer', {
  balance_batch: { type: BOOL, default: true },
  total_epochs: { type: INT, default: 30 },
  total_training_steps: { type: INT, optional: true, default: null },
  project_name: { type: STR, default: '' },
  group_name: { type: STR, default: '' },
  experiment_name: { type: STR, default: '' },
  logger: { type: listOf(STR), default: [] },
  val_generations_to_log_to_wandb: { type: INT, default: 0 },
  nnodes: { type: INT, default: 0 },
  n_gpus_per_node: { type: INT, default: 0 },
  save_freq: { type: INT, default: 0 },
  resume_mode: { type: STR, default: 'auto' },
  resume_from_path: { type: STR, default: '' },
  test_freq: { type: INT, default: 0 },
  critic_warmup: { type: INT, default: 0 },
  default_hdfs_dir: { type: STR, optional: true, default: null },
  remove_previous_ckpt_in_save: { type: BOOL, default: false },
  del_local_ckpt_after_load: { type: BOOL, default: false },
  default_local_dir: { type: STR, default: '' },
  val_before_train: { type: BOOL, default: false },
  training_rollout_mode: { type: STR, default: 'parallel' },
  enable_exp_buffer: { type: BOOL, default: true },
  sync_freq: { type: INT, default: 0 },
  max_actor_ckpt_to_keep: { type: INT, optional: true, default: null },
  max_critic_ckpt_to_keep: { type: INT, optional: true, default: null },
  device: { type: STR, default: 'cuda' },
  sft_warmup_steps: { type: INT, default: 0, until: 'v0.3.0' },
});

export const veRLConfig: SectionDef = section('veRLConfig', {
  data: { type: sectionOf(Data) },
  actor_rollout_ref: { type: sectionOf(ActorRolloutRef) },
  critic: { type: sectionOf(Critic) },
  reward_model: { type: sectionOf(RewardModel) },
  reward: { type: sectionOf(Reward), since: 'v0.5.2' },
  custom_reward_function: { type: sectionOf(CustomRewardFunction) },
  algorithm: { type: sectionOf(Algorithm) },
  trainer: { type: sectionOf(Trainer) },
  global_profiler: { type: DICT, default: {}, since: 'v0.5.0' },
  synchronizer: { type: sectionOf(Trinity.SynchronizerConfig), optional: true, default: null },
  enable_preview: { type: BOOL, default: true },
  buffer: { type: sectionOf(Trinity.BufferConfig), default: {}, until: 'v0.3.0' },
});

// `trainer.trainer_config` is typed Any in Trinity's dataclass but merged into veRLConfig by its check step.
Trinity.TrainerConfig.fields.trainer_config.checkedAs = veRLConfig;
