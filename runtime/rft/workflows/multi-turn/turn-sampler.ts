/**
 * How an episode asks the model for its next turn: one response continuing an exact token context. Episodes talk to
 * the model only through a `TurnSampler` they open once and close when they end, so an engine can later batch the
 * pending turns of concurrent episodes into one generate call and keep each episode's KV cache between its turns
 * (every context an episode sends extends the previous one by the sampled ids and the template's tokens) without
 * any change to the workflows.
 */
import type { RolloutArgs, RolloutModel } from '../../models/rollout-model';

export interface SampledTurn {
  /** The sampled token ids, the stop token included when the response ended on one. */
  ids: number[];
  /** log π of each sampled id at the sampling temperature. */
  logprobs: number[];
  /** The response text (special tokens skipped; a stop string cut off). */
  text: string;
  finishReason: 'stop' | 'length';
}

export interface TurnSampler {
  /** One response (n = 1) continuing `context` exactly: the ids are never re-tokenised. */
  sampleTurn(context: readonly number[], args: RolloutArgs): Promise<SampledTurn>;
  /** The episode is over (frees what a cache-keeping engine holds for it). */
  close(): void;
}

/** Today's sampler: each turn is one `RolloutModel.complete` call that prefills the whole context again. */
export function completionTurnSampler(model: RolloutModel): TurnSampler {
  return {
    async sampleTurn(context, args) {
      const [e] = await model.complete({ text: '', ids: context }, { ...args, n: 1 });
      return {
        ids: e.tokens.slice(e.promptLength),
        logprobs: e.logprobs ?? [],
        text: e.responseText ?? '',
        finishReason: e.truncated ? 'length' : 'stop',
      };
    },
    close() {},
  };
}
