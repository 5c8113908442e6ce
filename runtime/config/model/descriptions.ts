/**
 * Hover text for Trinity-RFT config sections and keys, written from Trinity's code (trinity/common/config.py,
 * config_validator.py and the modules that read each key) across the modelled releases.
 * Type, default and release range are shown by the tool separately and are deliberately not repeated here.
 */

/** Hover text per section, keyed by the Python dataclass name. */
export const SECTION_DOCS: Record<string, string> = {
  FormatConfig:
    '`format`: how the columns of a dataset row are mapped to a task (prompt, ground truth, system prompt, per-row workflow) or to SFT/DPO training samples (messages, chosen/rejected, tools).',
  GenerationConfig:
    '`rollout_args` of a taskset: sampling parameters used when generating responses for that taskset. Unset values fall back to the corresponding `model.*` keys.',
  StorageConfig:
    'A buffer storage description (file dataset, Ray queue or SQL database). In early releases this is what `taskset`, `eval_tasksets` and `experience_buffer` were; later releases expose `TasksetConfig` / `ExperienceBufferConfig` to users and use this class internally.',
  OperatorConfig: 'One pipeline operator: a registered operator name and the keyword arguments used to construct it.',
  ExperiencePipelineConfig:
    '`data_processor.experience_pipeline`: operators applied, in order, to the experiences produced by each explorer step (filters, reward shaping, Data-Juicer), plus saving of the raw input.',
  TaskPipelineConfig:
    '`data_processor.task_pipeline`: run Data-Juicer operators over raw local task files and write the result as the taskset, optionally ranking/selecting tasks by priority scores.',
  DataProcessorConfig:
    'The `data_processor` section (experimental): an optional task pipeline that pre-processes raw task files with Data-Juicer, and the experience pipeline that post-processes rollouts before training.',
  ModelConfig:
    'The `model` section: the model being trained, its sequence-length budget (prompt/response/total tokens), default sampling parameters for rollouts, chat template, LoRA, RoPE overrides, and the Tinker / external-API alternatives.',
  InferenceModelConfig:
    'A vLLM-served inference model: `explorer.rollout_model` (the policy used for rollouts) or an entry of `explorer.auxiliary_models`. Controls engine count, parallelism, memory and serving features; many values are filled from `model`.',
  AlgorithmConfig:
    'The `algorithm` section: which RL/SFT algorithm to run, how many rollouts per task, the optimizer, and the pluggable advantage, policy-loss, KL, entropy and sampling functions. Unset functions and their `*_args` are filled from the chosen `algorithm_type`.',
  ClusterConfig:
    'The `cluster` section: which Ray cluster to use and how many nodes/GPUs it has. Trinity splits those GPUs between the explorer (rollout engines) and the trainer; the `*_gpu_num` keys are computed.',
  ExplorerInput:
    '`buffer.explorer_input`: the training taskset(s) the explorer rolls out, the evaluation tasksets, and default workflow / reward function names applied to tasksets that do not set their own.',
  TrainerInput:
    '`buffer.trainer_input`: the experience buffer the trainer samples from (normally written by the explorer) and optional auxiliary buffers such as an SFT dataset for mixed training.',
  BufferConfig:
    'The `buffer` section: batch sizes, training length (epochs or steps), the task datasets read by the explorer (`explorer_input`) and the experience buffers read by the trainer (`trainer_input`).',
  ExplorerConfig:
    'The `explorer` section: the rollout and auxiliary models, workflow runners (concurrency, timeouts, retries), evaluation schedule, serve-mode proxy settings and experimental over-rollout / dynamic timeout.',
  TrainerConfig:
    'The `trainer` section: training backend and parallel strategy, total steps, checkpoint saving, gradient clipping, dynamic batching, and raw backend (veRL) settings in `trainer_config`.',
  MonitorConfig:
    'The `monitor` section: where metrics go (TensorBoard, Weights & Biases, MLflow, SwanLab) and extra profiling/statistics options.',
  SynchronizerConfig:
    "The `synchronizer` section: how and how often updated weights move from the trainer to the explorer's rollout engines (NCCL, checkpoint files or Ray memory), and how far the explorer may run ahead.",
  DataJuicerServiceConfig:
    '`service.data_juicer`: where to reach (or whether to launch) the Data-Juicer server used by `data_juicer` pipeline operators.',
  ServiceConfig:
    'The `service` section: external helper services used by the run; currently only a Data-Juicer server.',
  MegatronParallelConfig:
    '`trainer.megatron`: Megatron-Core parallel sizes (tensor, pipeline, virtual pipeline, expert, context) and sequence parallelism, used when `trainer.trainer_strategy` is `megatron`.',
  LogConfig: 'The `log` section: log level and layout of the per-actor log files under the job directory.',
  Config:
    'Root of a Trinity-RFT config: run mode, experiment naming and checkpoint location, plus one sub-section per component (`algorithm`, `model`, `cluster`, `buffer`, `explorer`, `trainer`, `synchronizer`, `monitor`, ...).',
  LoRAConfig:
    'One entry of `model.lora_configs`: a LoRA adapter that is trained instead of the full weights and served by the rollout engine. Only one adapter is supported.',
  StageConfig:
    "One entry of `stages`: a step of a multi-stage run (e.g. SFT warm-up then RL). Each section given here replaces the whole corresponding root section for that stage; stages run in order and each starts from the previous stage's latest Hugging Face checkpoint.",
  OptimizerConfig:
    '`algorithm.optimizer`: learning rate, warm-up, LR schedule and optimizer hyper-parameters for the actor (policy) model. Trinity copies these into the trainer backend; the critic optimizer is configured under `trainer.trainer_config`.',
  TaskSelectorConfig:
    'Per-taskset task selection strategy (ordering/sampling of tasks). Replaced by `DataSelectorConfig` (`data_selector`); `task_selector` is still accepted as a deprecated alias.',
  ReplayBufferConfig:
    '`replay_buffer` of a `queue` experience buffer: turns the queue into a priority queue so experiences can be served by priority and re-used after a cool-down.',
  TasksetConfig:
    'A task dataset read by the explorer (`taskset`, an entry of `tasksets`, or of `eval_tasksets`): where the data lives, how rows map to prompts/answers, which workflow and reward function run on it, and sampling arguments.',
  ExperienceBufferConfig:
    'An experience store read by the trainer (`experience_buffer`, `auxiliary_buffers.*`, pipeline inputs/outputs): a Ray queue for online RL, an SQL table, or a dataset file for SFT/DPO.',
  OverRolloutConfig:
    '`explorer.over_rollout` (experimental): let an explorer step finish once a fraction of its tasks are done, so slow tasks do not stall the step. Requires a non-`fixed` `synchronizer.sync_style`.',
  DynamicTimeoutConfig:
    '`explorer.dynamic_timeout` (experimental): shrink the per-step timeout to a multiple of the average task time observed so far.',
  TinkerConfig:
    '`model.tinker`: train and sample through the remote Tinker service instead of local GPUs (LoRA-based). When enabled, the engines and trainer are switched to `tinker` and `lora_configs` is ignored.',
  DataSelectorConfig:
    '`data_selector` of a file-based dataset: how samples are picked each step (sequential, shuffled, random, easy-to-hard curriculum, or adaptive difficulty-based). Experimental.',
  ExternalModelConfig:
    '`model.external_model`: evaluate an OpenAI-compatible API model instead of a local one. Only allowed in `bench` mode; endpoint and key are read from environment variables.',
};

/** Hover text per field, keyed `Class.field` (Python dataclass name, a dot, the field name). */
export const FIELD_DOCS: Record<string, string> = {
  // FormatConfig
  'FormatConfig.prompt_type':
    'How SFT/DPO rows are laid out: `messages` (a chat message list in `messages_key`) or `plaintext` (separate prompt/response columns). Not used for explorer tasksets.',
  'FormatConfig.prompt_key':
    'Column holding the user prompt. For tasksets it becomes the task question; for SFT/DPO data it is used with `prompt_type: plaintext`.',
  'FormatConfig.response_key':
    'Column holding the reference answer. For tasksets it becomes the ground truth passed to the reward function; for SFT `plaintext` data it is the assistant response to learn.',
  'FormatConfig.system_prompt_key':
    'Column holding a per-row system prompt (SFT/DPO `plaintext` data). Takes precedence over `system_prompt`; null = no per-row system prompt.',
  'FormatConfig.system_prompt':
    'Fixed system prompt text. Used by workflows when building task prompts and by SFT/DPO `plaintext` formatting when `system_prompt_key` is not set.',
  'FormatConfig.messages_key':
    'Column holding the chat message list (a list or a JSON string) for SFT/DPO data with `prompt_type: messages`.',
  'FormatConfig.tools_key':
    'Column holding tool definitions (a list of dicts or a JSON string) for SFT data, passed to the chat template.',
  'FormatConfig.image_key': 'Column holding image input(s) for multi-modal tasks or SFT data. null = no images.',
  'FormatConfig.video_key': 'Column holding video input(s) for multi-modal tasks or SFT data. null = no videos.',
  'FormatConfig.reply_prefix':
    'Text that workflows place at the start of the assistant turn, so the model continues from it. null = no prefix.',
  'FormatConfig.workflow_key':
    'Column naming the workflow to run for each row, overriding the taskset `default_workflow_type`. Empty = always use the default.',
  'FormatConfig.reward_fn_key':
    'Column naming the reward function for each row, overriding the taskset `default_reward_fn_type`. Empty = always use the default.',
  'FormatConfig.chosen_key':
    'Column holding the preferred (chosen) response of a DPO pair: a string for `plaintext`, a message list for `messages`.',
  'FormatConfig.rejected_key':
    'Column holding the dispreferred (rejected) response of a DPO pair, in the same form as `chosen_key`.',
  'FormatConfig.enable_concatenated_multi_turn':
    'For multi-turn SFT `messages` data: train on every assistant turn instead of only the last one. Not supported together with image/video inputs.',
  'FormatConfig.chat_template':
    "Jinja chat template used to tokenize SFT/DPO data. null = `model.custom_chat_template` (or the tokenizer's own template).",
  'FormatConfig.enable_thinking':
    'Passed as `enable_thinking` to the chat template when tokenizing SFT/DPO data (Qwen3-style thinking mode). null = taken from `model.enable_thinking`.',
  // GenerationConfig
  'GenerationConfig.temperature':
    "Sampling temperature for this taskset's rollouts. null = `model.temperature`. The first training taskset's value is also used by the trainer when recomputing log-probabilities.",
  'GenerationConfig.top_p':
    "Nucleus-sampling threshold for this taskset's rollouts (1.0 = disabled). null = `model.top_p`.",
  'GenerationConfig.top_k':
    "Top-k sampling for this taskset's rollouts; -1 = disabled. null (where allowed) = `model.top_k`.",
  'GenerationConfig.logprobs':
    'Number of top log-probabilities vLLM returns per generated token, in addition to the sampled token; 0 = only the sampled token. null = `model.logprobs`.',
  'GenerationConfig.n':
    "Number of responses sampled per task. Set by Trinity from `algorithm.repeat_times` (training) or the eval taskset's `repeat_times`; do not set.",
  'GenerationConfig.max_tokens':
    'Maximum tokens generated per response for this taskset. null = `model.max_response_tokens`.',
  // StorageConfig
  'StorageConfig.name':
    'Name of the dataset or buffer. Also used for its Ray actor and SQL table, so it must be unique; empty = filled by Trinity (`taskset`, `eval_taskset_<i>`, `experience_buffer`).',
  'StorageConfig.storage_type':
    'Backend: `file` (Hugging Face-loadable dataset or JSON lines), `queue` (in-memory Ray queue between explorer and trainer) or `sql` (SQLAlchemy database).',
  'StorageConfig.path':
    'Location of the data. `file`: Hugging Face dataset id, local directory or file; `sql`: a database URL such as `sqlite:///buffer.db`; `queue`: optional `sqlite:///` URL or `.jsonl` file where queued items are also persisted.',
  'StorageConfig.repeat_times':
    'Rollouts generated per task. For the training taskset Trinity overrides it with `algorithm.repeat_times`; for eval tasksets null = 1.',
  'StorageConfig.index':
    'Row offset to resume reading from. Set by Trinity from the checkpointed explorer state; do not set.',
  'StorageConfig.mm_data_kwargs':
    'Extra multi-modal options (not read by Trinity). Removed; multi-modal inputs are configured with `format.image_key` / `format.video_key`.',
  'StorageConfig.split':
    'Dataset split to load for `file` storage (the `split` argument of Hugging Face `load_dataset`).',
  'StorageConfig.subset_name':
    'Dataset configuration/subset to load for `file` storage (the `name` argument of Hugging Face `load_dataset`). null = none.',
  'StorageConfig.format':
    'Column mapping for rows of this dataset (prompt/response keys, system prompt, SFT/DPO layout).',
  'StorageConfig.capacity':
    'Maximum number of entries a `queue` buffer holds. When full, writers wait (plain queue) or the lowest-priority entries are dropped (replay buffer).',
  'StorageConfig.max_read_timeout':
    'Seconds a reader waits to collect a full batch from a `queue` or `sql` buffer before the read times out.',
  'StorageConfig.use_priority_queue':
    'Use a priority queue (experience replay) for a `queue` buffer. Replaced by `replay_buffer.enable`.',
  'StorageConfig.reuse_cooldown_time':
    'Seconds before a consumed experience is put back into the priority queue for reuse; null = never reuse. Replaced by `replay_buffer.reuse_cooldown_time`.',
  'StorageConfig.replay_buffer_kwargs':
    'Priority function and its arguments for the priority queue (`priority_fn`, `decay`). Replaced by `replay_buffer.priority_fn` and `replay_buffer.priority_fn_args`.',
  'StorageConfig.max_retry_times': 'For `sql` storage: how many times a failed database operation is retried.',
  'StorageConfig.max_retry_interval': 'For `sql` storage: seconds to wait between database retries.',
  'StorageConfig.default_workflow_type':
    'Workflow (registered name, e.g. `math_workflow`) run on tasks of this taskset unless a row names one via `format.workflow_key`. null = `buffer.explorer_input.default_workflow_type`.',
  'StorageConfig.default_eval_workflow_type':
    'Workflow used for this taskset when it is evaluated. Removed; set `default_workflow_type` on the eval taskset or `buffer.explorer_input.default_eval_workflow_type`.',
  'StorageConfig.default_reward_fn_type':
    "Reward function (registered name, e.g. `math_reward`) used by this taskset's workflows unless a row names one via `format.reward_fn_key`. null = `buffer.explorer_input.default_reward_fn_type`.",
  'StorageConfig.rollout_args':
    'Sampling parameters (temperature, top-p, max tokens, ...) for rollouts on this taskset.',
  'StorageConfig.workflow_args': 'Free-form keyword arguments passed to the workflow of every task in this taskset.',
  'StorageConfig.reward_fn_args': 'Free-form keyword arguments used to construct the reward function for this taskset.',
  'StorageConfig.enable_progress_bar': 'Show a progress bar while a `file` dataset is loaded and read.',
  'StorageConfig.ray_namespace':
    'Ray namespace of the actor that holds this storage. null = the root `ray_namespace`; set it only to attach to a buffer of another running experiment.',
  'StorageConfig.wrap_in_ray':
    'Run the storage as a shared Ray actor so several processes can use it. Leave enabled unless you know the storage is used by a single process.',
  'StorageConfig.schema_type':
    'Record schema of an experience buffer (`experience`, `sft` or `dpo`). Set by Trinity from `algorithm.algorithm_type`; do not set.',
  'StorageConfig.total_epochs': 'Passes over the data. Set by Trinity from `buffer.total_epochs`; do not set.',
  'StorageConfig.total_steps': 'Number of batches to read. Set by Trinity from `buffer.total_steps`; do not set.',
  'StorageConfig.is_eval': 'Whether this is an evaluation taskset. Set by Trinity; do not set.',
  'StorageConfig.replay_buffer': 'Priority-queue / experience-replay settings for `queue` storage.',
  'StorageConfig.task_selector': 'Task selection strategy for a taskset. Replaced by `data_selector`.',
  'StorageConfig.batch_size':
    'Read batch size. Set by Trinity from `buffer.batch_size` (tasksets) or `buffer.train_batch_size` (experience buffers); do not set.',
  'StorageConfig.tokenizer_path':
    'Tokenizer used to format SFT/DPO data. Set by Trinity from `model.model_path`; do not set.',
  'StorageConfig.data_selector':
    'How samples are selected from a `file` dataset each step (sequential, shuffled, curriculum, ...).',
  // OperatorConfig
  'OperatorConfig.name':
    'Registered operator name. Experience pipeline: e.g. `reward_filter`, `reward_std_filter`, `reward_shaping_mapper`, `pass_rate_calculator`, `invalid_reward_filter`, `data_juicer`; task pipeline: a Data-Juicer operator name.',
  'OperatorConfig.args':
    'Keyword arguments for the operator; the accepted keys depend on the operator named in `name`.',
  // ExperiencePipelineConfig
  'ExperiencePipelineConfig.operators':
    'Operators applied in the listed order to each batch of explorer experiences before they reach the experience buffer. Algorithm-specific steps (e.g. group advantages) are appended automatically.',
  'ExperiencePipelineConfig.save_input':
    'Also store the raw (pre-pipeline) experiences of the explorer at `input_save_path`.',
  'ExperiencePipelineConfig.input_save_path':
    'Where raw explorer experiences are saved when `save_input` is on: a `.json`/`.jsonl` file (JSON lines) or a database URL (`sqlite:///...`, table `pipeline_input`). null = `sqlite:///<buffer.cache_dir>/explorer_output.db` (before v0.4.0 `<buffer.cache_dir>/explorer_output.jsonl`).',
  'ExperiencePipelineConfig.inputs':
    "Extra named experience buffers that operators may read from (experimental). The explorer's own output needs no entry here.",
  'ExperiencePipelineConfig.output':
    'Buffer the pipeline writes to. Trinity always writes to `buffer.trainer_input.experience_buffer`; leave unset.',
  // TaskPipelineConfig
  'TaskPipelineConfig.operators': 'Data-Juicer operators applied, in order, to the raw task files before exploration.',
  'TaskPipelineConfig.num_process':
    'Number of worker processes Data-Juicer uses for the task pipeline. Ignored when `config_path` is set.',
  'TaskPipelineConfig.config_path':
    'Path to a Data-Juicer YAML config. When set, it is used instead of `operators` and `num_process`.',
  'TaskPipelineConfig.inputs':
    'Local raw task files (e.g. `.jsonl`, `.parquet`) fed to the pipeline; directories and Hugging Face ids are not supported.',
  'TaskPipelineConfig.output':
    'Taskset the processed tasks are written to. null = the first training taskset (or, in `train` mode with SFT/DPO, the experience buffer); the output path must not already exist.',
  'TaskPipelineConfig.target_fields':
    'Fields of the input rows that Data-Juicer processes and keeps in the output taskset.',
  'TaskPipelineConfig.priority_weights':
    'Weights for combining per-task scores into a priority, typically keyed `difficulty`, `diversity`, `usage_frequency` and `quality`.',
  'TaskPipelineConfig.top_k': 'How many top-priority tasks to keep after the task pipeline; -1 = keep all.',
  // DataProcessorConfig
  'DataProcessorConfig.task_pipeline':
    'Optional pre-processing of raw task files with Data-Juicer before exploration. null = no task pipeline.',
  'DataProcessorConfig.experience_pipeline':
    'Post-processing applied to rollout experiences (filters, reward shaping, Data-Juicer) before they are written for the trainer.',
  // ModelConfig
  'ModelConfig.model_path':
    "Hugging Face id or local path of the model being trained; its tokenizer is used throughout. With Tinker it is the Tinker model name / local tokenizer. In multi-stage runs, later stages start from the previous stage's checkpoint instead.",
  'ModelConfig.critic_model_path':
    'Model used to initialise the critic (value model) for algorithms that need one, such as PPO. Empty = `model_path`.',
  'ModelConfig.max_model_len':
    "Maximum total tokens (prompt + response) of one sequence, used by vLLM and for the trainer's token budgets. null = `max_prompt_tokens` + `max_response_tokens` (older releases read it from the model's own config instead).",
  'ModelConfig.max_prompt_tokens':
    'Maximum prompt tokens; longer prompts are cut when `enable_prompt_truncation` is on. null = derived from `max_model_len` (half of it, or whatever `max_response_tokens` leaves). Not applied to OpenAI-API calls.',
  'ModelConfig.max_response_tokens':
    'Maximum tokens generated per response, and the default `max_tokens` of every taskset. null = derived from `max_model_len` (half of it, or whatever `max_prompt_tokens` leaves). Not applied to OpenAI-API calls.',
  'ModelConfig.min_response_tokens':
    'Minimum tokens generated before a response may end. Trinity lowers it below `max_response_tokens` if needed; 0 = no minimum.',
  'ModelConfig.custom_chat_template':
    "Jinja chat template (as a string) used for rollouts, SFT/DPO formatting and training, instead of the tokenizer's template. null = use the tokenizer's template.",
  'ModelConfig.lora_configs':
    'Train a LoRA adapter instead of full weights. At most one entry; ignored when `tinker.enable` is on. Weight sync then uses `checkpoint` instead of `nccl`.',
  'ModelConfig.fully_sharded_loras':
    "vLLM-style option to shard LoRA computation across tensor-parallel ranks. Declared but not passed on by Trinity's code.",
  'ModelConfig.max_cpu_loras':
    "vLLM-style limit on LoRA adapters cached in CPU memory. Declared but not passed on by Trinity's code.",
  'ModelConfig.temperature':
    "Default sampling temperature for rollouts; a taskset's `rollout_args.temperature` overrides it.",
  'ModelConfig.top_p':
    'Default nucleus-sampling threshold for rollouts (1.0 = disabled); overridden by `rollout_args.top_p`.',
  'ModelConfig.top_k': 'Default top-k for rollouts; -1 = disabled. Overridden by `rollout_args.top_k`.',
  'ModelConfig.logprobs':
    'Default number of top log-probabilities returned per generated token besides the sampled one; 0 = only the sampled token. Overridden by `rollout_args.logprobs`.',
  'ModelConfig.chat_template_path':
    'Path to a Jinja chat template file; its content is loaded into `custom_chat_template` when that key is null.',
  'ModelConfig.enable_prompt_truncation':
    'Truncate prompts longer than `max_prompt_tokens` before generation. When off, prompt + response may exceed `max_model_len`. Does not apply to OpenAI-API calls.',
  'ModelConfig.repetition_penalty':
    'vLLM repetition penalty for rollouts; 1.0 = no penalty, values above 1 discourage repeated tokens.',
  'ModelConfig.rope_scaling':
    'RoPE scaling settings (a dict, as in the Hugging Face model config) applied to the rollout engines and the trainer, e.g. to extend the context length. null = model default.',
  'ModelConfig.rope_theta':
    'RoPE base frequency override applied to the rollout engines and the trainer. null = model default.',
  'ModelConfig.tinker': 'Settings for training through the remote Tinker service instead of local GPUs.',
  'ModelConfig.trust_remote_code':
    'Allow executing custom model code from the model repository when Hugging Face loads the model/tokenizer for training.',
  'ModelConfig.enable_thinking':
    'Default `enable_thinking` flag passed to chat templates (Qwen3-style thinking mode) for rollout/auxiliary models and SFT/DPO formatting. null = template default.',
  'ModelConfig.external_model': 'Evaluate an OpenAI-compatible API model instead of a local one (`bench` mode only).',
  // InferenceModelConfig
  'InferenceModelConfig.model_path':
    'Model served by this engine. For `explorer.rollout_model` it is set by Trinity from `model.model_path` (do not set); for each auxiliary model it is required.',
  'InferenceModelConfig.engine_type':
    'Inference backend: `vllm` (older releases: `vllm_async`; any `vllm*` name), `sglang` (main), `tinker` or `external`. Trinity switches it to `tinker` / `external` when `model.tinker` / `model.external_model` is enabled.',
  'InferenceModelConfig.engine_num':
    'Number of independent engine instances (replicas). GPUs used = `engine_num` × `tensor_parallel_size` (main: × `data_parallel_size` × `pipeline_parallel_size`).',
  'InferenceModelConfig.tensor_parallel_size':
    'GPUs each engine splits the model across (tensor parallelism). Up to v0.5.2 one engine must fit on a single node; on main a larger engine spans whole nodes.',
  'InferenceModelConfig.use_v1': "Use vLLM's V1 engine architecture.",
  'InferenceModelConfig.enforce_eager':
    'Run vLLM in eager mode without CUDA graphs: faster start-up and less memory, usually slower generation.',
  'InferenceModelConfig.enable_prefix_caching':
    'Enable vLLM automatic prefix caching, which reuses KV cache across requests sharing a prompt prefix (e.g. the repeats of one task).',
  'InferenceModelConfig.enable_chunked_prefill':
    'Enable vLLM chunked prefill, which splits long prompts into chunks batched together with decoding.',
  'InferenceModelConfig.gpu_memory_utilization':
    "Fraction (0-1) of each GPU's memory vLLM may take for weights and KV cache. Capped at 0.25 in `colocate` mode.",
  'InferenceModelConfig.dtype': 'Weight/activation dtype of the vLLM engine, e.g. `bfloat16` or `float16`.',
  'InferenceModelConfig.seed': 'Random seed of the vLLM engine.',
  'InferenceModelConfig.max_model_len':
    'Maximum total tokens per sequence for this engine. null = `model.max_model_len`.',
  'InferenceModelConfig.max_prompt_tokens': 'Prompt-length limit for this engine. null = `model.max_prompt_tokens`.',
  'InferenceModelConfig.max_response_tokens':
    'Response-length limit for this engine. null = `model.max_response_tokens`.',
  'InferenceModelConfig.min_response_tokens':
    'Minimum response length for this engine. null = `model.min_response_tokens`.',
  'InferenceModelConfig.ignore_eos':
    'Keep generating past the end-of-sequence token up to the length limit. Only for testing long generations.',
  'InferenceModelConfig.chat_template':
    "Jinja chat template for this engine. null = `model.custom_chat_template` (rollout model) or the tokenizer's template.",
  'InferenceModelConfig.enable_thinking':
    'Passed as `enable_thinking` to the chat template (Qwen3-style thinking mode). null = `model.enable_thinking`.',
  'InferenceModelConfig.enable_history':
    'Record every chat/generate call as experiences inside the model wrapper, so a workflow can collect them later. Always off for auxiliary models.',
  'InferenceModelConfig.enable_openai_api':
    'Expose an OpenAI-compatible API on the engine so workflows (e.g. agent frameworks) can call it with an OpenAI client. Always on for auxiliary models and in `serve` mode.',
  'InferenceModelConfig.enable_auto_tool_choice':
    'Let the OpenAI API decide automatically when to emit tool calls (vLLM auto tool choice). Needs `tool_call_parser`.',
  'InferenceModelConfig.tool_call_parser':
    'vLLM tool-call parser (e.g. `hermes`) that turns model output into structured tool calls in OpenAI-API responses. null = none.',
  'InferenceModelConfig.reasoning_parser':
    'vLLM reasoning parser (e.g. `deepseek_r1`) that separates reasoning text from the final answer. null = none.',
  'InferenceModelConfig.bundle_indices':
    'Ray placement-group bundles (GPUs) assigned to this engine. Set by Trinity; do not set.',
  'InferenceModelConfig.enable_lora':
    'Serve a LoRA adapter. Set by Trinity when `model.lora_configs` is given; do not set.',
  'InferenceModelConfig.lora_modules':
    'Adapters registered with vLLM (id, name, path, base model). Set by Trinity from `model.lora_configs`; do not set.',
  'InferenceModelConfig.lora_kwargs':
    'Extra vLLM LoRA engine options (adapter count, maximum rank). Set by Trinity from `model.lora_configs`; do not set.',
  'InferenceModelConfig.temperature': 'Set by Trinity from `model.temperature`; do not set.',
  'InferenceModelConfig.top_p': 'Set by Trinity from `model.top_p`; do not set.',
  'InferenceModelConfig.top_k': 'Set by Trinity from `model.top_k`; do not set.',
  'InferenceModelConfig.logprobs': 'Set by Trinity from `model.logprobs`; do not set.',
  'InferenceModelConfig.enable_prompt_truncation':
    'Truncate prompts to `max_prompt_tokens` on this engine. null = `model.enable_prompt_truncation`.',
  'InferenceModelConfig.repetition_penalty':
    'Repetition penalty for this engine (1.0 = none). null = `model.repetition_penalty`.',
  'InferenceModelConfig.enable_log_requests':
    'Log each incoming request in the vLLM engine / API server; useful for debugging, noisy otherwise.',
  'InferenceModelConfig.rope_scaling': 'Set by Trinity from `model.rope_scaling`; do not set.',
  'InferenceModelConfig.rope_theta': 'Set by Trinity from `model.rope_theta`; do not set.',
  'InferenceModelConfig.name':
    'Name of an auxiliary model: part of its Ray actor name and the key under which workflows find it. null = its position in `auxiliary_models`.',
  'InferenceModelConfig.ray_namespace': 'Set by Trinity from the root `ray_namespace`; do not set.',
  'InferenceModelConfig.cuda_visible_devices':
    'GPU pinning for the engine process. Set by Trinity in `colocate` mode; do not set.',
  'InferenceModelConfig.enable_runtime_lora_updating':
    'Allow vLLM to load or swap LoRA adapters while running (sets `VLLM_ALLOW_RUNTIME_LORA_UPDATING`).',
  'InferenceModelConfig.trust_remote_code':
    "Hugging Face `trust_remote_code` flag for this model. Trinity's vLLM engines currently load models with remote code allowed regardless of this key.",
  'InferenceModelConfig.external_model_config':
    'Endpoint settings for the `external` engine. Copied by Trinity from `model.external_model`; do not set.',
  // AlgorithmConfig
  'AlgorithmConfig.algorithm_type':
    'Registered algorithm name, e.g. `ppo`, `grpo`, `opmd`, `dpo`, `sft`, `mix`, `gspo`, `rloo`. It decides the defaults for the function keys below, whether a critic is trained, and the experience schema.',
  'AlgorithmConfig.repeat_times':
    'Rollouts generated per task (the group size of GRPO-style algorithms). Group-based algorithms need more than 1; DPO forces 2. A `buffer.train_batch_size` of 0 becomes `buffer.batch_size` × this.',
  'AlgorithmConfig.sample_strategy':
    "How the trainer draws each batch from its buffers: `default`, `staleness_control` (skip experiences from too-old model versions), `mix` (blend in expert/SFT data), or the deprecated `warmup`. null = the algorithm's default.",
  'AlgorithmConfig.sample_strategy_args':
    "Arguments of the sample strategy (e.g. `max_staleness` for `staleness_control`). null = the strategy's defaults; a given dict replaces them entirely.",
  'AlgorithmConfig.advantage_fn':
    "Registered advantage function, e.g. `ppo` (GAE with a critic), `grpo`, `opmd`, `reinforce`, `rloo`. null = the algorithm's default.",
  'AlgorithmConfig.advantage_fn_args':
    'Arguments of the advantage function. null = its defaults; a given dict replaces them entirely (no merge).',
  'AlgorithmConfig.kl_penalty_fn':
    "KL estimator subtracted from the reward against the reference model (`k1`, `k2`, `k3`, `low_var_kl`, `abs`, ...); `none` disables the reward penalty. null = the algorithm's default.",
  'AlgorithmConfig.kl_penalty_fn_args':
    'Arguments of the reward KL penalty, e.g. `kl_coef`. null = its defaults; a given dict replaces them entirely.',
  'AlgorithmConfig.policy_loss_fn':
    "Registered policy loss, e.g. `ppo` (clipped surrogate), `opmd`, `dpo`, `sft`, `gspo`, `mix`. null = the algorithm's default.",
  'AlgorithmConfig.policy_loss_fn_args':
    'Arguments of the policy loss, e.g. clip ranges. null = its defaults; a given dict replaces them entirely, so include every key you need.',
  'AlgorithmConfig.kl_loss_fn':
    "KL estimator added to the actor loss against the reference model (`k1`, `k2`, `k3`, `low_var_kl`, `abs`, ...); `none` disables the KL loss. null = the algorithm's default.",
  'AlgorithmConfig.kl_loss_fn_args':
    'Arguments of the KL loss, e.g. `kl_coef`. null = its defaults; a given dict replaces them entirely.',
  'AlgorithmConfig.entropy_loss_fn':
    "Entropy regulariser added to the actor loss: `default`, `mix` or `none`. null = the algorithm's default.",
  'AlgorithmConfig.entropy_loss_fn_args':
    'Arguments of the entropy loss, e.g. `entropy_coef`. null = its defaults; a given dict replaces them entirely.',
  'AlgorithmConfig.use_token_level_loss':
    'Declared but not read by Trinity. Token- vs sequence-level loss averaging is set through the loss function arguments and, later, `algorithm.loss_agg_mode`.',
  'AlgorithmConfig.optimizer': 'Optimizer and learning-rate schedule of the actor model.',
  'AlgorithmConfig.loss_agg_mode':
    'How per-token losses are reduced to one value: `token-mean`, `seq-mean-token-sum`, `seq-mean-token-mean` or `seq-mean-token-sum-norm`. null = `token-mean`. Overrides `loss_agg_mode` inside `policy_loss_fn_args`.',
  // ClusterConfig
  'ClusterConfig.node_num':
    'Number of nodes to use. 0 (null in some older releases) = detect from the running Ray cluster.',
  'ClusterConfig.gpu_per_node':
    'GPUs per node. 0 (null in some older releases) = detect from the running Ray cluster. If detection finds a single node with one GPU, the run switches to `colocate` mode.',
  'ClusterConfig.ray_address':
    'Address of the Ray cluster to connect to; `auto` = the cluster already started on this machine (`ray start --head`).',
  'ClusterConfig.total_gpu_num': '`node_num` × `gpu_per_node`. Set by Trinity; do not set.',
  'ClusterConfig.rollout_gpu_num':
    'GPUs taken by the rollout model (`engine_num` × `tensor_parallel_size`; 0 in `train` mode). Set by Trinity; do not set.',
  'ClusterConfig.auxiliary_model_gpu_num': 'GPUs taken by all auxiliary models. Set by Trinity; do not set.',
  'ClusterConfig.explorer_gpu_num':
    'GPUs used by the explorer (rollout + auxiliary models). Set by Trinity; do not set.',
  'ClusterConfig.trainer_gpu_num': "GPUs left for the trainer after the explorer's share. Set by Trinity; do not set.",
  'ClusterConfig.trainer_node_num': 'Nodes used by the trainer. Set by Trinity; do not set.',
  'ClusterConfig.trainer_gpu_num_per_node': 'Trainer GPUs on each trainer node. Set by Trinity; do not set.',
  // ExplorerInput
  'ExplorerInput.taskset':
    'The training taskset. Cannot be combined with `tasksets`; a training taskset is required except in `train`, `bench` and `serve` modes.',
  'ExplorerInput.eval_tasksets':
    'Tasksets evaluated every `explorer.eval_interval` steps (and in `bench` mode). Each needs a `path`; metrics are logged per taskset name.',
  'ExplorerInput.default_workflow_type': 'Workflow used by any taskset that leaves `default_workflow_type` unset.',
  'ExplorerInput.default_eval_workflow_type':
    'Workflow used by eval tasksets that leave `default_workflow_type` unset; for them it takes precedence over `default_workflow_type`.',
  'ExplorerInput.default_reward_fn_type':
    'Reward function used by any taskset that leaves `default_reward_fn_type` unset.',
  'ExplorerInput.system_prompt':
    'System prompt copied into tasksets that have none. Removed; set `format.system_prompt` on each taskset.',
  'ExplorerInput.reply_prefix':
    'Assistant reply prefix copied into tasksets that have none. Removed; set `format.reply_prefix` on each taskset.',
  'ExplorerInput.tasksets':
    'Several training tasksets whose tasks are mixed into each explorer batch (each with its own `data_selector`). Use instead of `taskset`, not together with it.',
  // TrainerInput
  'TrainerInput.experience_buffer':
    'Buffer the trainer reads from; normally also where the explorer writes. null = an automatic `queue` named `experience_buffer`. In `train` mode it is the training data (e.g. an SFT/DPO dataset or an SQL buffer).',
  'TrainerInput.sft_warmup_dataset':
    'SFT dataset for warm-up before RL. Removed; model the warm-up as a `stages` entry with `algorithm_type: sft`.',
  'TrainerInput.sft_warmup_steps':
    'Number of SFT warm-up steps before RL. Removed; use a `stages` entry (e.g. `mode: train`, `algorithm_type: sft`, `buffer.total_steps`).',
  'TrainerInput.auxiliary_buffers':
    'Extra named buffers the trainer reads, e.g. `sft_dataset` for the `mix` algorithm. Each entry needs a `path`.',
  // BufferConfig
  'BufferConfig.batch_size':
    'Tasks read per explorer step. Do not multiply by `algorithm.repeat_times`; each task is rolled out that many times.',
  'BufferConfig.train_batch_size':
    'Experiences per trainer step (one optimizer update per PPO epoch). 0 = `batch_size` × `algorithm.repeat_times`; must be set in `train` mode and for `sft`/`dpo`. Should divide evenly across trainer GPUs.',
  'BufferConfig.total_epochs':
    'Passes over the training taskset (or the training dataset in `train` mode). Ignored when `total_steps` is set.',
  'BufferConfig.total_steps':
    'Number of batches to read in total; when set it overrides `total_epochs`. null = run for `total_epochs`.',
  'BufferConfig.explorer_input': 'Tasksets read by the explorer and default workflow/reward names.',
  'BufferConfig.trainer_input': 'Experience buffer(s) read by the trainer.',
  'BufferConfig.explorer_output':
    'Not read by Trinity; the explorer writes to `trainer_input.experience_buffer`. Do not set.',
  'BufferConfig.tokenizer_path':
    'Tokenizer location. Filled by Trinity from `model.model_path` where used; do not set.',
  'BufferConfig.pad_token_id':
    'Padding token id, taken by Trinity from the tokenizer (end-of-sequence token if there is none); do not set. Later releases read it from the tokenizer directly.',
  'BufferConfig.cache_dir':
    'Directory for default buffer files (`<checkpoint_job_dir>/buffer`). Set by Trinity; do not set.',
  // ExplorerConfig
  'ExplorerConfig.name':
    "Name of the explorer's Ray actor; also prefixes its model actors and its monitor run. Must be unique within the Ray namespace.",
  'ExplorerConfig.runner_per_model':
    'Workflow runners started per rollout engine; total runners = this × `rollout_model.engine_num`. Capped at `ceil(batch_size / engine_num)` for `asynchronous` and `multi-threading` modes.',
  'ExplorerConfig.max_timeout':
    'Seconds one task (workflow run) may take before it is treated as failed. A step waits at most this × (`max_retry_times` + 1).',
  'ExplorerConfig.max_retry_times': 'How many times a task is retried after failing or timing out.',
  'ExplorerConfig.env_vars': 'Environment variables set in every workflow runner process.',
  'ExplorerConfig.max_repeat_times_per_runner':
    "Split a task's `repeat_times` rollouts into sub-tasks of at most this many runs, spread over runners. null = one runner does all repeats. Most useful with `concurrent_mode: sequential`.",
  'ExplorerConfig.runner_num': 'Deprecated and ignored (a warning is logged); use `runner_per_model`.',
  'ExplorerConfig.rollout_model': 'The vLLM engines that serve the policy being trained for rollouts.',
  'ExplorerConfig.auxiliary_models':
    'Extra models served alongside the policy for workflows or pipeline operators (e.g. a judge or reward model). Each needs `model_path`; they are not trained.',
  'ExplorerConfig.eval_interval':
    'Explorer steps between evaluations on `eval_tasksets`. Rounded to a multiple of `synchronizer.sync_interval`.',
  'ExplorerConfig.eval_on_startup':
    'Evaluate the initial model at step 0. Not repeated when resuming from a checkpoint.',
  'ExplorerConfig.bench_on_latest_checkpoint':
    'In `bench` mode, evaluate only the latest checkpoint instead of every saved checkpoint in turn.',
  'ExplorerConfig.api_port': 'Port of the `serve`-mode OpenAI-compatible server. Replaced by `proxy_port`.',
  'ExplorerConfig.listen_address': 'Network address the `serve`-mode server binds to; `0.0.0.0` = all interfaces.',
  'ExplorerConfig.service_status_check_interval':
    'Seconds between `serve`-mode checks for a newer model version to load (and collection of recorded experiences).',
  'ExplorerConfig.min_running_model_num':
    'In `serve` mode, how many engines keep serving while the others reload newer weights.',
  'ExplorerConfig.proxy_port': 'Port of the `serve`-mode OpenAI-compatible proxy server.',
  'ExplorerConfig.db_url':
    'Database URL where the `serve`-mode proxy records request history. null = `sqlite:///<buffer.cache_dir>/proxy_history.db`.',
  'ExplorerConfig.over_rollout':
    'Experimental: finish a step before every task is done to avoid waiting on stragglers.',
  'ExplorerConfig.dynamic_timeout': 'Experimental: adapt the step timeout to observed task durations.',
  'ExplorerConfig.runner_state_report_interval':
    'Seconds between runner status reports printed by the explorer; 0 = disabled. Use 10 or more to keep overhead low.',
  'ExplorerConfig.concurrent_mode':
    'How a runner executes the repeats of a task: `sequential` (one at a time, works with any workflow), `asynchronous` (needs async, state-free workflows) or `multi-threading` (needs thread-safe workflows).',
  // TrainerConfig
  'TrainerConfig.name': "Name of the trainer's Ray actor and its monitor run. Must be unique within the Ray namespace.",
  'TrainerConfig.trainer_type':
    'Training backend: `verl` or `tinker` (set automatically when `model.tinker.enable` is on).',
  'TrainerConfig.save_interval': 'Trainer steps between checkpoints; 0 = save only at the end of training.',
  'TrainerConfig.enable_preview': 'Log a sample of the trained experiences as a table to the monitor each step.',
  'TrainerConfig.actor_grad_clip':
    'Gradient-norm clip for the actor, copied into the veRL actor config. Replaced by `grad_clip`.',
  'TrainerConfig.trainer_config':
    "Inline veRL trainer configuration (`actor_rollout_ref`, `critic`, `trainer`, ...) merged over veRL's defaults; unknown keys are errors. Empty = defaults (older releases require this or `trainer_config_path`).",
  'TrainerConfig.trainer_config_path':
    'Path to a separate veRL YAML file. Deprecated: recent releases reject it; put the content under `trainer_config`.',
  'TrainerConfig.total_steps': 'Stop training after this many trainer steps. null = train until the data runs out.',
  'TrainerConfig.save_strategy':
    'How concurrent checkpoint writes are serialised: `single_thread`, `single_process`, `single_node` or `unrestricted` (no restriction, fastest).',
  'TrainerConfig.grad_clip':
    'Maximum gradient norm for actor and critic updates, used unless `trainer_config` sets its own.',
  'TrainerConfig.use_dynamic_bsz':
    'Pack micro-batches by token count (up to `max_token_len_per_gpu`) instead of a fixed number of samples.',
  'TrainerConfig.max_token_len_per_gpu':
    'Tokens per GPU in one forward/backward pass when `use_dynamic_bsz` is on. null = `ceil(2 * model.max_model_len / ulysses_sequence_parallel_size)`.',
  'TrainerConfig.ulysses_sequence_parallel_size':
    'GPUs across which one sequence is split (Ulysses sequence parallelism); 1 = off. Must be 1 in `colocate` mode.',
  'TrainerConfig.fix_actor_microbatch_loss_scale':
    'Experimental: with `token-mean` loss aggregation, weight micro-batch losses by their token share of the whole mini-batch so gradient accumulation matches one large batch.',
  'TrainerConfig.trainer_strategy':
    'Distributed training strategy: `fsdp`, `fsdp2` or `megatron`. Used for actor, reference and critic unless `trainer_config` sets one.',
  'TrainerConfig.save_hf_checkpoint':
    'When to also save Hugging Face-format weights: `last` (final checkpoint only), `always` or `never`. HF saves cost time, disk and GPU memory; multi-stage runs force `last`.',
  'TrainerConfig.max_checkpoints_to_keep':
    'Keep only this many most recent checkpoints, deleting older ones. null (up to v0.5.2) or 0 (main) = keep all.',
  // MonitorConfig
  'MonitorConfig.monitor_type':
    'Metrics backend: `tensorboard`, `wandb`, `mlflow` or `swanlab`. Explorer and trainer log as separate runs.',
  'MonitorConfig.monitor_args':
    "Backend options, e.g. `base_url` / `api_key` for wandb or `uri` / `username` / `password` for mlflow. null = the backend's defaults.",
  'MonitorConfig.enable_ray_timeline':
    'Write a Ray timeline profile to `timeline.json` in the monitor directory (viewable in `chrome://tracing`).',
  'MonitorConfig.cache_dir': 'Monitor output directory (`<checkpoint_job_dir>/monitor`). Set by Trinity; do not set.',
  'MonitorConfig.detailed_stats': 'Log mean, std, max and min of each evaluation metric instead of only the mean.',
  // SynchronizerConfig
  'SynchronizerConfig.sync_method':
    'How weights reach the rollout engines: `nccl` (direct GPU broadcast, `both` mode only), `checkpoint` (via saved checkpoints; used by other modes and with LoRA) or `memory` (through Ray; used by `colocate`). Trinity switches unsupported choices automatically.',
  'SynchronizerConfig.sync_style':
    'When syncs happen: `fixed` (every `sync_interval` steps on both sides), `explorer_driven` or `trainer_driven` (that side triggers after `sync_interval` of its own steps). Older names: `dynamic_by_explorer`, `dynamic_by_trainer`.',
  'SynchronizerConfig.sync_interval':
    'Steps between weight syncs; must be positive. 1 = the explorer always uses the newest weights; larger values make rollouts more off-policy.',
  'SynchronizerConfig.sync_offset':
    'Explorer steps run before the first sync, letting rollout run that many steps ahead of training (pipelining). Only for `fixed` style.',
  'SynchronizerConfig.sync_timeout':
    'Seconds to wait for the other side (or for a new checkpoint) during a weight sync before giving up.',
  'SynchronizerConfig.wait_for_checkpoint': 'Reserved; not used by Trinity yet.',
  'SynchronizerConfig.explorer_world_size':
    'Number of rollout GPUs joining the NCCL weight-sync group. Set by Trinity; do not set.',
  'SynchronizerConfig.ray_namespace': 'Set by Trinity from the root `ray_namespace`; do not set.',
  // DataJuicerServiceConfig
  'DataJuicerServiceConfig.server_url': 'URL of an already running Data-Juicer server.',
  'DataJuicerServiceConfig.auto_start': 'Start a local Data-Juicer server automatically instead of using `server_url`.',
  'DataJuicerServiceConfig.port': 'Port for the auto-started Data-Juicer server. null = a random free port.',
  // ServiceConfig
  'ServiceConfig.data_juicer':
    'Data-Juicer server used by `data_juicer` experience-pipeline operators. null = no shared service.',
  // LogConfig
  'LogConfig.level': "Log level of Trinity's Ray actors: `DEBUG`, `INFO`, `WARNING` or `ERROR`.",
  'LogConfig.group_by_node':
    "Put each actor's log file in a sub-folder named after its node IP instead of directly in the log directory.",
  'LogConfig.save_dir': 'Log directory (`<checkpoint_job_dir>/log`). Set by Trinity; do not set.',
  // Config
  'Config.mode':
    'What to launch: `both` (explorer + trainer), `explore`, `train`, `bench` (evaluate checkpoints), `serve` (OpenAI-compatible rollout service) or `colocate` (explorer and trainer sharing a single GPU).',
  'Config.project':
    'Project name: a directory level under `checkpoint_root_dir` and the project/experiment name in the monitor.',
  'Config.group': 'Optional group name: an extra directory level between project and name, and the run group in wandb.',
  'Config.name':
    'Experiment name: the last directory level of the job directory and the run name in the monitor. Renamed to `<name>_<timestamp>` when the job directory is non-empty and `continue_from_checkpoint` is off.',
  'Config.checkpoint_root_dir':
    'Root directory for checkpoints, buffers, logs and monitor files; a relative path is resolved against the working directory. The job directory is `<checkpoint_root_dir>/<project>/<group>/<name>`.',
  'Config.checkpoint_job_dir':
    "This experiment's directory. Set by Trinity from `checkpoint_root_dir`, `project`, `group` and `name`; do not set.",
  'Config.ray_namespace':
    'Ray namespace of all actors of the run. Empty = `<project>/<name>`. Separately launched explorer and trainer processes must share it.',
  'Config.continue_from_checkpoint':
    'Resume from the latest checkpoint in the job directory if one exists. When off and the directory is not empty, a new experiment with a timestamped name is started instead (`bench` always resumes).',
  'Config.algorithm': 'Algorithm, optimizer and loss settings.',
  'Config.data_processor': 'Task and experience pre/post-processing pipelines.',
  'Config.model': 'The trained model, sequence lengths and sampling defaults.',
  'Config.cluster': 'Ray cluster address and node/GPU counts.',
  'Config.buffer': 'Batch sizes, training length, tasksets and experience buffers.',
  'Config.explorer': 'Rollout models, workflow runners and evaluation.',
  'Config.trainer': 'Training backend, checkpointing and veRL settings.',
  'Config.monitor': 'Metrics logging backend.',
  'Config.synchronizer': 'Weight synchronisation between trainer and explorer.',
  'Config.service': 'External services such as Data-Juicer.',
  'Config.log': 'Logging level and layout.',
  'Config.stages':
    "Multi-stage run: stages execute in order, each with its own overrides, and each later stage starts from the previous stage's final Hugging Face checkpoint. Completed stages are skipped on restart.",
  'Config.ignore_validator_suggestions':
    'Skip the GPU-memory estimate that otherwise stops `train`/`both` runs it considers unsafe ("Unsafe GPU memory usage").',
  // LoRAConfig
  'LoRAConfig.name': 'Adapter name used when requests are sent to the LoRA in vLLM.',
  'LoRAConfig.path':
    'Existing LoRA adapter directory to start from. null = Trinity creates a fresh adapter in the job directory.',
  'LoRAConfig.base_model_name': 'Base-model name registered with vLLM for the adapter. null = none.',
  'LoRAConfig.lora_rank': 'Rank of the LoRA matrices; higher means more trainable parameters.',
  'LoRAConfig.lora_alpha': 'LoRA scaling factor; the update is scaled by `lora_alpha / lora_rank`.',
  'LoRAConfig.lora_dtype':
    "Data type of the adapter weights (`auto` = follow the model). Declared but not passed on by Trinity's code.",
  'LoRAConfig.target_modules': 'Modules that receive LoRA adapters; `all-linear` = every linear layer.',
  'LoRAConfig.exclude_modules': 'Modules to leave without adapters even if matched by `target_modules`. null = none.',
  'LoRAConfig.is_dummy': 'Marks an adapter Trinity created itself because `path` was null. Set by Trinity; do not set.',
  // StageConfig
  'StageConfig.stage_name': 'Required, unique name of the stage; the stage runs as experiment `<name>/<stage_name>`.',
  'StageConfig.mode': 'Run mode for this stage (e.g. `train` for SFT warm-up, `both` for RL). null = the root `mode`.',
  'StageConfig.algorithm':
    'Algorithm section for this stage. null = the root one; if given it replaces the root section as a whole (keys left out take their defaults, not the root values).',
  'StageConfig.buffer':
    'Buffer section for this stage. null = the root one; if given it replaces the root section as a whole.',
  'StageConfig.data_processor':
    'Data-processor section for this stage. null = the root one; if given it replaces the root section as a whole.',
  'StageConfig.explorer':
    'Explorer section for this stage. null = the root one; if given it replaces the root section as a whole.',
  'StageConfig.trainer':
    'Trainer section for this stage. null = the root one; if given it replaces the root section as a whole.',
  // OptimizerConfig
  'OptimizerConfig.lr': 'Peak learning rate of the actor.',
  'OptimizerConfig.lr_warmup_steps':
    'Trainer steps of learning-rate warm-up; -1 = use `lr_warmup_steps_ratio` instead.',
  'OptimizerConfig.lr_warmup_steps_ratio':
    'Warm-up length as a fraction of the total training steps, used when `lr_warmup_steps` is -1. Only meaningful when `trainer.total_steps` is set.',
  'OptimizerConfig.min_lr_ratio':
    'Lowest learning rate as a fraction of `lr` for the `cosine` schedule, which also starts its warm-up from this fraction.',
  'OptimizerConfig.warmup_style': 'Deprecated; if set it is copied into `lr_scheduler_type` with a warning.',
  'OptimizerConfig.optimizer_type':
    'Optimizer: `adam` (AdamW under FSDP), `adamw` or `sgd`. On main an FSDP trainer also takes any `torch.optim` class by its exact name (`RMSprop`, `NAdam`, ...); Megatron takes its own names (`adam`, `sgd`).',
  'OptimizerConfig.betas': 'Adam `beta1` and `beta2` coefficients.',
  'OptimizerConfig.weight_decay': 'Weight-decay coefficient of the optimizer.',
  'OptimizerConfig.clip_grad':
    'Gradient-norm clip passed to the Megatron optimizer. FSDP training uses `trainer.grad_clip`.',
  'OptimizerConfig.lr_warmup_init':
    'Megatron: learning rate at the start of warm-up. Removed; now derived as `min_lr_ratio` × `lr`.',
  'OptimizerConfig.lr_decay_steps':
    'Megatron: steps over which the learning rate decays. Removed; now derived from `trainer.total_steps`.',
  'OptimizerConfig.lr_decay_style': 'Megatron: learning-rate decay style. Removed; now taken from `lr_scheduler_type`.',
  'OptimizerConfig.min_lr': 'Megatron: minimum learning rate. Removed; now derived as `min_lr_ratio` × `lr`.',
  'OptimizerConfig.lr_scheduler_type': 'Learning-rate schedule after warm-up: `constant` or `cosine`.',
  // TaskSelectorConfig
  'TaskSelectorConfig.selector_type':
    'Task selection strategy: `sequential`, `shuffle`, `random`, `offline_easy2hard` or `difficulty_based`. Replaced by `data_selector.selector_type`.',
  'TaskSelectorConfig.seed': 'Random seed for `shuffle` / `random` selection. Replaced by `data_selector.seed`.',
  'TaskSelectorConfig.feature_keys':
    'Dataset columns used as difficulty features by curriculum selectors. Replaced by `data_selector.feature_keys`.',
  'TaskSelectorConfig.kwargs': 'Extra selector options. Replaced by `data_selector.kwargs`.',
  // ReplayBufferConfig
  'ReplayBufferConfig.enable':
    'Turn the `queue` buffer into a priority queue: the highest-priority experiences are served first and can be reused.',
  'ReplayBufferConfig.priority_fn':
    'Priority function: `linear_decay` (newer model version and fewer uses = higher priority) or `decay_limit_randomization` (adds a use-count limit and random noise).',
  'ReplayBufferConfig.reuse_cooldown_time':
    'Seconds before a served experience is put back for reuse. null = experiences are never reused.',
  'ReplayBufferConfig.priority_fn_args':
    'Arguments of the priority function, e.g. `decay` (priority = model version - decay × use count); `use_count_limit` and `sigma` for `decay_limit_randomization`.',
  // TasksetConfig
  'TasksetConfig.name':
    'Name of the taskset, used for its Ray actor and in evaluation metric names; must be unique. Empty = `taskset_<i>` / `eval_taskset_<i>`.',
  'TasksetConfig.storage_type':
    'Where tasks come from: `file` (recommended; anything Hugging Face `load_dataset` can read) or `sql` (a database table).',
  'TasksetConfig.path':
    'Required. `file`: Hugging Face dataset id, local directory or data file (`.jsonl`, `.parquet`, ...); `sql`: a database URL such as `sqlite:///tasks.db`.',
  'TasksetConfig.default_workflow_type':
    "Workflow (registered name, e.g. `math_workflow`) run on this taskset's tasks unless a row names one via `format.workflow_key`. null = `buffer.explorer_input.default_workflow_type` (for eval tasksets, `default_eval_workflow_type` first).",
  'TasksetConfig.default_reward_fn_type':
    'Reward function (registered name, e.g. `math_reward`) used for this taskset unless a row names one via `format.reward_fn_key`. null = `buffer.explorer_input.default_reward_fn_type`.',
  'TasksetConfig.rollout_args':
    'Sampling parameters (temperature, top-p, max tokens, ...) for rollouts on this taskset; unset values come from `model`.',
  'TasksetConfig.workflow_args': 'Free-form keyword arguments passed to the workflow of every task in this taskset.',
  'TasksetConfig.reward_fn_args': 'Free-form keyword arguments used to construct the reward function for this taskset.',
  'TasksetConfig.task_selector': 'Deprecated alias of `data_selector`; if set it is copied there with a warning.',
  'TasksetConfig.split':
    'Dataset split to load for `file` storage (the `split` argument of Hugging Face `load_dataset`).',
  'TasksetConfig.subset_name':
    'Dataset configuration/subset for `file` storage (the `name` argument of Hugging Face `load_dataset`). null = none.',
  'TasksetConfig.format':
    'Which columns hold the prompt, the reference answer, the system prompt, images, and per-row workflow/reward names.',
  'TasksetConfig.max_retry_times': 'For `sql` storage: how many times a failed database operation is retried.',
  'TasksetConfig.max_retry_interval': 'For `sql` storage: seconds to wait between database retries.',
  'TasksetConfig.enable_progress_bar': 'Show a progress bar while the dataset is loaded and read.',
  'TasksetConfig.index':
    'Row offset to resume reading from. Set by Trinity from the checkpointed explorer state; do not set.',
  'TasksetConfig.repeat_times':
    'Rollouts per task. Only honoured for eval tasksets; training tasksets always use `algorithm.repeat_times`.',
  'TasksetConfig.is_eval': 'Whether this is an evaluation taskset. Set by Trinity; do not set.',
  'TasksetConfig.batch_size': 'Tasks read per step. Set by Trinity from `buffer.batch_size`; do not set.',
  'TasksetConfig.total_epochs':
    'Passes over the data. Set by Trinity from `buffer.total_epochs` (eval tasksets are read once); do not set.',
  'TasksetConfig.total_steps': 'Number of batches to read. Set by Trinity from `buffer.total_steps`; do not set.',
  'TasksetConfig.ray_namespace': 'Set by Trinity from the root `ray_namespace`; do not set.',
  'TasksetConfig.data_selector':
    'How tasks are picked each step: in order, shuffled, random, or by a difficulty curriculum.',
  // ExperienceBufferConfig
  'ExperienceBufferConfig.name':
    'Name of the buffer, used for its Ray actor and SQL table; must be unique. Empty = `experience_buffer`.',
  'ExperienceBufferConfig.storage_type':
    '`queue` (streams experiences from explorer to trainer), `sql` (persistent database, e.g. for separately launched explorer and trainer) or `file` (a dataset for `train` mode such as SFT/DPO data; replaced by `queue` in `both` mode).',
  'ExperienceBufferConfig.path':
    '`queue`: optional `sqlite:///` URL or `.jsonl` file where experiences are also persisted; `sql`: database URL; `file`: dataset path or Hugging Face id. Empty = a file under `buffer.cache_dir`; auxiliary buffers require it.',
  'ExperienceBufferConfig.capacity':
    'Maximum number of entries a `queue` buffer holds. When full, writers wait (plain queue) or the lowest-priority entries are dropped (replay buffer).',
  'ExperienceBufferConfig.max_read_timeout':
    'Seconds the trainer waits to collect a full batch from a `queue` or `sql` buffer before the read times out.',
  'ExperienceBufferConfig.replay_buffer':
    'Priority-queue / experience-replay settings; only used with `storage_type: queue`.',
  'ExperienceBufferConfig.max_retry_times': 'For `sql` storage: how many times a failed database operation is retried.',
  'ExperienceBufferConfig.max_retry_interval': 'For `sql` storage: seconds to wait between database retries.',
  'ExperienceBufferConfig.split':
    'Dataset split to load for `file` storage (the `split` argument of Hugging Face `load_dataset`).',
  'ExperienceBufferConfig.subset_name':
    'Dataset configuration/subset for `file` storage (the `name` argument of Hugging Face `load_dataset`). null = none.',
  'ExperienceBufferConfig.format':
    'How SFT/DPO dataset rows are turned into training samples (message list or prompt/response columns, chosen/rejected, tools, chat template).',
  'ExperienceBufferConfig.enable_progress_bar': 'Show a progress bar while a `file` dataset is loaded and read.',
  'ExperienceBufferConfig.schema_type':
    'Record schema (`experience`, `sft` or `dpo`). Set by Trinity from `algorithm.algorithm_type`; do not set.',
  'ExperienceBufferConfig.index': 'Read offset used when resuming. Set by Trinity; do not set.',
  'ExperienceBufferConfig.batch_size':
    'Experiences read per trainer step. Set by Trinity from `buffer.train_batch_size`; do not set.',
  'ExperienceBufferConfig.tokenizer_path':
    'Tokenizer used to format SFT/DPO data. Set by Trinity from `model.model_path`; do not set.',
  'ExperienceBufferConfig.total_epochs':
    'Passes over a dataset buffer in `train` mode. Set by Trinity from `buffer.total_epochs`; do not set.',
  'ExperienceBufferConfig.total_steps':
    'Number of batches to read in `train` mode. Set by Trinity from `buffer.total_steps`; do not set.',
  'ExperienceBufferConfig.ray_namespace': 'Set by Trinity from the root `ray_namespace`; do not set.',
  'ExperienceBufferConfig.data_selector':
    'How samples are picked from a `file` dataset buffer each step (sequential, shuffled, random, curriculum).',
  // OverRolloutConfig
  'OverRolloutConfig.ratio':
    "Fraction of a step's tasks that may be left unfinished: the step waits for `(1 - ratio) * batch_size` tasks. 0 = wait for all; must be below 1 and needs a non-`fixed` `synchronizer.sync_style`.",
  'OverRolloutConfig.wait_after_min':
    'Seconds to keep waiting for the remaining tasks after the minimum number has finished, before they are cancelled.',
  'OverRolloutConfig.return_partial_tasks':
    'When unfinished tasks are cancelled, still return the runs that did finish (e.g. part of a GRPO group) instead of dropping the whole task.',
  // DynamicTimeoutConfig
  'DynamicTimeoutConfig.enable':
    'Turn on the dynamic step timeout; it takes effect once a batch worth of tasks has completed.',
  'DynamicTimeoutConfig.ratio':
    'Multiplier: the timeout becomes the smaller of the normal timeout and the average task time × this.',
  // TinkerConfig
  'TinkerConfig.enable':
    'Train and sample through the Tinker service. Switches engines and trainer to `tinker`, sync to `checkpoint`, and ignores `lora_configs`; algorithms with a critic are not supported.',
  'TinkerConfig.rank': 'LoRA rank used by Tinker training.',
  'TinkerConfig.seed': 'Random seed for the Tinker training client. null = not fixed.',
  'TinkerConfig.train_mlp': 'Attach LoRA to the MLP layers.',
  'TinkerConfig.train_attn': 'Attach LoRA to the attention layers.',
  'TinkerConfig.train_unembed': 'Attach LoRA to the output (unembedding) layer.',
  'TinkerConfig.base_url': 'URL of the Tinker service (exported as `TINKER_BASE_URL`). null = the client default.',
  // DataSelectorConfig
  'DataSelectorConfig.selector_type':
    'How samples are picked: `sequential` (in order), `shuffle` (reshuffled each epoch), `random` (independent random batches), `offline_easy2hard` (sorted by `feature_keys`, easiest first) or `difficulty_based` (adaptive, from reward feedback).',
  'DataSelectorConfig.seed': 'Random seed for `shuffle`, `random` and sampling-based selectors.',
  'DataSelectorConfig.feature_keys':
    'Dataset columns used as difficulty features: `offline_easy2hard` sorts by them (higher = easier); `difficulty_based` needs exactly two.',
  'DataSelectorConfig.kwargs':
    'Extra selector options, e.g. `target_reward`, `tau`, `do_sample` for `difficulty_based`.',
  // ExternalModelConfig
  'ExternalModelConfig.enable':
    'Use an OpenAI-compatible API model as the rollout model. Only allowed in `bench` mode; no local GPUs are allocated for it.',
  'ExternalModelConfig.base_url_env': 'Name of the environment variable that holds the API base URL.',
  'ExternalModelConfig.api_key_env': 'Name of the environment variable that holds the API key.',
  'ExternalModelConfig.model_name': 'Model name sent to the API. Required when `enable` is on.',
  // Fields added on main (read at Trinity-RFT f3c8dec)
  'DynamicTimeoutConfig.warmup_min_steps':
    'Fully observed explorer steps to wait for before the dynamic timeout takes effect.',
  'InferenceModelConfig.data_parallel_size':
    'Data-parallel replicas inside one engine (vLLM/SGLang). GPUs per engine = `tensor_parallel_size` × `data_parallel_size` × `pipeline_parallel_size`.',
  'InferenceModelConfig.pipeline_parallel_size':
    'Pipeline-parallel stages of one engine. An engine larger than a node must use a whole number of nodes.',
  'InferenceModelConfig.enable_expert_parallel': 'Spread the experts of a MoE model across the GPUs of an engine.',
  'InferenceModelConfig.gpu_per_engine':
    'GPUs of one engine (`tensor_parallel_size` × `data_parallel_size` × `pipeline_parallel_size`; 0 for `tinker` / `external`). Set by Trinity; do not set.',
  'InferenceModelConfig.extra_engine_args':
    'Extra keyword arguments passed as they are to the vLLM engine arguments or SGLang server arguments.',
  'InferenceModelConfig.enable_multimodal': 'Serve a multi-modal model (image/video inputs).',
  'InferenceModelConfig.base_port':
    "First port of the engines' OpenAI API servers; engine `i` listens on `base_port + i`. null = a random free port.",
  'InferenceModelConfig.api_key': "API key the engines' OpenAI API servers expect.",
  'InferenceModelConfig.nnodes':
    'Nodes one engine spans (`gpu_per_engine` / `cluster.gpu_per_node` when the engine is larger than a node). Set by Trinity; do not set.',
  'InferenceModelConfig.node_rank': 'Rank of this node within a multi-node engine. Set by Trinity; do not set.',
  'InferenceModelConfig.enable_return_routed_experts':
    'Return the routed experts of a MoE model with each response. Set by Trinity from `algorithm.enable_router_replay`; do not set.',
  'InferenceModelConfig.weight_sync_buffer_size':
    'Size in MB of the buffer weights are sent through in batches during an NCCL weight sync; bounds the extra GPU memory a sync takes.',
  'InferenceModelConfig.engine_id': 'Index of the engine among its replicas. Set by Trinity; do not set.',
  'InferenceModelConfig.ray_actor_name': "Name of the engine's Ray actor. Set by Trinity; do not set.",
  'InferenceModelConfig.sync_method': 'Set by Trinity from `synchronizer.sync_method`; do not set.',
  'InferenceModelConfig.checkpoint_job_dir': 'Set by Trinity from the root `checkpoint_job_dir`; do not set.',
  'AlgorithmConfig.enable_router_replay':
    'Rollout router replay for MoE models: the trainer replays the experts the rollout engine routed each token to.',
  'AlgorithmConfig.bypass_old_logprobs':
    "Use the rollout engine's log-probs as the old policy's instead of recomputing them in the trainer.",
  'AlgorithmConfig.rollout_correction':
    'Off-policy correction of the rollout/trainer mismatch (importance weights, rejection sampling), as a dict (`bypass_mode`, `rollout_is`, `rollout_rs`, ...). null = off.',
  'ExplorerConfig.runner_prepare_concurrency':
    'How many workflow runners may start up at the same time (values below 1 count as 1).',
  'ExplorerConfig.runner_prepare_max_retries': 'How often a workflow runner that crashes while starting is retried.',
  'ExplorerConfig.max_inflight_batches':
    'With `synchronizer.sync_style: fully_async`, how many train batches the explorer keeps in flight before it waits for the oldest.',
  'TrainerConfig.use_remove_padding':
    'Pack sequences without padding tokens in the trainer (veRL `use_remove_padding`).',
  'TrainerConfig.balance_batch':
    'Reorder each batch so every data-parallel rank gets a similar number of tokens (for algorithms that allow it).',
  'TrainerConfig.critic_warmup': 'Steps during which only the critic is updated, before the actor starts training.',
  'TrainerConfig.param_offload': 'Offload model parameters to CPU memory between uses.',
  'TrainerConfig.optimizer_offload': 'Offload optimizer states to CPU memory.',
  'TrainerConfig.grad_offload': 'Offload gradients to CPU memory.',
  'TrainerConfig.offload_policy': "FSDP2's CPU offload policy (parameters, gradients and optimizer step on CPU).",
  'TrainerConfig.megatron': 'Megatron-Core parallel sizes, used when `trainer_strategy` is `megatron`.',
  'TrainerConfig.trust_remote_code': 'Set by Trinity from `model.trust_remote_code`; do not set.',
  'MegatronParallelConfig.tensor_model_parallel_size': 'Megatron tensor-parallel size.',
  'MegatronParallelConfig.pipeline_model_parallel_size': 'Megatron pipeline-parallel size.',
  'MegatronParallelConfig.virtual_pipeline_model_parallel_size':
    'Virtual pipeline stages per pipeline rank (interleaved schedule). null = off.',
  'MegatronParallelConfig.expert_model_parallel_size': 'Megatron expert-parallel size (MoE models).',
  'MegatronParallelConfig.expert_tensor_parallel_size':
    'Tensor-parallel size inside each expert. null = Megatron default.',
  'MegatronParallelConfig.context_parallel_size':
    'Megatron context-parallel size; with Megatron an unset `max_token_len_per_gpu` becomes ceil(2 × `max_model_len` / this).',
  'MegatronParallelConfig.sequence_parallel': 'Megatron sequence parallelism alongside tensor parallelism.',
  'SynchronizerConfig.explorer_sync_interval':
    'Explorer steps between weight syncs on the explorer side; must be positive. null = `sync_interval`.',
  'SynchronizerConfig.trainer_sync_interval':
    'Trainer steps between weight syncs on the trainer side; must be positive. null = `sync_interval`.',
  'SynchronizerConfig.group_name': 'Name of the NCCL process group used for weight syncs.',
};
