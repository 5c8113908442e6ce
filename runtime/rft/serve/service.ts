/**
 * Trinity's ExplorerService (trinity/explorer/proxy/service.py from v0.4.0, trinity/explorer/api/service.py in
 * v0.3.1–v0.3.2) on one local rollout model: answers chat completions with the current policy and records each
 * choice as an experience (prompt + response token ids, rollout log-probs, model version, the response id as its
 * message id), and counts requests and experiences for `/metrics`.
 *
 * - From v0.4.0 responses go to the history recorder; `/feedback` gives the rows of some message ids a reward (and
 *   the task id / run id the experiences are grouped by) and makes them ready; `/commit` runs the ready experiences
 *   through the experience pipeline into the trainer's buffer as one explorer step and logs the pipeline's metrics
 *   with the service's.
 * - Up to v0.3.2 there is no feedback: every response waits in a queue that each `service_status_check_interval`
 *   goes through the pipeline, unrewarded, as one explorer step (Explorer.serve's loop).
 *
 * The request is sampled as vLLM's server samples it: the chat template with the generation prompt, no special
 * tokens added, `max_tokens` capped by `max_model_len − prompt` and by `model.max_response_tokens` (vLLM's
 * override_generation_config), top_p / top_k defaulting to the model's; from v0.4.0 the proxy replaces the
 * temperature with `model.temperature` and always asks for log-probs and token ids.
 */
import { randomUUID } from 'node:crypto';
import { atLeast, type Release } from '../../config/releases';
import type { ExperienceWriter } from '../buffer';
import type { Experience } from '../experience';
import type { ExperiencePipeline } from '../explorer/experience-pipeline';
import type { RolloutModel } from '../models/rollout-model';
import type { Monitor } from '../monitor/run-monitor';
import { RequestError, type ChatRequest, type CompletionHeader, type SampledChoice } from './openai';
import type { FeedbackKey, HistoryRecorder } from './recorder';
import { GenerationStoppedError } from '../../engine/sampling';
import { StepAbandoned, type StopPoint } from '../stop-point';

/** What the release's service does. */
export interface ServiceFlavor {
  release: Release;
  /** v0.4.0+: the recorder, `/feedback` and `/commit`; before, every response is queued for the interval's step. */
  feedback: boolean;
  /** v0.5.2+: `stream: true` (SSE chunks). */
  stream: boolean;
  /** v0.4.0+: the proxy sets the temperature from the config and always asks for log-probs and token ids. */
  forced: boolean;
}

export function serviceFlavor(release: Release): ServiceFlavor {
  const proxy = atLeast(release, 'v0.4.0');
  return { release, feedback: proxy, stream: atLeast(release, 'v0.5.2'), forced: proxy };
}

export interface ServiceParts {
  flavor: ServiceFlavor;
  rollout: RolloutModel;
  /** The name `/v1/models` lists and requests may name (vLLM serves the model under its path). */
  servedModel: string;
  /** vLLM's max_model_len: prompt and response tokens together. */
  maxModelLen: number;
  /** `model.max_response_tokens` (vLLM's override_generation_config max_new_tokens). */
  maxResponseTokens: number;
  /** `model.temperature`. */
  temperature: number;
  pipeline: ExperiencePipeline;
  writer: ExperienceWriter;
  /** From v0.4.0. */
  recorder?: HistoryRecorder;
  monitor: Monitor;
  /**
   * The run's stop point (stop-point.ts), awaited before each request is sampled: once the run is stopping, the
   * requests still queued are refused (503) rather than sampled, so a SIGTERM waits for one request at most.
   */
  stop?: StopPoint;
}

export interface ChatResult {
  header: CompletionHeader;
  choices: SampledChoice[];
}

export class ExplorerService {
  /** Explorer steps committed (Trinity's explore_step_num). */
  exploreStepNum = 0;
  private requestCount = 0;
  private totalExperienceCount = 0;
  private readyExperienceCount = 0;
  /** Rewarded experiences not yet committed (v0.4.0+), or every response since the last interval (v0.3.x). */
  private ready: Experience[] = [];

  constructor(private readonly parts: ServiceParts) {}

  get flavor(): ServiceFlavor {
    return this.parts.flavor;
  }

  get modelVersion(): number {
    return this.parts.rollout.version;
  }

  /** Experiences waiting for a commit (or the next interval). */
  get pending(): number {
    return this.ready.length;
  }

  /** vLLM's /v1/models. */
  models(created: number): Record<string, unknown> {
    const p = this.parts;
    return {
      object: 'list',
      data: [
        {
          id: p.servedModel,
          object: 'model',
          created,
          owned_by: 'trinity-workbench',
          root: p.servedModel,
          parent: null,
          max_model_len: p.maxModelLen,
        },
      ],
    };
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const p = this.parts;
    const { rollout } = p;
    if (req.stream && !this.flavor.stream) {
      throw new RequestError(
        400,
        `stream: true is not supported by the proxy of Trinity-RFT ${this.flavor.release} (streamed responses are recorded from v0.5.2)`,
        'stream',
      );
    }
    if (req.model !== undefined && req.model !== p.servedModel)
      throw new RequestError(404, `The model \`${req.model}\` does not exist.`, 'model');
    let text: string;
    try {
      text = rollout.tokenizer.applyChatTemplate(req.messages, {
        addGenerationPrompt: true,
        enableThinking: req.enableThinking,
      });
    } catch (e) {
      throw new RequestError(
        400,
        `the chat template cannot render these messages: ${(e as Error).message}`,
        'messages',
      );
    }
    const ids = rollout.tokenizer.encode(text, { addSpecialTokens: false });
    if (ids.length === 0) throw new RequestError(400, 'the rendered prompt has no tokens', 'messages');
    if (ids.length >= p.maxModelLen) {
      throw new RequestError(
        400,
        `This model's maximum context length is ${p.maxModelLen} tokens. However, your request has ${ids.length} input tokens. Please reduce the length of the input messages.`,
        'messages',
      );
    }
    const maxTokens = Math.min(
      p.maxModelLen - ids.length,
      p.maxResponseTokens,
      req.maxTokens ?? Number.MAX_SAFE_INTEGER,
    );
    const version = rollout.version;
    const sampled = await this.unlessStopping(async () => {
      await p.stop?.();
      return rollout.complete(
        { text, ids },
        {
          n: req.n,
          max_tokens: maxTokens,
          min_tokens: req.minTokens,
          temperature: this.flavor.forced ? p.temperature : req.temperature,
          top_p: req.topP,
          top_k: req.topK,
          stop: req.stop,
        },
      );
    });
    this.requestCount++;
    const id = `chatcmpl-${randomUUID().replace(/-/g, '')}`;
    const decode = (t: readonly number[], skip: boolean): string =>
      rollout.tokenizer.decode(t, { skipSpecialTokens: skip });
    const choices = sampled.map((e): SampledChoice => {
      const tokens = e.tokens.slice(e.promptLength);
      const content = e.responseText ?? decode(tokens, true);
      return {
        tokens,
        logprobs: e.logprobs ?? [],
        text: content,
        finishReason: e.truncated ? 'length' : 'stop',
        tokenTexts: tokens.map((t) => decode([t], false)),
        deltas: req.stream ? contentDeltas(tokens, content, (t) => decode(t, true)) : [],
      };
    });
    // ExplorerService.record_experience: one experience per choice, its message id the response id.
    const exps = sampled.map(
      (e): Experience => ({ ...e, eid: { batch: '', task: '', run: 0, step: 0, suffix: id }, modelVersion: version }),
    );
    this.totalExperienceCount += exps.length;
    if (p.recorder) await p.recorder.record(exps);
    else this.ready.push(...exps);
    return {
      header: {
        id,
        created: Math.floor(Date.now() / 1000),
        model: p.servedModel,
        promptIds: ids,
        logprobs: this.flavor.forced || req.logprobs,
      },
      choices,
    };
  }

  /** record_feedback: the experiences of `msgIds` not rewarded before become ready; returns how many. */
  feedback(reward: number, msgIds: readonly string[], key: FeedbackKey): number {
    if (!this.parts.recorder)
      throw new Error(`feedback needs the history recorder (Trinity-RFT ${this.flavor.release} has none)`);
    const exps = this.parts.recorder.updateReward(reward, msgIds, key);
    this.readyExperienceCount += exps.length;
    this.ready.push(...exps);
    return exps.length;
  }

  /**
   * Sampling that the run's stop gives up (at its stop point, or a generation ended at its next decode step) is
   * refused as the closing server refuses a new request: 503.
   */
  private async unlessStopping<T>(sample: () => Promise<T>): Promise<T> {
    try {
      return await sample();
    } catch (e) {
      const stopped =
        e instanceof StepAbandoned || (e instanceof GenerationStoppedError && this.parts.rollout.stopping?.());
      if (stopped) throw new RequestError(503, 'the service is shutting down');
      throw e;
    }
  }

  /**
   * submit_experiences (v0.4.0+) and the interval's step (v0.3.x): the waiting experiences through the pipeline into
   * the buffer as explorer step `exploreStepNum + 1`, whose metrics are logged with the service's.
   */
  async commit(): Promise<Record<string, number>> {
    // Taken out only once written (one transaction): a failing pipeline or write leaves them waiting.
    const exps = this.ready.slice();
    const out = this.parts.pipeline.process(exps);
    await this.parts.writer.write(out.exps);
    this.ready.splice(0, exps.length);
    const metrics = { ...out.metrics, ...this.collectMetrics() };
    this.exploreStepNum++;
    this.parts.monitor.log('explorer', this.exploreStepNum, metrics);
    return metrics;
  }

  /** collect_metrics (names: runtime/config/runs/metric-names.ts serviceMetricKeys). */
  collectMetrics(): Record<string, number> {
    const m: Record<string, number> = {
      'rollout/model_0/total_request_count': this.requestCount,
      'rollout/model_0/model_version': this.parts.rollout.version,
      'rollout/total_experience_count': this.totalExperienceCount,
    };
    if (this.flavor.feedback) m['rollout/ready_experience_count'] = this.readyExperienceCount;
    return m;
  }
}

/**
 * The content each token adds, for streamed deltas: the growing decoded prefix, held back while it ends in an
 * incomplete character, clipped to the final content (a stop string may cut inside a token).
 */
function contentDeltas(tokens: readonly number[], content: string, decode: (t: readonly number[]) => string): string[] {
  const out: string[] = [];
  let emitted = 0;
  for (let i = 0; i < tokens.length; i++) {
    const prefix = decode(tokens.slice(0, i + 1));
    let upto = prefix.endsWith('\uFFFD') ? emitted : Math.min(prefix.length, content.length);
    if (i === tokens.length - 1) upto = content.length;
    upto = Math.max(upto, emitted);
    out.push(content.slice(emitted, upto));
    emitted = upto;
  }
  return out;
}
