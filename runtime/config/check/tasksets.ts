/** The dotted paths of every taskset and buffer a config declares, for checks that visit each. */
import type { CheckContext } from './check-context';
import {
  configPath,
  type ConfigPath,
  type StoragePath,
  type TasksetPath,
  type TrainerBufferPath,
} from '../config-path';

export function tasksetPaths(ctx: CheckContext, opts: { includeEval?: boolean } = {}): TasksetPath[] {
  const out: TasksetPath[] = [];
  const input = 'buffer.explorer_input';
  if (ctx.get(`${input}.taskset`)) out.push(`${input}.taskset`);
  const many = ctx.get(`${input}.tasksets`);
  if (Array.isArray(many)) many.forEach((_, i) => out.push(`${input}.tasksets.${i}`));
  if (opts.includeEval !== false) {
    const evals = ctx.get(`${input}.eval_tasksets`);
    if (Array.isArray(evals)) evals.forEach((_, i) => out.push(`${input}.eval_tasksets.${i}`));
  }
  return out;
}

/** Every taskset and every buffer the trainer reads. */
export function storagePaths(ctx: CheckContext): (TasksetPath | TrainerBufferPath)[] {
  const out: (TasksetPath | TrainerBufferPath)[] = tasksetPaths(ctx);
  const ti = 'buffer.trainer_input';
  if (ctx.get(`${ti}.experience_buffer`)) out.push(`${ti}.experience_buffer`);
  const aux = ctx.get(`${ti}.auxiliary_buffers`);
  if (aux && typeof aux === 'object') for (const k of Object.keys(aux)) out.push(`${ti}.auxiliary_buffers.${k}`);
  if (ctx.get(`${ti}.sft_warmup_dataset`)) out.push(`${ti}.sft_warmup_dataset`);
  return out;
}

/** The key naming a taskset's workflow: an eval taskset's own `default_eval_workflow_type` when set. */
export function workflowTypePath(ctx: CheckContext, base: TasksetPath): ConfigPath {
  const isEval = base.includes('eval_tasksets');
  // Only eval tasksets (and v0.3's single taskset) hold default_eval_workflow_type; configPath checks that.
  const evalKey = isEval ? configPath(`${base}.default_eval_workflow_type`) : undefined;
  return evalKey && ctx.get(evalKey) ? evalKey : `${base}.default_workflow_type`;
}

/** Whether Trinity's check step handles `data_processor.task_pipeline` in this mode (every mode before v0.4.0). */
export function taskPipelineApplies(ctx: CheckContext): boolean {
  if (!ctx.get('data_processor.task_pipeline')) return false;
  const modes = ctx.since('v0.5.0') ? ['explore', 'train', 'both', 'colocate'] : ['explore', 'train', 'both'];
  return !ctx.since('v0.4.0') || modes.includes(ctx.get('mode') ?? 'both');
}

/**
 * The buffer the task pipeline writes into when `task_pipeline.output` is unset, as Trinity's check step picks it
 * (trinity/common/config.py, DataProcessor checks): up to v0.3.1 the taskset when it has a path, else an SFT/DPO
 * experience buffer with a path; from v0.3.2 the first taskset in every mode but `train`, and in `train` the
 * experience buffer of `sft`/`dpo`. The pipeline creates that path at launch (and refuses one that exists).
 */
export function taskPipelineDefaultOutput(ctx: CheckContext, schema: string): StoragePath | undefined {
  const tp = ctx.get('data_processor.task_pipeline');
  if (!tp || (tp.output !== null && tp.output !== undefined) || !taskPipelineApplies(ctx)) return undefined;
  const eb = 'buffer.trainer_input.experience_buffer';
  const first = tasksetPaths(ctx, { includeEval: false })[0];
  if (!ctx.since('v0.3.2')) {
    if (ctx.get('buffer.explorer_input.taskset.path')) return 'buffer.explorer_input.taskset';
    return ['dpo', 'sft'].includes(schema) && ctx.get(`${eb}.path`) ? eb : undefined;
  }
  if (ctx.get('mode') !== 'train') return first;
  return ['dpo', 'sft'].includes(String(ctx.get('algorithm.algorithm_type'))) ? eb : undefined;
}

/** The path the task pipeline writes (its `output.path`, else the default output's), if any. */
export function taskPipelineOutputPath(ctx: CheckContext, schema: string): string | undefined {
  if (!taskPipelineApplies(ctx)) return undefined;
  const out = ctx.get('data_processor.task_pipeline.output');
  const base: StoragePath | undefined = out
    ? 'data_processor.task_pipeline.output'
    : taskPipelineDefaultOutput(ctx, schema);
  const p = base && ctx.get(`${base}.path`);
  return typeof p === 'string' && p !== '' ? p : undefined;
}
