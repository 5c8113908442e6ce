/**
 * Features a config can turn on that need what only a Trinity-RFT deployment has: Data-Juicer's task pipeline and
 * the experience pipeline's extra buffers (trinity/common/config.py `TaskPipelineConfig`, `ExperiencePipelineConfig`
 * and trinity/buffer/pipelines/, 10796ed), training on the Tinker service and rollouts from an external
 * OpenAI-compatible engine (`TinkerConfig`, `ExternalModelConfig`, config_validator.py `_check_external_model`,
 * 10796ed). Each message says what Trinity would have done, so the user knows what a local run would have skipped.
 */
import { INPUT_SAVE_PATH } from '../../config/check/runtime';
import { valueAtPath } from '../../config/config-path';
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

/** Why a queue cannot carry experiences between this job's separate explore and train processes, if it cannot. */
function unsharedQueue(section: Record<string, any>): string | undefined {
  const path = typeof section.path === 'string' ? section.path : '';
  // The check fills a missing path with `<cache_dir>/<name>.jsonl`, Trinity's default, which both processes share.
  if (!path) return 'it has no `path` through which the local processes could share it';
  if (!/^sqlite:\/\/\//.test(path) && !/\.jsonl?$/.test(path))
    return `its \`path\` (${path}) is neither a \`sqlite:///\` database nor a JSON lines file the other process could read`;
  if (section.replay_buffer?.enable === true || section.use_priority_queue === true)
    return "it is a priority replay queue, whose priorities and reuse live in the queue's memory, not in its file";
  return undefined;
}

/** The database server a path names (Trinity's `is_database_url` beyond SQLite), or undefined. */
function databaseServer(path: unknown): string | undefined {
  if (typeof path !== 'string') return undefined;
  if (path.startsWith('postgresql://')) return 'PostgreSQL';
  if (path.startsWith('mysql://')) return 'MySQL';
  return undefined;
}

const ONLY_SQLITE = 'the local runtime opens SQLite databases only (`sqlite:///<file>`)';

/**
 * A `storage_type: sql` buffer at a database server: Trinity's SQL storage opens any SQLAlchemy URL
 * (trinity/buffer/storage/sql.py, f3c8dec); the local one opens SQLite files (runtime/rft/buffer/sql.ts).
 */
function serverBuffer(path: string): SettingRule {
  return {
    path,
    since: 'v0.3.0',
    local: ['sqlite:///<file>'],
    doc: `\`${path}\` of a \`storage_type: sql\` buffer at a \`postgresql://\` or \`mysql://\` server`,
    refuse: (v, cfg, at) => {
      const server = databaseServer(v);
      const storage = valueAtPath(cfg, `${at.slice(0, -'.path'.length)}.storage_type`);
      return server && String(storage).toLowerCase() === 'sql'
        ? `this buffer's rows would live in the ${server} database \`${String(v)}\`; ${ONLY_SQLITE}`
        : undefined;
    },
  };
}

export const FEATURE_RULES: readonly SettingRule[] = [
  {
    // experience_pipeline.py `_init_input_storage` (f3c8dec): a database URL is a sql storage of the pipeline's input.
    path: INPUT_SAVE_PATH,
    since: 'v0.3.0',
    local: ['sqlite:///<file>', 'a .jsonl file'],
    doc: `\`${INPUT_SAVE_PATH}\` at a \`postgresql://\` or \`mysql://\` server`,
    refuse: (v, cfg) => {
      const server = databaseServer(v);
      const mode = cfg.mode;
      return server &&
        cfg.data_processor?.experience_pipeline?.save_input === true &&
        mode !== 'train' &&
        mode !== 'bench'
        ? `the experience pipeline would keep its input in the ${server} database \`${String(v)}\`; ${ONLY_SQLITE} or a JSON lines file`
        : undefined;
    },
  },
  ...[
    'buffer.explorer_input.taskset.path',
    'buffer.explorer_input.tasksets.*.path',
    'buffer.explorer_input.eval_tasksets.*.path',
    'buffer.trainer_input.experience_buffer.path',
    'buffer.trainer_input.auxiliary_buffers.*.path',
  ].map(serverBuffer),
  {
    path: 'buffer.trainer_input.experience_buffer',
    since: 'v0.3.0',
    local: ['a queue persisted to a sqlite:/// or .jsonl path', 'storage_type: sql'],
    doc: '`storage_type: queue` between separate `explore` and `train` processes as a priority replay queue, or with a `path` that is neither `sqlite:///` nor JSON lines',
    refuse: (v, cfg) => {
      if (cfg.mode !== 'explore' && cfg.mode !== 'train') return undefined;
      const section = (v ?? {}) as Record<string, any>;
      if (String(section.storage_type ?? 'queue').toLowerCase() !== 'queue') return undefined;
      const why = unsharedQueue(section);
      return why
        ? `in \`mode: ${cfg.mode}\` this queue is what the job's other process (${cfg.mode === 'train' ? 'the explorer' : 'the trainer'}) would share, but ${why}`
        : undefined;
    },
  },
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
