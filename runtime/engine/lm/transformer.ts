/**
 * A functional decoder-only transformer on tfjs-core: GPT-2 (LayerNorm, learned positions, GELU, fused qkv) and the
 * Llama family (RMSNorm, RoPE, SwiGLU, grouped-query attention, Qwen2's q/k/v biases, Qwen3's q/k norms).
 * Weights are `tf.Variable`s keyed by their Hugging Face names (see params.ts for the layout).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config';
import { paramSpecs, type ParamSpec } from './params';
import { ropeTables, type RopeTables } from './rope';
import {
  applyRopeRotation,
  geluErf,
  geluTanh,
  groupedQueryAttention,
  layerNorm,
  linear,
  mm,
  mmT,
  rmsNorm,
  rotateHalfMatrix,
  swiglu,
} from '../ops';
import { fusedHeadsRope, trainKernelsActive } from '../backend/train-kernels';

/** A low-rank adapter on one linear layer: y += scale · (dropout(x) A) B, A `[in, r]`, B `[r, out]`. */
export interface LoraAdapter {
  a: tf.Variable;
  b: tf.Variable;
  scale: number;
  dropout: number;
}

export interface Linear {
  w: tf.Variable;
  b?: tf.Variable;
  name: string;
}

export interface Norm {
  w: tf.Variable;
  b?: tf.Variable;
}

export interface Layer {
  ln1: Norm;
  ln2: Norm;
  /** GPT-2's fused projection, or the separate q/k/v of the Llama family. */
  qkv?: Linear;
  q?: Linear;
  k?: Linear;
  v?: Linear;
  qNorm?: tf.Variable;
  kNorm?: tf.Variable;
  o: Linear;
  fc?: Linear;
  proj?: Linear;
  gate?: Linear;
  up?: Linear;
  down?: Linear;
}

/** Keys and values of every layer so far, `[B, kvHeads, T, headDim]` each. */
export interface KVCache {
  keys: tf.Tensor4D[];
  values: tf.Tensor4D[];
}

/** What a decoder outside `forward` reads (model/cached-decoder.ts). */
export interface DecodingWeights {
  embed: tf.Variable;
  layers: readonly Layer[];
  finalNorm: Norm;
  /** Built when the model uses RoPE. */
  rope?: RopeTables;
  /** The untied LM head `[hidden, V]`; absent when the head is the embedding's transpose. */
  head?: tf.Variable;
}

export interface ForwardOptions {
  /** Position of every token, `[B, T]`. Default: past length + 0..T-1 for every row. */
  positions?: tf.Tensor2D;
  /** 1 for real tokens, 0 for padding, over past and current keys `[B, past + T]`. Default: all real. */
  keyMask?: tf.Tensor2D;
  /** The cache to attend over; the result carries the extended cache. */
  cache?: KVCache;
  /**
   * Only the last `tail` positions' hidden states are wanted (a trainer's response tokens): the last layer then
   * computes queries, attention, o and the MLP for those positions alone (every position's keys and values still
   * feed it), and `hidden` is `[B, tail, hidden]`. The states it returns are the full forward's: no earlier position
   * depends on a later one, and the dropped positions' outputs reach nothing. Ignored at `tail >= T`.
   */
  tail?: number;
}

export interface ForwardResult {
  /** Final hidden states `[B, T, hidden]`. */
  hidden: tf.Tensor3D;
  cache: KVCache;
}

const MASKED = -1e9;

/**
 * RoPE's cos/sin at a forward's positions: `[B, T, headDim/2]` for the fused heads kernel, or `[B, 1, T, headDim]`
 * (each half repeated) with the rotate-half matrix for applyRopeRotation.
 */
type RopeAt =
  | { fused: true; cos: tf.Tensor3D; sin: tf.Tensor3D }
  | { fused: false; cos: tf.Tensor; sin: tf.Tensor; rot: tf.Tensor2D };

export class CausalLM {
  readonly params: Map<string, tf.Variable>;
  readonly specs: ParamSpec[];
  /** Adapters by linear layer name (the Hugging Face module path, e.g. `model.layers.0.self_attn.q_proj`). */
  readonly adapters = new Map<string, LoraAdapter>();
  /** Training mode: adapter dropout is applied only while this is set. */
  training = false;
  /** Every linear layer the blocks use (lm_head excluded), in order. */
  readonly linears: Linear[] = [];
  private readonly embed: tf.Variable;
  private readonly pos?: tf.Variable;
  private readonly layers: Layer[];
  private readonly finalNorm: Norm;
  private readonly head?: tf.Variable;
  private rope?: RopeTables;

  constructor(
    readonly config: ModelConfig,
    params: Map<string, tf.Variable>,
  ) {
    this.params = params;
    this.specs = paramSpecs(config);
    const get = (name: string): tf.Variable => {
      const v = params.get(name);
      if (!v) throw new Error(`model is missing tensor ${name}`);
      return v;
    };
    const opt = (name: string): tf.Variable | undefined => params.get(name);
    const lin = (prefix: string): Linear => ({ w: get(`${prefix}.weight`), b: opt(`${prefix}.bias`), name: prefix });
    const c = config;
    if (c.family === 'gpt2') {
      this.embed = get('transformer.wte.weight');
      this.pos = get('transformer.wpe.weight');
      this.layers = [];
      for (let i = 0; i < c.layers; i++) {
        const p = `transformer.h.${i}`;
        this.layers.push({
          ln1: { w: get(`${p}.ln_1.weight`), b: get(`${p}.ln_1.bias`) },
          ln2: { w: get(`${p}.ln_2.weight`), b: get(`${p}.ln_2.bias`) },
          qkv: lin(`${p}.attn.c_attn`),
          o: lin(`${p}.attn.c_proj`),
          fc: lin(`${p}.mlp.c_fc`),
          proj: lin(`${p}.mlp.c_proj`),
        });
      }
      this.finalNorm = { w: get('transformer.ln_f.weight'), b: get('transformer.ln_f.bias') };
    } else {
      this.embed = get('model.embed_tokens.weight');
      this.layers = [];
      for (let i = 0; i < c.layers; i++) {
        const p = `model.layers.${i}`;
        this.layers.push({
          ln1: { w: get(`${p}.input_layernorm.weight`) },
          ln2: { w: get(`${p}.post_attention_layernorm.weight`) },
          q: lin(`${p}.self_attn.q_proj`),
          k: lin(`${p}.self_attn.k_proj`),
          v: lin(`${p}.self_attn.v_proj`),
          qNorm: opt(`${p}.self_attn.q_norm.weight`),
          kNorm: opt(`${p}.self_attn.k_norm.weight`),
          o: lin(`${p}.self_attn.o_proj`),
          gate: lin(`${p}.mlp.gate_proj`),
          up: lin(`${p}.mlp.up_proj`),
          down: lin(`${p}.mlp.down_proj`),
        });
      }
      this.finalNorm = { w: get('model.norm.weight') };
    }
    if (!c.tieEmbeddings) this.head = get('lm_head.weight');
    for (const l of this.layers)
      for (const x of [l.qkv, l.q, l.k, l.v, l.o, l.fc, l.proj, l.gate, l.up, l.down]) if (x) this.linears.push(x);
  }

  /** Every weight, in spec order (the base weights; adapters are listed by `adapterVariables`). */
  variables(): tf.Variable[] {
    return this.specs.map((s) => this.params.get(s.name)!);
  }

  adapterVariables(): tf.Variable[] {
    return [...this.adapters.values()].flatMap((a) => [a.a, a.b]);
  }

  /**
   * `W + scale · A B` of a base weight with an adapter (a new tensor the caller disposes), else undefined: what the
   * layer computes with, as a model directory or a rollout copy of the weights holds it.
   */
  mergedWeight(v: tf.Variable): tf.Tensor | undefined {
    if (!this.adapters.size) return undefined;
    const l = this.linears.find((x) => x.w === v);
    const ad = l && this.adapters.get(l.name);
    return ad && tf.tidy(() => tf.add(v, tf.mul(tf.matMul(ad.a, ad.b), ad.scale)));
  }

  /** The variables an optimizer updates: the adapters when there are any (base frozen), else every weight. */
  trainableVariables(): tf.Variable[] {
    return this.adapters.size > 0 ? this.adapterVariables() : this.variables();
  }

  /** Hidden states for token ids `[B, T]`, attending over `opts.cache` when given. */
  forward(ids: tf.Tensor2D, opts: ForwardOptions = {}): ForwardResult {
    const c = this.config;
    const [B, T] = ids.shape;
    const past = opts.cache?.keys[0]?.shape[2] ?? 0;
    const positions = opts.positions ?? defaultPositions(B, T, past);
    let x: tf.Tensor = tf.gather(this.embed, ids);
    if (this.pos) x = tf.add(x, tf.gather(this.pos, positions));
    // The fused training kernels (wasm with the native addon): q/k/v heads split, biased and rotated in one kernel.
    const fused = c.family !== 'gpt2' && trainKernelsActive();
    const rope = c.positions === 'rope' ? this.ropeAt(positions, fused) : undefined;
    const bias = attentionBias(T, past, opts.keyMask);
    const keys: tf.Tensor4D[] = [];
    const values: tf.Tensor4D[] = [];
    const tail = opts.tail !== undefined && opts.tail >= 1 && opts.tail < T ? opts.tail : undefined;
    for (let i = 0; i < this.layers.length; i++) {
      const layer = this.layers[i];
      const last = tail !== undefined && i === this.layers.length - 1 ? tail : undefined;
      const a = this.attention(
        layer,
        this.norm(x, layer.ln1),
        rope,
        bias,
        opts.cache?.keys[i],
        opts.cache?.values[i],
        last,
      );
      keys.push(a.k);
      values.push(a.v);
      if (last !== undefined) x = tf.slice(x, [0, T - last, 0], [B, last, c.hidden]);
      x = tf.add(x, a.out);
      x = tf.add(x, this.mlp(layer, this.norm(x, layer.ln2)));
    }
    return { hidden: this.norm(x, this.finalNorm) as tf.Tensor3D, cache: { keys, values } };
  }

  /** Logits `[..., vocab]` for hidden states `[..., hidden]`. */
  logits(hidden: tf.Tensor): tf.Tensor {
    const lead = hidden.shape.slice(0, -1);
    const h2 = tf.reshape(hidden, [-1, this.config.hidden]) as tf.Tensor2D;
    const out = this.head ? mm(h2, this.head as tf.Tensor2D) : mmT(h2, this.embed as tf.Tensor2D);
    return tf.reshape(out, [...lead, this.config.vocabSize]);
  }

  /** The output projection as `[hidden, vocab]`, for decoding: a tied head is transposed once here, not per token. The caller disposes it. */
  inferenceHead(): tf.Tensor2D {
    return tf.tidy(() => (this.head ? tf.clone(this.head) : tf.transpose(this.embed)) as tf.Tensor2D);
  }

  decodingWeights(): DecodingWeights {
    return {
      embed: this.embed,
      layers: this.layers,
      finalNorm: this.finalNorm,
      rope: this.config.positions === 'rope' ? this.ropeTables() : undefined,
      head: this.head,
    };
  }

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
    for (const a of this.adapters.values()) {
      a.a.dispose();
      a.b.dispose();
    }
    this.adapters.clear();
    this.rope?.cos.dispose();
    this.rope?.sin.dispose();
  }

  private ropeTables(): RopeTables {
    if (!this.rope) {
      // Built on first use, usually inside a tidy scope: kept so the scope does not dispose the model's tables.
      const t = ropeTables(this.config);
      this.rope = { cos: tf.keep(t.cos), sin: tf.keep(t.sin) };
    }
    return this.rope;
  }

  private ropeAt(positions: tf.Tensor2D, fused: boolean): RopeAt {
    const rope = this.ropeTables();
    const [B, T] = positions.shape;
    const half = this.config.headDim / 2;
    if (fused)
      return {
        fused,
        cos: tf.gather(rope.cos, positions) as unknown as tf.Tensor3D,
        sin: tf.gather(rope.sin, positions) as unknown as tf.Tensor3D,
      };
    // [B, 1, T, half]: broadcasts over heads.
    const cos = tf.reshape(tf.gather(rope.cos, positions), [B, 1, T, half]);
    const sin = tf.reshape(tf.gather(rope.sin, positions), [B, 1, T, half]);
    // Full width (each half repeated) for applyRopeRotation: no split and concat of q and k per layer.
    return {
      fused,
      cos: tf.concat([cos, cos], -1),
      sin: tf.concat([sin, sin], -1),
      rot: rotateHalfMatrix(this.config.headDim),
    };
  }

  private norm(x: tf.Tensor, n: Norm): tf.Tensor {
    return this.config.norm === 'layernorm'
      ? layerNorm(x, n.w, n.b, this.config.normEps)
      : rmsNorm(x, n.w, this.config.normEps);
  }

  /** x·W (+ b when `withBias`), plus the layer's adapter when it has one. */
  private project(x: tf.Tensor, l: Linear, withBias = true): tf.Tensor {
    const y = linear(x, l.w as tf.Tensor2D, withBias ? (l.b as tf.Tensor1D | undefined) : undefined);
    const lora = this.adapters.get(l.name);
    if (!lora) return y;
    const input = this.training && lora.dropout > 0 ? tf.dropout(x, lora.dropout) : x;
    const low = linear(input, lora.a as tf.Tensor2D);
    return tf.add(y, tf.mul(linear(low, lora.b as tf.Tensor2D), lora.scale));
  }

  private attention(
    layer: Layer,
    x: tf.Tensor,
    rope: RopeAt | undefined,
    bias: tf.Tensor,
    pastK: tf.Tensor4D | undefined,
    pastV: tf.Tensor4D | undefined,
    tail?: number,
  ): { out: tf.Tensor; k: tf.Tensor4D; v: tf.Tensor4D } {
    const fused = rope?.fused || (!rope && !layer.qkv && trainKernelsActive());
    let { q, k, v } = fused
      ? this.fusedQkv(layer, x, rope?.fused ? rope : undefined, tail)
      : this.qkvHeads(layer, x, rope);
    const T = x.shape[1]!;
    if (tail !== undefined) {
      // Queries of the last `tail` positions only (the fused path projected just those), over every key.
      if (!fused) q = tf.slice(q, [0, 0, T - tail, 0], [-1, -1, tail, -1]) as tf.Tensor4D;
      bias = tf.slice(bias, [0, 0, T - tail, 0], [-1, -1, tail, -1]);
    }
    const kAll = (pastK ? tf.concat([pastK, k], 2) : k) as tf.Tensor4D;
    const vAll = (pastV ? tf.concat([pastV, v], 2) : v) as tf.Tensor4D;
    const merged = groupedQueryAttention(q, kAll, vAll, bias);
    return { out: this.project(merged, layer.o), k: kAll, v: vAll };
  }

  /** q, k, v `[B, heads, T, hd]` through tfjs ops. */
  private qkvHeads(layer: Layer, x: tf.Tensor, rope: RopeAt | undefined): Record<'q' | 'k' | 'v', tf.Tensor4D> {
    const c = this.config;
    const [B, T] = x.shape;
    const hd = c.headDim;
    let q: tf.Tensor;
    let k: tf.Tensor;
    let v: tf.Tensor;
    if (layer.qkv) {
      [q, k, v] = tf.split(this.project(x, layer.qkv), 3, -1);
    } else {
      q = this.project(x, layer.q!);
      k = this.project(x, layer.k!);
      v = this.project(x, layer.v!);
    }
    // [B, T, heads, hd]; Qwen3 normalises each head before the rotation.
    q = tf.reshape(q, [B, T, c.heads, hd]);
    k = tf.reshape(k, [B, T, c.kvHeads, hd]);
    v = tf.reshape(v, [B, T, c.kvHeads, hd]);
    if (layer.qNorm) q = rmsNorm(q, layer.qNorm, c.normEps);
    if (layer.kNorm) k = rmsNorm(k, layer.kNorm, c.normEps);
    q = tf.transpose(q, [0, 2, 1, 3]);
    k = tf.transpose(k, [0, 2, 1, 3]);
    v = tf.transpose(v, [0, 2, 1, 3]);
    if (rope && !rope.fused) {
      q = applyRopeRotation(q, rope.cos, rope.sin, rope.rot);
      k = applyRopeRotation(k, rope.cos, rope.sin, rope.rot);
    }
    return { q: q as tf.Tensor4D, k: k as tf.Tensor4D, v: v as tf.Tensor4D };
  }

  /** q, k, v `[B, heads, T, hd]` through the fused heads kernel (the Llama family on wasm with the addon). */
  private fusedQkv(
    layer: Layer,
    x: tf.Tensor,
    rope: { cos: tf.Tensor; sin: tf.Tensor } | undefined,
    tail?: number,
  ): Record<'q' | 'k' | 'v', tf.Tensor4D> {
    const c = this.config;
    const last = (t: tf.Tensor): tf.Tensor =>
      tail === undefined ? t : tf.slice(t, [0, t.shape[1]! - tail, 0], [-1, tail, -1]);
    return {
      // With `tail`, only the last positions' queries (their rows of x, their rotations).
      q: this.fusedHeads(last(x), layer.q!, c.heads, layer.qNorm, rope && { cos: last(rope.cos), sin: last(rope.sin) }),
      k: this.fusedHeads(x, layer.k!, c.kvHeads, layer.kNorm, rope),
      v: this.fusedHeads(x, layer.v!, c.kvHeads, undefined, undefined),
    };
  }

  /**
   * One projection split into heads, `[B, heads, T, hd]`, through the fused kernel: its bias added there (or before
   * the per-head norm, Qwen3's q/k norms), rotated when `rope` is given.
   */
  private fusedHeads(
    x: tf.Tensor,
    l: Linear,
    heads: number,
    norm: tf.Variable | undefined,
    rope: { cos: tf.Tensor; sin: tf.Tensor } | undefined,
  ): tf.Tensor4D {
    const [B, T] = x.shape;
    const width = heads * this.config.headDim;
    if (norm) {
      const normed = rmsNorm(
        tf.reshape(this.project(x, l), [B, T, heads, this.config.headDim]),
        norm,
        this.config.normEps,
      );
      return fusedHeadsRope(tf.reshape(normed, [B, T, width]) as tf.Tensor3D, heads, undefined, rope);
    }
    const y = tf.reshape(this.project(x, l, false), [B, T, width]) as tf.Tensor3D;
    return fusedHeadsRope(y, heads, l.b as tf.Tensor1D | undefined, rope);
  }

  private mlp(layer: Layer, x: tf.Tensor): tf.Tensor {
    if (this.config.mlp === 'swiglu') {
      return this.project(swiglu(this.project(x, layer.gate!), this.project(x, layer.up!)), layer.down!);
    }
    const h = this.project(x, layer.fc!);
    return this.project(this.config.activation === 'gelu' ? geluErf(h) : geluTanh(h), layer.proj!);
  }
}

function defaultPositions(B: number, T: number, past: number): tf.Tensor2D {
  const row = tf.range(past, past + T, 1, 'int32');
  return tf.tile(tf.reshape(row, [1, T]), [B, 1]) as tf.Tensor2D;
}

/** Additive attention bias `[B|1, 1, T, past+T]`: causal, plus padded keys masked out. */
function attentionBias(T: number, past: number, keyMask: tf.Tensor2D | undefined): tf.Tensor {
  const Tk = past + T;
  const data = new Float32Array(T * Tk);
  for (let i = 0; i < T; i++) for (let j = past + i + 1; j < Tk; j++) data[i * Tk + j] = MASKED;
  const causal = tf.tensor4d(data, [1, 1, T, Tk]);
  if (!keyMask) return causal;
  const pad = tf.mul(tf.sub(1, tf.cast(keyMask, 'float32')), MASKED);
  return tf.add(causal, tf.reshape(pad, [keyMask.shape[0], 1, 1, Tk]));
}
