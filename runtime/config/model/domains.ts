/**
 * Value domains: what the libraries behind Trinity accept for a field beyond its Python type, each derived from
 * the code that raises (or silently clamps), named in `source`. Keyed `Section.field`; a list gives per-release
 * domains (later entries win where ranges overlap). Checked after interpolation by check/domains.ts, emitted as
 * JSON Schema bounds by schema-gen.ts and shown on hover.
 */
import type { Release } from '../releases';
import type { Domain } from './types';

type Ranged = { since?: Release; until?: Release; domain: Domain };

// vLLM's SamplingParams._verify_args (vllm/sampling_params.py) raises ValueError on these when a request is built:
// on the first rollout, after the GPUs are allocated.
const SP = 'vLLM `SamplingParams._verify_args` (vllm/sampling_params.py) raises';
// vLLM after the newest one Trinity allows (vllm-project/vllm PR 44965, 00388f6) also raises above 2; not modelled.
const temperature: Domain = { min: 0, severity: 'error', source: `${SP} "temperature must be non-negative"` };
const topP: Domain = {
  min: 0,
  minExclusive: true,
  max: 1,
  severity: 'error',
  source: `${SP} "top_p must be in (0, 1]"`,
};
// -1 disables top-k in every vLLM Trinity pins; newer vLLM also reads 0 as "disabled" (and raises only below -1).
const topK: Domain = {
  min: 1,
  except: [-1, 0],
  severity: 'error',
  source: `${SP} "top_k must be -1 (disable), or at least 1" (newer vLLM: "top_k must be 0 (disable), or at least 1")`,
};
// Newer vLLM reads -1 as "the whole vocabulary", which is past the same limit of 20 unless max_logprobs is raised.
const LOGPROBS = `${SP} "logprobs must be non-negative"; its request check (vllm/v1/engine/processor.py \`_validate_logprobs\`, later \`SamplingParams._validate_logprobs\`) raises "Requested sample logprobs of N, which is greater than max allowed: 20": Trinity never sets vLLM's \`max_logprobs\` (default 20)`;
const logprobsUpTo052: Domain = { min: 0, max: 20, severity: 'error', source: LOGPROBS };
const logprobs: readonly Ranged[] = [
  { domain: logprobsUpTo052 },
  {
    since: 'main',
    domain: {
      min: 0,
      max: 20,
      severity: 'warning',
      source: `${LOGPROBS}, unless \`extra_engine_args\` (main) raises \`max_logprobs\`, which this check does not read`,
    },
  },
];
const maxTokens: Domain = { min: 1, severity: 'error', source: `${SP} "max_tokens must be at least 1"` };
const minTokens: Domain = {
  min: 0,
  severity: 'error',
  source: `${SP} "min_tokens must be greater than or equal to 0"`,
};
const repetitionPenalty: Domain = {
  min: 0,
  minExclusive: true,
  severity: 'error',
  source: `${SP} "repetition_penalty must be greater than zero"`,
};
const n: Domain = { min: 1, severity: 'error', source: `${SP} "n must be at least 1"` };

// SGLang's `SamplingParams.verify` (python/sglang/srt/sampling/sampling_params.py, 00c17ca) raises ValueError on a
// request to an engine with `engine_type: sglang` (main). Its temperature and top_p bounds are vLLM's; these differ.
const SGL = 'SGLang `SamplingParams.verify` (python/sglang/srt/sampling/sampling_params.py, 00c17ca) raises';
const sglangTopK: Domain = {
  min: 1,
  except: [-1],
  severity: 'error',
  source: `${SGL} "top_k must be -1 (disable) or at least 1" for an SGLang engine: unlike newer vLLM it does not read 0 as "disabled" (a temperature below 1e-6 sets top_k to 1 before the check)`,
};
const sglangRepetitionPenalty: Domain = {
  min: 0,
  minExclusive: true,
  max: 2,
  severity: 'error',
  source: `${SGL} "repetition_penalty must be in (0, 2]" for an SGLang engine (vLLM has no upper bound)`,
};

// vLLM's engine arguments, checked when an engine starts.
const gpuMemory: Domain = {
  min: 0,
  minExclusive: true,
  max: 1,
  severity: 'error',
  source:
    'vLLM `CacheConfig` (vllm/config/cache.py, 002f10e) declares `gpu_memory_utilization` as a pydantic `Field(gt=0, le=1)` (ValidationError); older vLLM (vllm/config.py `CacheConfig._verify_args`) raised "GPU memory utilization must be less than 1.0" above 1, and at 0 no KV cache fits',
};
const dtype: Domain = {
  oneOf: ['auto', 'half', 'float16', 'bfloat16', 'float', 'float32'],
  caseInsensitive: true,
  severity: 'error',
  source: 'vLLM `_get_and_verify_dtype` (vllm/config.py) raises "Unknown dtype" for other names',
};
const tensorParallel: Domain = {
  min: 1,
  severity: 'error',
  source:
    "vLLM `ParallelConfig` sizes an engine's world as tensor_parallel_size × pipeline_parallel_size, and Trinity gives the engine's Ray actor tensor_parallel_size GPUs (trinity/common/models/__init__.py): below 1 no worker holds the model (from main Trinity raises itself, see main's domain)",
};
// From main (f3c8dec) Trinity checks the tensor, data and pipeline parallel sizes of every vLLM/SGLang engine.
const PARALLEL =
  'Trinity\'s explorer check (trinity/common/config_validator.py `ExplorerConfigValidator._validate_inference_parallel_config`, f3c8dec) raises "`<model>.<key>` must be >= 1" for a vLLM or SGLang engine (a `tinker` / `external` engine has its sizes set to 0 instead)';
const modelLen: Domain = {
  min: 1,
  severity: 'error',
  source:
    'Trinity\'s length check (`_check_model_len`; trinity/common/config.py up to v0.4.0, config_validator.py from v0.5.0) derives the response budget from it, and a length below 1 reaches vLLM as `max_tokens` ("max_tokens must be at least 1") or, with prompt truncation on, as `truncate_prompt_tokens` (vLLM `SamplingParams._verify_args`: "truncate_prompt_tokens must be >= 1")',
};

// torch.optim.AdamW.__init__ (torch/optim/adamw.py) raises ValueError on these when the trainer builds its optimizer.
const TORCH = 'torch `AdamW.__init__` (torch/optim/adamw.py) raises';

// veRL's LR schedules (verl/utils/torch_functional.py).
// A bare assert (no message), reached only with the cosine schedule: the constant one never reads min_lr_ratio.
const VERL_LR =
  'veRL `get_cosine_schedule_with_warmup` (verl/utils/torch_functional.py) asserts `0 <= min_lr_ratio <= 1` (AssertionError) when `lr_scheduler_type` is `cosine`; the constant schedule ignores it';
// Megatron takes more schedules than FSDP: the domain is what either accepts; check/rules/trainer.ts narrows it to
// FSDP's two when the trainer runs FSDP.
const scheduler: Domain = {
  oneOf: ['constant', 'cosine', 'linear', 'inverse-square-root', 'WSD'],
  severity: 'error',
  source:
    "Megatron-Core's `OptimizerParamScheduler.get_lr` (megatron/core/optimizer_param_scheduler.py, which veRL's Megatron workers get it as `lr_decay_style`) raises \"decay style is not supported\" for any other; with FSDP only `constant` and `cosine` work (veRL's FSDP workers raise NotImplementedError, and from veRL v0.7.0 (f9c855f) `FSDPOptimizerConfig.__post_init__` asserts it)",
};
export const FSDP_SCHEDULERS = ['constant', 'cosine'] as const;

/**
 * The optimizer names an FSDP trainer on main starts: Trinity maps `adam`/`adamw` to torch's `AdamW` and `sgd` to
 * `SGD` and passes any other name on, which veRL looks up in `torch.optim` (the optimizer classes of torch 2.x,
 * `Muon` from 2.9). check/rules/trainer.ts applies it; Megatron's own set differs by version, so it has none.
 */
export const FSDP_OPTIMIZERS = [
  'adam',
  'adamw',
  'sgd',
  'Adadelta',
  'Adafactor',
  'Adagrad',
  'Adam',
  'AdamW',
  'Adamax',
  'ASGD',
  'LBFGS',
  'Muon',
  'NAdam',
  'RAdam',
  'RMSprop',
  'Rprop',
  'SGD',
  'SparseAdam',
] as const;

const positive = (source: string, severity: Domain['severity'] = 'error'): Domain => ({ min: 1, severity, source });
const nonNegative = (source: string, severity: Domain['severity'] = 'error'): Domain => ({ min: 0, severity, source });

const storageTypes: Ranged[] = [
  {
    since: 'v0.4.0',
    domain: {
      // Case-sensitive: the writer compares with `StorageType.X.value` ("sql", "queue", "file"), the reader
      // registry looks the key up as written.
      oneOf: ['file', 'queue', 'sql'],
      severity: 'error',
      source:
        'Trinity `get_buffer_reader` / `get_buffer_writer` (trinity/buffer/__init__.py) raise ValueError for any other storage type, compared as written (a plain string since v0.4.0; an Enum before)',
    },
  },
];

const GENERATION: Record<string, Domain | readonly Ranged[]> = { temperature, top_p: topP, top_k: topK, logprobs };

export const DOMAINS: Record<string, Domain | readonly Ranged[]> = {
  // rollout_args of a taskset (GenerationConfig) and the model-wide sampling defaults
  ...Object.fromEntries(Object.entries(GENERATION).map(([k, d]) => [`GenerationConfig.${k}`, d])),
  'GenerationConfig.max_tokens': maxTokens,
  'GenerationConfig.n': n,
  ...Object.fromEntries(Object.entries(GENERATION).map(([k, d]) => [`ModelConfig.${k}`, d])),
  'ModelConfig.repetition_penalty': repetitionPenalty,
  'ModelConfig.max_model_len': modelLen,
  'ModelConfig.max_prompt_tokens': modelLen,
  'ModelConfig.max_response_tokens': maxTokens,
  'ModelConfig.min_response_tokens': minTokens,
  // No domain for `max_cpu_loras`: Trinity declares it but never reads it. Its LoRA check
  // (trinity/common/config_validator.py `ExplorerConfigValidator._validate_lora`, 1c35a79; config.py before v0.5.0)
  // gives vLLM only `max_loras` and `max_lora_rank`, so vLLM's `LoRAConfig` check ("max_cpu_loras must be >=
  // max_loras") never sees this value, with or without `lora_configs`.
  // Nothing raises: the frequencies come out infinite (0) or NaN (negative) and generation is garbage.
  'ModelConfig.rope_theta': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      "the model's rotary embedding (transformers / vLLM `get_rope`) computes inv_freq = 1 / theta^(2i/d): theta 0 gives infinite and a negative theta NaN frequencies, without an error",
  },
  ...Object.fromEntries(Object.entries(GENERATION).map(([k, d]) => [`InferenceModelConfig.${k}`, d])),
  'InferenceModelConfig.repetition_penalty': repetitionPenalty,
  'InferenceModelConfig.max_model_len': modelLen,
  'InferenceModelConfig.max_prompt_tokens': modelLen,
  'InferenceModelConfig.max_response_tokens': maxTokens,
  'InferenceModelConfig.min_response_tokens': minTokens,
  'InferenceModelConfig.gpu_memory_utilization': gpuMemory,
  'InferenceModelConfig.dtype': dtype,
  'InferenceModelConfig.tensor_parallel_size': [
    { domain: tensorParallel },
    { since: 'main', domain: positive(PARALLEL) },
  ],
  'InferenceModelConfig.data_parallel_size': positive(PARALLEL),
  'InferenceModelConfig.pipeline_parallel_size': positive(PARALLEL),
  'InferenceModelConfig.engine_num': nonNegative(
    "Trinity's cluster check (trinity/common/config.py) counts rollout GPUs as engine_num × tensor_parallel_size; a negative count breaks the GPU split",
  ),

  // Trinity's own loops and checks (trinity/common/config.py, trinity/explorer, trinity/buffer)
  'BufferConfig.batch_size': positive(
    'Trinity reads `batch_size` tasks per explorer step (trinity/buffer readers); Trinity makes it the actor\'s `ppo_mini_batch_size` (via train_batch_size), which veRL\'s FSDP workers assert "should be larger than 0" after dividing by the data-parallel size (verl/workers/fsdp_workers.py, v0.7.0 f9c855f)',
  ),
  'BufferConfig.train_batch_size': nonNegative(
    'Trinity\'s buffer check (trinity/common/config.py; config_validator.py `BufferConfigValidator` from v0.5.0): 0 means batch_size × repeat_times; a negative size reaches veRL\'s FSDP workers as `ppo_mini_batch_size`, asserted "should be larger than 0" (verl/workers/fsdp_workers.py, v0.7.0 f9c855f)',
  ),
  'BufferConfig.total_epochs': positive(
    "Trinity's readers stop after `total_epochs` passes (trinity/buffer/reader): below 1 the run reads nothing and ends at once",
    'warning',
  ),
  'BufferConfig.total_steps': positive(
    "Trinity's explorer and trainer stop at `total_steps` (trinity/explorer/explorer.py): below 1 the run does nothing",
    'warning',
  ),
  'AlgorithmConfig.repeat_times': positive(
    "Trinity repeats each task `repeat_times` times (trinity/common/workflows); an unset train_batch_size becomes batch_size × repeat_times, which veRL's FSDP workers assert positive as `ppo_mini_batch_size` (verl/workers/fsdp_workers.py, v0.7.0 f9c855f)",
  ),
  'ClusterConfig.node_num': [
    {
      until: 'v0.3.0',
      domain: positive(
        'Trinity\'s GPU split (trinity/common/verl_config.py `synchronize_config`) raises "The number of training nodes must be greater than 0"',
      ),
    },
    {
      since: 'v0.3.1',
      domain: nonNegative(
        'Trinity reads an unset (0/None) node count from Ray (trinity/common/config.py `_update_cluster_info`); a negative count fails the GPU split',
      ),
    },
    {
      since: 'v0.5.0',
      domain: nonNegative(
        'Trinity reads an unset (0/None) node count from Ray (trinity/common/config_validator.py `RayClusterConfigValidator._set_cluster_info`, 1c35a79); a negative count fails the GPU split',
      ),
    },
  ],
  'ClusterConfig.gpu_per_node': [
    {
      until: 'v0.3.0',
      domain: positive(
        'Trinity\'s GPU split (trinity/common/verl_config.py `synchronize_config`) raises "The number of training gpus must be greater than 0"',
      ),
    },
    {
      since: 'v0.3.1',
      domain: nonNegative(
        'Trinity reads an unset (0/None) GPU count from Ray (trinity/common/config.py `_update_cluster_info`); a negative count fails the GPU split',
      ),
    },
    {
      since: 'v0.5.0',
      domain: nonNegative(
        'Trinity reads an unset (0/None) GPU count from Ray (trinity/common/config_validator.py `RayClusterConfigValidator._set_cluster_info`, 1c35a79); a negative count fails the GPU split',
      ),
    },
  ],
  'SynchronizerConfig.sync_interval': positive(
    'Trinity\'s config check asserts `sync_interval > 0` (AssertionError "`sync_interval` must be positive."; trinity/common/config_validator.py `SynchronizerConfigValidator`, 1c35a79); the explorer syncs when `(step - sync_offset) % sync_interval == 0`',
  ),
  // Python's modulo accepts a negative interval; only 0 raises, but the domain keeps to Trinity's "must be positive".
  'SynchronizerConfig.explorer_sync_interval': positive(
    "Trinity's explorer syncs when `(step - sync_offset) % explorer_sync_interval == 0` and rounds `eval_interval` to a multiple of it (trinity/explorer/explorer.py `need_sync`, config_validator.py `IntervalConfigValidator`, f3c8dec): 0 raises ZeroDivisionError",
  ),
  'SynchronizerConfig.trainer_sync_interval': positive(
    "Trinity's trainer (trinity/trainer/trainer.py `need_sync`, f3c8dec) syncs when `train_step_num % trainer_sync_interval == 0` for the fixed, trainer_driven and fully_async styles: 0 raises ZeroDivisionError after the first step",
  ),
  'SynchronizerConfig.sync_offset': nonNegative(
    "Trinity's explorer waits for trainer step `step - sync_offset` (trinity/explorer/explorer.py); a negative offset waits for steps that never come",
  ),
  'SynchronizerConfig.sync_timeout': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      "Trinity's synchronizer (trinity/common/synchronizer.py) waits at most `sync_timeout` seconds; 0 or less times out at once",
  },
  'ExplorerConfig.runner_per_model': positive(
    "Trinity's scheduler (trinity/explorer/scheduler.py) starts `runner_per_model` workflow runners per engine: with 0 no task ever runs",
  ),
  'ExplorerConfig.runner_prepare_concurrency': positive(
    "Trinity's scheduler (trinity/explorer/scheduler.py, f3c8dec) starts runners under `asyncio.Semaphore(max(1, runner_prepare_concurrency))`: below 1 counts as 1",
    'warning',
  ),
  'ExplorerConfig.runner_prepare_max_retries': nonNegative(
    "Trinity's scheduler (trinity/explorer/scheduler.py, f3c8dec) retries a runner's start `max(0, runner_prepare_max_retries)` times: a negative count is read as 0",
    'warning',
  ),
  // Only read with sync_style fully_async, where it raises; other styles never look at it.
  'ExplorerConfig.max_inflight_batches': positive(
    "Trinity's fully async explorer (trinity/explorer/explorer.py `explore_step`, f3c8dec) drains the oldest in-flight batch once `len(inflight) >= max_inflight_batches`: below 1 it pops from an empty deque at the first step (IndexError)",
  ),
  'ExplorerConfig.max_timeout': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      "Trinity's scheduler (trinity/explorer/scheduler.py) fails a task after `max_timeout` seconds: 0 or less fails every task",
  },
  'ExplorerConfig.max_retry_times': nonNegative(
    "Trinity's scheduler (trinity/explorer/scheduler.py `RunnerWrapper.run_with_retry`, b6321d7) tries a task 1 + max_retry_times times; a negative count tries none and every task fails",
  ),
  // Python's modulo makes a negative interval work (Trinity may even round it up to a multiple of sync_interval);
  // only 0 breaks, but the domain keeps to the documented >= 1.
  'ExplorerConfig.eval_interval': positive(
    'Trinity evaluates when `step % eval_interval == 0` (trinity/explorer/explorer.py `need_eval`): 0 raises ZeroDivisionError after the first step, and the explore loop stops',
  ),
  'DynamicTimeoutConfig.ratio': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      "Trinity's scheduler (trinity/explorer/scheduler.py `dynamic_timeout`, f3c8dec) times a task out after min(max_timeout, average task time × ratio) once the dynamic timeout is on: 0 or less fails every task",
  },
  'ExplorerConfig.proxy_port': {
    min: 0,
    max: 65535,
    severity: 'error',
    source: 'the OS socket API (Python `socket.bind`) raises OverflowError "port must be 0-65535"',
  },
  'ExplorerConfig.service_status_check_interval': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      "Trinity's serve loop (trinity/explorer/explorer.py) sleeps this many seconds between checks: 0 or less spins",
  },
  'ExplorerConfig.max_repeat_times_per_runner': positive(
    "Trinity's scheduler (trinity/explorer/scheduler.py `_split_and_submit_tasks`, b6321d7) splits a task with `range(0, repeat_times, max_repeat_times_per_runner)`: 0 raises ValueError, a negative size makes no chunk and the task never completes",
  ),
  'TrainerConfig.save_interval': nonNegative(
    'Trinity saves when `save_interval > 0 and step % save_interval == 0` and always at the end (trinity/trainer/trainer.py `need_save`, 08ab577): a negative interval is read as 0, "only at the end"',
    'warning',
  ),
  'TrainerConfig.ulysses_sequence_parallel_size': [
    {
      domain: positive(
        "veRL's FSDP workers (verl/workers/fsdp_workers.py `__init__`) split the GPUs as `world_size // ulysses_sequence_parallel_size`: 0 raises ZeroDivisionError",
      ),
    },
    {
      since: 'v0.5.2',
      domain: positive(
        'Trinity\'s trainer check (trinity/common/config_validator.py `TrainerConfigValidator`, 1c35a79) warns "Ulysses sequence parallel size is set to 1" and replaces a value below 1',
        'warning',
      ),
    },
  ],
  'TrainerConfig.max_token_len_per_gpu': positive(
    'veRL\'s dynamic batching (verl/utils/seqlen_balancing.py `rearrange_micro_batches`, v0.7.0 f9c855f) asserts "max_token_len must be greater than the sequence length"; unset, Trinity fills ceil(2 × max_model_len / sequence parallelism); Trinity\'s config for the newer veRL engine (trinity/trainer/verl/config.py `_adjust_token_len_if_needed`, 3231abd; not modelled) raises a value below ceil(max_model_len / sp) to that with a warning',
  ),
  'TrainerConfig.grad_clip': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source:
      'torch `clip_grad_norm_` (torch/nn/utils/clip_grad.py) scales gradients by max_norm / norm: 0 or less zeroes or flips every update',
  },
  // 0 is Trinity's own "keep all" (its newest dataclass default), like null.
  'TrainerConfig.max_checkpoints_to_keep': nonNegative(
    "Trinity passes it to veRL as `max_actor_ckpt_to_keep`, and veRL's checkpoint manager (verl/utils/checkpoint/checkpoint_manager.py `register_checkpoint`, b178a3c) rotates only when it is > 0: a negative count keeps every checkpoint, as 0 does",
    'warning',
  ),
  'TaskPipelineConfig.num_process': positive(
    'Data-Juicer\'s executor starts a `multiprocessing.Pool(num_process)`, which raises "Number of processes must be at least 1"',
  ),
  'LoRAConfig.lora_rank': positive(
    'Trinity builds a dummy adapter for an entry without `path` at its config check (trinity/utils/lora_utils.py `create_dummy_lora`, via PEFT `get_peft_model`), and PEFT `LoraLayer.update_layer` (peft/tuners/lora/layer.py) raises "`r` should be a positive integer value" for a rank below 1; with a `path`, veRL trains no adapter at rank 0 (`lora_rank > 0` switches LoRA on)',
  ),
  'LoRAConfig.lora_alpha': nonNegative(
    'PEFT `LoraConfig` (peft/tuners/lora/config.py) scales updates by lora_alpha / r: a negative alpha flips them',
    'warning',
  ),
  // Checked only when the ratio is > 0, so a negative ratio is read as "off".
  'OverRolloutConfig.ratio': {
    max: 1,
    maxExclusive: true,
    severity: 'error',
    source:
      'Trinity\'s explorer check (trinity/common/config.py up to v0.4.0, config_validator.py from v0.5.0) raises "over_rollout_ratio should be in [0.0, 1.0)" for a positive ratio of 1 or more',
  },

  // The optimizer: torch's constructor and veRL's schedules
  'OptimizerConfig.lr': nonNegative(`${TORCH} "Invalid learning rate"`),
  'OptimizerConfig.weight_decay': nonNegative(`${TORCH} "Invalid weight_decay value"`),
  'OptimizerConfig.min_lr_ratio': { min: 0, max: 1, severity: 'warning', source: VERL_LR },
  'OptimizerConfig.lr_warmup_steps_ratio': {
    min: 0,
    max: 1,
    severity: 'warning',
    source:
      'veRL (verl/workers/fsdp_workers.py) warms up for int(ratio × total_steps) steps: above 1 the whole run is warm-up, below 0 there is none',
  },
  'OptimizerConfig.lr_warmup_steps': {
    min: 0,
    except: [-1],
    severity: 'warning',
    source:
      'veRL (verl/workers/fsdp_workers.py) uses `lr_warmup_steps_ratio` when `lr_warmup_steps` is negative (-1 = use the ratio)',
  },
  'OptimizerConfig.warmup_style': scheduler,
  'OptimizerConfig.lr_scheduler_type': scheduler,
  'OptimizerConfig.clip_grad': {
    min: 0,
    minExclusive: true,
    severity: 'warning',
    source: 'torch `clip_grad_norm_` (torch/nn/utils/clip_grad.py): max_norm 0 or less zeroes or flips every update',
  },

  // Buffers: the storage type is a closed set, checked by the buffer factory
  'StorageConfig.storage_type': storageTypes,
  'TasksetConfig.storage_type': storageTypes,
  'ExperienceBufferConfig.storage_type': storageTypes,
  // Trinity hands the level to every process as TRINITY_LOG_LEVEL and looks the name up as a logging attribute.
  'LogConfig.level': {
    oneOf: ['DEBUG', 'INFO', 'WARNING', 'WARN', 'ERROR', 'CRITICAL', 'FATAL', 'NOTSET'],
    caseInsensitive: true,
    severity: 'error',
    source:
      "Trinity's `get_logger` (trinity/utils/log.py, c04b993 to f3c8dec) reads it as `getattr(logging, level.upper())`, which raises AttributeError for a name the `logging` module lacks",
  },
};

const sglangMaxTokens: Domain = {
  min: 0,
  severity: 'error',
  source: `${SGL} "max_new_tokens must be at least 0" for an SGLang engine, which Trinity's SGLang client (trinity/common/models/sglang_model.py \`SGLangClient.generate\`, 357d47d) sends \`max_tokens\` as: 0 is allowed there (vLLM raises below 1)`,
};
// Trinity's SGLang engine (trinity/common/models/sglang_model.py `SGLangRolloutModel.generate`, 357d47d) reads logprobs
// only as "return log-probs or not" and asks SGLang for no top log-probs: vLLM's limit of 20 does not apply.
const sglangLogprobs: Domain = {
  severity: 'error',
  source:
    'Trinity\'s SGLang engine (trinity/common/models/sglang_model.py `SGLangRolloutModel.generate`, 357d47d) reads it only as "return log-probs or not" and asks SGLang for no top log-probs, so no count is checked',
};

/**
 * What replaces a sampling field's domain where its value reaches an SGLang engine (main). check/domains.ts works
 * out which engines a value reaches; one that reaches both kinds meets both domains.
 */
const SGLANG_DOMAINS: Record<string, Domain> = {
  ...Object.fromEntries(
    ['GenerationConfig', 'ModelConfig', 'InferenceModelConfig'].flatMap((s) => [
      [`${s}.top_k`, sglangTopK],
      [`${s}.logprobs`, sglangLogprobs],
    ]),
  ),
  'GenerationConfig.max_tokens': sglangMaxTokens,
  'ModelConfig.max_response_tokens': sglangMaxTokens,
  'InferenceModelConfig.max_response_tokens': sglangMaxTokens,
  'ModelConfig.repetition_penalty': sglangRepetitionPenalty,
  'InferenceModelConfig.repetition_penalty': sglangRepetitionPenalty,
};

/** The SGLang engine's domain of `Section.field` at `release`: only main has `engine_type: sglang`. */
export function sglangDomainOf(
  key: string,
  release: Release,
  inRange: (r: Release, since?: Release, until?: Release) => boolean,
): Domain | undefined {
  return inRange(release, 'main') ? SGLANG_DOMAINS[key] : undefined;
}

/**
 * The narrowest numeric domain that admits every value either domain admits (for the JSON Schema, which cannot
 * tell which engine a model-wide value reaches). Sentinels inside the joined range are dropped.
 */
export function joinDomains(a: Domain, b: Domain): Domain {
  const out: Domain = { severity: a.severity, source: a.source };
  if (a.min !== undefined && b.min !== undefined) {
    out.min = Math.min(a.min, b.min);
    const lower = [a, b].filter((d) => d.min === out.min);
    if (lower.every((d) => d.minExclusive)) out.minExclusive = true;
  }
  if (a.max !== undefined && b.max !== undefined) {
    out.max = Math.max(a.max, b.max);
    const upper = [a, b].filter((d) => d.max === out.max);
    if (upper.every((d) => d.maxExclusive)) out.maxExclusive = true;
  }
  const except = [...new Set([...(a.except ?? []), ...(b.except ?? [])])].filter((v) => !inDomain(out, v));
  if (except.length) out.except = except;
  return out;
}

/** The domain of `Section.field` at `release`, if any. */
export function domainOf(
  key: string,
  release: Release,
  inRange: (r: Release, since?: Release, until?: Release) => boolean,
): Domain | undefined {
  const d = DOMAINS[key];
  if (!d) return undefined;
  if (!Array.isArray(d)) return d as Domain;
  let out: Domain | undefined;
  for (const r of d as readonly Ranged[]) if (inRange(release, r.since, r.until)) out = r.domain;
  return out;
}

/** The allowed values in words: "≥ 1", "in (0, 1]", "-1 or ≥ 1", "one of file, queue, sql". */
export function describeDomain(d: Domain): string {
  if (d.oneOf) return `one of ${d.oneOf.map((v) => `\`${v}\``).join(', ')}`;
  let range: string;
  if (d.min !== undefined && d.max !== undefined)
    range = `in ${d.minExclusive ? '(' : '['}${d.min}, ${d.max}${d.maxExclusive ? ')' : ']'}`;
  else if (d.min !== undefined) range = `${d.minExclusive ? '>' : '≥'} ${d.min}`;
  else if (d.max !== undefined) range = `${d.maxExclusive ? '<' : '≤'} ${d.max}`;
  else range = 'any number';
  return d.except?.length ? `${d.except.join(', ')} or ${range}` : range;
}

/** Whether `value` is in the domain (strings for `oneOf`, numbers for ranges; other types are not judged). */
export function inDomain(d: Domain, value: unknown): boolean {
  if (d.oneOf) {
    if (typeof value !== 'string') return true;
    return d.caseInsensitive ? d.oneOf.some((v) => v.toLowerCase() === value.toLowerCase()) : d.oneOf.includes(value);
  }
  if (typeof value !== 'number' || Number.isNaN(value)) return true;
  if (d.except?.includes(value)) return true;
  if (d.min !== undefined && (d.minExclusive ? !(value > d.min) : !(value >= d.min))) return false;
  if (d.max !== undefined && (d.maxExclusive ? !(value < d.max) : !(value <= d.max))) return false;
  return true;
}
