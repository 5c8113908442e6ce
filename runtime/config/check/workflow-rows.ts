/**
 * The keys a workflow reads from each task row itself (FrozenLake's `size`, `p`, `seed`), looked for in the first
 * rows of a local taskset. Trinity falls back to a default for a missing key, which for some keys hangs the task.
 */
import type { DatasetPeek } from '../datasets/peek-result';
import { workflowArgsSpec } from '../model/workflow-args';
import type { CheckContext } from './check-context';
import { workflowTypePath } from './tasksets';
import type { TasksetPath } from '../config-path';

export function checkWorkflowRows(ctx: CheckContext, base: TasksetPath, peek: DatasetPeek): void {
  if (ctx.get(`${base}.format.workflow_key`)) return; // each row may name its own workflow
  const workflow = ctx.get(workflowTypePath(ctx, base));
  const spec = workflowArgsSpec(workflow, ctx.release);
  if (!spec?.rowKeys || peek.rows.length === 0) return;
  const args = (ctx.get(`${base}.workflow_args`) ?? {}) as Record<string, unknown>;
  for (const need of spec.rowKeys) {
    if (need.unlessArg && args[need.unlessArg] !== undefined && args[need.unlessArg] !== null) continue;
    const lacking = peek.rows.filter((r) => !(need.key in r)).length;
    if (lacking === 0) continue;
    ctx.report(
      'TRN317',
      `${lacking} of the first ${peek.rows.length} rows of \`${base}.path\` lack \`${need.key}\`, which \`${String(workflow)}\` reads from each task row (${spec.source}); Trinity then takes ${JSON.stringify(need.fallback)}: ${need.without}.` +
        (need.unlessArg ? ` Add \`${need.key}\` to the rows, or set \`workflow_args.${need.unlessArg}\`.` : ''),
      `${base}.path`,
      undefined,
      need.severity,
    );
  }
}
