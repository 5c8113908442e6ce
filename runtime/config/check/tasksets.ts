/** The dotted paths of every taskset (and optionally every buffer) a config declares, for checks that visit each. */
import type { CheckContext } from './context';

export function tasksetPaths(ctx: CheckContext, opts: { includeBuffers?: boolean; includeEval?: boolean } = {}): string[] {
  const out: string[] = [];
  const input = 'buffer.explorer_input';
  if (ctx.get(`${input}.taskset`)) out.push(`${input}.taskset`);
  const many = ctx.get(`${input}.tasksets`);
  if (Array.isArray(many)) many.forEach((_, i) => out.push(`${input}.tasksets.${i}`));
  if (opts.includeEval !== false) {
    const evals = ctx.get(`${input}.eval_tasksets`);
    if (Array.isArray(evals)) evals.forEach((_, i) => out.push(`${input}.eval_tasksets.${i}`));
  }
  if (opts.includeBuffers) {
    const ti = 'buffer.trainer_input';
    if (ctx.get(`${ti}.experience_buffer`)) out.push(`${ti}.experience_buffer`);
    const aux = ctx.get(`${ti}.auxiliary_buffers`);
    if (aux && typeof aux === 'object') for (const k of Object.keys(aux)) out.push(`${ti}.auxiliary_buffers.${k}`);
    if (ctx.get(`${ti}.sft_warmup_dataset`)) out.push(`${ti}.sft_warmup_dataset`);
  }
  return out;
}
