/**
 * Which of a task's `format` columns a workflow reads: `prompt_key` (Trinity's `Task.task_desc`) and `response_key`
 * (`Task.truth`). Dataset checks ask only for the columns the taskset's workflow reads.
 */

export interface TaskColumnsRead {
  prompt: boolean;
  response: boolean;
  /** The plugin file whose `workflowReads` declares them (environment/plugin-declarations.ts); else inferred. */
  declaredIn?: string;
}

/** A plugin directory's workflows by name, with the columns each reads (environment/plugin-names.ts). */
export type PluginTaskColumns = Readonly<Record<string, TaskColumnsRead>>;

/**
 * Built-in workflows that do not read both (every other workflow reads both). frozen_lake_workflow builds its map
 * from the row's `size`, `p` and `seed` (envs/frozen_lake/workflow.py @8b7fce3), sudoku_workflow its game from
 * `puzzle` and `solution`; tool_call_workflow its messages from `raw_system`, `tools` and `conversations` and its
 * truth from `answer` (customized_toolcall_workflows.py @7f9b280); math_eval_workflow reads the `question` column
 * itself and grades against the truth (eval_workflow.py `MathEvalWorkflow.format_messages`, the same at v0.3.0 7d2323f
 * and main f3c8dec); on_policy_distill_workflow sends the prompt and scores 0 without the truth
 * (on_policy_distill_workflow.py `OnPolicyDistillWorkflow.compute_reward` @f3c8dec; its math twin reads both).
 * The runtime requires at load exactly the columns this table says a built-in reads (rft/data/tasks.ts).
 */
const BUILT_IN: Readonly<Record<string, TaskColumnsRead>> = {
  frozen_lake_workflow: { prompt: false, response: false },
  sudoku_workflow: { prompt: false, response: false },
  tool_call_workflow: { prompt: false, response: false },
  toolcall_workflow: { prompt: false, response: false },
  math_eval_workflow: { prompt: false, response: true },
  async_math_eval_workflow: { prompt: false, response: true },
  on_policy_distill_workflow: { prompt: true, response: false },
};

const BOTH: TaskColumnsRead = { prompt: true, response: true };

/**
 * The columns `workflow` reads: a JavaScript plugin's from its declaration or else its source, a built-in's from the table above; both for
 * any other name (a Python plugin, a module path, or a workflow nobody registered), since it may read either.
 */
export function taskColumnsRead(workflow: string, plugins?: PluginTaskColumns): TaskColumnsRead {
  return plugins?.[workflow] ?? BUILT_IN[workflow] ?? BOTH;
}
