/**
 * `generate`'s prefill and decode steps for the Llama family on wasm with the native addon: each step is one kernel
 * (backend/decode-step.ts) over a KV cache allocated once for the whole generation, prompt included. The weights
 * are the model's own tensors, read in place (no side-by-side copies); only LoRA adapters cost a merged copy
 * (W + scale·A·B), made when the decoder opens, so a training step between `generate` calls is always seen.
 *
 * Where it cannot run (another backend, an addon built before `decodeStep`), cached-decoder.ts decodes instead.
 * The math is `forward`'s; results agree to float32 rounding.
 */
import * as tf from '@tensorflow/tfjs-core';
import { decodeStep, decodeStepAvailable, type DecodeStepLayer } from '../backend/decode-step';
import { fusedDecodeUnsupported, mergedWeight } from './cached-decoder';
import type { CausalLM, DecodingWeights } from './transformer';

export class NativeDecoder {
  private readonly owned: tf.Tensor[] = [];
  private readonly layers: DecodeStepLayer[];
  private readonly mask: tf.Tensor2D;
  private readonly weights: DecodingWeights;
  private slot = 0;
  /** Cache slots filled before the prefill (a prefix's keys and values handed in, see the constructor). */
  private readonly prefixLength: number;

  /** Whether `model` can decode this way on the active backend. */
  static supports(model: CausalLM): boolean {
    return fusedDecodeUnsupported(model) === undefined && decodeStepAvailable();
  }

  /**
   * For B rows with prompts left-padded to M tokens (`promptMask` `[B·M]`, 1 for real tokens) and `steps` decode
   * steps after the prefill. With `prefix` (`[B, KV, P, hd]` per layer, P < M; the caller keeps them) the first P
   * slots start as those keys and values (an episode's earlier turns) and the prefill feeds the other M − P.
   */
  constructor(
    private readonly model: CausalLM,
    promptMask: Float32Array,
    private readonly B: number,
    private readonly M: number,
    steps: number,
    prefix?: { keys: readonly tf.Tensor[]; values: readonly tf.Tensor[] },
  ) {
    const c = model.config;
    this.prefixLength = prefix?.keys[0].shape[2] ?? 0;
    this.slot = this.prefixLength;
    this.weights = model.decodingWeights();
    if (!this.weights.rope) throw new Error('NativeDecoder: the model has no RoPE tables');
    const P = this.prefixLength;
    const cacheShape: [number, number, number, number] = [B, c.kvHeads, M + steps - P, c.headDim];
    // Filled on the backend (tf.zeros would copy a host array in); every slot is written before it is read.
    const cache = (start?: tf.Tensor): tf.Tensor =>
      this.own(start ? tf.tidy(() => tf.concat([start, tf.fill(cacheShape, 0)], 2)) : tf.fill(cacheShape, 0));
    const weight = (l: Parameters<typeof mergedWeight>[1]): tf.Tensor => {
      const merged = mergedWeight(model, l);
      if (merged !== l.w) this.owned.push(merged);
      return merged;
    };
    this.layers = this.weights.layers.map((l, i) => ({
      ln1: l.ln1.w,
      q: weight(l.q!),
      k: weight(l.k!),
      v: weight(l.v!),
      qBias: l.q!.b,
      kBias: l.k!.b,
      vBias: l.v!.b,
      qNorm: l.qNorm,
      kNorm: l.kNorm,
      o: weight(l.o),
      oBias: l.o.b,
      ln2: l.ln2.w,
      gate: weight(l.gate!),
      up: weight(l.up!),
      gateBias: l.gate!.b,
      upBias: l.up!.b,
      down: weight(l.down!),
      downBias: l.down!.b,
      keys: cache(prefix?.keys[i]),
      values: cache(prefix?.values[i]),
    }));
    this.mask = this.own(tf.tensor2d(promptMask, [B, M]));
  }

  /**
   * Logits `[B, V]` of each row's last prompt token; the prompt's keys and values fill the first M cache slots
   * (after a prefix: `ids` and `positions` are `[B, M − P]`, the slots after it).
   */
  prefill(ids: Int32Array, positions: Int32Array): tf.Tensor2D {
    if (this.slot !== this.prefixLength) throw new Error('NativeDecoder: prefill after decoding');
    return this.run(ids, positions, this.M - this.prefixLength);
  }

  /** Logits `[B, V]` of one more token per row, `ids` at `positions`; its key and value join the cache. */
  step(ids: Int32Array, positions: Int32Array): tf.Tensor2D {
    return this.run(ids, positions, 1);
  }

  /**
   * Scoring instead of decoding: the whole M-token rows fed at once (a decoder opened with 0 steps); the log-probs
   * `[B, cols]` at `temperature` of `targets` (`[B·cols]`, the tokens after each row's last `cols`).
   */
  scoreTail(
    ids: Int32Array,
    positions: Int32Array,
    targets: Int32Array,
    cols: number,
    temperature: number,
  ): tf.Tensor2D {
    if (this.slot !== 0) throw new Error('NativeDecoder: scoring after decoding');
    return this.run(ids, positions, this.M, { targets, cols, temperature });
  }

  get layerCount(): number {
    return this.layers.length;
  }

  /** Layer `i`'s cache, `[B, KV, M + steps, hd]` each (owned by the decoder: valid until `dispose`). */
  layerCache(i: number): { keys: tf.Tensor; values: tf.Tensor } {
    return { keys: this.layers[i].keys, values: this.layers[i].values };
  }

  dispose(): void {
    for (const t of this.owned) t.dispose();
    this.owned.length = 0;
  }

  private run(
    ids: Int32Array,
    positions: Int32Array,
    T: number,
    score?: { targets: Int32Array; cols: number; temperature: number },
  ): tf.Tensor2D {
    const c = this.model.config;
    const w = this.weights;
    const slot = this.slot;
    this.slot += T;
    return tf.tidy(() =>
      decodeStep(
        {
          ids: tf.tensor2d(ids, [this.B, T], 'int32'),
          positions: tf.tensor2d(positions, [this.B, T], 'int32'),
          mask: this.mask,
          embed: w.embed,
          cos: w.rope!.cos,
          sin: w.rope!.sin,
          finalNorm: w.finalNorm.w,
          head: w.head ?? w.embed,
          layers: this.layers,
          targets: score ? tf.tensor2d(score.targets, [this.B, score.cols], 'int32') : undefined,
        },
        {
          slot,
          heads: c.heads,
          kvHeads: c.kvHeads,
          eps: c.normEps,
          headTransposed: !w.head,
          cols: score?.cols,
          temperature: score?.temperature,
        },
      ),
    );
  }

  private own<T extends tf.Tensor>(t: T): T {
    this.owned.push(t);
    return t;
  }
}
