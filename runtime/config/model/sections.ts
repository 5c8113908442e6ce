/**
 * Every section and key of a Trinity-RFT config, across the modelled releases (trinity/common/config.py).
 * Field facts (type, Optional, default, release range) were read from each release's dataclasses; hover text lives
 * in descriptions.ts. Sections are declared before use, in the order Trinity declares them.
 */
import { ANY, BOOL, DICT, FLOAT, INT, STR, enumOf, listOf, mapOf, section, sectionOf } from './dsl';
import { PromptType, SaveStrategy, StorageType, SyncMethod, SyncStyle } from './enums';
import {
  CONCURRENT_MODES,
  LOG_LEVELS,
  LOSS_AGG_MODES,
  MODES,
  SAVE_HF_CHECKPOINT,
  STORAGE_TYPES,
  TRAINER_STRATEGIES,
  TRAINER_TYPES,
} from './choices';
import type { SectionDef } from './types';

// in releases v0.3.2 .. v0.5.0
export const TaskSelectorConfig: SectionDef = section('TaskSelectorConfig', {
  selector_type: { type: STR, optional: true, default: 'sequential', values: { registry: 'selector' } },
  seed: { type: INT, default: 42 },
  feature_keys: { type: listOf(STR), default: [] },
  kwargs: { type: DICT, default: {} },
});

export const FormatConfig: SectionDef = section('FormatConfig', {
  prompt_type: { type: enumOf(PromptType), default: 'messages' },
  prompt_key: { type: STR, default: 'prompt' },
  response_key: { type: STR, default: 'response' },
  system_prompt_key: { type: STR, optional: true, default: null },
  system_prompt: { type: STR, optional: true, default: null },
  messages_key: { type: STR, default: 'message' },
  tools_key: { type: STR, default: 'tools' },
  image_key: { type: STR, optional: true, default: null },
  video_key: { type: STR, optional: true, default: null },
  reply_prefix: { type: STR, optional: true, default: null },
  workflow_key: { type: STR, default: '' },
  reward_fn_key: { type: STR, default: '' },
  chosen_key: { type: STR, default: 'chosen' },
  rejected_key: { type: STR, default: 'rejected' },
  enable_concatenated_multi_turn: { type: BOOL, default: false },
  chat_template: { type: STR, optional: true, default: null },
  enable_thinking: { type: BOOL, optional: true, default: null, since: 'v0.5.2' },
});

export const GenerationConfig: SectionDef = section('GenerationConfig', {
  temperature: {
    type: FLOAT,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', optional: false, default: 1.0 }],
  },
  top_p: { type: FLOAT, optional: true, default: null, versions: [{ until: 'v0.3.1', optional: false, default: 1.0 }] },
  top_k: { type: INT, default: -1, versions: [{ since: 'v0.3.2', until: 'v0.3.2', optional: true, default: null }] },
  logprobs: { type: INT, optional: true, default: null, versions: [{ until: 'v0.3.1', optional: false, default: 0 }] },
  max_tokens: { type: INT, optional: true, default: null, since: 'v0.3.1' },
  n: { type: INT, default: 1, auto: true },
});

// in releases v0.3.2 .. main
export const OptimizerConfig: SectionDef = section('OptimizerConfig', {
  lr: { type: FLOAT, default: 1e-6 },
  lr_warmup_steps: { type: INT, default: -1 },
  lr_warmup_steps_ratio: { type: FLOAT, default: 0.0 },
  min_lr_ratio: {
    type: FLOAT,
    default: 0.01,
    versions: [
      { until: 'v0.4.0', optional: true, default: 0.0 },
      { since: 'v0.5.0', until: 'v0.5.0', default: 0.0 },
    ],
  },
  warmup_style: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: 'constant' }],
    deprecated: {
      message: '`warmup_style` is deprecated; use `lr_scheduler_type`.',
      replacement: 'lr_scheduler_type',
      since: 'v0.5.0',
    },
  },
  lr_scheduler_type: { type: STR, default: 'constant', since: 'v0.5.0' },
  optimizer_type: { type: STR, default: 'adam' },
  betas: { type: listOf(FLOAT), default: [0.9, 0.999] },
  weight_decay: { type: FLOAT, default: 0.01 },
  clip_grad: { type: FLOAT, default: 1.0, since: 'v0.4.0' },
  lr_warmup_init: { type: FLOAT, default: 0.0, since: 'v0.4.0', until: 'v0.4.0' },
  lr_decay_steps: { type: INT, optional: true, default: null, since: 'v0.4.0', until: 'v0.4.0' },
  lr_decay_style: { type: STR, default: 'constant', since: 'v0.4.0', until: 'v0.4.0' },
  min_lr: { type: FLOAT, default: 0.0, since: 'v0.4.0', until: 'v0.4.0' },
});

// in releases v0.3.1 .. main
export const LoRAConfig: SectionDef = section('LoRAConfig', {
  name: { type: STR, optional: true, default: null },
  path: { type: STR, optional: true, default: null },
  base_model_name: { type: STR, optional: true, default: null },
  lora_rank: { type: INT, default: 32 },
  lora_alpha: { type: INT, default: 32 },
  lora_dtype: { type: STR, default: 'auto' },
  target_modules: { type: STR, default: 'all-linear' },
  exclude_modules: { type: STR, optional: true, default: null, since: 'v0.5.0' },
  is_dummy: { type: BOOL, default: false, since: 'v0.5.0', auto: true },
});

// in releases v0.5.2 .. main
export const DataSelectorConfig: SectionDef = section('DataSelectorConfig', {
  selector_type: { type: STR, optional: true, default: 'sequential', values: { registry: 'selector' } },
  seed: { type: INT, default: 42 },
  feature_keys: { type: listOf(STR), default: [] },
  kwargs: { type: DICT, default: {} },
});

// in releases v0.3.2 .. main
export const ReplayBufferConfig: SectionDef = section('ReplayBufferConfig', {
  enable: { type: BOOL, default: false },
  priority_fn: { type: STR, default: 'linear_decay', values: { registry: 'priority_fn' } },
  reuse_cooldown_time: { type: FLOAT, optional: true, default: null },
  priority_fn_args: { type: DICT, default: { decay: 2.0 } },
});

// in releases v0.4.0 .. main
export const OverRolloutConfig: SectionDef = section('OverRolloutConfig', {
  ratio: { type: FLOAT, default: 0.0 },
  wait_after_min: { type: FLOAT, default: 30.0 },
  return_partial_tasks: { type: BOOL, default: false, since: 'main' },
});

// in releases v0.4.0 .. main
export const DynamicTimeoutConfig: SectionDef = section('DynamicTimeoutConfig', {
  enable: { type: BOOL, default: false },
  warmup_min_steps: { type: INT, default: 1, since: 'main' },
  ratio: { type: FLOAT, default: 3.0 },
});

export const StorageConfig: SectionDef = section('StorageConfig', {
  name: { type: STR, default: '' },
  storage_type: {
    type: STR,
    default: 'file',
    versions: [{ until: 'v0.3.2', type: enumOf(StorageType) }],
    values: { choice: STORAGE_TYPES, caseInsensitive: true },
  },
  path: { type: STR, optional: true, default: null },
  repeat_times: { type: INT, optional: true, default: null },
  index: { type: INT, default: 0, auto: true },
  split: { type: STR, default: 'train' },
  subset_name: { type: STR, optional: true, default: null },
  format: { type: sectionOf(FormatConfig) },
  capacity: { type: INT, default: 10000 },
  max_read_timeout: { type: FLOAT, default: 1800 },
  replay_buffer: { type: sectionOf(ReplayBufferConfig), optional: true, since: 'v0.3.2' },
  max_retry_times: { type: INT, default: 3 },
  max_retry_interval: { type: INT, default: 1 },
  default_workflow_type: { type: STR, optional: true, default: null, values: { registry: 'workflow' } },
  default_reward_fn_type: { type: STR, optional: true, default: null, values: { registry: 'reward_fn' } },
  rollout_args: { type: sectionOf(GenerationConfig) },
  workflow_args: { type: DICT, default: {} },
  reward_fn_args: { type: DICT, default: {} },
  data_selector: { type: sectionOf(DataSelectorConfig), since: 'v0.5.2' },
  enable_progress_bar: { type: BOOL, optional: true, default: false },
  ray_namespace: { type: STR, optional: true, default: null, auto: true },
  wrap_in_ray: { type: BOOL, default: true, auto: true },
  schema_type: { type: STR, optional: true, default: null },
  total_epochs: { type: INT, default: 1 },
  total_steps: { type: INT, optional: true, default: null },
  batch_size: { type: INT, default: 0, since: 'v0.3.2', auto: true },
  tokenizer_path: { type: STR, optional: true, default: null, since: 'v0.3.2', auto: true },
  is_eval: { type: BOOL, default: false, auto: true },
  task_selector: { type: sectionOf(TaskSelectorConfig), since: 'v0.3.2', until: 'v0.5.0' },
  mm_data_kwargs: { type: DICT, default: {}, until: 'v0.3.1' },
  use_priority_queue: { type: BOOL, default: false, until: 'v0.3.1' },
  reuse_cooldown_time: { type: FLOAT, optional: true, default: null, until: 'v0.3.1' },
  replay_buffer_kwargs: {
    type: DICT,
    default: { priority_fn: 'linear_decay', decay: 2.0 },
    until: 'v0.3.1',
    versions: [{ until: 'v0.3.0', default: { priority_fn: 'linear_decay', decay: 0.1 } }],
  },
  default_eval_workflow_type: {
    type: STR,
    optional: true,
    default: null,
    until: 'v0.3.1',
    values: { registry: 'workflow' },
  },
});

// in releases v0.3.2 .. main
export const TasksetConfig: SectionDef = section('TasksetConfig', {
  name: { type: STR, default: '' },
  storage_type: {
    type: STR,
    default: 'file',
    versions: [{ until: 'v0.3.2', type: enumOf(StorageType) }],
    values: { choice: STORAGE_TYPES, caseInsensitive: true },
  },
  path: { type: STR, optional: true, default: null },
  default_workflow_type: { type: STR, optional: true, default: null, values: { registry: 'workflow' } },
  default_reward_fn_type: { type: STR, optional: true, default: null, values: { registry: 'reward_fn' } },
  rollout_args: { type: sectionOf(GenerationConfig) },
  workflow_args: { type: DICT, default: {} },
  reward_fn_args: { type: DICT, default: {} },
  task_selector: {
    type: sectionOf(DataSelectorConfig),
    optional: true,
    default: null,
    versions: [{ until: 'v0.5.0', type: sectionOf(TaskSelectorConfig), optional: false, default: undefined }],
    deprecated: {
      message: '`task_selector` is deprecated; use `data_selector`.',
      replacement: 'data_selector',
      since: 'v0.5.2',
    },
  },
  data_selector: { type: sectionOf(DataSelectorConfig), since: 'v0.5.2' },
  split: { type: STR, default: 'train' },
  subset_name: { type: STR, optional: true, default: null },
  format: { type: sectionOf(FormatConfig) },
  max_retry_times: { type: INT, default: 3 },
  max_retry_interval: { type: INT, default: 1 },
  enable_progress_bar: { type: BOOL, default: false },
  repeat_times: { type: INT, default: 1 },
  index: { type: INT, default: 0, auto: true },
  is_eval: { type: BOOL, default: false, auto: true },
  batch_size: { type: INT, default: 0, auto: true },
  total_epochs: { type: INT, default: 1, auto: true },
  total_steps: { type: INT, optional: true, default: null, auto: true },
  ray_namespace: { type: STR, optional: true, default: null, since: 'v0.5.0', auto: true },
});

// in releases v0.3.2 .. main
export const ExperienceBufferConfig: SectionDef = section('ExperienceBufferConfig', {
  name: { type: STR, default: '' },
  storage_type: {
    type: STR,
    default: 'queue',
    versions: [{ until: 'v0.3.2', type: enumOf(StorageType), default: 'file' }],
    values: { choice: STORAGE_TYPES, caseInsensitive: true },
  },
  path: { type: STR, optional: true, default: null },
  capacity: { type: INT, default: 10000 },
  max_read_timeout: { type: FLOAT, default: 1800 },
  replay_buffer: { type: sectionOf(ReplayBufferConfig), optional: true },
  max_retry_times: { type: INT, default: 3 },
  max_retry_interval: { type: INT, default: 1 },
  split: { type: STR, default: 'train' },
  subset_name: { type: STR, optional: true, default: null },
  format: { type: sectionOf(FormatConfig) },
  enable_progress_bar: { type: BOOL, optional: true, default: false },
  data_selector: { type: sectionOf(DataSelectorConfig), since: 'v0.5.2' },
  schema_type: { type: STR, optional: true, default: null },
  index: { type: INT, default: 0, auto: true },
  batch_size: { type: INT, default: 0, auto: true },
  tokenizer_path: { type: STR, optional: true, default: null, auto: true },
  total_epochs: { type: INT, default: 1 },
  total_steps: { type: INT, optional: true, default: null },
  ray_namespace: { type: STR, optional: true, default: null, since: 'v0.5.0', auto: true },
});

export const OperatorConfig: SectionDef = section('OperatorConfig', {
  name: { type: STR, default: '' },
  args: { type: DICT, default: {} },
});

export const ExperiencePipelineConfig: SectionDef = section('ExperiencePipelineConfig', {
  operators: { type: listOf(sectionOf(OperatorConfig)), default: [] },
  save_input: { type: BOOL, default: true },
  input_save_path: { type: STR, optional: true, default: null },
  inputs: {
    type: mapOf(sectionOf(ExperienceBufferConfig)),
    default: {},
    versions: [{ until: 'v0.3.1', type: mapOf(sectionOf(StorageConfig)) }],
  },
  output: {
    type: sectionOf(ExperienceBufferConfig),
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', type: sectionOf(StorageConfig) }],
  },
});

export const TaskPipelineConfig: SectionDef = section('TaskPipelineConfig', {
  operators: { type: listOf(sectionOf(OperatorConfig)), default: [] },
  num_process: { type: INT, default: 4 },
  config_path: { type: STR, optional: true, default: null },
  inputs: { type: listOf(STR), default: [] },
  output: {
    type: sectionOf(TasksetConfig),
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', type: sectionOf(StorageConfig) }],
  },
  target_fields: { type: listOf(STR), default: [] },
  priority_weights: { type: DICT, default: {} },
  top_k: { type: INT, default: -1 },
});

export const DataProcessorConfig: SectionDef = section('DataProcessorConfig', {
  task_pipeline: { type: sectionOf(TaskPipelineConfig), optional: true, default: null },
  experience_pipeline: { type: sectionOf(ExperiencePipelineConfig), versions: [{ until: 'v0.5.0', optional: true }] },
});

// in releases v0.4.0 .. main
export const TinkerConfig: SectionDef = section('TinkerConfig', {
  enable: { type: BOOL, default: false },
  rank: { type: INT, default: 16, versions: [{ until: 'v0.4.0', default: 32 }] },
  seed: { type: INT, optional: true, default: null },
  train_mlp: { type: BOOL, default: true },
  train_attn: { type: BOOL, default: true },
  train_unembed: { type: BOOL, default: true },
  base_url: { type: STR, optional: true, default: null, since: 'v0.5.0' },
});

// in releases v0.5.2 .. main
export const ExternalModelConfig: SectionDef = section('ExternalModelConfig', {
  enable: { type: BOOL, default: false },
  base_url_env: { type: STR, default: 'OPENAI_BASE_URL' },
  api_key_env: { type: STR, default: 'OPENAI_API_KEY' },
  model_name: { type: STR, optional: true, default: null },
});

export const ModelConfig: SectionDef = section('ModelConfig', {
  model_path: { type: STR, default: '' },
  trust_remote_code: { type: BOOL, default: false, since: 'v0.5.2' },
  critic_model_path: { type: STR, default: '' },
  custom_chat_template: { type: STR, optional: true, default: null },
  chat_template_path: { type: STR, optional: true, default: null, since: 'v0.4.0' },
  temperature: { type: FLOAT, default: 1.0, since: 'v0.3.2' },
  top_p: { type: FLOAT, default: 1.0, since: 'v0.3.2' },
  top_k: { type: INT, default: -1, since: 'v0.3.2' },
  logprobs: { type: INT, default: 0, since: 'v0.3.2' },
  max_model_len: { type: INT, optional: true, default: null },
  max_prompt_tokens: { type: INT, optional: true, default: null },
  max_response_tokens: { type: INT, optional: true, default: null },
  min_response_tokens: { type: INT, default: 0, versions: [{ until: 'v0.3.2', default: 1 }] },
  enable_prompt_truncation: { type: BOOL, default: true, since: 'v0.4.0' },
  repetition_penalty: { type: FLOAT, default: 1.0, since: 'v0.4.0' },
  enable_thinking: { type: BOOL, optional: true, default: null, since: 'v0.5.2' },
  lora_configs: { type: listOf(sectionOf(LoRAConfig)), optional: true, default: null, since: 'v0.3.1' },
  fully_sharded_loras: { type: BOOL, default: false, since: 'v0.3.1' },
  max_cpu_loras: { type: INT, optional: true, default: null, since: 'v0.3.1' },
  rope_scaling: { type: DICT, optional: true, default: null, since: 'v0.4.0' },
  rope_theta: { type: FLOAT, optional: true, default: null, since: 'v0.4.0' },
  tinker: { type: sectionOf(TinkerConfig), since: 'v0.4.0' },
  external_model: { type: sectionOf(ExternalModelConfig), since: 'v0.5.2' },
});

export const InferenceModelConfig: SectionDef = section('InferenceModelConfig', {
  model_path: {
    type: STR,
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.2', optional: false, default: '' }],
  },
  name: { type: STR, optional: true, default: null, since: 'v0.5.0' },
  trust_remote_code: { type: BOOL, default: false, since: 'v0.5.2' },
  engine_type: { type: STR, default: 'vllm', versions: [{ until: 'v0.3.1', default: 'vllm_async' }] },
  engine_num: { type: INT, default: 1 },
  tensor_parallel_size: { type: INT, default: 1 },
  data_parallel_size: { type: INT, default: 1, since: 'main' },
  pipeline_parallel_size: { type: INT, default: 1, since: 'main' },
  enable_expert_parallel: { type: BOOL, default: false, since: 'main' },
  gpu_per_engine: { type: INT, default: 0, since: 'main', auto: true },
  extra_engine_args: { type: DICT, default: {}, since: 'main' },
  use_v1: { type: BOOL, default: true },
  enforce_eager: { type: BOOL, default: false, versions: [{ until: 'v0.3.1', default: true }] },
  enable_prefix_caching: { type: BOOL, default: true, versions: [{ until: 'v0.3.2', default: false }] },
  enable_chunked_prefill: { type: BOOL, default: true, versions: [{ until: 'v0.3.2', default: false }] },
  gpu_memory_utilization: { type: FLOAT, default: 0.9 },
  dtype: { type: STR, default: 'bfloat16' },
  seed: { type: INT, default: 42 },
  temperature: { type: FLOAT, optional: true, default: null, since: 'v0.3.2' },
  top_p: { type: FLOAT, optional: true, default: null, since: 'v0.3.2' },
  top_k: { type: INT, optional: true, default: null, since: 'v0.3.2' },
  logprobs: { type: INT, optional: true, default: null, since: 'v0.3.2' },
  max_model_len: { type: INT, optional: true, default: null },
  max_prompt_tokens: { type: INT, optional: true, default: null },
  max_response_tokens: { type: INT, optional: true, default: null },
  min_response_tokens: { type: INT, optional: true, default: null },
  enable_prompt_truncation: { type: BOOL, optional: true, default: null, since: 'v0.4.0' },
  repetition_penalty: { type: FLOAT, optional: true, default: null, since: 'v0.4.0' },
  ignore_eos: { type: BOOL, default: false },
  enable_multimodal: { type: BOOL, default: false, since: 'main' },
  chat_template: { type: STR, optional: true, default: null },
  enable_thinking: {
    type: BOOL,
    optional: true,
    default: null,
    versions: [{ until: 'v0.4.0', optional: false, default: false }],
  },
  enable_history: { type: BOOL, default: false },
  enable_openai_api: { type: BOOL, default: false },
  enable_log_requests: { type: BOOL, default: false, since: 'v0.4.0' },
  base_port: { type: INT, optional: true, default: null, since: 'main' },
  api_key: { type: STR, default: 'EMPTY', since: 'main' },
  enable_auto_tool_choice: { type: BOOL, default: false },
  tool_call_parser: { type: STR, optional: true, default: null },
  reasoning_parser: { type: STR, optional: true, default: null },
  external_model_config: { type: sectionOf(ExternalModelConfig), since: 'v0.5.2' },
  nnodes: { type: INT, default: 1, since: 'main', auto: true },
  node_rank: { type: INT, default: 0, since: 'main', auto: true },
  enable_return_routed_experts: { type: BOOL, default: false, since: 'main', auto: true },
  weight_sync_buffer_size: { type: INT, default: 1024, since: 'main' },
  bundle_indices: { type: STR, default: '', auto: true },
  engine_id: { type: INT, default: 0, since: 'main', auto: true },
  ray_namespace: { type: STR, optional: true, default: null, since: 'v0.5.0', auto: true },
  ray_actor_name: { type: STR, optional: true, default: null, since: 'main', auto: true },
  sync_method: { type: enumOf(SyncMethod), optional: true, default: null, since: 'main', auto: true },
  checkpoint_job_dir: { type: STR, optional: true, default: null, since: 'main', auto: true },
  cuda_visible_devices: { type: STR, optional: true, default: null, since: 'v0.5.0', auto: true },
  enable_lora: { type: BOOL, default: false, since: 'v0.3.1', auto: true },
  enable_runtime_lora_updating: { type: BOOL, default: false, since: 'v0.5.0' },
  lora_modules: { type: listOf(DICT), optional: true, default: null, since: 'v0.3.1', auto: true },
  lora_kwargs: {
    type: DICT,
    default: {},
    since: 'v0.3.1',
    auto: true,
    versions: [{ until: 'v0.5.2', optional: true }],
  },
  rope_scaling: { type: DICT, optional: true, default: null, since: 'v0.4.0', auto: true },
  rope_theta: { type: FLOAT, optional: true, default: null, since: 'v0.4.0' },
});

export const AlgorithmConfig: SectionDef = section('AlgorithmConfig', {
  algorithm_type: { type: STR, default: 'ppo', values: { registry: 'algorithm_type' } },
  repeat_times: { type: INT, default: 1 },
  optimizer: { type: sectionOf(OptimizerConfig), since: 'v0.3.2' },
  sample_strategy: { type: STR, optional: true, default: null, values: { registry: 'sample_strategy' } },
  sample_strategy_args: { type: DICT, optional: true, default: null },
  advantage_fn: { type: STR, optional: true, default: null, values: { registry: 'advantage_fn' } },
  advantage_fn_args: { type: DICT, optional: true, default: null },
  kl_penalty_fn: { type: STR, optional: true, default: null, values: { registry: 'kl_fn' } },
  kl_penalty_fn_args: { type: DICT, optional: true, default: null },
  policy_loss_fn: { type: STR, optional: true, default: null, values: { registry: 'policy_loss_fn' } },
  policy_loss_fn_args: { type: DICT, optional: true, default: null },
  kl_loss_fn: { type: STR, optional: true, default: null, values: { registry: 'kl_fn' } },
  kl_loss_fn_args: { type: DICT, optional: true, default: null },
  entropy_loss_fn: { type: STR, optional: true, default: null, values: { registry: 'entropy_loss_fn' } },
  entropy_loss_fn_args: { type: DICT, optional: true, default: null },
  loss_agg_mode: { type: STR, optional: true, default: null, since: 'v0.4.0', values: { choice: LOSS_AGG_MODES } },
  enable_router_replay: { type: BOOL, default: false, since: 'main' },
  bypass_old_logprobs: { type: BOOL, default: true, since: 'main' },
  rollout_correction: { type: DICT, optional: true, default: null, since: 'main' },
  use_token_level_loss: { type: BOOL, default: true, until: 'v0.3.0' },
});

export const ClusterConfig: SectionDef = section('ClusterConfig', {
  ray_address: { type: STR, default: 'auto', since: 'v0.3.1' },
  node_num: {
    type: INT,
    default: 0,
    versions: [
      { until: 'v0.3.0', default: 1 },
      { since: 'v0.3.1', until: 'v0.4.0', optional: true, default: null },
    ],
  },
  gpu_per_node: {
    type: INT,
    default: 0,
    versions: [
      { until: 'v0.3.0', default: 8 },
      { since: 'v0.3.1', until: 'v0.4.0', optional: true, default: null },
    ],
  },
  total_gpu_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  rollout_gpu_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  auxiliary_model_gpu_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  explorer_gpu_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  trainer_gpu_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  trainer_node_num: { type: INT, default: 0, since: 'v0.5.0', auto: true },
  trainer_gpu_num_per_node: { type: INT, default: 0, since: 'v0.5.0', auto: true },
});

export const ExplorerInput: SectionDef = section('ExplorerInput', {
  taskset: {
    type: sectionOf(TasksetConfig),
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', type: sectionOf(StorageConfig), optional: false, default: undefined }],
  },
  tasksets: { type: listOf(sectionOf(TasksetConfig)), default: [], since: 'v0.3.2' },
  eval_tasksets: {
    type: listOf(sectionOf(TasksetConfig)),
    default: [],
    versions: [{ until: 'v0.3.1', type: listOf(sectionOf(StorageConfig)) }],
  },
  default_workflow_type: { type: STR, optional: true, default: null, values: { registry: 'workflow' } },
  default_eval_workflow_type: { type: STR, optional: true, default: null, values: { registry: 'workflow' } },
  default_reward_fn_type: { type: STR, optional: true, default: null, values: { registry: 'reward_fn' } },
  system_prompt: { type: STR, optional: true, default: null, until: 'v0.3.1' },
  reply_prefix: { type: STR, optional: true, default: null, until: 'v0.3.1' },
});

export const TrainerInput: SectionDef = section('TrainerInput', {
  experience_buffer: {
    type: sectionOf(ExperienceBufferConfig),
    optional: true,
    default: null,
    versions: [{ until: 'v0.3.1', type: sectionOf(StorageConfig) }],
  },
  auxiliary_buffers: {
    type: mapOf(sectionOf(ExperienceBufferConfig)),
    default: {},
    since: 'v0.3.1',
    versions: [{ until: 'v0.3.1', type: mapOf(sectionOf(StorageConfig)) }],
  },
  sft_warmup_dataset: {
    type: sectionOf(StorageConfig),
    optional: true,
    default: null,
    until: 'v0.3.1',
    deprecated: {
      message: '`sft_warmup_dataset` is deprecated; SFT warmup settings moved to `stages`.',
      replacement: 'stages',
      since: 'v0.3.1',
    },
  },
  sft_warmup_steps: {
    type: INT,
    optional: true,
    default: null,
    until: 'v0.3.1',
    versions: [{ until: 'v0.3.0', optional: false, default: 0 }],
    deprecated: {
      message: '`sft_warmup_steps` is deprecated; SFT warmup settings moved to `stages`.',
      replacement: 'stages',
      since: 'v0.3.1',
    },
  },
});

export const BufferConfig: SectionDef = section('BufferConfig', {
  batch_size: { type: INT, default: 1 },
  train_batch_size: { type: INT, default: 0 },
  total_epochs: { type: INT, default: 1 },
  total_steps: { type: INT, optional: true, default: null },
  explorer_input: { type: sectionOf(ExplorerInput) },
  trainer_input: { type: sectionOf(TrainerInput) },
  explorer_output: { type: sectionOf(StorageConfig), optional: true, default: null, auto: true },
  tokenizer_path: { type: STR, optional: true, default: null, auto: true },
  cache_dir: { type: STR, optional: true, default: null, auto: true },
  pad_token_id: { type: INT, optional: true, default: null, until: 'v0.5.0', auto: true },
});

export const ExplorerConfig: SectionDef = section('ExplorerConfig', {
  name: { type: STR, default: 'explorer' },
  runner_per_model: { type: INT, default: 8 },
  runner_prepare_concurrency: { type: INT, default: 8, since: 'main' },
  runner_prepare_max_retries: { type: INT, default: 2, since: 'main' },
  max_timeout: { type: INT, default: 1800 },
  max_retry_times: { type: INT, default: 2 },
  env_vars: { type: DICT, default: {} },
  concurrent_mode: { type: STR, default: 'sequential', since: 'v0.5.0', values: { choice: CONCURRENT_MODES } },
  max_repeat_times_per_runner: { type: INT, optional: true, default: null },
  runner_num: {
    type: INT,
    optional: true,
    default: null,
    deprecated: {
      message: '`explorer.runner_num` is deprecated; use `explorer.runner_per_model`.',
      replacement: 'explorer.runner_per_model',
    },
  },
  rollout_model: { type: sectionOf(InferenceModelConfig) },
  auxiliary_models: { type: listOf(sectionOf(InferenceModelConfig)), default: [] },
  eval_interval: { type: INT, default: 100 },
  eval_on_startup: { type: BOOL, default: true },
  bench_on_latest_checkpoint: { type: BOOL, default: false },
  proxy_port: { type: INT, default: 8010, since: 'v0.4.0' },
  listen_address: { type: STR, default: '0.0.0.0', since: 'v0.3.1' },
  service_status_check_interval: { type: INT, default: 60, since: 'v0.3.1' },
  min_running_model_num: { type: INT, default: 1, since: 'v0.3.1' },
  db_url: { type: STR, optional: true, default: null, since: 'v0.4.0' },
  over_rollout: { type: sectionOf(OverRolloutConfig), since: 'v0.4.0' },
  dynamic_timeout: { type: sectionOf(DynamicTimeoutConfig), since: 'v0.4.0' },
  runner_state_report_interval: { type: INT, default: 0, since: 'v0.4.0' },
  max_inflight_batches: { type: INT, default: 2, since: 'main' },
  api_port: { type: INT, default: 8010, since: 'v0.3.1', until: 'v0.3.2' },
});

// in releases main
export const MegatronParallelConfig: SectionDef = section('MegatronParallelConfig', {
  tensor_model_parallel_size: { type: INT, default: 1 },
  pipeline_model_parallel_size: { type: INT, default: 1 },
  virtual_pipeline_model_parallel_size: { type: INT, optional: true, default: null },
  expert_model_parallel_size: { type: INT, default: 1 },
  expert_tensor_parallel_size: { type: INT, optional: true, default: null },
  context_parallel_size: { type: INT, default: 1 },
  sequence_parallel: { type: BOOL, default: true },
});

export const TrainerConfig: SectionDef = section('TrainerConfig', {
  name: { type: STR, default: 'trainer' },
  trainer_type: { type: STR, default: 'verl', values: { choice: TRAINER_TYPES } },
  trainer_strategy: {
    type: STR,
    default: 'fsdp2',
    since: 'v0.4.0',
    values: { choice: TRAINER_STRATEGIES },
    versions: [{ until: 'v0.5.2', default: 'fsdp' }],
  },
  save_interval: { type: INT, default: 0 },
  enable_preview: { type: BOOL, default: false, versions: [{ until: 'v0.5.2', default: true }] },
  total_steps: { type: INT, optional: true, default: null, since: 'v0.3.1' },
  save_hf_checkpoint: { type: STR, default: 'last', since: 'v0.4.0', values: { choice: SAVE_HF_CHECKPOINT } },
  grad_clip: { type: FLOAT, default: 1.0, since: 'v0.3.2' },
  use_dynamic_bsz: { type: BOOL, default: true, since: 'v0.3.2' },
  use_remove_padding: { type: BOOL, default: true, since: 'main' },
  balance_batch: { type: BOOL, default: true, since: 'main' },
  critic_warmup: { type: INT, default: 0, since: 'main' },
  max_token_len_per_gpu: { type: INT, optional: true, default: null, since: 'v0.3.2' },
  ulysses_sequence_parallel_size: { type: INT, default: 1, since: 'v0.3.2' },
  fix_actor_microbatch_loss_scale: { type: BOOL, default: false, since: 'v0.3.2' },
  param_offload: { type: BOOL, default: false, since: 'main' },
  optimizer_offload: { type: BOOL, default: false, since: 'main' },
  grad_offload: { type: BOOL, default: false, since: 'main' },
  offload_policy: { type: BOOL, default: false, since: 'main' },
  save_strategy: { type: enumOf(SaveStrategy), default: 'unrestricted', since: 'v0.3.1' },
  max_checkpoints_to_keep: {
    type: INT,
    default: 0,
    since: 'v0.5.0',
    versions: [{ until: 'v0.5.2', optional: true, default: null }],
  },
  megatron: { type: sectionOf(MegatronParallelConfig), since: 'main' },
  trust_remote_code: { type: BOOL, default: false, since: 'main', auto: true },
  trainer_config: { type: ANY, default: {} },
  trainer_config_path: {
    type: STR,
    default: '',
    versions: [
      {
        since: 'main',
        deprecated: {
          message:
            '`trainer_config_path` is deprecated; write the veRL settings inline under `trainer.trainer_config`.',
          replacement: 'trainer.trainer_config',
          since: 'main',
        },
      },
    ],
  },
  actor_grad_clip: { type: FLOAT, optional: true, default: null, until: 'v0.3.1' },
});

export const MonitorConfig: SectionDef = section('MonitorConfig', {
  monitor_type: { type: STR, default: 'tensorboard', values: { registry: 'monitor' } },
  monitor_args: { type: DICT, optional: true, default: null },
  detailed_stats: { type: BOOL, default: false, since: 'v0.5.0' },
  enable_ray_timeline: { type: BOOL, default: false },
  cache_dir: { type: STR, default: '', auto: true },
});

export const SynchronizerConfig: SectionDef = section('SynchronizerConfig', {
  sync_method: { type: enumOf(SyncMethod), default: 'nccl' },
  sync_style: { type: enumOf(SyncStyle), default: 'fixed' },
  sync_interval: { type: INT, default: 1 },
  explorer_sync_interval: { type: INT, optional: true, default: null, since: 'main' },
  trainer_sync_interval: { type: INT, optional: true, default: null, since: 'main' },
  sync_offset: { type: INT, default: 0 },
  sync_timeout: { type: INT, default: 3600 },
  group_name: { type: STR, default: 'rollout_weight_sync', since: 'main' },
  wait_for_checkpoint: { type: BOOL, default: false },
  explorer_world_size: { type: INT, optional: true, default: null, auto: true },
  ray_namespace: { type: STR, default: '', auto: true },
});

export const DataJuicerServiceConfig: SectionDef = section('DataJuicerServiceConfig', {
  server_url: { type: STR, optional: true, default: null },
  auto_start: { type: BOOL, default: false },
  port: { type: INT, optional: true, default: null },
});

export const ServiceConfig: SectionDef = section('ServiceConfig', {
  data_juicer: { type: sectionOf(DataJuicerServiceConfig), optional: true, default: null },
});

export const LogConfig: SectionDef = section('LogConfig', {
  level: { type: STR, default: 'INFO', values: { choice: LOG_LEVELS, caseInsensitive: true } },
  group_by_node: { type: BOOL, default: false },
  save_dir: { type: STR, default: '', auto: true },
});

// in releases v0.3.1 .. main
export const StageConfig: SectionDef = section('StageConfig', {
  stage_name: { type: STR, required: true },
  mode: { type: STR, optional: true, default: null, values: { choice: MODES } },
  algorithm: { type: sectionOf(AlgorithmConfig), optional: true, default: null },
  buffer: { type: sectionOf(BufferConfig), optional: true, default: null },
  data_processor: { type: sectionOf(DataProcessorConfig), optional: true, default: null },
  explorer: { type: sectionOf(ExplorerConfig), optional: true, default: null },
  trainer: { type: sectionOf(TrainerConfig), optional: true, default: null },
});

export const Config: SectionDef = section('Config', {
  mode: { type: STR, default: 'both', values: { choice: MODES } },
  project: { type: STR, default: 'Trinity-RFT' },
  group: { type: STR, default: '' },
  name: { type: STR, default: 'rft' },
  checkpoint_root_dir: { type: STR, default: '' },
  checkpoint_job_dir: { type: STR, default: '', auto: true },
  ray_namespace: { type: STR, default: '' },
  continue_from_checkpoint: { type: BOOL, default: true },
  ignore_validator_suggestions: { type: BOOL, default: false, since: 'v0.5.0' },
  algorithm: { type: sectionOf(AlgorithmConfig) },
  data_processor: { type: sectionOf(DataProcessorConfig) },
  model: { type: sectionOf(ModelConfig) },
  cluster: { type: sectionOf(ClusterConfig) },
  buffer: { type: sectionOf(BufferConfig) },
  explorer: { type: sectionOf(ExplorerConfig) },
  trainer: { type: sectionOf(TrainerConfig) },
  monitor: { type: sectionOf(MonitorConfig) },
  synchronizer: { type: sectionOf(SynchronizerConfig) },
  service: { type: sectionOf(ServiceConfig) },
  log: { type: sectionOf(LogConfig) },
  stages: { type: listOf(sectionOf(StageConfig)), default: [], since: 'v0.3.1' },
});

// Sections that took over an older section's role: their keys' history continues in the older one.
TasksetConfig.formerly = [StorageConfig];
ExperienceBufferConfig.formerly = [StorageConfig];
DataSelectorConfig.formerly = [TaskSelectorConfig];
