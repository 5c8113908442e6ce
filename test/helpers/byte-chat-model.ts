/**
 * The tiny chat model of the multi-turn tests: the tiny Qwen2 with the byte-level tokenizer and its ChatML template
 * (any text is tokenizable, one byte a token), saved to a temp dir and loaded; the rollout limits and an empty task
 * the workflow tests start from.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveInitialModel } from '../../runtime/engine/lm/checkpoint';
import { loadPretrained, stopTokenIds, type Pretrained } from '../../runtime/engine/pretrained';
import { buildByteTokenizer, tokenizerFromJson } from '../../runtime/engine/tokenizer';
import { Explorer } from '../../runtime/rft/explorer/explore-step';
import { RolloutModel, type RolloutLimits } from '../../runtime/rft/models/rollout-model';
import type { TurnSampler } from '../../runtime/rft/workflows/multi-turn/turn-sampler';
import type { WorkflowTask } from '../../runtime/rft/workflows/types';
import { tinyQwen2Config } from './tiny-qwen2';

/** <|im_end|>, the byte tokenizer's end of a turn. */
export const IM_END = 258;

export const ROLLOUT_LIMITS: RolloutLimits = {
  maxPromptTokens: null,
  maxResponseTokens: 6,
  minResponseTokens: 0,
  enablePromptTruncation: false,
  temperature: 1,
  topP: 1,
  topK: -1,
  enableThinking: null,
};

/** Saves the byte-level chat model to `dir`; `set` replaces initial weights (the initial model's layout). */
export function saveByteChatModel(
  dir: string,
  seed: number,
  opts: { maxPositions: number; set?: Record<string, Float32Array> },
): void {
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const cfg = tinyQwen2Config({
    vocabSize: tokenizer.vocabSize,
    maxPositions: opts.maxPositions,
    eosTokenIds: [...tokenizer.eosTokenIds],
  });
  saveInitialModel(cfg, seed, dir, { tokenizer, set: opts.set });
}

export function loadByteChatModel(seed: number, maxPositions: number): Pretrained {
  const dir = join(mkdtempSync(join(tmpdir(), 'twb-chat-model-')), 'model');
  saveByteChatModel(dir, seed, { maxPositions });
  return loadPretrained(dir);
}

export function rolloutModelOf(p: Pretrained, limits: Partial<RolloutLimits> = {}, seed = 11): RolloutModel {
  return new RolloutModel(p.model, p.tokenizer, { ...ROLLOUT_LIMITS, ...limits }, seed, stopTokenIds(p));
}

/** A task with no prompt, truth or arguments; `over` fills what a test needs. */
export function workflowTask(over: Partial<WorkflowTask> = {}): WorkflowTask {
  return {
    raw: {},
    taskDesc: undefined,
    truth: undefined,
    systemPrompt: null,
    replyPrefix: null,
    rolloutArgs: {},
    workflowArgs: {},
    rewardFnArgs: {},
    rewardFn: null,
    isEval: false,
    ...over,
  };
}

/**
 * Teacher-forced turns through the real model: each turn is the next of `texts` (then `fallback`) and <|im_end|>,
 * with the model's own log-probs of those ids on the episode's context.
 */
export function forcedTurns(model: RolloutModel, texts: readonly string[], fallback = '```Up```'): TurnSampler {
  const queue = [...texts];
  return {
    async sampleTurn(context) {
      const text = queue.shift() ?? fallback;
      const ids = [...model.tokenizer.encode(text, { addSpecialTokens: false }), IM_END];
      const scores = await model.logprobs([...context, ...ids], 1);
      return { ids, logprobs: scores.slice(context.length - 1), text, finishReason: 'stop' };
    },
    close() {},
  };
}

/** An explorer on `model` for workflows that score themselves (FrozenLake): no reward function, retry or samples. */
export function explorerWithoutRewards(model: RolloutModel, runnersPerModel: number): Explorer {
  return new Explorer(model, {
    maxRetryTimes: 0,
    createReward: () => {
      throw new Error('no reward function');
    },
    samplesPerStep: 0,
    log: () => {},
    release: 'main',
    runnersPerModel,
  });
}
