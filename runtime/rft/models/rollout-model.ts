/**
 * The explorer's model, as Trinity's ModelWrapper presents vLLM to workflows: `chat(messages, rollout_args)` and
 * `generate(prompts, rollout_args)` return n responses each as experiences (tokens, prompt length, rollout
 * log-probs, texts); `logprobs(tokens, temperature)` scores a whole sequence. Runs the engine's KV-cache sampler
 * on the explorer's own copy of the weights.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../engine/lm/transformer';
import type { SharedSampling } from '../../engine/sampling';
import { scoreSequences } from '../../engine/logprobs';
import type { ChatMessage, TextTokenizer } from '../../engine/tokenizer';
import { ChatRenderer, type Message } from '../data/chat';
import { randomEidSuffix, type Experience } from '../experience';
import { SampleBatcher, type Deadline } from './sample-batcher';

/** Trinity's GenerationConfig plus the model-level limits it falls back to. */
export interface RolloutArgs {
  n?: number;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number;
  max_tokens?: number | null;
  min_tokens?: number;
  stop?: string[];
}

export interface RolloutLimits {
  maxPromptTokens: number | null;
  maxResponseTokens: number;
  minResponseTokens: number;
  enablePromptTruncation: boolean;
  temperature: number;
  topP: number;
  topK: number;
  enableThinking: boolean | null;
  /** The engine's chat template (`chat_template`, which Trinity fills from `model.custom_chat_template`); unset: the tokenizer's. */
  chatTemplate?: string | null;
  /** `model.max_model_len`: the longest context a multi-turn episode may grow to (default: the model's positions). */
  maxModelLen?: number | null;
}

export class PromptTooLongError extends Error {}

const NO_DEADLINE: Deadline = () => null;

export class RolloutModel {
  /** The trainer step whose weights this model holds. */
  version = 0;
  private seedCounter: number;
  /** The deadline of the workflow a call comes from: each task's own, as a step's tasks may run at once. */
  private readonly deadline = new AsyncLocalStorage<Deadline>();
  /**
   * Whether the run is stopping (its explorer's stop flag): a generation still decoding then ends at its next decode
   * step with the engine's `GenerationStoppedError`, as at a deadline (a batch of several tasks' calls as a whole).
   */
  stopping: (() => boolean) | undefined;
  /** Awaited between decode steps (stop-point.ts `decodePause`): lets a stop's handler in this thread run. */
  pause: (() => Promise<void>) | undefined;
  /** Concurrent calls (a step's tasks at once) go to the engine as one batch. */
  private readonly batcher: SampleBatcher;
  /** The configured chat template, rendered as vLLM renders a `chat_template` it is given. */
  private readonly template?: ChatRenderer;

  constructor(
    readonly model: CausalLM,
    readonly tokenizer: TextTokenizer,
    readonly limits: RolloutLimits,
    seed: number,
    readonly stopTokenIds: readonly number[],
  ) {
    this.seedCounter = seed;
    this.batcher = new SampleBatcher(model, this.decodeResponse, () => this.stopping?.() ?? false);
    if (limits.chatTemplate != null) this.template = new ChatRenderer(tokenizer, limits.chatTemplate);
  }

  private applyTemplate(messages: readonly ChatMessage[], enableThinking: boolean | undefined): string {
    if (this.template)
      return this.template.render(
        messages.map((m): Message => ({ ...m })),
        { addGenerationPrompt: true, enableThinking },
      );
    return this.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true, enableThinking });
  }

  /**
   * Runs `fn` (a workflow) with a deadline (`performance.now()` milliseconds) on every generation it makes: a
   * generation still waiting or decoding then is abandoned with the engine's `GenerationStoppedError`. Workflows
   * running at once each keep their own. A function is read at every check (a deadline that may come closer while
   * the workflow runs: over-rollout's cut).
   */
  async withDeadline<T>(deadline: number | null | Deadline, fn: () => T | Promise<T>): Promise<T> {
    return await this.deadline.run(typeof deadline === 'function' ? deadline : () => deadline, fn);
  }

  /** The chat template rendering of `messages`, continuing a final assistant message (Trinity's reply_prefix). */
  renderChat(messages: readonly ChatMessage[]): string {
    const last = messages[messages.length - 1];
    const thinking = this.limits.enableThinking === null ? undefined : this.limits.enableThinking;
    if (last?.role === 'assistant') return this.applyTemplate(messages.slice(0, -1), thinking) + last.content;
    return this.applyTemplate(messages, thinking);
  }

  /** The rendered template already holds any BOS, so it is tokenised without special tokens (as vLLM's chat does). */
  chat(messages: readonly ChatMessage[], args: RolloutArgs = {}): Promise<Experience[]> {
    return this.sample([this.renderChat(messages)], args, false);
  }

  /** n responses for each raw prompt text, in prompt order (special tokens added, as vLLM's generate does). */
  generate(prompts: readonly string[], args: RolloutArgs = {}): Promise<Experience[]> {
    return this.sample(prompts, args, true);
  }

  /**
   * Trinity's `ModelWrapper.logprobs(tokens, temperature)`: entry i is log p(tokens[i+1] | tokens[..i]) at
   * `temperature` (default: the model's, else 1), so the result has `tokens.length − 1` entries.
   */
  async logprobs(tokens: readonly number[], temperature: number | null = null): Promise<number[]> {
    if (tokens.length < 2) return [];
    const vocab = this.model.config.vocabSize;
    const bad = tokens.find((t) => !Number.isInteger(t) || t < 0 || t >= vocab);
    if (bad !== undefined)
      throw new Error(`logprobs: token id ${bad} is outside this model's vocabulary (${vocab} tokens)`);
    const t = temperature ?? this.limits.temperature;
    const lp = tf.tidy(
      () =>
        scoreSequences(this.model, tf.tensor2d([tokens as number[]], [1, tokens.length], 'int32'), { temperature: t })
          .logprobs,
    );
    try {
      return Array.from(await lp.data());
    } finally {
      lp.dispose();
    }
  }

  /**
   * n responses to a prompt already rendered and tokenised by the caller (the serve mode's OpenAI endpoint does both
   * as vLLM's server does: no prompt limits of the explorer, its own max_tokens).
   */
  complete(prompt: { text: string; ids: readonly number[] }, args: RolloutArgs = {}): Promise<Experience[]> {
    return this.sampleEncoded([[...prompt.ids]], [prompt.text], args);
  }

  private sample(prompts: readonly string[], args: RolloutArgs, addSpecialTokens: boolean): Promise<Experience[]> {
    return this.sampleEncoded(
      prompts.map((p) => this.promptTokens(p, addSpecialTokens)),
      prompts,
      args,
    );
  }

  private async sampleEncoded(
    encoded: number[][],
    prompts: readonly string[],
    args: RolloutArgs,
  ): Promise<Experience[]> {
    const { shouldStop: _, ...sampling } = this.samplingParams(args, null);
    const completions = await this.batcher.submit({
      prompts: encoded,
      n: args.n ?? 1,
      seed: this.nextSeed(),
      maxNewTokens: args.max_tokens ?? this.limits.maxResponseTokens,
      sampling,
      deadline: this.deadline.getStore() ?? NO_DEADLINE,
    });
    return completions.map((c) => {
      const prompt = encoded[c.promptIndex];
      return {
        eid: { batch: '', task: '', run: c.sampleIndex, step: 0, suffix: randomEidSuffix() },
        tokens: [...prompt, ...c.tokens],
        promptLength: prompt.length,
        logprobs: c.logprobs,
        truncated: c.finishReason === 'length',
        modelVersion: this.version,
        promptText: prompts[c.promptIndex],
        responseText: c.text ?? '',
      };
    });
  }

  /**
   * The engine's sampling parameters for `args` (with this model's limits and stops) but length, n and seed;
   * `shouldStop` at the deadline (by default the calling workflow's) and when the run stops.
   */
  samplingParams(args: RolloutArgs, deadline: Deadline | null = this.deadline.getStore() ?? null): SharedSampling {
    const stopping = this.stopping;
    const due =
      deadline === null
        ? undefined
        : (): boolean => {
            const at = deadline();
            return at !== null && performance.now() >= at;
          };
    return {
      minNewTokens: args.min_tokens ?? this.limits.minResponseTokens,
      temperature: args.temperature ?? this.limits.temperature,
      topP: args.top_p ?? this.limits.topP,
      topK: args.top_k ?? this.limits.topK,
      stopTokenIds: this.stopTokenIds,
      stopStrings: args.stop,
      validVocab: this.tokenizer.vocabSize,
      padTokenId: this.tokenizer.padTokenId,
      shouldStop: stopping && due ? () => stopping() || due() : (stopping ?? due),
      pause: this.pause,
    };
  }

  /** The seed of the next generation (each call takes the next; a run's seed fixes them all). */
  nextSeed(): number {
    return this.seedCounter++;
  }

  /** A response's text from its ids (special tokens skipped). */
  readonly decodeResponse = (ids: number[]): string => this.tokenizer.decode(ids, { skipSpecialTokens: true });

  private promptTokens(text: string, addSpecialTokens: boolean): number[] {
    const ids = this.tokenizer.encode(text, { addSpecialTokens });
    const max = this.limits.maxPromptTokens;
    if (max !== null && ids.length > max) {
      if (!this.limits.enablePromptTruncation) {
        throw new PromptTooLongError(
          `prompt has ${ids.length} tokens, more than model.max_prompt_tokens (${max}); set model.enable_prompt_truncation to truncate`,
        );
      }
      return ids.slice(0, max);
    }
    return ids;
  }
}
