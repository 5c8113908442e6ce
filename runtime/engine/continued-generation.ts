/**
 * Batched generation for rows that continue earlier ones (the turns of concurrent multi-turn episodes): each row is
 * a whole token context and, optionally, the KV cache of a prefix of it from the row's last call. Only the tokens
 * after the cached prefix are prefilled; the rows of different lengths share one prefill and one decode loop (as
 * vLLM batches concurrent requests), and each row leaves with the cache of what it fed, for its next call.
 *
 * Cache layout of the batch, per row: `[pad | cached prefix (L_b) | pad | new tokens (P_b) | decoded…]`, the pads
 * masked out; positions count the row's real tokens, so a row's numbers are those of its own unpadded run (up to
 * float32 rounding). Each row has its own seed (its Rng is forked from it as `generate`'s first row's is), its own
 * token limit, and so the same completion whatever rows it is batched with.
 *
 * The cache is kept where the one-kernel decoder runs (wasm with the native addon, lm/native-decoder.ts); elsewhere
 * each row is generated alone over its whole context (`generate`), with the same seed, and no cache is kept.
 */
import * as tf from '@tensorflow/tfjs-core';
import { NativeDecoder } from './lm/native-decoder';
import type { CausalLM } from './lm/transformer';
import { Rng } from './random';
import {
  extendCompletion,
  generate,
  GenerationStoppedError,
  RowDrawer,
  type Completion,
  type SharedSampling,
} from './sampling';

/** The keys and values (`[1, KV, length, hd]` per layer) of a row's first `tokens.length` tokens. */
export class RowCache {
  private disposed = false;

  constructor(
    readonly keys: readonly tf.Tensor[],
    readonly values: readonly tf.Tensor[],
    readonly tokens: readonly number[],
  ) {}

  get length(): number {
    return this.tokens.length;
  }

  /** Whether `context` starts with the cached tokens (and goes past them: a new token to feed). */
  continues(context: readonly number[]): boolean {
    if (context.length <= this.tokens.length) return false;
    for (let i = 0; i < this.tokens.length; i++) if (context[i] !== this.tokens[i]) return false;
    return true;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const t of [...this.keys, ...this.values]) t.dispose();
  }
}

export interface ContinuedRow {
  /** The whole context the completion continues. */
  context: readonly number[];
  /** The row's cache from its last call (consumed: disposed here), or null. */
  cache: RowCache | null;
  maxNewTokens: number;
  seed: number;
}

export interface ContinuedResult {
  completion: Completion;
  /** The cache of the context and the completion's tokens but the last (never fed); null where none is kept. */
  cache: RowCache | null;
}

/** Whether `generateContinued` keeps caches for `model` on the active backend. */
export function keepsRowCaches(model: CausalLM): boolean {
  return NativeDecoder.supports(model);
}

export async function generateContinued(
  model: CausalLM,
  rows: readonly ContinuedRow[],
  params: SharedSampling,
  decode?: (ids: number[]) => string,
): Promise<ContinuedResult[]> {
  if (rows.length === 0) return [];
  for (const [b, r] of rows.entries()) {
    if (r.context.length === 0) throw new Error(`generateContinued: row ${b} has an empty context`);
    if (r.context.length >= model.config.maxPositions)
      throw new Error(
        `generateContinued: a context of ${r.context.length} tokens leaves no room in max_position_embeddings (${model.config.maxPositions})`,
      );
  }
  if (!keepsRowCaches(model)) {
    for (const r of rows) r.cache?.dispose();
    const out: ContinuedResult[] = [];
    for (const r of rows) {
      const [c] = await generate(
        model,
        [r.context],
        { ...params, maxNewTokens: r.maxNewTokens, n: 1, seed: r.seed },
        decode,
      );
      out.push({ completion: c, cache: null });
    }
    return out;
  }
  return decodeWithCaches(model, rows, params, decode);
}

async function decodeWithCaches(
  model: CausalLM,
  rows: readonly ContinuedRow[],
  params: SharedSampling,
  decode?: (ids: number[]) => string,
): Promise<ContinuedResult[]> {
  const B = rows.length;
  const cfg = model.config;
  const caches = rows.map((r) => {
    if (r.cache && r.cache.continues(r.context)) return r.cache;
    r.cache?.dispose();
    return null;
  });
  const L = caches.map((c) => c?.length ?? 0);
  const fresh = rows.map((r, b) => r.context.slice(L[b]));
  const Lmax = Math.max(...L);
  const Pmax = Math.max(...fresh.map((f) => f.length));
  const M = Lmax + Pmax;
  const maxNew = rows.map((r) => Math.max(1, Math.min(r.maxNewTokens, cfg.maxPositions - r.context.length)));
  const steps = Math.max(...maxNew) - 1;
  const pad = params.padTokenId ?? 0;

  const mask = new Float32Array(B * M);
  const ids = new Int32Array(B * Pmax).fill(pad);
  const pos = new Int32Array(B * Pmax);
  for (let b = 0; b < B; b++) {
    mask.fill(1, b * M + Lmax - L[b], b * M + Lmax);
    mask.fill(1, b * M + M - fresh[b].length, b * M + M);
    const off = Pmax - fresh[b].length;
    fresh[b].forEach((t, i) => {
      ids[b * Pmax + off + i] = t;
      pos[b * Pmax + off + i] = L[b] + i;
    });
  }
  const prefix = Lmax > 0 ? leftPaddedPrefix(caches, Lmax, cfg.layers) : undefined;
  for (const c of caches) c?.dispose();
  let decoder: NativeDecoder;
  try {
    decoder = new NativeDecoder(model, mask, B, M, steps, prefix);
  } finally {
    if (prefix) for (const t of [...prefix.keys, ...prefix.values]) t.dispose();
  }

  const drawer = new RowDrawer({ ...params, maxNewTokens: steps + 1 }, cfg.vocabSize, cfg.eosTokenIds);
  const rngs = rows.map((r) => new Rng(r.seed).fork());
  const out: Completion[] = rows.map(() => ({
    promptIndex: 0,
    sampleIndex: 0,
    tokens: [],
    logprobs: [],
    finishReason: 'length',
  }));
  const done = new Array<boolean>(B).fill(false);
  const nextPos = rows.map((r) => r.context.length);
  let logits: tf.Tensor2D | undefined;
  try {
    logits = decoder.prefill(ids, pos);
    for (let t = 0; ; t++) {
      if (params.pause) await params.pause();
      if (params.shouldStop?.()) throw new GenerationStoppedError(`generation stopped after ${t} decode step(s)`);
      const data = (await logits.data()) as Float32Array;
      logits.dispose();
      logits = undefined;
      const fed = new Int32Array(B).fill(pad);
      const active = done.flatMap((d, b) => (d ? [] : [b]));
      // Every active row has generated t tokens so far.
      drawer.draw(data, active, t, rngs).forEach(({ token, logprob }, i) => {
        const b = active[i];
        fed[b] = token;
        done[b] =
          extendCompletion(out[b], token, logprob, drawer.stops, params.stopStrings, decode) ||
          out[b].tokens.length >= maxNew[b];
      });
      if (done.every(Boolean) || t === steps) break;
      const at = Int32Array.from(nextPos);
      // A finished row is fed padding at its last position: moving on could pass the RoPE tables (its room was
      // smaller than the other rows').
      for (let b = 0; b < B; b++) if (!done[b]) nextPos[b]++;
      logits = decoder.step(fed, at);
    }
    if (decode) for (const c of out) c.text ??= decode(c.tokens);
    return out.map((completion, b) => ({
      completion,
      cache: rowCache(decoder, b, rows[b].context, completion.tokens, { Lmax, M, L: L[b], P: fresh[b].length }),
    }));
  } finally {
    logits?.dispose();
    decoder.dispose();
  }
}

/** Each layer's `[B, KV, Lmax, hd]` keys and values: row b's cache right-aligned, zeros before it. */
function leftPaddedPrefix(
  caches: readonly (RowCache | null)[],
  Lmax: number,
  layers: number,
): { keys: tf.Tensor[]; values: tf.Tensor[] } {
  const [, KV, , hd] = caches.find((c) => c)!.keys[0].shape as [number, number, number, number];
  const stack = (pick: (c: RowCache) => readonly tf.Tensor[], layer: number): tf.Tensor =>
    tf.tidy(() =>
      tf.concat(
        caches.map((c) => {
          if (!c) return tf.zeros([1, KV, Lmax, hd]);
          const t = pick(c)[layer];
          return c.length === Lmax
            ? t
            : tf.pad(t, [
                [0, 0],
                [0, 0],
                [Lmax - c.length, 0],
                [0, 0],
              ]);
        }),
        0,
      ),
    );
  const idx = Array.from({ length: layers }, (_, i) => i);
  return { keys: idx.map((i) => stack((c) => c.keys, i)), values: idx.map((i) => stack((c) => c.values, i)) };
}

/**
 * Row b's cache after the call: its cached prefix, its new tokens and the completion's tokens but the last (the one
 * never fed), gathered out of the batch's padded slots.
 */
function rowCache(
  decoder: NativeDecoder,
  b: number,
  context: readonly number[],
  tokens: readonly number[],
  at: { Lmax: number; M: number; L: number; P: number },
): RowCache {
  const fedOut = Math.max(0, tokens.length - 1);
  const slots = new Int32Array(at.L + at.P + fedOut);
  let n = 0;
  for (let s = at.Lmax - at.L; s < at.Lmax; s++) slots[n++] = s;
  for (let s = at.M - at.P; s < at.M + fedOut; s++) slots[n++] = s;
  const keys: tf.Tensor[] = [];
  const values: tf.Tensor[] = [];
  const layers = decoder.layerCount;
  tf.tidy(() => {
    const index = tf.tensor1d(slots, 'int32');
    for (let i = 0; i < layers; i++) {
      const { keys: k, values: v } = decoder.layerCache(i);
      const row = (t: tf.Tensor) => tf.keep(tf.gather(tf.slice(t, [b, 0, 0, 0], [1, -1, -1, -1]), index, 2));
      keys.push(row(k));
      values.push(row(v));
    }
  });
  return new RowCache(keys, values, [...context, ...tokens.slice(0, fedOut)]);
}
