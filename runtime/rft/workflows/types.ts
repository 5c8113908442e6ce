/** What a workflow sees of a task and of the model, and what it returns (Trinity's Workflow contract). */
import type { Experience } from '../experience';
import type { AuxiliaryModel } from '../models/auxiliary-model';
import type { RolloutArgs, RolloutModel } from '../models/rollout-model';
import type { TurnSampler } from './multi-turn/turn-sampler';
import type { AgentKit } from './agent-kit';

export interface WorkflowTask {
  /** The dataset row. */
  raw: Record<string, unknown>;
  /** `raw[format.prompt_key]` (Trinity's task_desc), undefined when the column is missing. */
  taskDesc: string | undefined;
  /** `raw[format.response_key]` (Trinity's truth). */
  truth: string | undefined;
  systemPrompt: string | null;
  replyPrefix: string | null;
  rolloutArgs: RolloutArgs;
  workflowArgs: Record<string, unknown>;
  rewardFnArgs: Record<string, unknown>;
  /** The reward function's registered name, when the taskset or row names one. */
  rewardFn: string | null;
  isEval: boolean;
}

import type { RewardFn } from '../rewards';

export type { RewardFn };

/** Builds the reward function a task names (the rewards registry, bound to the run's release). */
export type RewardFactory = (name: string, args: Record<string, unknown>) => RewardFn;

export interface WorkflowContext {
  model: RolloutModel;
  task: WorkflowTask;
  /** Repeat count (rollout_args.n for repeatable workflows). */
  repeatTimes: number;
  runIdBase: number;
  createReward: RewardFactory;
  /** `explorer.auxiliary_models`, in config order (Trinity's `auxiliary_models` of a workflow). */
  auxiliaryModels: readonly AuxiliaryModel[];
  /**
   * Opens the sampler a multi-turn episode sends its turns through (default: one `RolloutModel.complete` per turn).
   * An engine that batches the turns of concurrent episodes and keeps their KV caches supplies its own here.
   */
  turnSampler?: () => TurnSampler;
  /** Episodes, step-wise loops and environments (agent-kit.ts); `workflowFactory`'s factories always set it. */
  agents?: AgentKit;
}

export interface Workflow {
  /** Repeatable workflows produce all n runs from one call; others are called n times. */
  readonly repeatable: boolean;
  /**
   * Runs may go at once with other runs (up to `explorer.runner_per_model`), their model calls batched into one
   * engine call: a workflow that is not repeatable, its runs (and their episodes' turns) with each other and with
   * other tasks' runs; a repeatable one, its task's one run with other tasks'. Set where a run touches no state
   * another run shares.
   */
  readonly concurrentRuns?: boolean;
  run(): Experience[] | Promise<Experience[]>;
}

export type WorkflowFactory = (ctx: WorkflowContext) => Workflow;
