/**
 * The decode steps of `generate` (one new token per row after the prefill) for the Llama family on the wasm and cpu
 * backends, in about 8 kernels per layer instead of the ~76 of `CausalLM.forward` (backend/decode-kernels.ts):
 * - q, k and v are one matmul against their weights side by side, and so are gate and up; the side-by-side copies
 *   (with LoRA adapters merged in) are made when the decoder opens, once per `generate` call, so a training step
 *   between calls is always seen;
 * - RoPE, the q/k norms, the attention and the write into the KV cache are one kernel; the cache is allocated once for
 *   the whole generation and written in place (no per-step `concat` of the whole cache);
 * - each residual add is fused with the RMS norm after it, and SwiGLU is one kernel.
 * The math is `forward`'s; results agree to float32 rounding (the host kernels accumulate in float64).
 * `TRINITY_WORKBENCH_FUSED_DECODE=0` turns it off (then `generate` decodes through `forward`). Where the native
 * addon has `decodeStep` (wasm), native-decoder.ts runs each whole step as one kernel instead.
 */
import * as tf from '@tensorflow/tfjs-core';
import { ADD_RMS_NORM, DECODE_ATTENTION, RMS_NORM, SWIGLU, registerDecodeKernels } from '../backend/decode-kernels';
import type { CausalLM, KVCache, Linear } from './transformer';

export const FUSED_DECODE_ENV = 'TRINITY_WORKBENCH_FUSED_DECODE';

/** Above this many floats of side-by-side copies (256 MB) the projections stay separate matmuls. */
const FUSED_COPY_LIMIT = 64 * 1024 * 1024;

interface DecoderLayer {
  ln1: tf.Tensor;
  ln2: tf.Tensor;
  /** One `[d, (H + 2·KV)·hd]` weight, or q, k and v apart. */
  qkv: tf.Tensor2D[];
  qkvBias?: tf.Tensor1D;
  qNorm?: tf.Tensor;
  kNorm?: tf.Tensor;
  o: Linear2D;
  /** One `[d, 2·I]` weight, or gate and up apart. */
  gateUp: tf.Tensor2D[];
  gateUpBias?: tf.Tensor1D;
  down: Linear2D;
}

interface Linear2D {
  w: tf.Tensor2D;
  b?: tf.Tensor1D;
}

function disabled(): boolean {
  const v = process.env[FUSED_DECODE_ENV]?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

/** Why the fused decoder cannot run `model` on the current backend, or undefined when it can. */
export function fusedDecodeUnsupported(model: CausalLM): string | undefined {
  const c = model.config;
  if (disabled()) return `disabled by $${FUSED_DECODE_ENV}`;
  if (c.norm !== 'rmsnorm' || c.positions !== 'rope' || c.mlp !== 'swiglu') return `${c.family} is not Llama-shaped`;
  if (c.heads % c.kvHeads !== 0 || c.headDim % 2 !== 0) return 'unusual head layout';
  if (model.training && [...model.adapters.values()].some((a) => a.dropout > 0)) return 'adapter dropout is on';
  if (!registerDecodeKernels(tf.getBackend())) return `no decode kernels on ${tf.getBackend()}`;
  return undefined;
}

export class CachedDecoder {
  private readonly owned: tf.Tensor[] = [];
  private readonly layers: DecoderLayer[];
  private readonly keys: tf.Tensor4D[];
  private readonly values: tf.Tensor4D[];
  private readonly mask: tf.Tensor2D;
  private readonly embed: tf.Tensor;
  private readonly finalNorm: tf.Tensor;
  private readonly cos: tf.Tensor;
  private readonly sin: tf.Tensor;
  private slot: number;

  /**
   * After a prefill of M tokens per row (`cache`, `[B, KV, M, hd]` per layer; `promptMask` `[B·M]`, 1 for real
   * tokens), room for `steps` more. The prefill cache is copied; the caller still owns it, and `head` (`[d, V]`).
   */
  constructor(
    private readonly model: CausalLM,
    private readonly head: tf.Tensor2D,
    cache: KVCache,
    promptMask: Float32Array,
    steps: number,
  ) {
    const c = model.config;
    const w = model.decodingWeights();
    if (!w.rope) throw new Error('CachedDecoder: the model has no RoPE tables');
    this.embed = w.embed;
    this.finalNorm = w.finalNorm.w;
    this.cos = w.rope.cos;
    this.sin = w.rope.sin;
    const [B, , M] = cache.keys[0].shape;
    this.slot = M;
    const qkvOut = (c.heads + 2 * c.kvHeads) * c.headDim;
    const fuse = c.layers * c.hidden * (qkvOut + 2 * c.intermediate) <= FUSED_COPY_LIMIT;
    this.layers = w.layers.map((l) => {
      const q = this.weight(l.q!);
      const k = this.weight(l.k!);
      const v = this.weight(l.v!);
      const gate = this.weight(l.gate!);
      const up = this.weight(l.up!);
      const biases = [l.q!, l.k!, l.v!].map((x) => x.b);
      return {
        ln1: l.ln1.w,
        ln2: l.ln2.w,
        qkv: fuse ? [this.own(() => tf.concat([q, k, v], 1) as tf.Tensor2D)] : [q, k, v],
        qkvBias: biases.some(Boolean)
          ? this.own(
              () =>
                tf.concat(
                  biases.map((b, i) => b ?? tf.zeros([[q, k, v][i].shape[1]])),
                  0,
                ) as tf.Tensor1D,
            )
          : undefined,
        qNorm: l.qNorm,
        kNorm: l.kNorm,
        o: { w: this.weight(l.o), b: l.o.b as tf.Tensor1D | undefined },
        gateUp: fuse ? [this.own(() => tf.concat([gate, up], 1) as tf.Tensor2D)] : [gate, up],
        gateUpBias:
          l.gate!.b || l.up!.b
            ? this.own(
                () =>
                  tf.concat(
                    [l.gate!.b ?? tf.zeros([c.intermediate]), l.up!.b ?? tf.zeros([c.intermediate])],
                    0,
                  ) as tf.Tensor1D,
              )
            : undefined,
        down: { w: this.weight(l.down!), b: l.down!.b as tf.Tensor1D | undefined },
      };
    });
    const pad: [number, number][] = [
      [0, 0],
      [0, 0],
      [0, steps],
      [0, 0],
    ];
    this.keys = cache.keys.map((t) => this.own(() => tf.pad(t, pad)));
    this.values = cache.values.map((t) => this.own(() => tf.pad(t, pad)));
    this.mask = this.own(() => tf.tensor2d(promptMask, [B, M]));
  }

  /** Logits `[B, V]` of one more token per row, `ids` at `positions`; its key and value join the cache. */
  step(ids: Int32Array, positions: Int32Array): tf.Tensor2D {
    const c = this.model.config;
    const slot = this.slot++;
    const eps = c.normEps;
    const run = (name: string, inputs: Record<string, tf.Tensor | undefined>, attrs = {}): tf.Tensor | tf.Tensor[] => {
      const present: tf.NamedTensorMap = {};
      for (const [k, t] of Object.entries(inputs)) if (t) present[k] = t;
      return tf.engine().runKernel(name, present, attrs) as tf.Tensor | tf.Tensor[];
    };
    const project = (x: tf.Tensor, ws: tf.Tensor2D[], b?: tf.Tensor1D): tf.Tensor => {
      const y =
        ws.length === 1
          ? tf.matMul(x, ws[0])
          : tf.concat(
              ws.map((w) => tf.matMul(x, w)),
              1,
            );
      return b ? tf.add(y, b) : y;
    };
    return tf.tidy(() => {
      const pos = tf.tensor1d(positions, 'int32');
      let x = tf.gather(this.embed, tf.tensor1d(ids, 'int32'));
      let h = run(RMS_NORM, { x, w: this.layers[0].ln1 }, { eps }) as tf.Tensor;
      this.layers.forEach((l, i) => {
        const qkv = project(h, l.qkv);
        const ctx = run(
          DECODE_ATTENTION,
          {
            qkv,
            positions: pos,
            cos: this.cos,
            sin: this.sin,
            keys: this.keys[i],
            values: this.values[i],
            mask: this.mask,
            bias: l.qkvBias,
            qNorm: l.qNorm,
            kNorm: l.kNorm,
          },
          { slot, heads: c.heads, kvHeads: c.kvHeads, eps },
        ) as tf.Tensor;
        [x, h] = run(ADD_RMS_NORM, { x, r: project(ctx, [l.o.w], l.o.b), w: l.ln2 }, { eps }) as tf.Tensor[];
        const act = run(SWIGLU, { gu: project(h, l.gateUp, l.gateUpBias) }) as tf.Tensor;
        const next = i + 1 < this.layers.length ? this.layers[i + 1].ln1 : this.finalNorm;
        [x, h] = run(ADD_RMS_NORM, { x, r: project(act, [l.down.w], l.down.b), w: next }, { eps }) as tf.Tensor[];
      });
      return tf.matMul(h, this.head);
    });
  }

  dispose(): void {
    for (const t of this.owned) t.dispose();
    this.owned.length = 0;
  }

  private own<T extends tf.Tensor>(make: () => T): T {
    const t = tf.tidy(make);
    this.owned.push(t);
    return t;
  }

  private weight(l: Linear): tf.Tensor2D {
    const w = mergedWeight(this.model, l);
    if (w !== l.w) this.owned.push(w);
    return w;
  }
}

/**
 * The weight as the forward pass applies it: with its LoRA adapter merged in (W + scale·A·B, a new tensor the
 * caller disposes), or the layer's own weight when it has none.
 */
export function mergedWeight(model: CausalLM, l: Linear): tf.Tensor2D {
  const a = model.adapters.get(l.name);
  if (!a) return l.w as tf.Tensor2D;
  return tf.tidy(() => tf.add(l.w, tf.mul(tf.matMul(a.a, a.b), a.scale)) as tf.Tensor2D);
}
