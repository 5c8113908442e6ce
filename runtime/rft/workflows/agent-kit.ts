/**
 * What a workflow gets to act in an environment, handed to every workflow as `ctx.agents` so JavaScript plugins
 * (`--plugin-dir`) can drive their own environments as the built-in workflows do: concatenated episodes (messages
 * in, one masked experience out), the history-recording model and Trinity's two step-wise loops, and the built-in
 * FrozenLake environment.
 */
import type { ChatMessage } from '../../engine/tokenizer';
import {
  FROZEN_LAKE_INVALID_HINT,
  FROZEN_LAKE_SYSTEM_PROMPT,
  FrozenLakeGame,
  parseFrozenLakeAction,
} from '../environments/frozen-lake/frozen-lake-game';
import { generateRandomMap } from '../environments/frozen-lake/random-map';
import { ChatEpisode } from './multi-turn/chat-episode';
import { HistoryModel } from './multi-turn/history-model';
import { runRewardPropagation, runStepWiseReward } from './multi-turn/step-wise';
import type { WorkflowContext } from './types';

export interface AgentKit {
  /** A concatenated episode on the rollout model, opened on `messages`. */
  openEpisode(messages: readonly ChatMessage[]): ChatEpisode;
  /** The rollout model recording every call, for step-wise episodes. */
  historyModel(): HistoryModel;
  runStepWiseReward: typeof runStepWiseReward;
  runRewardPropagation: typeof runRewardPropagation;
  frozenLake: {
    generateRandomMap: typeof generateRandomMap;
    Game: typeof FrozenLakeGame;
    parseAction: typeof parseFrozenLakeAction;
    systemPrompt: string;
    invalidHint: string;
  };
}

export function agentKit(ctx: Omit<WorkflowContext, 'agents'>): AgentKit {
  return {
    openEpisode: (messages) => ChatEpisode.open(ctx.model, messages, ctx.turnSampler?.()),
    historyModel: () => new HistoryModel(ctx.model),
    runStepWiseReward,
    runRewardPropagation,
    frozenLake: {
      generateRandomMap,
      Game: FrozenLakeGame,
      parseAction: parseFrozenLakeAction,
      systemPrompt: FROZEN_LAKE_SYSTEM_PROMPT,
      invalidHint: FROZEN_LAKE_INVALID_HINT,
    },
  };
}
