/**
 * What a workflow's constructor demands of the config, and the `workflow_args` it reads. Trinity builds a workflow
 * per task, so a config that cannot satisfy it fails every task (after the GPUs are allocated) instead of at launch,
 * and an argument it does not read is dropped without a word.
 */
import { rolesOf } from '../model/choices';
import { workflowArg, workflowArgProblem, workflowArgsSpec, type WorkflowArgsSpec } from '../model/workflow-args';
import { closest, didYouMean } from '../suggest';
import { DECLARATION_EXPORT } from '../environment/plugin-declarations';
import type { CheckContext } from './check-context';
import { tasksetPaths, workflowTypePath } from './tasksets';
import { configPath, type ConfigPath, type TasksetPath } from '../config-path';

export function checkWorkflowNeeds(ctx: CheckContext): void {
  if (!rolesOf(ctx.get('mode') ?? 'both').explorer) return;
  for (const base of tasksetPaths(ctx)) {
    const wfPath = workflowTypePath(ctx, base);
    const workflow = ctx.get(wfPath);
    const spec = workflowArgsSpec(workflow, ctx.release, ctx.host.pluginWorkflowSpecs);
    if (!spec) continue;
    const at: ConfigPath = ctx.written(wfPath)
      ? wfPath
      : configPath(`buffer.explorer_input.${wfPath.slice(wfPath.lastIndexOf('.') + 1)}`);
    if (spec.needsHistory) checkHistory(ctx, String(workflow), spec.needsHistory, at);
    checkArgs(ctx, base, String(workflow), spec, at);
  }
}

/** Step-wise workflows read their experiences from the rollout model's history and assert it is recorded. */
function checkHistory(ctx: CheckContext, workflow: string, baseClass: string, at: ConfigPath): void {
  if (ctx.get('explorer.rollout_model.enable_history') === true) return;
  const written = ctx.written('explorer.rollout_model.enable_history');
  ctx.report(
    'TRN313',
    `\`${workflow}\` reads its experiences from the rollout model's history: its constructor (${baseClass}) asserts \`explorer.rollout_model.enable_history\`, so every task would fail. Set \`explorer.rollout_model.enable_history: true\`.`,
    written ? 'explorer.rollout_model.enable_history' : at,
    { path: ['explorer', 'rollout_model', 'enable_history'], value: true },
  );
}

function checkArgs(
  ctx: CheckContext,
  base: TasksetPath,
  workflow: string,
  spec: WorkflowArgsSpec,
  at: ConfigPath,
): void {
  const args = ctx.get(`${base}.workflow_args`);
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return;
  const known = spec.args.map((a) => a.name);
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    const path = `${base}.workflow_args.${key}` as const;
    const where = ctx.written(path) ? path : at;
    const arg = workflowArg(spec, key);
    if (!arg) {
      if (!spec.readAt.includes(ctx.release)) continue;
      ctx.report(
        'TRN316',
        `\`${workflow}\` does not read \`workflow_args.${key}\`: ${spec.declaredIn ? `its plugin declares what it reads (\`${DECLARATION_EXPORT}\` in ${spec.declaredIn}), and not this` : 'Trinity drops it without a word'}.${didYouMean(key, known)} It reads ${known.map((k) => `\`${k}\``).join(', ')} (${spec.source}).`,
        where,
        { candidates: known, suggestion: where === path ? closest(key, known) : undefined },
      );
      continue;
    }
    const problem = workflowArgProblem(arg, value);
    if (problem)
      ctx.report('TRN313', `\`workflow_args.${key}\` ${problem}: in \`${workflow}\` ${arg.consequence}`, where);
  }
}
