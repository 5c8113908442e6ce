/**
 * What each diagnostic code means, for the generated reference (docs/diagnostics.md): why Trinity cares, a config
 * that triggers it and how to fix it. The Record type makes a new code in `CODES` fail to compile until it is
 * documented here.
 */
import type { DiagnosticCode } from '../diagnostics';

export interface CodeDoc {
  /** What happens in Trinity and why it matters, 1-3 sentences. */
  explanation: string;
  /** A minimal YAML snippet that triggers it; empty for a code no config can trigger (an internal error). */
  example: string;
  /** How to fix it, 1-2 sentences. */
  fix: string;
  /** Releases it applies to, if not all, e.g. 'v0.5.0 and later'. */
  releases?: string;
}

export const CODE_DOCS: Record<DiagnosticCode, CodeDoc> = {
  // ------------------------------------------------------------------------------------------------------------
  // 0xx: YAML and structure
  // ------------------------------------------------------------------------------------------------------------
  TRN001: {
    explanation:
      'The file is not valid YAML. `trinity run` reads it with `OmegaConf.load` before anything else, so the launch fails with the raw parser error and nothing else in the file is checked.',
    example: 'algorithm:\n  algorithm_type: grpo\n repeat_times: 8\n',
    fix: 'Fix the syntax at the reported position: usually indentation, an unclosed quote or bracket, or a tab used for indentation.',
  },
  TRN002: {
    explanation:
      'The same key appears twice in one mapping. YAML forbids it, and Trinity refuses to load the file rather than silently picking one of the two values.',
    example: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 4\n  repeat_times: 8\n',
    fix: 'Keep one of the two entries (the value you actually want) and delete the other.',
  },
  TRN003: {
    explanation:
      'YAML anchors and aliases (`&name` / `*name`) expand to an enormous tree, or the document nests hundreds of levels deep. The workbench refuses such a file (an "alias bomb") instead of hanging, and real Trinity configs never come close to the limit.',
    example:
      'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n',
    fix: 'Remove the self-multiplying aliases; share configuration with a few anchors or `${...}` interpolation instead.',
  },
  TRN004: {
    explanation:
      "A Trinity config is a mapping of sections (`mode`, `model`, `algorithm`, `buffer`, ...) at the top level. A list or a plain value at the top cannot be merged into Trinity's `Config` dataclass, so loading fails.",
    example: '- mode: both\n- model:\n    model_path: Qwen/Qwen2.5-1.5B-Instruct\n',
    fix: 'Write the sections as top-level keys of one mapping, without a leading `-`.',
  },
  TRN005: {
    explanation:
      "A mapping key is not a plain scalar: a complex `? key` such as a list or a mapping. Trinity's config keys are field names, so such a key can never match one and the file cannot be loaded.",
    example: '? [model, model_path]\n: Qwen/Qwen2.5-1.5B-Instruct\n',
    fix: 'Use plain keys and nest the sections, e.g. `model:` with `model_path:` under it.',
  },
  TRN009: {
    explanation:
      "One of the workbench's own checks crashed on this config. The remaining checks of that step were skipped, so the report may be incomplete; Trinity itself is not involved.",
    example: '',
    fix: 'Please report it with the config that caused it. Until it is fixed, the other diagnostics are still valid but the list may miss some.',
  },
  TRN010: {
    explanation:
      'The key is not a field of this section in any Trinity release. OmegaConf\'s structured merge rejects unknown keys, so `trinity run` stops at once with "Invalid configuration"; usually it is a typo.',
    example: 'algorithm:\n  algorithm_typ: grpo\n',
    fix: 'Correct the spelling (the message suggests the nearest key) or remove the key.',
  },
  TRN011: {
    explanation:
      'The key exists in other Trinity releases but not in the one this file is checked against (it was added later, removed, or renamed). Loading it with this release fails exactly like an unknown key.',
    example: 'buffer:\n  trainer_input:\n    sft_warmup_steps: 10\n',
    fix: 'Use the key the selected release has (the message names its replacement when there is one), or check the file against the release it was written for with a `# trinity-version:` comment.',
  },
  TRN012: {
    explanation:
      'The key still loads but is deprecated: Trinity logs a warning and ignores it or copies it to its replacement. A later release is likely to remove it.',
    example: 'explorer:\n  runner_num: 4\n',
    fix: 'Move the value to the key named in the message (e.g. `explorer.runner_per_model`).',
  },
  TRN013: {
    explanation:
      'Trinity computes this key itself during its check step (job directory, namespaces, per-buffer batch sizes, ...). Whatever is written here is overwritten or ignored at launch.',
    example: 'checkpoint_job_dir: /mnt/checkpoints/my-run\n',
    fix: 'Delete the key and set the inputs it is derived from instead (here `checkpoint_root_dir`, `project`, `group` and `name`).',
  },
  TRN020: {
    explanation:
      'The value cannot be converted to the type the field declares (an integer, number, boolean, string, list or section). OmegaConf refuses it when Trinity loads the file.',
    example: 'algorithm:\n  repeat_times: eight\n',
    fix: 'Write a value of the expected type, e.g. `repeat_times: 8`.',
  },
  TRN021: {
    explanation:
      "The field is not Optional in Trinity's dataclass, so `null` (or an empty value) is rejected when the config is loaded.",
    example: 'algorithm:\n  repeat_times: null\n',
    fix: 'Give it a value, or delete the key to use its default.',
  },
  TRN022: {
    explanation:
      'The field is an enum and the value is not one of its members in this release. OmegaConf rejects it at load time.',
    example: 'synchronizer:\n  sync_method: rsync\n',
    fix: 'Use one of the values listed in the message (e.g. `nccl`, `checkpoint` or `memory` for `sync_method`).',
  },
  TRN023: {
    explanation:
      'A section lacks a key that has no default, so OmegaConf cannot build it. In Trinity the only such key is `stage_name` of each entry in `stages`.',
    example: 'stages:\n  - mode: train\n',
    fix: 'Add the missing key, e.g. `stage_name: sft_warmup`.',
  },
  TRN024: {
    explanation:
      'The value has the right type but lies outside what the library behind the key accepts: a negative batch size, a temperature below 0, `top_p` outside (0, 1], a storage type that is not `file`, `queue` or `sql`, … The message names the allowed range or set and the code that enforces it (vLLM, veRL, torch or Trinity). Values that come from `${...}` are checked after resolution. Error where that code raises (usually after the GPUs are allocated); warning where it silently clamps or ignores the value.',
    example: 'buffer:\n  batch_size: -16\n',
    fix: 'Use a value in the named range or set (for a misspelt name the quick fix offers the nearest one).',
  },
  TRN030: {
    explanation:
      'The `# trinity-version:` comment names a release the workbench cannot map to one it models: not a version at all, or older than v0.3.0. (Other versions map to the nearest modelled release at or below them, and anything newer than the last tag to `main`.) The file is then checked against the newest modelled release, which may differ from what you run.',
    example: '# trinity-version: v0.2.0\nmode: both\n',
    fix: 'Name a modelled release (`v0.3.0` to `v0.5.2`, or `main`), or remove the comment.',
  },

  // ------------------------------------------------------------------------------------------------------------
  // 1xx: interpolation
  // ------------------------------------------------------------------------------------------------------------
  TRN100: {
    explanation:
      'A `${...}` expression cannot be parsed (an unclosed brace, a stray character). OmegaConf fails when Trinity resolves the config at load time.',
    example: 'name: grpo-${oc.env:USER\n',
    fix: 'Close the expression and check its syntax, e.g. `${oc.env:USER}`.',
  },
  TRN101: {
    explanation:
      'The interpolation refers to a key that does not exist in the config. OmegaConf raises when Trinity loads the file.',
    example: 'model:\n  model_path: Qwen/Qwen2.5-1.5B-Instruct\n  critic_model_path: ${model.model_pth}\n',
    fix: 'Correct the dotted path (the message suggests the nearest key), or add the key it refers to.',
  },
  TRN102: {
    explanation:
      '`${oc.env:NAME}` reads an environment variable that is not set and gives no default, so OmegaConf raises while Trinity loads the config.',
    example: 'model:\n  model_path: ${oc.env:MODEL_PATH}\n',
    fix: 'Set the variable (or add it to `.env`), or give a default: `${oc.env:MODEL_PATH,Qwen/Qwen2.5-1.5B-Instruct}`.',
  },
  TRN103: {
    explanation:
      'Interpolations refer to each other in a loop (or nest too deeply), so none of them can be resolved and loading fails.',
    example: 'project: ${name}\nname: ${project}\n',
    fix: 'Break the loop: give one of the keys a literal value.',
  },
  TRN104: {
    explanation:
      "The interpolation calls a resolver that is not registered. Trinity registers no resolvers of its own, so only OmegaConf's built-ins (`oc.env`, `oc.select`, `oc.decode`, ...) work; Hydra's `now` and similar are unknown.",
    example: 'name: grpo-${now:%Y%m%d}\n',
    fix: "Use one of OmegaConf's resolvers, or write the value literally (or through an environment variable).",
  },
  TRN105: {
    explanation:
      "`trainer.trainer_config` is free-form when Trinity loads the file: veRL's defaults are merged into it only later, in the trainer check. An interpolation into a key of it that is not written in this file therefore cannot resolve.",
    example: 'buffer:\n  train_batch_size: ${trainer.trainer_config.data.train_batch_size}\n',
    fix: 'Write the referenced key under `trainer.trainer_config`, or use a literal value.',
  },
  TRN106: {
    explanation:
      'The interpolation resolves, but to a value the field cannot hold: a string where an integer is expected, or `null` in a field that cannot be null. OmegaConf rejects it at load time.',
    example: 'name: run-1\nbuffer:\n  batch_size: ${name}\n',
    fix: 'Point the interpolation at a value of the right type, or write the value directly.',
  },
  TRN107: {
    explanation:
      'A resolver was called with arguments it rejects, e.g. `oc.decode` on text that is not valid YAML, or `oc.env` without a variable name. OmegaConf raises while Trinity loads the config.',
    example: 'buffer:\n  batch_size: ${oc.decode:"[32"}\n',
    fix: "Fix the resolver's arguments as described in the message.",
  },

  // ------------------------------------------------------------------------------------------------------------
  // 2xx: Trinity's launch checks
  // ------------------------------------------------------------------------------------------------------------
  TRN200: {
    explanation:
      '`mode` selects what `trinity run` starts (explorer, trainer or both). Any other value makes Trinity\'s check step raise "Invalid mode" before the run starts.',
    example: 'mode: async\n',
    fix: 'Use a mode of the selected release: `both`, `train`, `explore`, `bench`, and from v0.3.1 `serve`, from v0.5.0 `colocate`.',
  },
  TRN201: {
    explanation:
      '`algorithm.algorithm_type` is not a registered algorithm in this release. Trinity fails when it looks the algorithm up: with "Invalid module key" from v0.4.0, with an AttributeError before.',
    example: 'algorithm:\n  algorithm_type: grpoo\n',
    fix: 'Use a registered algorithm (the message lists them), or a dotted `package.module.Class` path to your own (v0.4.0 and later).',
  },
  TRN202: {
    explanation:
      "One of the algorithm's pieces (`advantage_fn`, `policy_loss_fn`, `kl_loss_fn`, `kl_penalty_fn`, `entropy_loss_fn`, `sample_strategy`) names nothing in its registry, so Trinity raises when it resolves the algorithm at launch.",
    example: 'algorithm:\n  algorithm_type: grpo\n  advantage_fn: gae\n',
    fix: "Use a name from the registry (the message lists them), or leave the key out to get the algorithm's default.",
  },
  TRN203: {
    explanation:
      "Pieces of the algorithm left unset are filled in from the algorithm type's defaults (e.g. GRPO uses the `grpo` advantage and the `ppo` policy loss). This is informational: it shows what will actually run.",
    example: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 8\n',
    fix: 'Nothing to fix. Write a piece explicitly if you want a different one.',
  },
  TRN204: {
    explanation:
      'DPO (and SFT from v0.5.0) forces some settings in its own check: synchronization becomes `checkpoint`, DPO gets a KL loss (`k2`) when none is set, and from v0.5.0 `synchronizer.sync_interval` is replaced by `trainer.save_interval`. Values written otherwise are replaced.',
    example: 'mode: train\nalgorithm:\n  algorithm_type: dpo\nsynchronizer:\n  sync_method: nccl\n',
    fix: 'Write the values Trinity would use (`sync_method: checkpoint`, a `kl_loss_fn` other than `none`, and for v0.5.0+ the interval in `trainer.save_interval`), or drop those keys.',
  },

  TRN205: {
    explanation:
      'DPO (and SFT from v0.5.0) trains offline on a fixed dataset and has no use for an explorer, so Trinity rejects `both` and `explore` mode for it.',
    example: 'mode: both\nalgorithm:\n  algorithm_type: dpo\n',
    fix: 'Use `mode: train` and point `buffer.trainer_input.experience_buffer` at the preference dataset.',
  },
  TRN206: {
    explanation:
      'A buffer the run reads from is missing. DPO in `train` mode (and SFT from v0.5.0) needs `buffer.trainer_input.experience_buffer.path` to find its dataset; v0.3.0-v0.3.1 need an experience buffer in `train` mode, and v0.3.0 an `sft_warmup_dataset` for SFT warm-up steps. Trinity raises at launch.',
    example: 'mode: train\nalgorithm:\n  algorithm_type: dpo\nbuffer:\n  train_batch_size: 32\n',
    fix: 'Add the named buffer with the `path` of its dataset.',
  },

  TRN207: {
    explanation:
      '`algorithm.loss_agg_mode` (default `token-mean`) always overrides a `loss_agg_mode` written inside `policy_loss_fn_args`. A value there that differs is silently replaced.',
    example:
      'algorithm:\n  algorithm_type: grpo\n  loss_agg_mode: seq-mean-token-mean\n  policy_loss_fn_args:\n    clip_range: 0.2\n    loss_agg_mode: token-mean\n',
    fix: 'Set the aggregation once, in `algorithm.loss_agg_mode`, and remove it from `policy_loss_fn_args`.',
    releases: 'v0.4.0 and later',
  },
  TRN208: {
    explanation:
      "A deprecated setting was migrated to its replacement by Trinity's check step: `algorithm.optimizer.warmup_style` is copied to `lr_scheduler_type`, overriding what that key says.",
    example: 'algorithm:\n  optimizer:\n    warmup_style: cosine\n',
    fix: 'Write `lr_scheduler_type: cosine` instead and remove `warmup_style`.',
    releases: 'v0.5.0 and later',
  },
  TRN209: {
    explanation:
      'The job directory `<checkpoint_root_dir>/<project>/<group>/<name>` already exists and `continue_from_checkpoint` is false. If it is not empty Trinity renames the run to `<name>_<timestamp>` and starts from scratch in a new directory; in `bench` mode it instead turns `continue_from_checkpoint` on to evaluate the existing checkpoints.',
    example: 'checkpoint_root_dir: ./checkpoints\nproject: gsm8k\nname: grpo-qwen\ncontinue_from_checkpoint: false\n',
    fix: 'Set `continue_from_checkpoint: true` to resume the existing run, or choose a new `name` for a fresh one.',
  },
  TRN210: {
    explanation:
      "The prompt and response budgets together exceed the model's context length. Trinity raises at launch, because a full prompt plus a full response would not fit into one sequence.",
    example: 'model:\n  max_model_len: 4096\n  max_prompt_tokens: 2048\n  max_response_tokens: 4096\n',
    fix: 'Lower `max_prompt_tokens` or `max_response_tokens`, or raise `max_model_len` to at least their sum.',
    releases: 'v0.3.1 and later',
  },
  TRN211: {
    explanation:
      'Some of `max_model_len`, `max_prompt_tokens` and `max_response_tokens` are unset and Trinity derives them from the others (e.g. half of `max_model_len` each), logging a warning; v0.3.0 reads an unset `max_model_len` from the model itself. The derived values bound every generation.',
    example: 'model:\n  max_model_len: 4096\n',
    fix: 'Set all three lengths explicitly if the derived split is not what you want.',
  },
  TRN212: {
    explanation:
      'Trinity needs `max_model_len`, and can derive it only as `max_prompt_tokens + max_response_tokens`. With neither available, the check step raises "Unable to determine `max_model_len`".',
    example: 'model:\n  model_path: Qwen/Qwen2.5-1.5B-Instruct\n  max_response_tokens: 1024\n',
    fix: 'Set `model.max_model_len`, or both `max_prompt_tokens` and `max_response_tokens`.',
    releases: 'v0.3.1 and later',
  },
  TRN213: {
    explanation:
      '`min_response_tokens` must be below `max_response_tokens`, otherwise no response could satisfy both. Trinity lowers it to `max_response_tokens - 1` with a warning.',
    example: 'model:\n  max_model_len: 4096\n  max_response_tokens: 1024\n  min_response_tokens: 2048\n',
    fix: 'Set `min_response_tokens` below `max_response_tokens`.',
    releases: 'v0.3.1 and later',
  },
  TRN214: {
    explanation:
      "Trinity copies this value from another key during its check step, replacing what is written here (e.g. a taskset's `repeat_times` always becomes `algorithm.repeat_times`). The written value has no effect.",
    example:
      'algorithm:\n  algorithm_type: grpo\n  repeat_times: 8\nbuffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n      repeat_times: 4\n',
    fix: 'Set the value at the key the message names, and remove it here.',
  },
  TRN220: {
    explanation:
      "The GPUs of the cluster (`node_num` x `gpu_per_node`) cannot hold what the config asks for: the explorer's engines (`engine_num` x `tensor_parallel_size`, plus auxiliary models) take all of them and none are left for the trainer, or more than there are. Trinity raises at launch.",
    example: 'cluster:\n  node_num: 1\n  gpu_per_node: 4\nexplorer:\n  rollout_model:\n    engine_num: 4\n',
    fix: 'Lower `explorer.rollout_model.engine_num` or `tensor_parallel_size`, or add GPUs.',
  },
  TRN221: {
    explanation:
      "veRL splits each training batch evenly over the trainer's GPUs, so `buffer.train_batch_size` (by default `batch_size` x `repeat_times`) must be a multiple of that number (from v0.5.2, of that number divided by the sequence-parallel size). Trinity raises at launch otherwise.",
    example:
      'cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\nbuffer:\n  train_batch_size: 100\n',
    fix: 'Use a batch size that divides evenly (the message suggests one), or change how many GPUs the trainer gets.',
  },
  TRN222: {
    explanation:
      'The GPUs left for the trainer cannot be arranged the way Trinity or veRL require: whole nodes when the trainer spans several, a world size divisible by the sequence-parallel or FSDP size, or exactly one GPU in `colocate` mode. Trinity raises at launch.',
    example: 'cluster:\n  node_num: 2\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 3\n',
    fix: 'Change `engine_num` / `tensor_parallel_size` (or the parallel sizes named in the message) so the trainer gets a valid layout.',
  },
  TRN223: {
    explanation:
      "Informational: how many GPUs the trainer gets once the explorer's engines are placed, computed from `cluster.node_num` and `gpu_per_node`. When those two are unset, Trinity asks the running Ray cluster at launch (and from v0.5.0 switches a 1-GPU cluster to `colocate` mode), so the GPU and batch-size checks cannot run before launch.",
    example: 'cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n',
    fix: 'Nothing to fix. When they are unset, set `cluster.node_num` and `cluster.gpu_per_node` to have the GPU split checked before launch.',
  },
  TRN224: {
    explanation:
      '`colocate` mode runs explorer and trainer on one shared GPU. Trinity warns that it is meant only for single-GPU setups and enforces one GPU, one engine and no auxiliary models.',
    example: 'mode: colocate\ncluster:\n  node_num: 1\n  gpu_per_node: 1\n',
    fix: 'On more than one GPU use `mode: both`; on one GPU the warning can be ignored.',
    releases: 'v0.5.0 and later',
  },
  TRN230: {
    explanation:
      'NCCL weight synchronization needs explorer and trainer running side by side. In `train`, `explore`, `bench` and `serve` mode, with LoRA (v0.4.0+) or in `colocate` mode (v0.5.0+), Trinity switches `sync_method` to `checkpoint` (or `memory`) with a warning.',
    example: 'mode: explore\nsynchronizer:\n  sync_method: nccl\n',
    fix: 'Set `synchronizer.sync_method: checkpoint` yourself for these modes.',
  },
  TRN231: {
    explanation:
      '`synchronizer.sync_interval` must be a positive number of steps; Trinity asserts it at launch. From v0.5.0 DPO and SFT copy it from `trainer.save_interval`, whose default 0 fails this check.',
    example: 'synchronizer:\n  sync_interval: 0\n',
    fix: 'Set `synchronizer.sync_interval` (or, for DPO and SFT, `trainer.save_interval`) to a positive number.',
  },
  TRN232: {
    explanation:
      'Evaluation runs only at synchronization points, so Trinity rounds `explorer.eval_interval` down to a multiple of `synchronizer.sync_interval` (at least one interval), with a warning.',
    example: 'synchronizer:\n  sync_interval: 4\nexplorer:\n  eval_interval: 10\n',
    fix: 'Make `eval_interval` a multiple of `sync_interval`.',
  },
  TRN240: {
    explanation:
      '`monitor.monitor_type` is not a registered monitor in this release. Trinity raises when it creates the monitor ("Invalid module key" from v0.4.0).',
    example: 'monitor:\n  monitor_type: tensorbord\n',
    fix: 'Use a registered monitor: `tensorboard`, `wandb`, `mlflow`, or `swanlab` from v0.4.0.',
  },
  TRN241: {
    explanation:
      "`wandb`, `mlflow` and `swanlab` are services Trinity-RFT logs a run's metrics to. A run of this extension's local runtime reaches none of them: its metrics go to `monitor/metrics.jsonl` in the job directory and to the run's dashboard, and the run says so in one line at its start. Trinity-RFT itself (`runWith: trinity`) logs to the service as written.",
    example: 'monitor:\n  monitor_type: wandb\n',
    fix: 'Nothing to fix: read the metrics from the dashboard or metrics.jsonl, or set `monitor_type: tensorboard` to have TensorBoard event files as well.',
  },
  TRN250: {
    explanation:
      'Every mode that explores (`both`, `explore`, and `bench` before v0.4.0) needs at least one training taskset with a `path` to draw tasks from. Trinity raises at launch when there is none or its path is empty.',
    example: 'mode: explore\nbuffer:\n  explorer_input:\n    taskset:\n      name: gsm8k\n',
    fix: 'Set `buffer.explorer_input.taskset.path` (a Hugging Face dataset id or a local path).',
  },
  TRN252: {
    explanation:
      'An entry of `buffer.explorer_input.eval_tasksets` has no `path`. Up to v0.3.1 Trinity drops it with a warning, so that evaluation silently never runs; from v0.3.2 it raises at launch (reported as an error there).',
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n    eval_tasksets:\n      - name: math500\n',
    fix: 'Give the eval taskset a `path`, or remove it.',
  },
  TRN253: {
    explanation:
      'In `both` (and from v0.5.0 `colocate`) mode explorer and trainer exchange experiences while running, which a `file` buffer cannot do. Trinity replaces `file` with `queue` for the experience buffer, with a warning.',
    example:
      'mode: both\nbuffer:\n  trainer_input:\n    experience_buffer:\n      name: exp\n      storage_type: file\n',
    fix: 'Use `storage_type: queue` (or `sql` to keep the experiences).',
  },
  TRN254: {
    explanation:
      "In `train` mode, and for SFT and DPO, there is no explorer batch to derive the trainer's batch from, so `buffer.train_batch_size` must be set. Trinity raises at launch otherwise.",
    example: 'mode: train\nalgorithm:\n  algorithm_type: sft\n',
    fix: 'Set `buffer.train_batch_size` to the number of samples per training step.',
  },
  TRN255: {
    explanation:
      'Trinity fills in a buffer value: `train_batch_size` becomes `batch_size` x `repeat_times` (every task yields `repeat_times` experiences), or a missing experience buffer becomes a `queue`. Informational.',
    example: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 8\nbuffer:\n  batch_size: 32\n',
    fix: 'Nothing to fix. Set the value explicitly if you want another one.',
  },
  TRN256: {
    explanation:
      'A buffer setting that Trinity rejects at launch: `taskset` and `tasksets` both set, an auxiliary buffer without `path`, or a data selector type that is not registered.',
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n    tasksets:\n      - path: hendrycks/competition_math\n',
    fix: 'Follow the message: e.g. move the single taskset into `tasksets`, give the auxiliary buffer a `path`, or use a registered selector.',
    releases: 'v0.3.2 and later',
  },
  TRN257: {
    explanation:
      'The task pipeline writes its processed tasks somewhere. When Trinity cannot infer where (no `output`, `train` mode, not SFT/DPO), or when the output path already exists, it refuses to start.',
    example: 'mode: train\nbuffer:\n  train_batch_size: 32\ndata_processor:\n  task_pipeline:\n    num_process: 4\n',
    fix: 'Set `data_processor.task_pipeline.output` to a storage config whose `path` does not exist yet.',
  },
  TRN260: {
    explanation:
      'An explorer setting that Trinity rejects at launch: an auxiliary model without `model_path`, an `over_rollout` ratio outside [0, 1) or combined with `fixed` sync style, or an unknown `concurrent_mode`.',
    example: 'explorer:\n  auxiliary_models:\n    - engine_num: 1\n',
    fix: 'Follow the message: give the auxiliary model a `model_path`, or fix the named value.',
    releases: 'v0.3.1 and later',
  },
  TRN261: {
    explanation:
      'Trinity adjusts an explorer-side value with a warning: `runner_per_model` is capped to what the batch can keep busy, `gpu_memory_utilization` drops to 0.25 in `colocate` mode, and Tinker forces its own engine, trainer and sync method.',
    example: 'buffer:\n  batch_size: 8\nexplorer:\n  concurrent_mode: asynchronous\n  runner_per_model: 16\n',
    fix: 'Write the value Trinity would use (the message gives it) to silence the warning.',
    releases: 'v0.4.0 and later',
  },
  TRN262: {
    explanation:
      'Trinity supports one LoRA adapter; more raises at launch. An adapter without `path` makes Trinity build a dummy adapter from the base model at launch (reported as information).',
    example: 'model:\n  lora_configs:\n    - lora_rank: 16\n    - lora_rank: 32\n',
    fix: 'Keep a single entry in `model.lora_configs`; give it a `path` to start from an existing adapter.',
    releases: 'v0.3.1 and later',
  },
  TRN263: {
    explanation:
      "In `serve` mode the OpenAI-compatible service listens on `explorer.listen_address`. An address other than loopback lets anyone who reaches this machine call the model and POST `/feedback` and `/commit`, which write rewarded experiences into the buffer a `train` process trains on. The workbench's runtime then requires `Authorization: Bearer <key>` on every route but `/health`; Trinity-RFT itself serves without a key.",
    example: 'mode: serve\nexplorer:\n  listen_address: 0.0.0.0\n',
    fix: 'Remove `listen_address` (the workbench binds 127.0.0.1 and ::1), or keep it and give clients the key: `TRINITY_WORKBENCH_API_KEY`, else the one generated at start and written with the URL to `<job dir>/<explorer.name>_server_url.txt` (mode 0600).',
    releases: 'v0.3.1 and later',
  },
  TRN270: {
    explanation:
      'A trainer setting that Trinity rejects at launch: an unknown `trainer_type`, or a `save_hf_checkpoint` other than `last`, `always` or `never`. It is also a warning for a fresh `bench` run with the veRL FSDP trainer, which Trinity v0.5.0 to main fail with a ZeroDivisionError.',
    example: 'trainer:\n  save_hf_checkpoint: sometimes\n',
    fix: 'Use one of the values the message lists.',
  },
  TRN271: {
    explanation:
      "veRL's trainer values are adjusted at launch with a warning: a per-GPU token budget smaller than one full sequence (`max_model_len`, 2x in v0.3.2-v0.5.0) is raised, an invalid sequence-parallel size becomes 1, and DPO doubles its micro batch. On main with veRL 0.8, Trinity builds veRL's config itself: a `trainer.trainer_config` override of a key it derives from its own settings (`FROZEN_KEYS`: batch sizes, strategies, token budgets, rollout n, ...) is ignored, and the engine section of the other strategy (`megatron` under FSDP, `fsdp_config` under Megatron) is stripped.",
    example: 'model:\n  max_model_len: 8192\ntrainer:\n  max_token_len_per_gpu: 4096\n',
    fix: 'Raise `trainer.max_token_len_per_gpu` (or lower `model.max_model_len`) to the value the message gives. For an ignored `trainer_config` key, set the Trinity setting the message names and remove the key (quick fix).',
  },
  TRN272: {
    explanation:
      'Up to v0.3.1 the veRL trainer needs its settings: either `trainer.trainer_config` or a `trainer_config_path` file. From v0.3.2 `trainer_config_path` is deprecated and Trinity raises when it is set; the settings go inline under `trainer.trainer_config`.',
    example: 'trainer:\n  trainer_config_path: examples/grpo_gsm8k/train_gsm8k.yaml\n',
    fix: 'Move the veRL settings inline under `trainer.trainer_config` and remove `trainer_config_path`.',
  },
  TRN273: {
    explanation:
      "Trinity's GPU memory check (GPUMemoryValidator, v0.5.0 and later, `train` and `both` mode, FSDP trainers) estimates each trainer module's peak memory per GPU from the model's shape, the FSDP settings and the per-GPU token budget. Above 80 % of the GPU (90 % with `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` in the environment), or with gradient checkpointing off, it prints a MEMORY OVERUSE WARNING with its suggestions and raises \"Unsafe GPU memory usage\", then asks whether to go on when run from a terminal (yes after 30 s) and goes on otherwise. The GPU is `trinityWorkbench.gpu` (`check --gpu`), H100-80G by default. These numbers are Trinity's estimate, not a measurement: the local runtime's measured peak is its `perf/max_memory_*` metrics.",
    example:
      'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 8\nmodel:\n  model_path: Qwen/Qwen2.5-7B-Instruct\n  max_model_len: 16384\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 4\nbuffer:\n  batch_size: 4\n  explorer_input:\n    taskset:\n      path: data/gsm8k\ntrainer:\n  trainer_strategy: fsdp2\n',
    fix: "Apply one of Trinity's suggestions (quick fixes): turn on FSDP2's CPU offload policy, shard over all trainer GPUs, lower `trainer.max_token_len_per_gpu`, split sequences with `ulysses_sequence_parallel_size`, or set the environment variable; or set `ignore_validator_suggestions: true` to skip Trinity's check.",
    releases: 'v0.5.0 and later',
  },
  TRN274: {
    explanation:
      "By Trinity's own GPU memory estimate (see TRN273) a trainer module needs more memory per GPU than the GPU has: the trainer would run out of memory at its first step, after the cluster is allocated and the explorer has started. The GPU is `trinityWorkbench.gpu` (`check --gpu`), H100-80G by default.",
    example:
      'mode: train\nalgorithm:\n  algorithm_type: sft\nmodel:\n  model_path: Qwen/Qwen2.5-32B-Instruct\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 2\nbuffer:\n  train_batch_size: 8\n  trainer_input:\n    experience_buffer:\n      storage_type: file\n      path: data/sft\ntrainer:\n  save_interval: 100\n',
    fix: "Shard the model over more trainer GPUs, offload (FSDP2's offload policy), lower the token budget, or use a GPU with more memory; the quick fixes apply Trinity's suggestions.",
    releases: 'v0.5.0 and later',
  },
  TRN280: {
    explanation:
      "After each stage of a multi-stage config Trinity loads that stage's latest Hugging Face checkpoint to start the next one, so a stage that trains nothing, or not with veRL, fails the run when it ends. From v0.4.0 Trinity also forces `trainer.save_hf_checkpoint: last` in every stage.",
    example: 'stages:\n  - stage_name: rollout\n    mode: explore\n',
    fix: 'Make every stage a veRL training stage (`train`, `both`), or run explore-only work as a separate config.',
    releases: 'v0.3.1 and later',
  },
  TRN290: {
    explanation:
      'A model setting that Trinity rejects at launch: an external (OpenAI-API) model outside `bench` mode or without `base_url_env`, `api_key_env` and `model_name`, or Tinker with an algorithm that needs a critic.',
    example: 'model:\n  external_model:\n    enable: true\n    model_name: gpt-4o-mini\n',
    fix: 'Use `mode: bench` with an external model and fill in all its keys, or choose an algorithm without a critic for Tinker.',
    releases: 'v0.4.0 and later',
  },

  // ------------------------------------------------------------------------------------------------------------
  // 3xx: what Trinity only finds at run time
  // ------------------------------------------------------------------------------------------------------------
  TRN300: {
    explanation:
      "A name that must be looked up in one of Trinity's registries is not registered, e.g. an experience-pipeline operator. The lookup happens when the pipeline is built, after the cluster has started.",
    example: 'data_processor:\n  experience_pipeline:\n    operators:\n      - name: reward_shapping\n',
    fix: 'Use a registered name (the message suggests the nearest one), or register yours from a plugin directory.',
  },
  TRN301: {
    explanation:
      "A written `*_args` mapping replaces the function's default arguments wholesale; Trinity does not merge them. When it lacks an argument the constructor requires, the trainer crashes as it starts.",
    example: 'algorithm:\n  algorithm_type: gspo\n  policy_loss_fn_args:\n    clip_range_low: 0.0003\n',
    fix: 'Add the missing arguments (the message gives their defaults), or remove the mapping to use the defaults.',
  },
  TRN302: {
    explanation:
      "The `*_args` mapping has a key that the function's constructor does not accept, so it raises a TypeError when the trainer (or explorer) builds it.",
    example: 'algorithm:\n  algorithm_type: grpo\n  advantage_fn_args:\n    epsilon: 1.0e-6\n    std_norm: false\n',
    fix: 'Remove or rename the key; the message lists the accepted arguments.',
  },
  TRN303: {
    explanation:
      "Group-relative advantages (GRPO, OPMD, RLOO, ...) compare the `repeat_times` rollouts of each task. With `repeat_times: 1` each group has a single sample, every advantage is zero and nothing is learned; Trinity never applies the algorithm's own default for it.",
    example: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 1\n',
    fix: 'Set `algorithm.repeat_times` to the group size, typically 4 to 16.',
  },
  TRN304: {
    explanation:
      'A local path in the config (a taskset or buffer dataset, a chat template, a trainer config file) does not exist. Trinity only notices when it opens it, often after the cluster has started.',
    example: 'buffer:\n  explorer_input:\n    taskset:\n      path: ./data/math/train.jsonl\n',
    fix: 'Correct the path. Relative paths are resolved from the directory `trinity run` is started in.',
  },
  TRN305: {
    explanation:
      "The dataset does not contain the column that a `format` key names (e.g. `prompt_key`). Tasks would get empty prompts or ground truths, and SFT/DPO reading fails with a KeyError on the first batch. A taskset is asked only for the columns its workflow reads: a built-in's as Trinity's source reads them, a JavaScript plugin's as its `workflowReads` export declares (`taskDesc`, `truth`), else as its text names `ctx.task.taskDesc` / `ctx.task.truth` (a warning, since it may read them; docs/runtime.md, Plugins).",
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      path: data/gsm8k/train.jsonl\n      format:\n        prompt_key: problem\n',
    fix: 'Set the `format` key to a column the dataset has (the message lists them).',
  },
  TRN306: {
    explanation:
      "A local dataset exists but could not be read to check its columns (no file for the requested split, unreadable rows, unsupported format). Trinity's own `load_dataset` may fail on it the same way.",
    example: 'buffer:\n  explorer_input:\n    taskset:\n      path: data/gsm8k\n      split: test\n',
    fix: 'Check the `path`, `split` and `subset_name` against the files on disk and fix the file or the settings.',
  },
  TRN307: {
    explanation:
      'The workflow or reward function named for a taskset is not registered. Trinity looks it up only when it formats the first task, so the job fails after the cluster and models have started.',
    example:
      'buffer:\n  explorer_input:\n    default_workflow_type: math_workfow\n    taskset:\n      path: openai/gsm8k\n',
    fix: 'Use a registered name (the message suggests the nearest one). For one defined in a plugin folder, name the folder: the quick fix adds a folder beside the config that registers the name to `trinityWorkbench.pluginDirs`, and on the command line `trinity-workbench check` and `run` take `--plugin-dir DIR` (or `$TRINITY_PLUGIN_DIRS`).',
  },
  TRN308: {
    explanation:
      "A function argument has a value its constructor rejects at run time: adaptive KL without `target_kl` and `horizon`, `sft_phi`'s `cutoff_prob` outside [0, 1], or DAPO's overlong penalty with missing or inconsistent lengths.",
    example: 'algorithm:\n  kl_loss_fn: k2\n  kl_loss_fn_args:\n    kl_coef: 0.001\n    adaptive: true\n',
    fix: 'Add or correct the arguments the message names.',
  },
  TRN309: {
    explanation:
      'The `mix` sample strategy (algorithms `mix`, `mix_chord`) mixes expert SFT data into each batch, read from the auxiliary buffer named by `sft_dataset_name` (default `sft_dataset`). Without it the trainer stops at start-up.',
    example: 'algorithm:\n  algorithm_type: mix\n  repeat_times: 8\n',
    fix: 'Add `buffer.trainer_input.auxiliary_buffers.sft_dataset` with the `path` of the expert data (in v0.3.0: `buffer.trainer_input.sft_warmup_dataset`).',
  },
  TRN310: {
    explanation:
      'This algorithm computes advantages on the explorer side, in the experience pipeline, but the chosen advantage function only works inside the trainer. The pipeline fails an assertion on the first batch.',
    example: 'algorithm:\n  algorithm_type: grpo\n  advantage_fn: ppo\n',
    fix: 'Use an explorer-side advantage function (the message lists them), or an algorithm that computes advantages in the trainer.',
  },
  TRN311: {
    explanation:
      'SFT and DPO in `train` mode read a fixed dataset, but the experience buffer is a `queue` (the default since v0.4.0), which only an explorer fills. The trainer waits for data until it times out and stops.',
    example:
      'mode: train\nalgorithm:\n  algorithm_type: sft\nbuffer:\n  train_batch_size: 32\n  trainer_input:\n    experience_buffer:\n      path: data/sft/train.jsonl\n',
    fix: 'Set `storage_type: file` on the experience buffer so the dataset at `path` is read.',
  },
  TRN312: {
    explanation:
      'The config names a workflow, reward function, operator, selector, sample strategy or algorithm function that Trinity-RFT registers but the local runtime (`trinity-workbench run`, `trinityWorkbench.runWith: local`) does not implement. Trinity runs it; the local runtime refuses the config before any work. Shown only when runs are local; it is not a problem with the config.',
    example: 'buffer:\n  explorer_input:\n    taskset:\n      default_workflow_type: alfworld_workflow\n',
    fix: 'Run the config with Trinity-RFT (`trinityWorkbench.runWith: trinity`), or pick one of the names the message lists to try it locally.',
  },
  TRN313: {
    explanation:
      "The taskset's workflow checks the config when Trinity builds it for each task, and this config fails that check, so every task fails after the GPUs are allocated. Step-wise workflows (`step_wise_alfworld_workflow`, and `thinking_budget_workflow` on Trinity main) assert `explorer.rollout_model.enable_history: true`; a `workflow_args` value outside its domain (a non-integer `agent_max_steps`, a negative `thinking_token_budget`, a `desc` map without a start) fails or hangs the workflow.",
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      default_workflow_type: thinking_budget_workflow\n      workflow_args:\n        thinking_token_budget: -1\n',
    fix: 'Set `explorer.rollout_model.enable_history: true`, and give each `workflow_args` value the type the hover names.',
  },
  TRN314: {
    explanation:
      'A vLLM rollout or auxiliary engine refuses to start when its weights leave no room for a KV cache within `gpu_memory_utilization` of the GPU ("No available memory for the cache blocks"), or not room for one sequence of `max_model_len` tokens ("To serve at least one request with the model\'s max seq len ..."). Weights per GPU are the parameters × the engine\'s dtype / `tensor_parallel_size`; one token of KV cache is 2 × layers × KV heads per GPU × head dim × dtype bytes. Only the weights are subtracted (vLLM also keeps its profiled activation peak), so a refusal reported here is certain. The GPU is `trinityWorkbench.gpu` (`check --gpu`), H100-80G by default.',
    example:
      'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 8\nmodel:\n  model_path: Qwen/Qwen2.5-72B-Instruct\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 1\n    tensor_parallel_size: 1\nbuffer:\n  batch_size: 7\n  explorer_input:\n    taskset:\n      path: data/gsm8k\n',
    fix: 'Raise `tensor_parallel_size` (or `gpu_memory_utilization`), lower `max_model_len`, or use a GPU with more memory.',
  },
  TRN315: {
    explanation:
      "The rollout engine's KV cache (what `gpu_memory_utilization` of the GPU leaves after the weights) holds fewer sequences of `max_model_len` tokens than the tasks the explorer runs on one engine at once (its workflow runners, at most its share of a batch), each of which asks for `repeat_times` rollouts. vLLM then queues and preempts requests once responses grow long, and a step takes many rounds of generation. The count is an upper bound (vLLM also keeps its profiled activation peak).",
    example:
      'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 8\nmodel:\n  model_path: Qwen/Qwen3-4B-Instruct-2507\n  max_model_len: 131072\ncluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  runner_per_model: 8\n  rollout_model:\n    engine_num: 4\nbuffer:\n  batch_size: 32\n  explorer_input:\n    taskset:\n      path: data/gsm8k\n',
    fix: 'Lower `max_model_len` or `explorer.runner_per_model`, or raise `tensor_parallel_size` or `gpu_memory_utilization`.',
  },
  TRN316: {
    explanation:
      "Trinity's workflows read their `workflow_args` with `dict.get(key, default)`, so a key the taskset's workflow does not read is dropped without a word and the run uses the default (`agent_max_step: 20` runs FrozenLake with 10 turns). The arguments each workflow reads, with their meaning and default, are in the hover and completion of `workflow_args`; the check runs for the releases whose workflow source was read.",
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      default_workflow_type: frozen_lake_workflow\n      workflow_args:\n        agent_max_step: 20\n',
    fix: 'Rename the key to the argument the message suggests, or remove it.',
  },
  TRN317: {
    explanation:
      "Some workflows build their environment from keys of each task row rather than from the prompt: `frozen_lake_workflow` draws its map from the row's `size`, `p` and `seed` (unless `workflow_args.desc` fixes one map). A missing key takes Trinity's fallback: without `size` the 1×1 map has no room for a goal and the map generator never returns (the task hangs); without `seed` every task plays the same map. A JavaScript plugin's workflow is checked the same way for the `columns` its `workflowReads` export declares (a warning: it gets `undefined`). Checked on the first rows of a local dataset.",
    example:
      'buffer:\n  explorer_input:\n    taskset:\n      path: data/frozenlake   # rows of {"question": ...}\n      default_workflow_type: frozen_lake_workflow\n',
    fix: "Generate the taskset with the workflow's data script (Trinity's `examples/grpo_frozen_lake/get_frozen_lake_data.py` writes `seed`, `size` and `p`), or set `workflow_args.desc`.",
  },
  TRN318: {
    explanation:
      "`max_model_len` (the rollout model's, or an auxiliary model's) is longer than the model supports: vLLM derives the model's limit from its config.json (`max_position_embeddings` and the like) and refuses to start an engine asked for more (`_get_and_verify_max_len`, vllm/config/model.py), so the explorer fails at launch. Checked wherever the model's config.json is on this machine (a local folder, or a hub id in the Hugging Face cache).",
    example: 'model:\n  model_path: ./tiny-model   # config.json: max_position_embeddings 512\n  max_model_len: 544\n',
    fix: "Lower `max_model_len` to the model's limit (and `max_prompt_tokens` + `max_response_tokens` with it), or use a model made for the longer context (Create Small Model sizes it to the config).",
  },
  TRN319: {
    explanation:
      "Settings about scale — how many vLLM engines (`engine_num`), the GPUs one engine's weights are split over (`tensor_parallel_size`), NCCL as the weight sync of a `both` run, Ulysses sequence parallelism, several nodes — spread the same computation over more hardware. A run of this extension's local runtime has one model copy per side in one process, so it accepts them and does not use them; what it computes is the same. The run names them in one line at its start. Shown only where runs are local (`trinityWorkbench.runWith: local`); Trinity-RFT uses them as written. The list is one table (runtime/config/check/scale-settings.ts) behind both.",
    example: 'explorer:\n  rollout_model:\n    engine_num: 4\n    tensor_parallel_size: 2\n',
    fix: 'Nothing to fix: keep them for runs on Trinity-RFT.',
  },
  TRN320: {
    explanation:
      'With `data_processor.experience_pipeline.save_input` on (the default), the experience pipeline keeps every explorer step\'s experiences, as they arrive and before its operators, at `input_save_path` (by default `sqlite:///<buffer.cache_dir>/explorer_output.db`, table `pipeline_input`). Trinity opens that store when the explorer starts and takes only a JSON lines file (a path ending in `.json` or `.jsonl`) or a database URL; any other path raises "Unsupported save_input format" there (trinity/buffer/pipelines/experience_pipeline.py). The local runtime keeps the input the same way and refuses the same paths before any work.',
    example:
      'data_processor:\n  experience_pipeline:\n    save_input: true\n    input_save_path: runs/explorer_output.txt\n',
    fix: 'End the path in `.jsonl` (or `.json`), or name a database (`sqlite:///runs/explorer_output.db`); or set `save_input: false` to keep nothing.',
  },
  TRN321: {
    explanation:
      "The first prompt of an episode, built as its workflow builds it (for `frozen_lake_workflow` the system prompt and the first observation of the taskset's first row; for `simple_workflow`, `math_workflow` and `math_boxed_workflow` the format's system prompt, the row's `prompt_key` column and the reply prefix, for `math_eval_workflow` and `on_policy_distill_math_workflow` their fixed Qwen2.5-Math prompt around the question, for `math_boxed_workflow` with `use_base` the plain text it sends without a template, for `tool_call_workflow` the messages built from the row's `raw_system`, `tools` and `conversations`; the longest of every row up to 2,000 rows or 3 s of counting, the message saying which), counted with the tokenizer and chat template beside the model's config.json, does not fit the rollout model's context. With `model.enable_prompt_truncation` on and the prompt longer than `max_prompt_tokens`, Trinity does not call the model: the experience holds the prompt cut to `max_prompt_tokens` and the fixed text \"[This experience is masked out due to overlong prompt]\", with reward 0, and trains nothing (trinity/common/models/model.py). Otherwise a prompt of `max_model_len` tokens or more leaves no room for an answer and vLLM refuses the request. Checked where the model's tokenizer is on this machine (a local folder, or a hub id in the Hugging Face cache) and the workflow's prompt is known.",
    example:
      'model:\n  model_path: ./tiny-model   # a tokenizer with a chat template\n  max_model_len: 256\nbuffer:\n  explorer_input:\n    taskset:\n      path: data/frozenlake\n      default_workflow_type: frozen_lake_workflow\n',
    fix: "Raise `max_model_len` (and `max_prompt_tokens`) above the prompt's tokens, or shorten the prompt (a smaller map).",
  },
  TRN322: {
    explanation:
      "A multi-turn episode (`frozen_lake_workflow`) carries its whole conversation into every turn: each turn adds the model's answer and the next observation. Counted with the tokenizer and chat template beside the model's config.json on the taskset's first row, with every answer the bare action (```Up```, the shortest that moves), the prompt of a later turn fills `model.max_model_len` (vLLM refuses it, and the episode fails there) or spends the 10240 tokens Trinity's FrozenLake allows after the first prompt (the episode ends `response_truncated` with reward 0) before `workflow_args.agent_max_steps` turns. The turns named are the most that can happen; longer answers leave fewer. Trinity: trinity/common/workflows/envs/frozen_lake/workflow.py `run_async`.",
    example:
      'model:\n  model_path: ./tiny-model   # a tokenizer with a chat template\n  max_model_len: 1800\n  max_prompt_tokens: 1500\n  max_response_tokens: 300\nbuffer:\n  explorer_input:\n    taskset:\n      path: data/frozenlake\n      default_workflow_type: frozen_lake_workflow\n      workflow_args:\n        agent_max_steps: 10\n',
    fix: 'Raise `max_model_len` (room for every turn and its answers), or lower `agent_max_steps` to the turns that fit.',
  },
  TRN323: {
    explanation:
      "The local runtime's trainer differentiates a micro-batch's rows at once (`trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu`, else the whole `buffer.train_batch_size`), each as long as the longest row the explorer can produce (`max_prompt_tokens` + `max_response_tokens`, a multi-turn episode's budget, at most `max_model_len`). On the wasm backend its tensors live in one WebAssembly heap of at most 4 GiB, which no setting raises, and the engine materialises full attention score matrices per layer and head and logits over the vocabulary per position, beside the parameters' training state (weights, AdamW's moments and gradients: about five float32 copies of the model at the update's peak, plus the frozen reference model where the trainer loads it and PPO's critic). The estimate (from the model's config.json, calibrated against the peak tensor bytes the engine reaches and the heap those need: about half of tfjs' count for activations, about all of it for parameters) says that even the least heap the pass may need exceeds that limit, so the trainer would run out of memory after the explorer's first step; `trinity-workbench run` refuses it before any work. Checked where runs go to the local runtime (`trinityWorkbench.runWith: local`, `check --local`).",
    example:
      'model:\n  model_path: ./tiny-model   # config.json: 2 layers, 64 wide, 4 heads\n  max_model_len: 14436\n  max_response_tokens: 10240\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 2\nbuffer:\n  batch_size: 2\n  explorer_input:\n    taskset:\n      path: data/frozenlake\n      default_workflow_type: frozen_lake_workflow\n',
    fix: 'Set `ppo_micro_batch_size_per_gpu` to the rows the message says fit, lower `max_model_len` or the response / episode budget, or run the config on Trinity-RFT (`trinityWorkbench.runWith: trinity`).',
  },
  TRN324: {
    explanation:
      "As TRN323, but only the most heap the local trainer's pass may need (not the least) passes 75% of the wasm backend's 4 GiB: the heap also holds the allocator's fragmentation, so the run may run out of memory in the trainer. SFT and DPO get this warning, never TRN323: their rows are the dataset's, padded to the longest in a batch, and `max_model_len` only caps them, so a pass of that length may not happen.",
    example:
      'model:\n  model_path: ./tiny-model   # config.json: 2 layers, 64 wide, 4 heads\n  max_model_len: 2304\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 2\nbuffer:\n  batch_size: 2\n  explorer_input:\n    taskset:\n      path: data/gsm8k\n',
    fix: 'Set `ppo_micro_batch_size_per_gpu` lower, or lower `max_model_len` or the response budget.',
  },
  TRN325: {
    explanation:
      "The local runtime's explorer decodes the rows of its concurrent calls in one engine call, as vLLM batches its runners' requests: up to `explorer.runner_per_model` tasks' runs at once (a single-turn task's `repeat_times` runs are one call of that many rows; an agent's episodes are a row each, one per runner). An evaluation runs every eval taskset's tasks together, `runner_per_model` at once, each with its taskset's own `repeat_times` (default 1): with fewer training tasks than runners it may decode more rows than a training step, and then it is what counts. Each row holds a KV cache as long as the longest row the explorer can produce (at most `max_model_len`), allocated once for the call, beside the explorer's own copy of the weights. On the wasm backend these live in one WebAssembly heap of at most 4 GiB: the explorer worker's own when the explorer has a thread (`synchronizer.sync_offset` ≥ 1 and the other overlapping settings), else the heap that also holds the trainer's weights and AdamW state (`mode: both` taking turns, `colocate`). The estimate (generation-bytes.ts, calibrated against the peak tensor bytes the engine reaches) says that even the least heap one engine call needs, counting one row per runner, exceeds that limit; `trinity-workbench run` refuses it before any work. Checked for `both`, `explore` and `colocate` where runs go to the local runtime.",
    example:
      "mode: explore\nmodel:\n  model_path: ./small-model   # config.json: Qwen2.5-0.5B-Instruct's shape\n  max_model_len: 4096\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 4\nbuffer:\n  batch_size: 32\n  explorer_input:\n    taskset:\n      path: data/gsm8k\nexplorer:\n  runner_per_model: 32\n",
    fix: 'Lower `explorer.runner_per_model` to the runners the message says fit (the quick fix sets it), or lower `max_model_len` or the response budget, or run the config on Trinity-RFT (`trinityWorkbench.runWith: trinity`).',
  },
  TRN326: {
    explanation:
      "As TRN325, but only the most heap the explorer's engine call may need (every runner's task with all its `repeat_times` rows, the estimate's upper error) passes 75% of the wasm backend's 4 GiB: the heap also holds the allocator's fragmentation, so the explorer may run out of memory in its first generations. The most may pass the heap itself where the least fits, as for an evaluation whose eval taskset may hold fewer tasks than there are runners.",
    example:
      "mode: explore\nmodel:\n  model_path: ./small-model   # config.json: Qwen2.5-0.5B-Instruct's shape\n  max_model_len: 4096\nalgorithm:\n  algorithm_type: grpo\n  repeat_times: 4\nbuffer:\n  batch_size: 4\n  explorer_input:\n    taskset:\n      path: data/gsm8k\nexplorer:\n  runner_per_model: 4\n",
    fix: 'Lower `explorer.runner_per_model`, `max_model_len` or the response budget.',
  },
  // ------------------------------------------------------------------------------------------------------------
  // 4xx: run health, from the metrics of the config's last (or live) run
  // ------------------------------------------------------------------------------------------------------------
  TRN400: {
    explanation:
      "Over the latest steps, at least `trinityWorkbench.runHealth.truncatedShare` (default 50%) of the trained responses end exactly at `model.max_response_tokens`: `response_length/clip_ratio` (the share of a batch's responses as long as its longest, as Trinity pads a batch to its longest) at steps whose `response_length/max` is the limit. The reward then scores answers cut off mid-way, which usually means a reward of 0 for reasons the policy cannot learn from.",
    example: 'model:\n  max_response_tokens: 4\n',
    fix: 'Raise `max_response_tokens` (the quick fix doubles it; keep `max_prompt_tokens + max_response_tokens <= max_model_len`), or prompt for shorter answers.',
  },
  TRN401: {
    explanation:
      'For the latest `window` explorer steps, the largest per-group reward standard deviation (`experience_pipeline/group_advantages/reward_std/max`, `pipeline/…` up to v0.3.1) is 0: every response of every task got the same reward. Group-relative advantages (GRPO, OPMD, …) are then all 0 and the policy gets no gradient from the rewards.',
    example: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 2\n',
    fix: 'Raise `algorithm.repeat_times` (the quick fix doubles it) or the sampling temperature so that responses differ, or use tasks the model sometimes solves or a reward with partial credit.',
  },
  TRN402: {
    explanation:
      "The policy's entropy (`actor/entropy`, or `actor/entropy_loss` as Trinity's entropy loss fn logs it) fell to `runHealth.entropyCollapseRatio` (default 40%) of its first value. A collapsed policy samples nearly the same answer every time: exploration stops and so does learning.",
    example: 'algorithm:\n  optimizer:\n    lr: 3e-2\n  entropy_loss_fn_args:\n    entropy_coef: 0.0\n',
    fix: "Raise `entropy_loss_fn_args.entropy_coef`, lower the learning rate, or clip the ratio's upper side less (`clip_range_high`, as DAPO does).",
  },
  TRN403: {
    explanation:
      '`actor/kl_loss` (the KL to the reference model) or `actor/ppo_kl` (how far one update moved the policy from the rollout policy) is above `runHealth.klMax` (default 1). The policy is drifting fast: rewards are often being hacked, or the learning rate is too high.',
    example: 'algorithm:\n  optimizer:\n    lr: 3e-2\n',
    fix: 'Lower `algorithm.optimizer.lr`; raise `kl_loss_fn_args.kl_coef` for `kl_loss`, or tighten `clip_range` for `ppo_kl`.',
  },
  TRN404: {
    explanation:
      'The latest `actor/grad_norm` is not finite, or above `runHealth.gradNormSpike` (default 10) times the median of the steps before it (with at least `window` of them). Such a spike is an unstable update; it often comes before a loss of the policy.',
    example: 'trainer:\n  grad_clip: 100.0\n',
    fix: 'Clip gradients harder (`trainer.grad_clip`, `trainer.actor_grad_clip` up to v0.3.1) or lower the learning rate.',
  },
  TRN405: {
    explanation:
      'A run that is still live has logged no step for `runHealth.stallFactor` (default 5) times its median step time. A rollout may hang (it is retried only after `explorer.max_timeout`), the trainer may wait for experiences that never come, or a process died.',
    example: 'explorer:\n  max_timeout: 1800\n',
    fix: "Look at the run's log (the Runs view's output channel); lower `explorer.max_timeout` so that a hung rollout is retried sooner.",
  },
  TRN406: {
    explanation:
      "In `both` mode the explorer has logged `runHealth.trainerLag` (default 5) more steps since the trainer's last step than `synchronizer.sync_offset` and `sync_interval` let it run ahead: the trainer gets no batch. Every task may be failing (the local runtime stops such a run after 3 steps with the first task's error), the experience pipeline may drop every experience, or `buffer.train_batch_size` may be more than a step makes (`batch_size` × `repeat_times`).",
    example: 'buffer:\n  batch_size: 4\n  train_batch_size: 256\n',
    fix: "Look at the run's output for failing tasks; make `train_batch_size` what a step makes (`batch_size` × `repeat_times`).",
  },
  TRN407: {
    explanation:
      'An agent episode (`frozen_lake_workflow`) ends at the goal or a hole (`env_done`), after `workflow_args.agent_max_steps` turns, or when its tokens run out: every token after the first prompt counts against one budget (10240 in Trinity, whose GenerationConfig has no `max_response_tokens` for the workflow to read) and the conversation must fit `model.max_model_len`. The cut episode loses its last user message and scores 0. At most `rollout/env_steps/mean` ÷ `agent_max_steps` of the episodes can have used all their turns, so at least (1 − `rollout/env_done/mean`) − `rollout/env_steps/mean` ÷ `agent_max_steps` ended on the budget; reported when that bound, averaged over the window, reaches `runHealth.budgetEndedShare` (default 50%).',
    example:
      'model:\n  max_model_len: 2048\nbuffer:\n  explorer_input:\n    taskset:\n      workflow_args:\n        agent_max_steps: 10\n',
    fix: 'Raise `model.max_model_len`, lower `agent_max_steps`, or ask the model for shorter answers (a system prompt that wants the action only).',
  },
  TRN408: {
    explanation:
      "In every step of the window no agent episode reached the goal (`rollout/test_score/mean`, FrozenLake's final reward, is 0), or every episode did: each group of `repeat_times` episodes of a task has one outcome, so GRPO's group-relative advantages are all 0 and the policy learns nothing. `runHealth.sameOutcomeMargin` (default 0) lets a rate near 0 or 1 count too.",
    example: 'buffer:\n  explorer_input:\n    taskset:\n      workflow_args:\n        agent_max_steps: 2\n',
    fix: "When every episode fails: more turns (`agent_max_steps`), smaller maps (the rows' `size`) or closer goals (`env_max_steps`). When every episode succeeds: harder tasks.",
  },
  TRN409: {
    explanation:
      "Most of the agent episodes the local runtime recorded in `monitor/rollouts.jsonl` over the window ended on an invalid action: the model's last answer named no move. In `frozen_lake_workflow` an answer is an action only when its last fenced block (```` ```Up``` ````) holds a direction or its number; anything else is Trinity's invalid action, which changes nothing and earns 0. Trinity logs no metric for it, so the rule counts the runtime's rollout records (each names the turns whose action was invalid; a sample of each step's episodes, whole groups at a time). Reported when the share over the window reaches `runHealth.invalidEndedShare` (default 50%). The episodes then end on the turn limit or the token budget while the model is not playing, and the groups differ in little but format.",
    example: 'model:\n  model_path: Qwen/Qwen2.5-0.5B\n',
    fix: 'Start from a model that answers in the format: an instruct model, or one warmed up on demonstrations (an SFT stage before the GRPO stage).',
  },
};
