/**
 * Opens each local dataset a config names and checks that the keys its `format` says to read are in the first
 * rows. Trinity would find out with a KeyError (SFT, DPO) or silently empty prompts and truths (tasks) mid-run.
 */
import { existsSync } from 'node:fs';
import { peekDataset } from '../datasets/peek-dataset';
import { candidatePaths } from './runtime';
import type { CheckContext } from './check-context';
import { storagePaths, workflowTypePath } from './tasksets';
import { registryEntryAt } from '../model/registries';
import { taskColumnsRead } from '../model/task-columns';
import { checkWorkflowRows, readsTaskRows } from './workflow-rows';
import { checkEpisodeBudget } from './episode-budget';
import { isTasksetPath, type StoragePath, type TasksetPath } from '../config-path';

interface KeyNeed {
  /** The `format` key naming the column, e.g. `prompt_key`. */
  formatKey: 'prompt_key' | 'response_key' | 'messages_key' | 'system_prompt_key' | 'chosen_key' | 'rejected_key';
  severity: 'error' | 'warning';
  why: string;
}

export async function checkDatasets(ctx: CheckContext): Promise<void> {
  const exists = ctx.host.exists ?? existsSync;
  for (const base of storagePaths(ctx)) {
    const path = ctx.get(`${base}.path`);
    const storage = String(ctx.get(`${base}.storage_type`) ?? 'file').toLowerCase();
    if (typeof path !== 'string' || path === '' || storage !== 'file') continue;
    const local = candidatePaths(ctx, path).find((p) => exists(p));
    if (!local) continue; // Missing local paths are TRN304; hub ids are not checked offline.
    const needs = keyNeeds(ctx, base);
    // A taskset is also opened for its prompts' tokens (TRN321) where the host counts them (tool_call_workflow reads
    // no format column, yet its prompt comes from the rows).
    const countsPrompts = isTasksetPath(base) && ctx.host.promptTokens !== undefined;
    if (needs.length === 0 && !readsTaskRows(ctx, base) && !countsPrompts) continue;
    const result = await (ctx.host.peekDataset ?? peekDataset)(local, {
      split: String(ctx.get(`${base}.split`) ?? 'train'),
      subsetName: optionalString(ctx.get(`${base}.subset_name`)),
      baseDir: '/',
    });
    if (!result) continue;
    if (!result.ok) {
      if (result.reason !== 'remote') ctx.report('TRN306', `\`${base}.path\`: ${result.message}`, `${base}.path`);
      continue;
    }
    const { columns, rows, files } = result.peek;
    if (rows.length === 0 && result.peek.format !== 'parquet') continue;
    for (const need of needs) {
      const column = ctx.get(`${base}.format.${need.formatKey}`);
      if (typeof column !== 'string' || column === '' || columns.includes(column)) continue;
      const formatPath = `${base}.format.${need.formatKey}` as const;
      const at = ctx.written(formatPath) ? formatPath : (`${base}.path` as const);
      const shown = columns
        .slice(0, 12)
        .map((c) => `\`${c}\``)
        .join(', ');
      ctx.report(
        'TRN305',
        `\`${formatPath}\` is \`${column}\`, but ${files.length === 1 ? `\`${shortName(files[0])}\`` : 'the dataset'} has no such key in its first ${rows.length || 'few'} rows ` +
          `(keys: ${shown}${columns.length > 12 ? ', …' : ''}); ${need.why}`,
        at,
        { candidates: columns },
        need.severity,
      );
    }
    if (isTasksetPath(base)) {
      checkWorkflowRows(ctx, base, result.peek);
      await checkEpisodeBudget(ctx, base, result.peek, local);
    }
  }
}

/** Which columns Trinity reads from this dataset, given where it sits in the config and the algorithm. */
function keyNeeds(ctx: CheckContext, base: StoragePath): KeyNeed[] {
  if (isTasksetPath(base)) {
    // With `format.workflow_key` each row may name its own workflow: assume it reads both.
    const workflow = ctx.get(`${base}.format.workflow_key`) ? undefined : ctx.get(workflowTypePath(ctx, base));
    const reads = taskColumnsRead(String(workflow), ctx.host.pluginTaskColumns);
    const declared = reads.declaredIn;
    // A workflow of a plugin (or a module path) that declares nothing may read any columns: a missing prompt column
    // is only a warning, and the message says how a plugin tells the checker what it reads.
    const builtIn = workflow === undefined || registryEntryAt('workflow', String(workflow), ctx.release) !== undefined;
    const name = `\`${String(workflow)}\``;
    const hint =
      builtIn || declared
        ? ''
        : ` A JavaScript plugin declares the columns its workflow reads in \`export const workflowReads\` (docs/runtime.md, "Plugins"); then only those are asked for.`;
    const needs: KeyNeed[] = [];
    if (reads.prompt)
      needs.push(
        builtIn || declared
          ? {
              formatKey: 'prompt_key',
              severity: 'error',
              why: `every task would get an empty prompt${declared ? ` (${name} reads \`ctx.task.taskDesc\`, declared in ${declared})` : ''}.`,
            }
          : {
              formatKey: 'prompt_key',
              severity: 'warning',
              why: `every task would get an empty prompt if ${name} reads it.${hint}`,
            },
      );
    if (reads.response)
      needs.push({
        formatKey: 'response_key',
        severity: 'warning',
        why: `reward functions would compare against no ground truth${declared ? ` (${name} reads \`ctx.task.truth\`, declared in ${declared})` : ''}.${hint}`,
      });
    return needs;
  }
  const schema = bufferSchema(ctx, base);
  const plaintext = String(ctx.get(`${base}.format.prompt_type`) ?? 'messages').toLowerCase() === 'plaintext';
  const crash = 'Trinity raises a KeyError when it reads the first batch.';
  if (schema === 'sft') {
    const keys: KeyNeed['formatKey'][] = plaintext ? ['prompt_key', 'response_key'] : ['messages_key'];
    if (plaintext && ctx.get(`${base}.format.system_prompt_key`)) keys.push('system_prompt_key');
    return keys.map((formatKey) => ({ formatKey, severity: 'error', why: crash }));
  }
  if (schema === 'dpo') {
    const keys: KeyNeed['formatKey'][] = plaintext
      ? ['prompt_key', 'chosen_key', 'rejected_key']
      : ['messages_key', 'chosen_key', 'rejected_key'];
    return keys.map((formatKey) => ({ formatKey, severity: 'error', why: crash }));
  }
  return [];
}

function bufferSchema(ctx: CheckContext, base: Exclude<StoragePath, TasksetPath>): string | undefined {
  const explicit = ctx.get(`${base}.schema_type`);
  if (typeof explicit === 'string') return explicit;
  if (base.includes('auxiliary_buffers') || base.endsWith('sft_warmup_dataset')) return 'sft';
  const algo = String(ctx.get('algorithm.algorithm_type') ?? '');
  return algo === 'sft' ? 'sft' : algo === 'dpo' ? 'dpo' : undefined;
}

function optionalString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function shortName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts.slice(-2).join('/');
}
