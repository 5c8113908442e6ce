/**
 * What a workflow's constructor demands of the config. Trinity builds a workflow per task, so a config that cannot
 * satisfy it fails every task (after the GPUs are allocated) instead of at launch.
 */
import { rolesOf } from '../model/choices';
import type { CheckContext } from './check-context';
import { tasksetPaths, workflowTypePath } from './tasksets';
import { configPath, type ConfigPath } from '../config-path';

/**
 * `thinking_budget_workflow` (main, 0be2bcc trinity/common/workflows/thinking_budget_workflow.py) raises unless the
 * rollout model records history and `workflow_args.thinking_token_budget` is a non-negative integer.
 */
export function checkWorkflowNeeds(ctx: CheckContext): void {
  if (!rolesOf(ctx.get('mode') ?? 'both').explorer) return;
  for (const base of tasksetPaths(ctx)) {
    const wfPath = workflowTypePath(ctx, base);
    if (ctx.get(wfPath) !== 'thinking_budget_workflow') continue;
    const at: ConfigPath = ctx.written(wfPath)
      ? wfPath
      : configPath(`buffer.explorer_input.${wfPath.slice(wfPath.lastIndexOf('.') + 1)}`);
    if (ctx.get('explorer.rollout_model.enable_history') !== true) {
      const written = ctx.written('explorer.rollout_model.enable_history');
      ctx.report(
        'TRN313',
        "`thinking_budget_workflow` reads its experiences from the rollout model's history and raises unless `explorer.rollout_model.enable_history` is true: every task would fail. Set `explorer.rollout_model.enable_history: true`.",
        written ? 'explorer.rollout_model.enable_history' : at,
        { path: ['explorer', 'rollout_model', 'enable_history'], value: true },
      );
    }
    const budget = ctx.get(`${base}.workflow_args.thinking_token_budget`);
    if (budget !== undefined && !(typeof budget === 'number' && Number.isInteger(budget) && budget >= 0)) {
      const path = `${base}.workflow_args.thinking_token_budget` as const;
      ctx.report(
        'TRN313',
        `\`workflow_args.thinking_token_budget\` is ${JSON.stringify(budget)}; \`thinking_budget_workflow\` raises unless it is a non-negative integer (the reasoning-token budget per request).`,
        ctx.written(path) ? path : at,
      );
    }
  }
}
