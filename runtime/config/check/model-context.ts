/**
 * A context longer than the model's: vLLM refuses to start an engine whose `max_model_len` exceeds the length it
 * derives from the model's config.json (the smallest of `max_position_embeddings`, `n_positions`, … — vLLM's
 * `_get_and_verify_max_len`, vllm/config/model.py at 0052a5b, raises ValueError unless
 * VLLM_ALLOW_LONG_MAX_MODEL_LEN is set), so Trinity's explorer fails at launch. Checked where the model is a local
 * folder the host can read; hub ids are not looked up.
 */
import { rolesOf } from '../model/choices';
import type { CheckContext } from './context';
import { candidatePaths } from './runtime';
import type { ConfigPath } from '../config-path';

export function checkModelContext(ctx: CheckContext): void {
  const read = ctx.host.modelContext;
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
    for (const dir of candidatePaths(ctx, modelPath)) {
      const limit = read(dir);
      if (!limit) continue;
      if (e.len > limit.length)
        ctx.report(
          'TRN314',
          `\`${e.lenPath}\` (${e.len}) is longer than the model at \`${modelPath}\` supports (${limit.key} = ${limit.length} in its config.json): vLLM refuses to start its engine ("User-specified max_model_len is greater than the derived max_model_len"). Lower \`${e.lenPath}\` to ${limit.length} or less, or use a model made for ${e.len} tokens.`,
          ctx.written(e.lenPath) ? e.lenPath : e.path,
        );
      break;
    }
  }
}
