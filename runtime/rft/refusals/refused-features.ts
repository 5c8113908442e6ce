/**
 * Features a config can turn on that need what only a Trinity-RFT deployment has: Data-Juicer's task pipeline and
 * the experience pipeline's extra buffers (trinity/common/config.py `TaskPipelineConfig`, `ExperiencePipelineConfig`
 * and trinity/buffer/pipelines/, 10796ed), training on the Tinker service and rollouts from an external
 * OpenAI-compatible engine (`TinkerConfig`, `ExternalModelConfig`, config_validator.py `_check_external_model`,
 * 10796ed). Each message says what Trinity would have done, so the user knows what a local run would have skipped.
 */
import type { SettingRule } from './setting-rule';

const names = (xs: unknown): string =>
  Array.isArray(xs) && xs.length
    ? xs.map((x) => `\`${String((x as { name?: unknown })?.name ?? x)}\``).join(', ')
    : 'none listed';

/** The taskset (or, in train mode, the trainer's buffer) a task pipeline writes when `output` is unset. */
function pipelineTarget(cfg: Record<string, any>): string {
  const out = cfg.data_processor?.task_pipeline?.output;
  const target =
    out ??
    (cfg.mode === 'train'
      ? cfg.buffer?.trainer_input?.experience_buffer
      : (cfg.buffer?.explorer_input?.tasksets?.[0] ?? cfg.buffer?.explorer_input?.taskset));
  if (!target) return 'the taskset';
  return `\`${target.name ?? 'the taskset'}\`${target.path ? ` (\`${target.path}\`)` : ''}`;
}

export const FEATURE_RULES: readonly SettingRule[] = [
  {
    path: 'data_processor.task_pipeline',
    since: 'v0.3.0',
    local: ['the taskset as it is on disk'],
    doc: '`data_processor.task_pipeline` (Data-Juicer operators over the raw tasks)',
    refuse: (v, cfg) => {
      if (v === null || v === undefined) return undefined;
      const p = v as Record<string, any>;
      const ops = p.config_path
        ? `the Data-Juicer recipe \`${p.config_path}\``
        : `the Data-Juicer operators ${names(p.operators)}`;
      const inputs = Array.isArray(p.inputs) && p.inputs.length ? ` over ${names(p.inputs)}` : '';
      return (
        `the task pipeline would run ${ops}${inputs} and write the result to ${pipelineTarget(cfg)} before any ` +
        'exploring; Data-Juicer runs on Trinity-RFT only, and the local runtime would read that taskset as it is on disk'
      );
    },
  },
  {
    path: 'data_processor.experience_pipeline.inputs',
    since: 'v0.3.0',
    local: ['the explorer output'],
    doc: '`data_processor.experience_pipeline.inputs` (extra input buffers of the experience pipeline)',
    refuse: (v) =>
      v && typeof v === 'object' && Object.keys(v).length
        ? `the experience pipeline would also read the buffers ${names(Object.keys(v))}; extra pipeline inputs run on Trinity-RFT only, and the local pipeline reads the explorer's experiences alone`
        : undefined,
  },
  {
    path: 'data_processor.experience_pipeline.output',
    since: 'v0.3.0',
    local: ['buffer.trainer_input.experience_buffer'],
    doc: '`data_processor.experience_pipeline.output` (a pipeline output other than the trainer input)',
    refuse: (v) =>
      v !== null && v !== undefined
        ? 'the experience pipeline would write to its own output buffer; the local pipeline writes to `buffer.trainer_input.experience_buffer` only'
        : undefined,
  },
  {
    path: 'model.tinker.enable',
    since: 'v0.4.0',
    local: ['the local model'],
    doc: '`model.tinker.enable` (training and sampling on the Tinker service)',
    refuse: (v, cfg) =>
      v === true
        ? `training and sampling would run on the Tinker service (a LoRA of rank ${cfg.model?.tinker?.rank ?? 16} of \`${cfg.model?.model_path}\`; it needs a Tinker account, its \`TINKER_API_KEY\` and network access); the local runtime would train the local model instead`
        : undefined,
  },
  {
    path: 'model.external_model.enable',
    since: 'v0.5.2',
    local: ['the local model'],
    doc: '`model.external_model.enable` (rollouts from an external OpenAI-compatible service)',
    refuse: (v, cfg) => {
      if (v !== true) return undefined;
      const e = (cfg.model?.external_model ?? {}) as Record<string, unknown>;
      return (
        `the rollouts would come from the external model \`${e.model_name ?? cfg.model?.model_path}\` at the OpenAI-compatible service in ` +
        `\`$${e.base_url_env ?? 'OPENAI_BASE_URL'}\` (its key in \`$${e.api_key_env ?? 'OPENAI_API_KEY'}\`); that engine runs on Trinity-RFT only, and the local runtime would sample the local model instead`
      );
    },
  },
];
