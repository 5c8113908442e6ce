/**
 * TRN322: a concatenated multi-turn episode whose context runs out before the turns its workflow allows, even when
 * every answer is the shortest one that acts. Counted with the model's own tokenizer and chat template on the first
 * row of a local taskset (`CheckHost.promptTokens`: turn k's prompt, each earlier answer the bare action, each
 * observation the size of the first), so the turns it names are the most that can happen; longer answers leave fewer.
 *
 * Trinity's accounting (trinity/common/workflows/envs/frozen_lake/workflow.py @8b7fce3, `run_async`): every turn's
 * request carries the whole conversation so far; its `max_tokens` is the episode's budget,
 * `rollout_args.max_response_tokens` (GenerationConfig has no such field, so always 10240), less every token added
 * after the first prompt, and a turn with none left ends the episode `response_truncated` with reward 0. vLLM takes
 * a request only while its prompt leaves room under `max_model_len` (TRN321's rule for the first one).
 */
import type { CheckContext } from './check-context';
import type { TasksetPath } from '../config-path';
import { workflowArgDefault } from '../model/workflow-args';

/** FrozenLake's episode budget after the first prompt: `rollout_args.get("max_response_tokens", 10240)`. */
export const FROZEN_LAKE_EPISODE_BUDGET = 10240;

/** The `workflow_args` key that caps an episode's turns, per multi-turn workflow the prompts are known for. */
const TURN_LIMITS: Record<string, string> = { frozen_lake_workflow: 'agent_max_steps' };

/** Turns counted one by one; beyond them each turn adds what the last counted one added. */
export const COUNTED_TURNS = 64;

export interface TurnLimit {
  workflow: string;
  arg: string;
  turns: number;
}

/** The turns a taskset's workflow allows an episode, where it is a concatenated multi-turn one. */
export function turnLimitOf(ctx: CheckContext, base: TasksetPath, workflow: string): TurnLimit | undefined {
  const arg = TURN_LIMITS[workflow];
  if (!arg) return undefined;
  const turns = ctx.get(`${base}.workflow_args.${arg}`) ?? workflowArgDefault(workflow, arg, ctx.release);
  return typeof turns === 'number' && Number.isInteger(turns) && turns > 1 ? { workflow, arg, turns } : undefined;
}

/**
 * `prompts[k]`: turn k's prompt tokens, the earlier answers bare actions, for the counted turns (the first fits:
 * TRN321 is silent); `first` names the first prompt as TRN321 does.
 */
export function checkTurnBudget(
  ctx: CheckContext,
  base: TasksetPath,
  limit: TurnLimit,
  prompts: readonly number[],
  first: string,
): void {
  const m = ctx.get('model.max_model_len');
  if (typeof m !== 'number' || prompts.length < 2) return;
  const last = prompts.length - 1;
  const step = prompts[last] - prompts[last - 1];
  const promptAt = (k: number) => (k <= last ? prompts[k] : prompts[last] + (k - last) * step);
  const budget = FROZEN_LAKE_EPISODE_BUDGET;
  const used = (k: number) => promptAt(k) - prompts[0];
  let turns = 1;
  while (turns < limit.turns && promptAt(turns) < m && used(turns) < budget) turns++;
  if (turns === limit.turns) return;

  const p = promptAt(turns);
  const argPath = `${base}.workflow_args.${limit.arg}` as const;
  const opening =
    `At most ${turns} of the episode's ${limit.turns} turns (\`${limit.arg}\`) can happen: ${first}, and each turn ` +
    `adds ${promptAt(turns) - promptAt(turns - 1)} tokens even when the answer is the bare action (its answer and ` +
    `the next observation under the template), so turn ${turns + 1}'s prompt would be ${p} tokens`;
  if (p >= m) {
    ctx.report(
      'TRN322',
      `${opening}, which fills \`max_model_len\` ${m}: vLLM refuses it, and an episode still going fails there. Longer answers leave fewer turns. Raise \`max_model_len\` above ${promptAt(limit.turns - 1)} plus the answers' length, or lower \`${limit.arg}\` to ${turns}.`,
      ctx.written('model.max_model_len') ? 'model.max_model_len' : ctx.written(argPath) ? argPath : 'model',
    );
    return;
  }
  ctx.report(
    'TRN322',
    `${opening}, ${used(turns)} of them after the first prompt: all of the ${budget} that Trinity's \`${limit.workflow}\` allows an episode after its first prompt (\`rollout_args.max_response_tokens\`, which GenerationConfig does not hold). An episode still going then ends \`response_truncated\` with reward 0. Lower \`${limit.arg}\` to ${turns}.`,
    ctx.written(argPath) ? argPath : base,
  );
}
