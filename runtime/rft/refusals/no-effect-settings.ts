/**
 * The keys of main's config model that a local run reads nowhere, by design: each group says why the run computes
 * the same without them. Every other key is read by the runtime or refused before any work (refused-settings.ts,
 * and the scale settings of runtime/config/check/scale-settings.ts, which a run names at its start); a test
 * (test/runtime/rft/run/unread-keys.test.ts) fails when a key of the model is none of these, so a new key cannot be
 * dropped silently. A key is read when code reads it through its section's generated type (or by its whole dotted
 * path), so a name another section shares does not count. Keys are `Section.field` as runtime/config/model names
 * them; docs/runtime.md lists the groups.
 */
export interface NoEffectGroup {
  /** How the docs name the keys. */
  where: string;
  /** `Section.field` of each key (runtime/config/model/sections.ts). */
  fields: readonly string[];
  /** Why a local run computes the same without them. */
  why: string;
}

const inference = (...keys: string[]): string[] => keys.map((k) => `InferenceModelConfig.${k}`);

export const NO_EFFECT_LOCALLY: readonly NoEffectGroup[] = [
  {
    where:
      "Ray and GPU placement: `cluster.*`, `*.ray_namespace`, `wrap_in_ray`, the engines' and the trainer's actor names, nodes and ports, `synchronizer.group_name` / `explorer_world_size`, `log.group_by_node`, `monitor.enable_ray_timeline`",
    fields: [
      'Config.ray_namespace',
      'TasksetConfig.ray_namespace',
      'ExperienceBufferConfig.ray_namespace',
      'StorageConfig.ray_namespace',
      'StorageConfig.wrap_in_ray',
      ...[
        'ray_address',
        'gpu_per_node',
        'total_gpu_num',
        'rollout_gpu_num',
        'auxiliary_model_gpu_num',
        'explorer_gpu_num',
        'trainer_gpu_num',
        'trainer_node_num',
        'trainer_gpu_num_per_node',
      ].map((k) => `ClusterConfig.${k}`),
      ...inference(
        'ray_namespace',
        'ray_actor_name',
        'bundle_indices',
        'engine_id',
        'cuda_visible_devices',
        'nnodes',
        'node_rank',
        'base_port',
      ),
      'SynchronizerConfig.group_name',
      'SynchronizerConfig.explorer_world_size',
      'TrainerConfig.name',
      'SynchronizerConfig.ray_namespace',
      'LogConfig.group_by_node',
      'MonitorConfig.enable_ray_timeline',
    ],
    why: 'the local run is one process without Ray: nothing is placed on nodes or GPUs, and these only say where the same work would run',
  },
  {
    where: "the explorer's runners: `explorer.runner_*`, `concurrent_mode`, `min_running_model_num`, `env_vars`",
    fields: [
      'runner_prepare_concurrency',
      'runner_prepare_max_retries',
      'runner_num',
      'runner_state_report_interval',
      'concurrent_mode',
      'min_running_model_num',
      'env_vars',
    ].map((k) => `ExplorerConfig.${k}`),
    why: "they size and start Trinity's runner actors (processes with their own environment); the local explorer runs the workflows in its own process, `runner_per_model` at once",
  },
  {
    where:
      "vLLM's engine internals: `engine_type`, data/pipeline/expert parallelism, `gpu_per_engine`, `use_v1`, `enforce_eager`, prefix caching, chunked prefill, `gpu_memory_utilization`, `dtype`, request logs, the weight-sync buffer, `trust_remote_code`, multimodal input, its LoRA serving switches and adapter names",
    fields: [
      ...inference(
        'engine_type',
        'data_parallel_size',
        'pipeline_parallel_size',
        'enable_expert_parallel',
        'gpu_per_engine',
        'use_v1',
        'enforce_eager',
        'enable_prefix_caching',
        'enable_chunked_prefill',
        'gpu_memory_utilization',
        'enable_log_requests',
        'weight_sync_buffer_size',
        'trust_remote_code',
        'dtype',
        'enable_multimodal',
        'enable_lora',
        'enable_runtime_lora_updating',
        'lora_modules',
        'lora_kwargs',
      ),
      'ModelConfig.trust_remote_code',
      'ModelConfig.fully_sharded_loras',
      'ModelConfig.max_cpu_loras',
      'LoRAConfig.name',
      'LoRAConfig.lora_dtype',
      'LoRAConfig.base_model_name',
    ],
    why: "they set how vLLM computes the same distribution (speed, memory, kernels, how it serves a LoRA); the local engine runs the model's own architecture in float32, merging a LoRA adapter into the weights it samples with, and runs no code from a model's repository",
  },
  {
    where:
      "the engine's OpenAI server: `enable_openai_api`, `api_key`, `enable_auto_tool_choice`, `tool_call_parser`, `reasoning_parser`",
    fields: inference(
      'enable_openai_api',
      'api_key',
      'enable_auto_tool_choice',
      'tool_call_parser',
      'reasoning_parser',
    ),
    why: "they configure the OpenAI API a vLLM engine serves to Trinity's agent workflows, which the local runtime refuses by name (TRN312); serve mode's local service answers with the message text",
  },
  {
    where: '`explorer.rollout_model.enable_history` and `enable_return_routed_experts`',
    fields: inference('enable_history', 'enable_return_routed_experts'),
    why: "the local rollout model always records a workflow's calls for the workflows that read them (a workflow that needs the history where it is off is TRN313 in the check), and local models are dense: no experts to route",
  },
  {
    where:
      "the trainer's engine: `trainer.trainer_type`, `trainer_strategy`, `enable_preview`, `use_remove_padding`, `balance_batch`, `use_dynamic_bsz`, `max_token_len_per_gpu`, the offloads, `save_strategy`, `trust_remote_code`, `megatron.*`",
    fields: [
      ...[
        'trainer_type',
        'trainer_strategy',
        'enable_preview',
        'use_remove_padding',
        'balance_batch',
        'use_dynamic_bsz',
        'max_token_len_per_gpu',
        'param_offload',
        'optimizer_offload',
        'grad_offload',
        'offload_policy',
        'save_strategy',
        'trust_remote_code',
      ].map((k) => `TrainerConfig.${k}`),
      ...[
        'tensor_model_parallel_size',
        'pipeline_model_parallel_size',
        'virtual_pipeline_model_parallel_size',
        'expert_model_parallel_size',
        'expert_tensor_parallel_size',
        'context_parallel_size',
        'sequence_parallel',
      ].map((k) => `MegatronParallelConfig.${k}`),
    ],
    why: 'they choose how veRL lays out, pads, balances and offloads the same update across GPUs; the local trainer computes it in one process, and writes every checkpoint in one layout',
  },
  {
    where: '`trainer.save_hf_checkpoint`',
    fields: ['TrainerConfig.save_hf_checkpoint'],
    why: 'every local checkpoint is a Hugging Face model directory already',
  },
  {
    where: '`tokenizer_path` of the buffers',
    fields: ['ExperienceBufferConfig.tokenizer_path', 'StorageConfig.tokenizer_path', 'BufferConfig.tokenizer_path'],
    why: "Trinity sets it to `model.model_path` at launch whatever is written (config_validator.py), and the local runtime reads the model's tokenizer",
  },
  {
    where: '`logprobs` of `model`, the inference models and `rollout_args`',
    fields: ['ModelConfig.logprobs', 'InferenceModelConfig.logprobs', 'GenerationConfig.logprobs'],
    why: "how many of the most likely tokens' log-probs vLLM returns beside each sampled token's; the local model records every sampled token's log-prob (all the trainer and the local workflows read) whatever is written",
  },
  {
    where: "the inference models' `sync_method` and `checkpoint_job_dir`, `monitor.cache_dir`",
    fields: ['InferenceModelConfig.sync_method', 'InferenceModelConfig.checkpoint_job_dir', 'MonitorConfig.cache_dir'],
    why: "Trinity's launch overwrites them from `synchronizer.sync_method` and the job directory, which the local run reads itself",
  },
  {
    where: '`synchronizer.wait_for_checkpoint`',
    fields: ['SynchronizerConfig.wait_for_checkpoint'],
    why: "how long Trinity's explorer blocks on a checkpoint sync; the local explorer takes each checkpoint at the sync points `sync_style` and `sync_offset` set",
  },
  {
    where: 'progress bars, `log.save_dir`, `log.level`, `monitor.monitor_args`',
    fields: [
      'TasksetConfig.enable_progress_bar',
      'ExperienceBufferConfig.enable_progress_bar',
      'StorageConfig.enable_progress_bar',
      'LogConfig.save_dir',
      'LogConfig.level',
      'MonitorConfig.monitor_args',
    ],
    why: "they shape Trinity's console and its remote monitors; a local run writes its log to the run's event stream and its metrics to metrics.jsonl and TensorBoard files (said at the start of a run whose monitor is remote)",
  },
  {
    where: '`ignore_validator_suggestions`',
    fields: ['Config.ignore_validator_suggestions'],
    why: "a switch of the launch check's memory suggestions (TRN273/TRN274), which the check honours before any run",
  },
  {
    where: '`service.data_juicer`',
    fields: [
      'DataJuicerServiceConfig.server_url',
      'DataJuicerServiceConfig.port',
      'DataJuicerServiceConfig.auto_start',
    ],
    why: 'read only by Data-Juicer operators, which the local runtime refuses by name (TRN312)',
  },
];
