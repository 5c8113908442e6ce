/** The workflow whose `workflow_args` a path in the document belongs to, as Trinity's check step filled it in. */
import type { Path } from '../../runtime/config/diagnostics';
import type { CheckResult } from '../../runtime/config/check-config';
import type { Release } from '../../runtime/config/releases';
import {
  workflowArgsSpec,
  type PluginWorkflowSpecs,
  type WorkflowArgsSpec,
} from '../../runtime/config/model/workflow-args';
import { runFor } from './paths';

export interface WorkflowArgsAt {
  workflow: string;
  spec: WorkflowArgsSpec;
}

/**
 * For `argsPath` ending in `workflow_args`: the taskset's workflow and what it reads, when known (`plugins`: what
 * loaded JavaScript plugins declare).
 */
export function workflowArgsAt(
  result: CheckResult,
  argsPath: Path,
  release: Release,
  plugins?: PluginWorkflowSpecs,
): WorkflowArgsAt | undefined {
  if (argsPath[argsPath.length - 1] !== 'workflow_args') return undefined;
  const { run, inner } = runFor(result, argsPath.slice(0, -1));
  let taskset: unknown = result.runs[run]?.resolved;
  for (const k of inner) {
    if (taskset === null || typeof taskset !== 'object') return undefined;
    taskset = (taskset as Record<string | number, unknown>)[k];
  }
  if (taskset === null || typeof taskset !== 'object') return undefined;
  const t = taskset as Record<string, unknown>;
  // An eval taskset's own default_eval_workflow_type wins (check/tasksets.ts workflowTypePath).
  const workflow = (inner.includes('eval_tasksets') && t.default_eval_workflow_type) || t.default_workflow_type;
  const spec = workflowArgsSpec(workflow, release, plugins);
  return spec ? { workflow: String(workflow), spec } : undefined;
}
