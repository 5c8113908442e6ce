/**
 * The keys a workflow reads from each task row itself (FrozenLake's `size`, `p`, `seed`), looked for in the first
 * rows of a local taskset. Trinity falls back to a default for a missing key, which for some keys hangs the task.
 */
import type { DatasetPeek } from '../datasets/peek-result';
import { workflowArgsSpec, type WorkflowArgsSpec } from '../model/workflow-args';
import type { CheckContext } from './check-context';
import { workflowTypePath } from './tasksets';
import { isTasksetPath, type StoragePath, type TasksetPath } from '../config-path';

/** The workflow of a taskset, when it reads keys of the task rows itself. */
function rowReader(ctx: CheckContext, base: StoragePath): { workflow: string; spec: WorkflowArgsSpec } | undefined {
  if (!isTasksetPath(base) || ctx.get(`${base}.format.workflow_key`)) return undefined; // rows may name their workflow
  const workflow = ctx.get(workflowTypePath(ctx, base));
  const spec = workflowArgsSpec(workflow, ctx.release, ctx.host.pluginWorkflowSpecs);
  return spec?.rowKeys ? { workflow: String(workflow), spec } : undefined;
}

export function readsTaskRows(ctx: CheckContext, base: StoragePath): boolean {
  return rowReader(ctx, base) !== undefined;
}

export function checkWorkflowRows(ctx: CheckContext, base: TasksetPath, peek: DatasetPeek): void {
  const reader = rowReader(ctx, base);
  if (!reader?.spec.rowKeys || peek.rows.length === 0) return;
  const { workflow, spec } = reader;
  const args = (ctx.get(`${base}.workflow_args`) ?? {}) as Record<string, unknown>;
  for (const need of spec.rowKeys!) {
    if (need.unlessArg && args[need.unlessArg] !== undefined && args[need.unlessArg] !== null) continue;
    const lacking = peek.rows.filter((r) => !(need.key in r)).length;
    if (lacking === 0) continue;
    const then =
      need.fallback === undefined
        ? need.without
        : `Trinity then takes ${JSON.stringify(need.fallback)}: ${need.without}`;
    ctx.report(
      'TRN317',
      `${lacking} of the first ${peek.rows.length} rows of \`${base}.path\` lack \`${need.key}\`, which \`${workflow}\` reads from each task row (${spec.source}); ${then}.` +
        (need.unlessArg ? ` Add \`${need.key}\` to the rows, or set \`workflow_args.${need.unlessArg}\`.` : ''),
      `${base}.path`,
      undefined,
      need.severity,
    );
  }
}
