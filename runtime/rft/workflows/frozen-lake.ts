/**
 * `frozen_lake_workflow` (trinity/common/workflows/envs/frozen_lake/workflow.py @8b7fce3): a concatenated multi-turn
 * episode on a FrozenLake map. Each turn the user message is "Current Observation (k): " and the grid, a line saying
 * the goal is not reached, the invalid-move hint when the last action left the grid unchanged, and the steps
 * remaining; the model's last ```…``` block is its action. The episode ends when the player reaches G or falls into a
 * hole, after `agent_max_steps` turns, or when the episode's token budget is spent: then the last user message is
 * dropped and the experience is `response_truncated`. The reward is the sum of the step rewards (1 at the goal);
 * `info` (and so the metrics) holds `env_steps`, `env_done` and `test_score`. Trinity records no metric for invalid
 * actions (an answer `_parse_model_response` maps to `invalid_action` 0: no fenced block, or one naming no direction;
 * `env_step` then changes nothing); the experience lists the model turns that gave one, for the rollout record.
 *
 * The budget: every token after the first prompt counts against `rollout_args.max_response_tokens`, default 10240.
 * Trinity's GenerationConfig has no `max_response_tokens` field, so a run of Trinity always gets 10240; so does this.
 * Each turn may sample what is left of it and what the config's `max_model_len` leaves (vLLM stops a sequence there);
 * a next turn whose prompt leaves no room under `max_model_len` fails the task, as vLLM's refusal fails it in Trinity
 * (workflow.py @cbeb875 checks only the budget before calling the model).
 */
import { generateRandomMap } from '../environments/frozen-lake/random-map';
import {
  FROZEN_LAKE_INVALID_HINT,
  FROZEN_LAKE_SYSTEM_PROMPT,
  FrozenLakeGame,
  INVALID_ACTION,
  parseFrozenLakeAction,
} from '../environments/frozen-lake/frozen-lake-game';
import { ChatEpisode } from './multi-turn/chat-episode';
import { WorkflowError } from './simple';
import type { Workflow, WorkflowContext } from './types';
import type { ChatMessage } from '../../engine/tokenizer';

const DEFAULT_EPISODE_BUDGET = 10240;

interface FrozenLakeArgs {
  envMaxSteps: number;
  agentMaxSteps: number;
  desc: string[] | null;
  isSlippery: boolean;
}

function frozenLakeArgs(args: Record<string, unknown>): FrozenLakeArgs {
  const int = (key: string, fallback: number): number => {
    const v = args[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new WorkflowError(`workflow_args.${key} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return v;
  };
  if (args.reward_fn_type != null)
    throw new WorkflowError(
      `workflow_args.reward_fn_type (${JSON.stringify(args.reward_fn_type)}) scores the whole conversation with a Trinity reward class; the local runtime runs frozen_lake_workflow with the environment's reward only`,
    );
  const desc = args.desc ?? null;
  if (desc !== null && (!Array.isArray(desc) || desc.some((r) => typeof r !== 'string')))
    throw new WorkflowError('workflow_args.desc must be a list of map rows such as ["SFFF", "FHFH", "FFFH", "HFFG"]');
  const slippery = args.is_slippery ?? false;
  if (typeof slippery !== 'boolean') throw new WorkflowError('workflow_args.is_slippery must be true or false');
  return {
    envMaxSteps: int('env_max_steps', 8),
    agentMaxSteps: int('agent_max_steps', 10),
    desc: desc as string[] | null,
    isSlippery: slippery,
  };
}

/** The map of a task: `desc` when given, else Trinity's random map from the row's `size`, `p` and `seed`. */
function taskMap(raw: Record<string, unknown>, args: FrozenLakeArgs): { rows: string[]; seed: number } {
  const num = (key: string, fallback: number): number => {
    const v = raw[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new WorkflowError(`frozen_lake_workflow: the task's \`${key}\` is not a number (${JSON.stringify(v)})`);
    return v;
  };
  const seed = num('seed', 42);
  if (args.desc) return { rows: args.desc, seed };
  try {
    return { rows: generateRandomMap(num('size', 1), num('p', 0.8), seed, args.envMaxSteps).rows, seed };
  } catch (e) {
    throw new WorkflowError(`frozen_lake_workflow: ${(e as Error).message}`);
  }
}

/** Trinity's user message for turn `k` (workflow.py `run_async`); demonstrations for SFT are built from it too. */
export function frozenLakeUserMessage(observation: string, k: number, hint: boolean, remaining: number): string {
  let content =
    `Current Observation (${k}): \n${observation}\n` +
    'You have not achieved the goal, P has not reached G yet. Please give the next action.';
  if (hint) content += `\n${FROZEN_LAKE_INVALID_HINT}`;
  if (remaining > 0) content += `\nThe maximum number of steps remaining is ${remaining}.`;
  return content;
}

/** The shortest answer that moves: the bare action, as the invalid-move hint asks for it. */
export const FROZEN_LAKE_BARE_ACTION = '```Up```';

/**
 * The prompts of a task's first `turns` turns, as `run` builds them, for the budget checks: the system prompt, then
 * per turn its user message, each earlier answer the bare action and each move valid (no invalid-move hint). Every
 * observation is the start's: the grid is the same size whichever cell P is on.
 */
export function frozenLakeTurnPrompts(
  workflowArgs: Record<string, unknown>,
  row: Record<string, unknown>,
  turns: number,
): ChatMessage[][] {
  const args = frozenLakeArgs(workflowArgs);
  const map = taskMap(row, args);
  const observation = new FrozenLakeGame(map.rows, args.isSlippery, map.seed).reset();
  const messages: ChatMessage[] = [{ role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT }];
  const prompts: ChatMessage[][] = [];
  for (let k = 0; k < Math.max(1, Math.min(turns, args.agentMaxSteps)); k++) {
    if (k > 0) messages.push({ role: 'assistant', content: FROZEN_LAKE_BARE_ACTION });
    messages.push({ role: 'user', content: frozenLakeUserMessage(observation, k, false, args.agentMaxSteps - k) });
    prompts.push([...messages]);
  }
  return prompts;
}

/** The first prompt of a task's episode: the system prompt and turn 0's user message, as `run` builds them. */
export function frozenLakeFirstPrompt(
  workflowArgs: Record<string, unknown>,
  row: Record<string, unknown>,
): ChatMessage[] {
  return frozenLakeTurnPrompts(workflowArgs, row, 1)[0];
}

export function frozenLakeWorkflow(ctx: WorkflowContext): Workflow {
  const args = frozenLakeArgs(ctx.task.workflowArgs);
  const map = taskMap(ctx.task.raw, args);
  const rollout = ctx.task.rolloutArgs as Record<string, unknown>;
  const budget = typeof rollout.max_response_tokens === 'number' ? rollout.max_response_tokens : DEFAULT_EPISODE_BUDGET;
  return {
    repeatable: false,
    concurrentRuns: true,
    run: async () => {
      const game = new FrozenLakeGame(map.rows, args.isSlippery, map.seed);
      let observation = game.reset();
      let lastObservation: string | null = null;
      const episode = ChatEpisode.open(
        ctx.model,
        [{ role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT }],
        ctx.turnSampler?.(),
      );
      const stepRewards: number[] = [];
      const invalidActions: number[] = [];
      let steps = 0;
      let done = false;
      let truncated = false;
      try {
        for (let turn = 0; turn < args.agentMaxSteps; turn++) {
          const hint = steps > 0 && lastObservation === observation;
          episode.addMessage({
            role: 'user',
            content: frozenLakeUserMessage(observation, steps, hint, args.agentMaxSteps - steps),
          });
          const maxTokens = budget - episode.responseTokens;
          if (maxTokens <= 0) {
            episode.dropPendingMessages();
            stepRewards.push(0);
            done = false;
            truncated = true;
            break;
          }
          const reply = await episode.respond({ ...ctx.task.rolloutArgs, max_tokens: maxTokens });
          const action = parseFrozenLakeAction(reply.text);
          if (action === INVALID_ACTION) invalidActions.push(steps);
          const r = game.step(action);
          lastObservation = observation;
          observation = r.observation;
          done = r.done;
          stepRewards.push(r.reward);
          episode.rewardTurn(r.reward);
          steps++;
          if (done) break;
        }
      } catch (e) {
        episode.close();
        throw e;
      }
      const reward = stepRewards.reduce((a, b) => a + b, 0);
      const exp = episode.toExperience({
        reward,
        info: { env_steps: steps, env_done: done ? 1 : 0, test_score: reward },
        truncated,
      });
      exp.eid.run = ctx.runIdBase;
      exp.invalidActions = invalidActions;
      return [exp];
    },
  };
}
