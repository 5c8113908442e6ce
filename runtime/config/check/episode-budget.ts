/**
 * TRN321: the first prompt of an episode against the rollout model's context, counted with the model's own
 * tokenizer and chat template (`CheckHost.firstPromptTokens`) on the first row of a local taskset.
 *
 * What Trinity does with a prompt too long (trinity/common/models/model.py @e83f13c, `_handle_prompt_truncation`
 * and `convert_messages_to_experience`): with `enable_prompt_truncation` on and the prompt longer than
 * `max_prompt_tokens`, the model is not called; the experience holds the prompt cut to `max_prompt_tokens`, the
 * fixed text "[This experience is masked out due to overlong prompt]", reward 0 and `prompt_truncated`, so it
 * trains nothing. With it off, vLLM is asked for the whole prompt and refuses one that leaves no room under
 * `max_model_len`.
 */
import type { CheckContext } from './check-context';
import type { DatasetPeek } from '../datasets/peek-result';
import type { TasksetPath } from '../config-path';
import { workflowTypePath } from './tasksets';

export async function checkEpisodeBudget(ctx: CheckContext, base: TasksetPath, peek: DatasetPeek): Promise<void> {
  const count = ctx.host.firstPromptTokens;
  const modelPath = ctx.get('model.model_path');
  const row = peek.rows[0];
  if (!count || typeof modelPath !== 'string' || !row || ctx.get(`${base}.format.workflow_key`)) return;
  const workflow = ctx.get(workflowTypePath(ctx, base));
  if (typeof workflow !== 'string') return;
  const workflowArgs = (ctx.get(`${base}.workflow_args`) ?? {}) as Record<string, unknown>;
  const n = await count({ modelPath, baseDirs: ctx.host.baseDirs ?? [], workflow, workflowArgs, row });
  if (n === undefined) return;
  const first = `the first prompt of \`${base}.path\` (row 1, \`${workflow}\`) is ${n} tokens under ${modelPath}'s chat template`;
  const truncation = ctx.get('model.enable_prompt_truncation') === true;
  const p = ctx.get('model.max_prompt_tokens');
  if (truncation && typeof p === 'number' && n > p) {
    const derived = ctx.written('model.max_prompt_tokens') ? '' : ' (`max_model_len` − `max_response_tokens`)';
    ctx.report(
      'TRN321',
      `${capital(first)}, more than \`max_prompt_tokens\` ${p}${derived}. With \`enable_prompt_truncation\` on, Trinity does not call the model for it: the experience holds the prompt cut to ${p} tokens and a fixed text, with reward 0, and trains nothing. Raise \`max_prompt_tokens\` to at least ${n} (and \`max_model_len\` with it).`,
      budgetKey(ctx),
    );
    return;
  }
  const m = ctx.get('model.max_model_len');
  if (typeof m !== 'number' || n < m) return;
  ctx.report(
    'TRN321',
    `${capital(first)}; with \`max_model_len\` ${m}, the episode has room for ${m - n} more tokens: not one token of an answer, and vLLM refuses the request. Raise \`max_model_len\` above ${n}.`,
    ctx.written('model.max_model_len') ? 'model.max_model_len' : 'model',
  );
}

/** The key to change: `max_prompt_tokens` where written, else `max_model_len` it is derived from. */
function budgetKey(ctx: CheckContext): 'model.max_prompt_tokens' | 'model.max_model_len' | 'model' {
  if (ctx.written('model.max_prompt_tokens')) return 'model.max_prompt_tokens';
  return ctx.written('model.max_model_len') ? 'model.max_model_len' : 'model';
}

function capital(s: string): string {
  return s[0].toUpperCase() + s.slice(1);
}
