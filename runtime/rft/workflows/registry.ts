/** Workflows under Trinity's registered names (and the `async_` twins, which run the same way here). */
import { agentKit } from './agent-kit';
import { frozenLakeWorkflow } from './frozen-lake';
import { onPolicyDistillMathWorkflow, onPolicyDistillWorkflow } from './distill';
import { sudokuWorkflow } from './sudoku';
import { toolCallWorkflow } from './tool-call';
import { mathBoxedWorkflow, mathEvalWorkflow, mathWorkflow, simpleWorkflow } from './simple';
import type { WorkflowFactory } from './types';

const BUILT_IN: Record<string, WorkflowFactory> = {
  simple_workflow: simpleWorkflow,
  async_simple_workflow: simpleWorkflow,
  math_workflow: mathWorkflow,
  async_math_workflow: mathWorkflow,
  math_boxed_workflow: mathBoxedWorkflow,
  async_math_boxed_workflow: mathBoxedWorkflow,
  math_eval_workflow: mathEvalWorkflow,
  async_math_eval_workflow: mathEvalWorkflow,
  // From v0.4.0 (the checker refuses the names for older releases).
  on_policy_distill_workflow: onPolicyDistillWorkflow,
  on_policy_distill_math_workflow: onPolicyDistillMathWorkflow,
  frozen_lake_workflow: frozenLakeWorkflow,
  sudoku_workflow: sudokuWorkflow,
  // toolcall_workflow until v0.3.2, tool_call_workflow from v0.4.0 (the checker refuses each outside its releases).
  tool_call_workflow: toolCallWorkflow,
  toolcall_workflow: toolCallWorkflow,
};

const plugins = new Map<string, WorkflowFactory>();

export class UnknownWorkflowError extends Error {}

/** Adds a workflow from a plugin module (Trinity's WORKFLOWS.register_module). */
export function registerWorkflow(name: string, factory: WorkflowFactory): void {
  if (BUILT_IN[name] || plugins.has(name)) throw new Error(`workflow ${name} is already registered`);
  plugins.set(name, factory);
}

/** The factory registered under `name`; the workflow it makes finds the agent kit in `ctx.agents`. */
export function workflowFactory(name: string): WorkflowFactory {
  const f = BUILT_IN[name] ?? plugins.get(name);
  if (!f)
    throw new UnknownWorkflowError(`workflow "${name}" is not registered (known: ${knownWorkflows().join(', ')})`);
  return (ctx) => f(ctx.agents ? ctx : { ...ctx, agents: agentKit(ctx) });
}

export function knownWorkflows(): string[] {
  return [...Object.keys(BUILT_IN), ...plugins.keys()];
}
