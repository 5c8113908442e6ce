/**
 * AdamW as torch.optim.AdamW computes it (decoupled weight decay, bias-corrected moments), with global-norm
 * gradient clipping as torch.nn.utils.clip_grad_norm_ and veRL's rule of skipping a step whose norm is not finite.
 */
import * as tf from '@tensorflow/tfjs-core';
import { addMany } from '../ops';
import { nativeAdamW } from './native-adamw';

export interface AdamWOptions {
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
  /** Clip the global gradient norm to this; undefined or ≤ 0: no clipping. */
  clipGradNorm?: number;
}

export interface AdamWState {
  step: number;
  m: Float32Array[];
  v: Float32Array[];
}

export class AdamW {
  private readonly b1: number;
  private readonly b2: number;
  private readonly eps: number;
  private readonly wd: number;
  private readonly clip: number;
  private m: tf.Variable[];
  private v: tf.Variable[];
  /** Optimizer steps taken (skipped steps do not count). */
  step = 0;

  constructor(
    readonly variables: readonly tf.Variable[],
    opts: AdamWOptions = {},
  ) {
    [this.b1, this.b2] = opts.betas ?? [0.9, 0.999];
    this.eps = opts.eps ?? 1e-8;
    this.wd = opts.weightDecay ?? 0.01;
    this.clip = opts.clipGradNorm ?? 0;
    // Inside tidy so the zero tensors the variables are made from are freed (variables survive the scope).
    this.m = tf.tidy(() => variables.map((x) => tf.variable(tf.zerosLike(x), false)));
    this.v = tf.tidy(() => variables.map((x) => tf.variable(tf.zerosLike(x), false)));
  }

  /**
   * Applies one update from `grads` (aligned with `variables`; disposed here). Returns the global norm before
   * clipping, and whether the step was skipped for a non-finite norm.
   */
  async apply(grads: tf.Tensor[], lr: number): Promise<{ gradNorm: number; skipped: boolean }> {
    if (grads.length !== this.variables.length)
      throw new Error(`AdamW: ${grads.length} gradients for ${this.variables.length} variables`);
    try {
      // On wasm with native/blas-matmul: one native pass per tensor for the norm and one for the update.
      const native = nativeAdamW([...grads, ...this.variables]);
      let gradNorm: number;
      if (native) gradNorm = Math.sqrt(native.sumSquares(grads));
      else {
        const normT = tf.tidy(() => tf.sqrt(addMany(grads.map((g) => tf.sum(tf.square(g))))));
        // Read asynchronously: the one value a step needs on the host (a non-finite norm skips the step).
        gradNorm = (await normT.data())[0];
        normT.dispose();
      }
      if (!Number.isFinite(gradNorm)) return { gradNorm, skipped: true };
      const coef = this.clip > 0 ? Math.min(1, this.clip / (gradNorm + 1e-6)) : 1;
      this.step++;
      const bc1 = 1 - Math.pow(this.b1, this.step);
      const bc2 = 1 - Math.pow(this.b2, this.step);
      if (native) {
        const h = { lr, b1: this.b1, b2: this.b2, eps: this.eps, weightDecay: this.wd, coef, bc1, bc2 };
        this.variables.forEach((p, i) => {
          const [np, nm, nv] = native.step(p, grads[i], this.m[i], this.v[i], h);
          p.assign(np);
          this.m[i].assign(nm);
          this.v[i].assign(nv);
          tf.dispose([np, nm, nv]);
        });
        return { gradNorm, skipped: false };
      }
      tf.tidy(() => {
        this.variables.forEach((p, i) => {
          const g = coef === 1 ? grads[i] : tf.mul(grads[i], coef);
          const m = tf.add(tf.mul(this.m[i], this.b1), tf.mul(g, 1 - this.b1));
          const v = tf.add(tf.mul(this.v[i], this.b2), tf.mul(tf.square(g), 1 - this.b2));
          this.m[i].assign(m);
          this.v[i].assign(v);
          const decayed = this.wd > 0 ? tf.mul(p, 1 - lr * this.wd) : p;
          const denom = tf.add(tf.div(tf.sqrt(v), Math.sqrt(bc2)), this.eps);
          p.assign(tf.sub(decayed, tf.mul(tf.div(m, denom), lr / bc1)));
        });
      });
      return { gradNorm, skipped: false };
    } finally {
      for (const g of grads) g.dispose();
    }
  }

  async exportState(): Promise<AdamWState> {
    const m: Float32Array[] = [];
    const v: Float32Array[] = [];
    for (const t of this.m) m.push((await t.data()) as Float32Array);
    for (const t of this.v) v.push((await t.data()) as Float32Array);
    return { step: this.step, m, v };
  }

  loadState(s: AdamWState): void {
    if (s.m.length !== this.variables.length || s.v.length !== this.variables.length) {
      throw new Error(
        `optimizer state holds ${s.m.length} moments, the model has ${this.variables.length} trainable tensors`,
      );
    }
    this.variables.forEach((p, i) => {
      if (s.m[i].length !== p.size || s.v[i].length !== p.size)
        throw new Error(`optimizer state tensor ${i} has ${s.m[i].length} values, the weight has ${p.size}`);
      this.m[i].assign(tf.tensor(s.m[i], p.shape));
      this.v[i].assign(tf.tensor(s.v[i], p.shape));
    });
    this.step = s.step;
  }

  dispose(): void {
    for (const t of [...this.m, ...this.v]) t.dispose();
  }
}
