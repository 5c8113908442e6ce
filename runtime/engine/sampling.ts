/**
 * Batched sampling with a KV cache: prompts are left-padded into one batch, prefilled once, then decoded one token
 * per step. Sampling (temperature, top-k, top-p) runs on the host with a seeded generator, so a seed reproduces the
 * same completions on every backend. Each sampled token's log probability is taken under the temperature-scaled
 * distribution before top-k/top-p truncation: the quantity the trainer recomputes. Each step's logits come back with
 * one asynchronous read (webgpu in Node has no synchronous one). Where the native addon is loaded, plain temperature
 * and greedy rows are drawn in C (backend/native-sampler.ts) with TokenSampler's draws; on wasm with the addon the
 * prefill and every decode step are one kernel each (lm/native-decoder.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM, KVCache } from './lm/transformer';
import { CachedDecoder, fusedDecodeUnsupported } from './lm/cached-decoder';
import { NativeDecoder } from './lm/native-decoder';
import { NativeRowSampler } from './backend/native-sampler';
import { Rng } from './random';
import { tidy } from './ops';

export interface SamplingParams {
  maxNewTokens: number;
  minNewTokens?: number;
  /** 0 means greedy. */
  temperature?: number;
  topP?: number;
  /** 0 or negative: no top-k. */
  topK?: number;
  /** Samples per prompt. */
  n?: number;
  seed?: number;
  stopTokenIds?: readonly number[];
  /** Stop once the decoded completion contains one of these (the completion is cut before it). Needs `decode`. */
  stopStrings?: readonly string[];
  /** Ids at or above this are never sampled (embedding rows past the tokenizer's vocabulary). */
  validVocab?: number;
  /** Token fed as padding; it is masked out, so any id works. */
  padTokenId?: number;
  /** Asked once per decode step; true abandons the generation with a `GenerationStoppedError` (e.g. a deadline). */
  shouldStop?: () => boolean;
  /**
   * Awaited once per decode step, before `shouldStop` is asked: where what it reads is set by an event handler of this
   * thread (a signal's, in the main thread), a yield to the event loop now and then lets that handler run.
   */
  pause?: () => Promise<void>;
}

export class GenerationStoppedError extends Error {}

export interface Completion {
  promptIndex: number;
  sampleIndex: number;
  tokens: number[];
  /** log π(token) per generated token, at the sampling temperature. */
  logprobs: number[];
  finishReason: 'stop' | 'length';
  text?: string;
}

/** The sampling parameters a batch of calls shares; `maxNewTokens`, `n` and `seed` are each call's. */
export type SharedSampling = Omit<SamplingParams, 'maxNewTokens' | 'n' | 'seed'>;

/** One caller's `generate` in `generateBatch`: its prompts, sample count, seed and token limit. */
export interface BatchCall {
  prompts: readonly (readonly number[])[];
  n: number;
  seed: number;
  maxNewTokens: number;
}

/** A row of the batch: one sample of one prompt, with its own generator and token limit. */
interface Row {
  prompt: readonly number[];
  promptIndex: number;
  sampleIndex: number;
  rng: Rng;
  maxNewTokens: number;
}

/** A call's rows: `n` per prompt, in prompt order, their generators forked in row order from the call's seed. */
function callRows(call: BatchCall): Row[] {
  const master = new Rng(call.seed);
  return call.prompts.flatMap((prompt, promptIndex) =>
    Array.from({ length: call.n }, (_, sampleIndex) => ({
      prompt,
      promptIndex,
      sampleIndex,
      rng: master.fork(),
      maxNewTokens: call.maxNewTokens,
    })),
  );
}

/** `n` samples of each prompt, in prompt order. */
export async function generate(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  params: SamplingParams,
  decode?: (ids: number[]) => string,
): Promise<Completion[]> {
  const call = { prompts, n: params.n ?? 1, seed: params.seed ?? 0, maxNewTokens: params.maxNewTokens };
  return decodeRows(model, callRows(call), params, decode);
}

/**
 * Several callers' `generate` calls as one batch (the concurrent calls of a step's tasks, as vLLM batches concurrent
 * requests): each call's rows draw from generators forked from its own seed as `generate` forks them and stop at
 * its own token limit, so a call gets the completions `generate` gives it alone, up to the float32 rounding of a
 * wider batch padded to its longest prompt. Entry i of the result holds call i's completions.
 */
export async function generateBatch(
  model: CausalLM,
  calls: readonly BatchCall[],
  params: SharedSampling,
  decode?: (ids: number[]) => string,
  callers?: BatchCallers,
): Promise<Completion[][]> {
  const rows = calls.map(callRows);
  const callOf = rows.flatMap((r, i) => r.map(() => i));
  const first = rows.map((_, i) => callOf.indexOf(i));
  const got = rows.map((r) => new Array<Completion>(r.length));
  const left = rows.map((r) => r.length);
  const watch: RowWatch | undefined = callers && {
    dropped: (b) => callers.left(callOf[b]),
    finished: (b, completion) => {
      const i = callOf[b];
      got[i][b - first[i]] = completion;
      if (--left[i] === 0) callers.done(i, got[i]);
    },
  };
  const all = await decodeRows(model, rows.flat(), params, decode, watch);
  return rows.map((r, i) => all.slice(first[i], first[i] + r.length));
}

/** A batch's callers, each following its own call: whether it has left, and its completions once they are all final. */
export interface BatchCallers {
  /** Asked at every decode step: a call whose caller left is no longer decoded. */
  left(call: number): boolean;
  done(call: number, completions: Completion[]): void;
}

/** The tokens a prompt of `length` may still get: its limit, or the room left in the model's positions. */
export function roomFor(model: CausalLM, length: number, maxNewTokens: number): number {
  return Math.min(maxNewTokens, model.config.maxPositions - length);
}

/** Why a prompt cannot be generated from, or undefined (the message `generate` throws). */
export function promptProblem(model: CausalLM, prompt: readonly number[], maxNewTokens: number): string | undefined {
  if (prompt.length === 0) return 'the prompt is empty';
  if (roomFor(model, prompt.length, maxNewTokens) <= 0)
    return `prompt of ${prompt.length} tokens leaves no room in max_position_embeddings (${model.config.maxPositions})`;
  return undefined;
}

/** How a batch's callers follow their own rows (`generateBatch`). */
interface RowWatch {
  /** Whether row b's caller has left: asked at every decode step, and the row is no longer decoded. */
  dropped(b: number): boolean;
  /** Row b's completion is final (its text decoded). */
  finished(b: number, completion: Completion): void;
}

async function decodeRows(
  model: CausalLM,
  rows: readonly Row[],
  params: SharedSampling,
  decode?: (ids: number[]) => string,
  watch?: RowWatch,
): Promise<Completion[]> {
  if (rows.length === 0) return [];
  if (params.stopStrings?.length && !decode) throw new Error('generate: stopStrings need a decode function');
  for (const r of rows) if (r.prompt.length === 0) throw new Error(`generate: prompt ${r.promptIndex} is empty`);
  const maxPrompt = Math.max(...rows.map((r) => r.prompt.length));
  // Each row's own room: a short prompt batched with a long one may go on after the long one's room is spent.
  const rowMax = rows.map((r) => roomFor(model, r.prompt.length, r.maxNewTokens));
  const tightest = rowMax.indexOf(Math.min(...rowMax));
  if (rowMax[tightest] <= 0)
    throw new Error(`generate: ${promptProblem(model, rows[tightest].prompt, rows[tightest].maxNewTokens)}`);
  const maxNew = Math.max(...rowMax);
  const B = rows.length;
  const pad = params.padTokenId ?? 0;
  const rngs = rows.map((r) => r.rng);
  const drawer = new RowDrawer({ ...params, maxNewTokens: maxNew }, model.config.vocabSize, model.config.eosTokenIds);

  const { ids, mask, pos } = leftPadded(rows, maxPrompt, pad);
  const nextPos = rows.map((r) => r.prompt.length);
  const out: Completion[] = rows.map((r) => ({
    promptIndex: r.promptIndex,
    sampleIndex: r.sampleIndex,
    tokens: [],
    logprobs: [],
    finishReason: 'length',
  }));
  const done = new Array<boolean>(B).fill(false);
  const stops = drawer.stops;
  const draw = (logits: Float32Array, active: number[], generated: number) =>
    drawer.draw(logits, active, generated, rngs);
  const extend = (c: Completion, token: number, logprob: number): boolean =>
    extendCompletion(c, token, logprob, stops, params.stopStrings, decode);

  // The prefill and every decode step as one kernel each where the backend has it (wasm with the native addon);
  // else the prefill through `forward`, then the decode steps on fused kernels or through `forward`.
  const native = NativeDecoder.supports(model) ? new NativeDecoder(model, mask, B, maxPrompt, maxNew - 1) : undefined;
  const head = native ? undefined : model.inferenceHead();
  let keyMask = tf.tensor2d(mask, [B, maxPrompt]);
  let step: { logits: tf.Tensor2D; cache: KVCache };
  try {
    step = native
      ? { logits: native.prefill(ids, pos), cache: { keys: [], values: [] } }
      : tidy(() =>
          lastLogits(
            model,
            head!,
            tf.tensor2d(ids, [B, maxPrompt], 'int32'),
            tf.tensor2d(pos, [B, maxPrompt], 'int32'),
            keyMask,
          ),
        );
  } catch (e) {
    native?.dispose();
    head?.dispose();
    keyMask.dispose();
    throw e;
  }
  let cache: KVCache = step.cache;
  let decoder: CachedDecoder | NativeDecoder | undefined = native;
  try {
    if (!decoder && maxNew > 1 && fusedDecodeUnsupported(model) === undefined) {
      decoder = new CachedDecoder(model, head!, cache, mask, maxNew - 1);
      disposeCache(cache);
      cache = { keys: [], values: [] };
    }
    for (let t = 0; t < maxNew; t++) {
      if (params.pause) await params.pause();
      if (params.shouldStop?.()) throw new GenerationStoppedError(`generation stopped after ${t} decode step(s)`);
      if (watch) for (let b = 0; b < B; b++) done[b] ||= watch.dropped(b);
      if (done.every(Boolean)) break;
      const logits = (await step.logits.data()) as Float32Array;
      step.logits.dispose();
      const fed = new Int32Array(B).fill(pad);
      const active = done.flatMap((d, b) => (d ? [] : [b]));
      // Every active row has generated t tokens so far.
      draw(logits, active, t).forEach(({ token, logprob }, i) => {
        const b = active[i];
        fed[b] = token;
        done[b] = extend(out[b], token, logprob) || out[b].tokens.length >= rowMax[b];
        if (done[b] && watch) {
          if (decode) out[b].text ??= decode(out[b].tokens);
          watch.finished(b, out[b]);
        }
      });
      if (done.every(Boolean) || t === maxNew - 1) break;
      const at = Int32Array.from(nextPos);
      // A finished row is fed padding at its last position: moving on could pass the RoPE tables.
      for (let b = 0; b < B; b++) if (!done[b]) nextPos[b]++;
      if (decoder) {
        step = { logits: decoder.step(fed, at), cache };
        continue;
      }
      const positions = tf.tensor2d(at, [B, 1], 'int32');
      const grown = tf.tidy(() => tf.concat([keyMask, tf.ones([B, 1])], 1) as tf.Tensor2D);
      keyMask.dispose();
      keyMask = grown;
      const prev: KVCache = cache;
      step = tidy(() => lastLogits(model, head!, tf.tensor2d(fed, [B, 1], 'int32'), positions, keyMask, prev));
      positions.dispose();
      disposeCache(prev);
      cache = step.cache;
    }
  } finally {
    if (!step.logits.isDisposed) step.logits.dispose();
    decoder?.dispose();
    disposeCache(cache);
    keyMask.dispose();
    head?.dispose();
  }
  if (decode) for (const c of out) c.text ??= decode(c.tokens);
  return out;
}

/**
 * The next token and its log-prob of each active row of a batch's logits (`[B·V]`), `generated` tokens in: the
 * native sampler where it serves (the same draws), TokenSampler for the rows it leaves, with the same uniform.
 */
export class RowDrawer {
  readonly stops: ReadonlySet<number>;
  private readonly sampler: TokenSampler;
  private readonly rowSampler: NativeRowSampler | undefined;

  constructor(
    params: SamplingParams,
    private readonly vocab: number,
    defaultStops: readonly number[] = [],
  ) {
    this.sampler = new TokenSampler(params, vocab);
    this.stops = new Set(params.stopTokenIds ?? defaultStops);
    this.rowSampler = NativeRowSampler.for({
      temperature: this.sampler.temperature,
      topK: this.sampler.topK,
      topP: this.sampler.topP,
      validVocab: this.sampler.validVocab,
      vocab,
    });
  }

  draw(
    logits: Float32Array,
    active: readonly number[],
    generated: number,
    rngs: readonly Pick<Rng, 'uniform'>[],
  ): { token: number; logprob: number }[] {
    const V = this.vocab;
    const { sampler, rowSampler, stops } = this;
    const row = (b: number) => logits.subarray(b * V, (b + 1) * V);
    if (!rowSampler) return active.map((b) => sampler.sample(row(b), rngs[b], generated, stops));
    const u = new Float64Array(active.length);
    if (!rowSampler.greedy) active.forEach((b, i) => (u[i] = rngs[b].uniform()));
    const banned = generated < sampler.minNew ? Int32Array.from(stops) : new Int32Array(0);
    const r = rowSampler.sample(logits, Int32Array.from(active), u, banned);
    return active.map((b, i) =>
      r.tokens[i] >= 0
        ? { token: r.tokens[i], logprob: r.logprobs[i] }
        : sampler.sample(row(b), { uniform: () => u[i] }, generated, stops),
    );
  }
}

/** Appends a sampled token to a completion; whether the completion is finished (a stop token or stop string). */
export function extendCompletion(
  c: Completion,
  token: number,
  logprob: number,
  stops: ReadonlySet<number>,
  stopStrings: readonly string[] | undefined,
  decode: ((ids: number[]) => string) | undefined,
): boolean {
  c.tokens.push(token);
  c.logprobs.push(logprob);
  if (stops.has(token)) {
    c.finishReason = 'stop';
    return true;
  }
  return !!stopStrings?.length && cutAtStopString(c, stopStrings, decode!);
}

/** Left padding: row b's real tokens end at the last column; positions count real tokens only. */
function leftPadded(
  rows: readonly { prompt: readonly number[] }[],
  maxPrompt: number,
  pad: number,
): { ids: Int32Array; mask: Float32Array; pos: Int32Array } {
  const B = rows.length;
  const ids = new Int32Array(B * maxPrompt).fill(pad);
  const mask = new Float32Array(B * maxPrompt);
  const pos = new Int32Array(B * maxPrompt);
  rows.forEach((r, b) => {
    const off = maxPrompt - r.prompt.length;
    r.prompt.forEach((t, i) => {
      ids[b * maxPrompt + off + i] = t;
      mask[b * maxPrompt + off + i] = 1;
      pos[b * maxPrompt + off + i] = i;
    });
  });
  return { ids, mask, pos };
}

function lastLogits(
  model: CausalLM,
  head: tf.Tensor2D,
  ids: tf.Tensor2D,
  positions: tf.Tensor2D,
  keyMask: tf.Tensor2D,
  cache?: KVCache,
): { logits: tf.Tensor2D; cache: KVCache } {
  const { hidden, cache: next } = model.forward(ids, { positions, keyMask, cache });
  const [B, T, D] = hidden.shape;
  const last = tf.reshape(tf.slice(hidden, [0, T - 1, 0], [B, 1, D]), [B, D]) as tf.Tensor2D;
  return { logits: tf.matMul(last, head), cache: next };
}

function disposeCache(c: KVCache): void {
  for (const t of c.keys) t.dispose();
  for (const t of c.values) t.dispose();
}

/** Cuts the completion before the first stop string it now contains; true when it did. */
function cutAtStopString(c: Completion, stopStrings: readonly string[], decode: (ids: number[]) => string): boolean {
  const text = decode(c.tokens);
  let at = -1;
  for (const s of stopStrings) {
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) return false;
  // Keep the shortest token prefix whose text reaches the cut; the tokens that spell the stop string go.
  let keep = c.tokens.length;
  while (keep > 0 && decode(c.tokens.slice(0, keep - 1)).length >= at) keep--;
  c.tokens.length = keep;
  c.logprobs.length = keep;
  c.text = text.slice(0, at);
  c.finishReason = 'stop';
  return true;
}

/** One token from one row of logits. */
export class TokenSampler {
  readonly temperature: number;
  /** 0: no top-k. */
  readonly topK: number;
  readonly topP: number;
  readonly validVocab: number;
  readonly minNew: number;
  private readonly probs: Float64Array;
  private readonly scratch: Float64Array;

  constructor(params: SamplingParams, vocab: number) {
    this.temperature = params.temperature ?? 1;
    this.topK = params.topK && params.topK >= 1 ? Math.floor(params.topK) : 0;
    this.topP = params.topP ?? 1;
    this.validVocab = Math.min(params.validVocab ?? vocab, vocab);
    this.minNew = params.minNewTokens ?? 0;
    this.probs = new Float64Array(vocab);
    this.scratch = new Float64Array(vocab);
  }

  sample(
    logits: Float32Array,
    rng: Pick<Rng, 'uniform'>,
    generated: number,
    stops: ReadonlySet<number>,
  ): { token: number; logprob: number } {
    const V = this.validVocab;
    const greedy = this.temperature <= 0;
    const scale = greedy ? 1 : 1 / this.temperature;
    const banned = (i: number): boolean => generated < this.minNew && stops.has(i);
    let max = -Infinity;
    for (let i = 0; i < V; i++) if (!banned(i) && logits[i] * scale > max) max = logits[i] * scale;
    let sum = 0;
    for (let i = 0; i < V; i++) {
      const p = banned(i) ? 0 : Math.exp(logits[i] * scale - max);
      this.probs[i] = p;
      sum += p;
    }
    const logZ = max + Math.log(sum);
    let token: number;
    if (greedy) {
      token = 0;
      for (let i = 1; i < V; i++) if (this.probs[i] > this.probs[token]) token = i;
    } else {
      token = this.draw(sum, rng);
    }
    return { token, logprob: logits[token] * scale - logZ };
  }

  private draw(sum: number, rng: Pick<Rng, 'uniform'>): number {
    const V = this.validVocab;
    const p = this.probs;
    if (this.topK === 0 && this.topP >= 1) {
      let u = rng.uniform() * sum;
      for (let i = 0; i < V; i++) {
        u -= p[i];
        if (u < 0) return i;
      }
      return lastNonZero(p, V);
    }
    // The candidates (p > 0) in the order (probability descending, id ascending); top-k keeps a prefix of it, top-p
    // the shortest prefix of that reaching topP of its mass. Every sum below adds in that order, so only the sorted
    // probabilities of the top-k are needed (ties are equal values); an id is looked up only for the drawn position.
    let count = 0;
    for (let i = 0; i < V; i++) if (p[i] > 0) count++;
    const kept = this.topK > 0 && this.topK < count ? this.largest(this.topK) : this.positive(count);
    kept.sort();
    const n = kept.length;
    // kept is ascending: the j-th candidate (0-based, descending) is kept[n - 1 - j].
    let keep = n;
    if (this.topP < 1) {
      let keptSum = 0;
      for (let j = n - 1; j >= 0; j--) keptSum += kept[j];
      let acc = 0;
      keep = 0;
      while (keep < n) {
        acc += kept[n - 1 - keep];
        keep++;
        if (acc >= this.topP * keptSum) break;
      }
    }
    if (keep === 0) return lastNonZero(p, V);
    let total = 0;
    for (let j = 0; j < keep; j++) total += kept[n - 1 - j];
    let u = rng.uniform() * total;
    let at = keep - 1;
    for (let j = 0; j < keep; j++) {
      u -= kept[n - 1 - j];
      if (u < 0) {
        at = j;
        break;
      }
    }
    // Position `at` holds value v; among the ids with probability v it is the r-th by id.
    const v = kept[n - 1 - at];
    let r = 0;
    while (at - r > 0 && kept[n - at + r] === v) r++;
    for (let i = 0; i < V; i++) if (p[i] === v && r-- === 0) return i;
    return lastNonZero(p, V);
  }

  /** The `count` positive probabilities (in a reused buffer). */
  private positive(count: number): Float64Array {
    const out = this.scratch.subarray(0, count);
    const p = this.probs;
    for (let i = 0, n = 0; n < count; i++) if (p[i] > 0) out[n++] = p[i];
    return out;
  }

  /** The k largest probabilities (a multiset, unordered), by a min-heap of size k. */
  private largest(k: number): Float64Array {
    const heap = this.scratch.subarray(0, k);
    const p = this.probs;
    let size = 0;
    for (let i = 0; i < this.validVocab; i++) {
      const x = p[i];
      if (!(x > 0)) continue;
      if (size < k) {
        let c = size++;
        while (c > 0) {
          const parent = (c - 1) >> 1;
          if (heap[parent] <= x) break;
          heap[c] = heap[parent];
          c = parent;
        }
        heap[c] = x;
      } else if (x > heap[0]) {
        let c = 0;
        for (;;) {
          let child = 2 * c + 1;
          if (child >= k) break;
          if (child + 1 < k && heap[child + 1] < heap[child]) child++;
          if (heap[child] >= x) break;
          heap[c] = heap[child];
          c = child;
        }
        heap[c] = x;
      }
    }
    return heap;
  }
}

function lastNonZero(p: Float64Array, V: number): number {
  for (let i = V - 1; i >= 0; i--) if (p[i] > 0) return i;
  return 0;
}
