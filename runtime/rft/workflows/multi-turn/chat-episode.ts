/**
 * A concatenated multi-turn episode (Trinity's `MultiTurnWorkflow`, trinity/common/workflows/workflow.py @64b001d):
 * the whole conversation under the model's chat template becomes one experience whose `action_mask` is 1 exactly on
 * the tokens the policy sampled and 0 on every token the template or the environment added, with log-probs 0 where
 * the mask is 0.
 *
 * Trinity re-tokenises the finished conversation (`convert_messages_to_experience`, trinity/common/models/model.py
 * @09c5b9c) and recomputes its log-probs; here the context is built as the turns happen, so the assistant tokens are
 * the sampled ids themselves and their log-probs the sampling ones (the same quantity the trainer recomputes), and
 * what the model was shown is exactly what it is trained on. Two differences follow and are deliberate: a template
 * that rewrites earlier turns (Qwen3 dropping old reasoning) does not change them here, and the template's tokens
 * after a sampled stop token (ChatML's newline after `<|im_end|>`) are masked 0 where Trinity's default mask method
 * covers them with 1. Trinity's other rules are kept: a conversation longer than `max_model_len − 1` tokens is cut
 * there, marked `response_truncated` and its reward set to 0 (`_build_experience_from_converted`); numeric `info`
 * values become the experience's metrics.
 */
import type { ChatMessage } from '../../../engine/tokenizer';
import { randomEidSuffix, type Experience } from '../../experience';
import type { RolloutArgs, RolloutModel } from '../../models/rollout-model';
import { glueAfterAssistant } from './template-glue';
import { completionTurnSampler, type SampledTurn, type TurnSampler } from './turn-sampler';

/** The response Trinity's vLLM wrapper returns in place of a turn whose prompt was cut (`_handle_prompt_truncation`). */
export const PROMPT_TRUNCATED_RESPONSE = '[This experience is masked out due to overlong prompt]';

export class EpisodeError extends Error {}

/**
 * vLLM refuses a prompt that leaves no room for one token (vllm/v1/engine/input_processor.py `_validate_prompt_len`,
 * 009daae; Trinity main pins vllm 0.19.1-0.22.0): the turn raises, and Trinity's WorkflowRunner fails the task
 * (trinity/explorer/workflow_runner.py `_execute_single_run`, cbeb875), as a thrown workflow fails it here.
 */
function overlongPromptMessage(length: number, maxModelLen: number): string {
  const what =
    length > maxModelLen
      ? `The decoder prompt (length ${length}) is longer than the maximum model length of ${maxModelLen}.`
      : `The decoder prompt (length ${length}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${maxModelLen}.`;
  return `${what} (vLLM's refusal of the episode's next turn: raise model.max_model_len, or lower the episode's turns or max_response_tokens)`;
}

export interface EpisodeTurn extends SampledTurn {
  /** The context was longer than `max_prompt_tokens` with prompt truncation on: nothing was sampled (Trinity's dummy). */
  promptTruncated: boolean;
}

export interface EpisodeEnd {
  reward: number;
  /** Numeric values also become the experience's metrics, as Trinity's MultiTurnWorkflow does. */
  info?: Record<string, unknown>;
  /** The workflow ended the episode on its token budget (Trinity's `truncate_status="response_truncated"`). */
  truncated?: boolean;
}

export class ChatEpisode {
  /** The conversation so far; the model's turns are appended as `assistant` messages. */
  readonly messages: ChatMessage[];
  /** The reward the workflow gave each model turn, in order. */
  readonly turnRewards: number[] = [];
  private readonly ids: number[] = [];
  private readonly mask: number[] = [];
  private readonly logprobs: number[] = [];
  private promptLength = 0;
  private promptText = '';
  /** Template and environment tokens waiting for the next turn (the glue after the last one). */
  private pending: number[] = [];
  private pendingFrom = 0;
  /** The last turn's stop token as text, which the template's glue must not repeat. */
  private lastStopText: string | null = null;
  private closed = false;

  private constructor(
    private readonly model: RolloutModel,
    private readonly sampler: TurnSampler,
    messages: readonly ChatMessage[],
  ) {
    if (messages.length === 0) throw new EpisodeError('an episode starts with at least one message');
    this.messages = [...messages];
    this.refreshPending();
  }

  /** Opens an episode on `messages` (system and first user message, usually). */
  static open(model: RolloutModel, messages: readonly ChatMessage[], sampler?: TurnSampler): ChatEpisode {
    return new ChatEpisode(model, sampler ?? completionTurnSampler(model), messages);
  }

  /** The longest context the engine takes: the config's `max_model_len`, within the model's position limit. */
  get maxModelLen(): number {
    const positions = this.model.model.config.maxPositions;
    return Math.min(this.model.limits.maxModelLen ?? positions, positions);
  }

  /** Tokens after the first prompt, the next turn's pending ones included: what counts against a token budget. */
  get responseTokens(): number {
    return this.ids.length === 0 ? 0 : this.ids.length + this.pending.length - this.promptLength;
  }

  /** Tokens the next turn may still sample before the context reaches `maxModelLen`. */
  get roomLeft(): number {
    return this.maxModelLen - this.ids.length - this.pending.length;
  }

  /** Adds an environment (user/tool/system) message after the model's last turn. */
  addMessage(message: ChatMessage): void {
    if (message.role === 'assistant')
      throw new EpisodeError("the model's own turns come from respond(); add environment messages only");
    this.assertOpen();
    this.messages.push(message);
    this.refreshPending();
  }

  /** Takes back the messages added since the model's last turn (Trinity drops the last user message at its budget). */
  dropPendingMessages(): ChatMessage[] {
    if (this.ids.length === 0) throw new EpisodeError('the opening messages cannot be dropped');
    const dropped = this.messages.splice(this.pendingFrom);
    this.pending = [];
    return dropped;
  }

  /** Samples the model's next turn on the exact context so far and appends it as an assistant message. */
  async respond(args: RolloutArgs = {}): Promise<EpisodeTurn> {
    this.assertOpen();
    if (this.messages[this.messages.length - 1].role === 'assistant')
      throw new EpisodeError('respond() needs a message after the model’s last turn');
    const context = [...this.ids, ...this.pending];
    const first = this.ids.length === 0;
    const limits = this.model.limits;
    let turn: SampledTurn;
    let promptTruncated = false;
    if (limits.enablePromptTruncation && limits.maxPromptTokens !== null && context.length > limits.maxPromptTokens) {
      // Trinity's vLLM wrapper answers with a fixed text and samples nothing; its tokens are not the policy's.
      promptTruncated = true;
      turn = { ids: [], logprobs: [], text: PROMPT_TRUNCATED_RESPONSE, finishReason: 'length' };
    } else {
      if (this.roomLeft <= 0) throw new EpisodeError(overlongPromptMessage(context.length, this.maxModelLen));
      const maxTokens = Math.min(args.max_tokens ?? limits.maxResponseTokens, this.roomLeft);
      turn = await this.sampler.sampleTurn(context, { ...args, n: 1, max_tokens: maxTokens });
    }
    this.append(this.pending, 0);
    if (first) {
      this.promptLength = this.ids.length;
      this.promptText = this.model.renderChat(this.messages);
    }
    if (promptTruncated) {
      this.append(this.model.tokenizer.encode(turn.text, { addSpecialTokens: false }), 0);
    } else {
      this.ids.push(...turn.ids);
      this.mask.push(...turn.ids.map(() => 1));
      this.logprobs.push(...turn.logprobs);
    }
    const last = turn.ids[turn.ids.length - 1];
    this.lastStopText =
      turn.finishReason === 'stop' && last !== undefined && this.model.stopTokenIds.includes(last)
        ? this.model.tokenizer.decode([last], { skipSpecialTokens: false })
        : null;
    this.messages.push({ role: 'assistant', content: turn.text });
    this.pending = [];
    this.pendingFrom = this.messages.length;
    return { ...turn, promptTruncated };
  }

  /** Records the environment's reward for the model's last turn. */
  rewardTurn(reward: number): void {
    this.turnRewards.push(reward);
  }

  /**
   * The episode as one experience: the conversation up to the model's last turn (messages added after it carry no
   * action and are left out). Closes the episode.
   */
  toExperience(end: EpisodeEnd): Experience {
    if (this.ids.length === 0) throw new EpisodeError('the episode has no model turn to learn from');
    this.close();
    let tokens = [...this.ids];
    let mask = this.mask.slice(this.promptLength);
    let logprobs = this.logprobs.slice(this.promptLength);
    let truncated = end.truncated === true;
    let reward = end.reward;
    if (tokens.length > this.maxModelLen - 1) {
      const keep = this.maxModelLen - 1;
      tokens = tokens.slice(0, keep);
      mask = mask.slice(0, keep - this.promptLength);
      logprobs = logprobs.slice(0, keep - this.promptLength);
      truncated = true;
      reward = 0;
    }
    const info = end.info ?? {};
    const metrics: Record<string, number> = {};
    for (const [k, v] of Object.entries(info)) if (typeof v === 'number') metrics[k] = v;
    return {
      eid: { batch: '', task: '', run: 0, step: 0, suffix: randomEidSuffix() },
      tokens,
      promptLength: this.promptLength,
      logprobs,
      actionMask: mask,
      reward,
      truncated,
      modelVersion: this.model.version,
      promptText: this.promptText,
      responseText: this.model.tokenizer.decode(tokens.slice(this.promptLength), { skipSpecialTokens: false }),
      metrics,
      info: { ...info },
      messages: this.messages.slice(0, this.pendingFrom).map((m) => ({ ...m })),
      turnRewards: [...this.turnRewards],
    };
  }

  /** Ends the episode without an experience (the sampler frees what it holds). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sampler.close();
  }

  private append(ids: readonly number[], maskValue: 0 | 1): void {
    for (const id of ids) {
      this.ids.push(id);
      this.mask.push(maskValue);
      this.logprobs.push(0);
    }
  }

  /** The tokens the template puts between the model's last turn (or the start) and the next generation prompt. */
  private refreshPending(): void {
    const render = (m: readonly ChatMessage[]) => this.model.renderChat(m);
    const text =
      this.ids.length === 0
        ? render(this.messages)
        : glueAfterAssistant(render, this.messages, this.pendingFrom - 1, this.lastStopText);
    this.pending = this.model.tokenizer.encode(text, { addSpecialTokens: false });
  }

  private assertOpen(): void {
    if (this.closed) throw new EpisodeError('the episode has ended');
  }
}
