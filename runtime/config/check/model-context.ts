/**
 * A context longer than the model's: vLLM refuses to start an engine whose `max_model_len` exceeds the length it
 * derives from the model's config.json (the smallest of `max_position_embeddings`, `n_positions`, … — vLLM's
 * `_get_and_verify_max_len`, vllm/config/model.py at 0052a5b, raises ValueError unless
 * VLLM_ALLOW_LONG_MAX_MODEL_LEN is set), so Trinity's explorer fails at launch. Checked where the host can read the
 * model's config.json (`CheckHost.modelConfig`: a local folder or the Hugging Face cache, the one reader the memory
 * checks use too).
 */
import { rolesOf } from '../model/choices';
import type { CheckContext } from './check-context';
import type { ConfigPath } from '../config-path';

export interface ModelContext {
  /** The config.json key the limit comes from. */
  key: string;
  length: number;
}

/** vLLM's keys for a model's length, of which it takes the smallest (`model_max_length` overrides them). */
const LENGTH_KEYS = [
  'max_position_embeddings',
  'n_positions',
  'max_seq_len',
  'seq_length',
  'model_max_length',
  'max_target_positions',
  'max_sequence_length',
  'max_seq_length',
  'seq_len',
];

/** The longest context a model's parsed config.json supports (rope scaling not applied: our models have none). */
export function modelContextOf(config: unknown): ModelContext | undefined {
  if (!config || typeof config !== 'object') return undefined;
  const c = config as Record<string, unknown>;
  const own = c.model_max_length;
  if (typeof own === 'number' && own > 0) return { key: 'model_max_length', length: own };
  let best: ModelContext | undefined;
  for (const key of LENGTH_KEYS) {
    const v = c[key];
    if (typeof v === 'number' && v > 0 && (!best || v < best.length)) best = { key, length: v };
  }
  return best;
}

export function checkModelContext(ctx: CheckContext): void {
  const read = ctx.host.modelConfig;
  if (!read || !rolesOf(ctx.get('mode') ?? 'both').explorer) return;
  const fallback = ctx.get('model.max_model_len');
  const engines: { path: ConfigPath; lenPath: ConfigPath; len: unknown }[] = [
    {
      path: 'model.model_path',
      lenPath: ctx.written('explorer.rollout_model.max_model_len')
        ? 'explorer.rollout_model.max_model_len'
        : 'model.max_model_len',
      len: ctx.get('explorer.rollout_model.max_model_len') ?? fallback,
    },
  ];
  const aux = (ctx.get('explorer.auxiliary_models') as Record<string, unknown>[] | undefined) ?? [];
  aux.forEach((m, i) => {
    const own = `explorer.auxiliary_models.${i}.max_model_len` as ConfigPath;
    engines.push({
      path: `explorer.auxiliary_models.${i}.model_path` as ConfigPath,
      lenPath: ctx.written(own) ? own : 'model.max_model_len',
      len: m.max_model_len ?? fallback,
    });
  });
  for (const e of engines) {
    const modelPath = ctx.get(e.path);
    if (typeof modelPath !== 'string' || modelPath === '' || typeof e.len !== 'number') continue;
    const config = read(modelPath, ctx.host.baseDirs ?? []);
    const limit = config && 'json' in config ? modelContextOf(config.json) : undefined;
    if (limit && e.len > limit.length)
      ctx.report(
        'TRN318',
        `\`${e.lenPath}\` (${e.len}) is longer than the model at \`${modelPath}\` supports (${limit.key} = ${limit.length} in its config.json): vLLM refuses to start its engine ("User-specified max_model_len is greater than the derived max_model_len"). Lower \`${e.lenPath}\` to ${limit.length} or less, or use a model made for ${e.len} tokens.`,
        ctx.written(e.lenPath) ? e.lenPath : e.path,
      );
  }
}
