/**
 * The reward-function contract, as Trinity-RFT defines it (trinity/common/rewards/reward_fn.py):
 * a reward function is built once per task from the taskset's `reward_fn_args` and called once per response;
 * it returns a dict of named scores, and the workflow's reward is the sum of the values
 * (`reward = sum(reward_dict.values())` in SimpleWorkflow, MathBoxedWorkflow, …). The dict itself is kept as
 * the experience's metrics (`rollout/<name>/{mean,max,min}` in the monitor).
 */
import type { Release } from '../../config/releases';

/** What a workflow hands a reward function for one response. */
export interface RewardInput {
  /** The model's response text (Trinity: `response.response_text`). */
  response: string;
  /** The task's ground truth (Trinity: `raw_task[format.response_key]`), when the task has one. */
  truth?: string;
  /** The prompt text, for reward functions that look at it (none of the built-in ones do). */
  prompt?: string;
  /** The raw task row, for plugin reward functions. */
  task?: Record<string, unknown>;
  /**
   * Extra keyword arguments a workflow passes at call time. Trinity's math_boxed_workflow passes
   * `with_think` and `format_score_coef` (from its `workflow_args`); `math_boxed_reward` reads them from here.
   */
  callArgs?: Record<string, unknown>;
  /**
   * The response's token ids, or just their count. `math_dapo_reward` needs it (Trinity passes
   * `response_token=response.tokens[prompt_length:]`, only from math_boxed_workflow).
   */
  responseTokens?: ArrayLike<number> | number;
}

/** Named scores; the reward is their sum (see `totalReward`). */
export type RewardDict = Record<string, number>;

export type RewardFn = (input: RewardInput) => RewardDict;

/** Where a reward function is built: the Trinity release whose behaviour to reproduce (default `main`). */
export interface RewardContext {
  release?: Release;
}

/** Builds a reward function from the taskset's `reward_fn_args` (Trinity: `RewardFnClass(**reward_fn_args)`). */
export type RewardFactory = (args: Record<string, unknown>, context: RewardContext) => RewardFn;

/** A wrong `reward_fn_args` (Trinity raises TypeError/AssertionError when it builds or first calls the function). */
export class RewardArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewardArgsError';
  }
}

/** A call Trinity's reward function cannot score (missing ground truth, unparsable countdown truth, …). */
export class RewardInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewardInputError';
  }
}

/** A reward name no registry entry answers to. */
export class UnknownRewardError extends Error {
  constructor(
    readonly rewardName: string,
    readonly known: readonly string[],
    detail?: string,
  ) {
    super(`unknown reward function '${rewardName}'${detail ? ` (${detail})` : ''}; known: ${known.join(', ')}`);
    this.name = 'UnknownRewardError';
  }
}

/** The workflow's scalar reward: the sum of the dict's values (Python `sum(reward_dict.values())`). */
export function totalReward(dict: RewardDict): number {
  let s = 0;
  for (const v of Object.values(dict)) s += v;
  return s;
}
