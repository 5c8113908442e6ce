/**
 * The OpenAI chat-completions wire format as the vLLM server behind Trinity's proxy speaks it: which request fields
 * the local service honours (checked with vLLM-style 400s), the response with vLLM's `prompt_token_ids` and per-choice
 * `token_ids` and per-token log-probs (the proxy always asks for both, to record experiences), and the chunks of a
 * streamed response. Pure: no model, no I/O.
 */
import type { ChatMessage, ChatRole } from '../../engine/tokenizer';

/** An error answered with `status` and vLLM's error body. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** vLLM's ErrorResponse. */
export function errorBody(e: RequestError): {
  error: { message: string; type: string; param: string | null; code: number };
} {
  const type = e.status === 404 ? 'NotFoundError' : e.status >= 500 ? 'InternalServerError' : 'BadRequestError';
  return { error: { message: e.message, type, param: e.param, code: e.status } };
}

export interface ChatRequest {
  /** The model the client names (checked against the served model's name). */
  model?: string;
  messages: ChatMessage[];
  n: number;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minTokens: number;
  stop?: string[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the token counts. */
  includeUsage: boolean;
  /** `logprobs: true` (the proxy from v0.4.0 forces it). */
  logprobs: boolean;
  /** `chat_template_kwargs.enable_thinking`. */
  enableThinking?: boolean;
}

const ROLES = new Set<string>(['system', 'user', 'assistant', 'tool', 'developer']);

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function optionalNumber(body: Json, key: string, check: (x: number) => boolean, what: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !check(v))
    throw new RequestError(400, `${key} must be ${what}, got ${JSON.stringify(v)}.`, key);
  return v;
}

/** A message's content: a string, or text parts (joined with newlines, as vLLM does for string-content templates). */
function messageContent(content: unknown, i: number): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        if (typeof part === 'string') return part;
        if (isObject(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
        const type = isObject(part) ? JSON.stringify(part.type) : typeof part;
        throw new RequestError(
          400,
          `messages[${i}].content[${j}]: only text parts can be rendered by the local model (got ${type})`,
          'messages',
        );
      })
      .join('\n');
  }
  throw new RequestError(400, `messages[${i}].content must be a string or a list of text parts`, 'messages');
}

function parseMessages(v: unknown): ChatMessage[] {
  if (!Array.isArray(v) || v.length === 0)
    throw new RequestError(400, 'messages must be a non-empty list of {role, content} objects', 'messages');
  return v.map((m, i) => {
    if (!isObject(m)) throw new RequestError(400, `messages[${i}] must be an object with role and content`, 'messages');
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
      throw new RequestError(
        400,
        `messages[${i}].role must be one of ${[...ROLES].join(', ')}, got ${JSON.stringify(m.role)}`,
        'messages',
      );
    }
    if (Array.isArray(m.tool_calls) && m.tool_calls.length) {
      throw new RequestError(
        400,
        `messages[${i}] has tool_calls: tool calling is not available with the local chat template rendering`,
        'messages',
      );
    }
    // The engine's templates take the roles vLLM passes through; `developer` is rendered as the template sees it.
    return { role: m.role as ChatRole, content: messageContent(m.content, i) };
  });
}

function parseStop(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  throw new RequestError(400, 'stop must be a string or a list of strings', 'stop');
}

/** The request body (already parsed JSON) -> what the service samples; vLLM's checks and messages where it has them. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw new RequestError(400, 'the request body must be a JSON object');
  if (Array.isArray(body.tools) && body.tools.length) {
    throw new RequestError(
      400,
      'tools are not available: the local chat template rendering takes no tool definitions',
      'tools',
    );
  }
  const topLogprobs = optionalNumber(body, 'top_logprobs', Number.isInteger, 'an integer');
  if (topLogprobs !== undefined && topLogprobs > 0) {
    throw new RequestError(
      400,
      "top_logprobs is not available locally: responses carry the sampled tokens' log-probs only",
      'top_logprobs',
    );
  }
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string')
    throw new RequestError(400, 'model must be a string', 'model');
  const n = optionalNumber(body, 'n', Number.isInteger, 'an integer') ?? 1;
  if (n < 1) throw new RequestError(400, `n must be at least 1, got ${n}.`, 'n');
  const maxTokens =
    optionalNumber(body, 'max_completion_tokens', Number.isInteger, 'an integer') ??
    optionalNumber(body, 'max_tokens', Number.isInteger, 'an integer');
  if (maxTokens !== undefined && maxTokens < 1)
    throw new RequestError(400, `max_tokens must be at least 1, got ${maxTokens}.`, 'max_tokens');
  const temperature = optionalNumber(body, 'temperature', (x) => x >= 0, 'a number >= 0');
  const topP = optionalNumber(body, 'top_p', (x) => x > 0 && x <= 1, 'in (0, 1]');
  const topK = optionalNumber(
    body,
    'top_k',
    (x) => Number.isInteger(x) && x >= -1,
    'an integer: 0 or -1 (disable), or at least 1',
  );
  const minTokens = optionalNumber(body, 'min_tokens', (x) => Number.isInteger(x) && x >= 0, 'an integer >= 0') ?? 0;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    throw new RequestError(400, 'stream must be a boolean', 'stream');
  const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
  const kwargs = isObject(body.chat_template_kwargs) ? body.chat_template_kwargs : {};
  return {
    model: typeof body.model === 'string' && body.model !== '' ? body.model : undefined,
    messages: parseMessages(body.messages),
    n,
    maxTokens,
    temperature,
    topP,
    topK,
    minTokens,
    stop: parseStop(body.stop),
    stream: body.stream === true,
    includeUsage: streamOptions.include_usage === true,
    logprobs: body.logprobs === true,
    enableThinking: typeof kwargs.enable_thinking === 'boolean' ? kwargs.enable_thinking : undefined,
  };
}

/** One sampled choice, as the service hands it to the response builders. */
export interface SampledChoice {
  tokens: readonly number[];
  logprobs: readonly number[];
  /** The message content (special tokens skipped). */
  text: string;
  finishReason: 'stop' | 'length';
  /** Each token's own text (special tokens included), for `logprobs.content[].token`. */
  tokenTexts: readonly string[];
  /** Content added by each token (streaming deltas); they concatenate to `text`. */
  deltas: readonly string[];
}

export interface CompletionHeader {
  id: string;
  created: number;
  model: string;
  promptIds: readonly number[];
  /** Whether choices carry `logprobs.content` (always from v0.4.0: the proxy asks for them). */
  logprobs: boolean;
}

interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: never[];
}

function logprobEntries(c: SampledChoice, from = 0, to = c.tokens.length): LogprobEntry[] {
  const out: LogprobEntry[] = [];
  for (let i = from; i < to; i++)
    out.push({
      token: c.tokenTexts[i],
      logprob: c.logprobs[i],
      bytes: [...Buffer.from(c.tokenTexts[i], 'utf8')],
      top_logprobs: [],
    });
  return out;
}

export function usageOf(
  h: CompletionHeader,
  choices: readonly SampledChoice[],
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const completion = choices.reduce((a, c) => a + c.tokens.length, 0);
  return {
    prompt_tokens: h.promptIds.length,
    completion_tokens: completion,
    total_tokens: h.promptIds.length + completion,
  };
}

/** The `chat.completion` object. */
export function completionBody(h: CompletionHeader, choices: readonly SampledChoice[]): Json {
  return {
    id: h.id,
    object: 'chat.completion',
    created: h.created,
    model: h.model,
    choices: choices.map((c, index) => ({
      index,
      message: { role: 'assistant', content: c.text },
      logprobs: h.logprobs ? { content: logprobEntries(c) } : null,
      finish_reason: c.finishReason,
      token_ids: [...c.tokens],
    })),
    usage: usageOf(h, choices),
    prompt_token_ids: [...h.promptIds],
  };
}

/**
 * The `chat.completion.chunk` objects of a streamed response, as vLLM sends them: per choice a role chunk (the first
 * carries `prompt_token_ids`), then one chunk per token (its content delta, log-prob and `token_ids`; the last with the
 * finish reason), then, when asked, a usage chunk with no choices. The `data: [DONE]` line is the transport's.
 */
export function streamChunks(h: CompletionHeader, choices: readonly SampledChoice[], includeUsage: boolean): Json[] {
  const base = { id: h.id, object: 'chat.completion.chunk', created: h.created, model: h.model };
  const out: Json[] = [];
  choices.forEach((_, index) => {
    out.push({
      ...base,
      choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      ...(index === 0 ? { prompt_token_ids: [...h.promptIds] } : {}),
    });
  });
  choices.forEach((c, index) => {
    for (let i = 0; i < c.tokens.length; i++) {
      const last = i === c.tokens.length - 1;
      out.push({
        ...base,
        choices: [
          {
            index,
            delta: { content: c.deltas[i] },
            logprobs: h.logprobs ? { content: logprobEntries(c, i, i + 1) } : null,
            finish_reason: last ? c.finishReason : null,
            token_ids: [c.tokens[i]],
          },
        ],
      });
    }
  });
  if (includeUsage) out.push({ ...base, choices: [], usage: usageOf(h, choices) });
  return out;
}
