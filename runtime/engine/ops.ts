/**
 * The tensor building blocks of the transformer. On stock wasm every 2-D matmul, forward and backward, is a plain
 * un-transposed `tf.matMul`: that backend runs only those on XNNPACK and everything else (any transpose flag, which
 * autodiff of `tf.matMul` always sets) on a scalar loop about 20x slower. With the OpenBLAS kernel (and on other
 * backends) transpose flags cost nothing, so plain `tf.matMul` and its own gradients are used (1.2-1.35x faster).
 */
import * as tf from '@tensorflow/tfjs-core';
// The core package's Node entry registers no gradients; training needs them all.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { currentBackend } from './backend/init';
import {
  fusedMaskedSoftmax,
  fusedRmsNorm,
  fusedShapes,
  fusedSwiglu,
  fusedTokenLogProbs,
  trainKernelsActive,
} from './backend/train-kernels';

/**
 * Sum of same-shaped tensors. One `tf.addN` binds every input as a storage buffer; WebGPU guarantees only 8 per shader
 * stage (SwiftShader's limit, and many GPUs'), and tfjs-backend-webgpu's addN does not split larger sets: the pipeline
 * is invalid and the result silently stale. So inputs are summed in groups of 7 (one buffer is the output).
 */
export function addMany(ts: tf.Tensor[]): tf.Tensor {
  const GROUP = 7;
  let level = ts;
  while (level.length > GROUP) {
    const next: tf.Tensor[] = [];
    for (let i = 0; i < level.length; i += GROUP) {
      const group = level.slice(i, i + GROUP);
      next.push(group.length === 1 ? group[0] : tf.addN(group));
    }
    level = next;
  }
  return level.length === 1 ? level[0] : tf.addN(level);
}

/** a[m,k] @ b[k,n]. */
const mmUntransposed = tf.customGrad(((a: tf.Tensor2D, b: tf.Tensor2D, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor2D, [sa, sb]: tf.Tensor2D[]) => [
      tf.matMul(dy, tf.transpose(sb)),
      tf.matMul(tf.transpose(sa), dy),
    ],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D;

/** a[m,k] @ b[n,k]ᵀ (a tied output head: hidden states times the embedding matrix). */
const mmTUntransposed = tf.customGrad(((a: tf.Tensor2D, b: tf.Tensor2D, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, tf.transpose(b)),
    gradFunc: (dy: tf.Tensor2D, [sa, sb]: tf.Tensor2D[]) => [tf.matMul(dy, sb), tf.matMul(tf.transpose(dy), sa)],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D;

/**
 * Whether matmuls with transpose flags are as fast as plain ones: true when wasm's BatchMatMul runs on OpenBLAS
 * (then tfjs' own matmul gradients, which set the flags, need no explicit transposes), and on every other backend
 * but stock wasm.
 */
function transposesAreFree(): boolean {
  const b = currentBackend();
  return b !== undefined && (b.name !== 'wasm' || (b.accelerators ?? []).includes('openblas-matmul'));
}

/** a[m,k] @ b[k,n]. */
export function mm(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return transposesAreFree() ? tf.matMul(a, b) : mmUntransposed(a, b);
}

/** a[m,k] @ b[n,k]ᵀ. */
export function mmT(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return transposesAreFree() ? tf.matMul(a, b, false, true) : mmTUntransposed(a, b);
}

/** x[..., in] @ w[in, out] (+ b), any leading shape. */
export function linear(x: tf.Tensor, w: tf.Tensor2D, b?: tf.Tensor1D): tf.Tensor {
  const [inDim, outDim] = w.shape;
  const lead = x.shape.slice(0, -1);
  let y: tf.Tensor = mm(tf.reshape(x, [-1, inDim]) as tf.Tensor2D, w);
  if (b) y = tf.add(y, b);
  return tf.reshape(y, [...lead, outDim]);
}

export function layerNorm(x: tf.Tensor, w: tf.Tensor, b: tf.Tensor | undefined, eps: number): tf.Tensor {
  const mean = tf.mean(x, -1, true);
  const centered = tf.sub(x, mean);
  const variance = tf.mean(tf.square(centered), -1, true);
  const y = tf.mul(tf.mul(centered, tf.rsqrt(tf.add(variance, eps))), w);
  return b ? tf.add(y, b) : y;
}

/** x / √(mean(x²) + eps) · w over the last axis; one fused kernel (and one for its gradient) where available. */
export function rmsNorm(x: tf.Tensor, w: tf.Tensor, eps: number): tf.Tensor {
  if (w.rank === 1 && x.shape[x.rank - 1] === w.shape[0] && trainKernelsActive()) return fusedRmsNorm(x, w, eps);
  const ms = tf.mean(tf.square(x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, eps))), w);
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** GPT-2's gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). x³ as products: `pow` has no wasm gradient. */
export function geluTanh(x: tf.Tensor): tf.Tensor {
  const cube = tf.mul(tf.mul(x, x), x);
  const inner = tf.mul(tf.add(x, tf.mul(cube, 0.044715)), SQRT_2_OVER_PI);
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}

export function geluErf(x: tf.Tensor): tf.Tensor {
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
}

export function silu(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(x));
}

/** SwiGLU's silu(gate) · up; one fused kernel (and one for its gradient) where available. */
export function swiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (tf.util.arraysEqual(gate.shape, up.shape) && trainKernelsActive()) return fusedSwiglu(gate, up);
  return tf.mul(silu(gate), up);
}

/**
 * `rotate_half` as a matrix: x[..., d] @ R = concat(−x[d/2:], x[:d/2]). Each column of R holds one ±1, so the
 * product (and its gradient) is exact: the same values as the split, negate and concat, in one matmul kernel.
 */
export function rotateHalfMatrix(d: number): tf.Tensor2D {
  const half = d / 2;
  const r = new Float32Array(d * d);
  for (let i = 0; i < half; i++) {
    r[(i + half) * d + i] = -1; // column i takes −x[i + d/2]
    r[i * d + i + half] = 1; // column i + d/2 takes x[i]
  }
  return tf.tensor2d(r, [d, d]);
}

/**
 * Rotary embedding as Hugging Face writes it, x·cos + rotate_half(x)·sin, with `cos`/`sin` over all d columns (each
 * half repeated) broadcasting against x[..., T, d] and `rot` = {@link rotateHalfMatrix}(d). Bit-identical to
 * the split form (test/helpers/rope-reference.ts) (x₁·cos − x₂·sin is x₁·cos + (−x₂)·sin in IEEE arithmetic), in 4 kernels instead of 8, and no
 * strided split and concat copies in the forward or the backward pass.
 */
export function applyRopeRotation(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, rot: tf.Tensor2D): tf.Tensor {
  const d = x.shape[x.rank - 1];
  const rotated = tf.reshape(mm(tf.reshape(x, [-1, d]) as tf.Tensor2D, rot), x.shape);
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
}

/**
 * Scaled dot-product attention with grouped queries: q [B, heads, T, hd] against k, v [B, kvHeads, Tk, hd] (heads a
 * multiple of kvHeads), plus an additive `bias` broadcasting against the scores [B, heads, T, Tk]. Returns the
 * heads merged back: [B, T, heads·hd]. The query heads sharing a kv head are stacked along the time axis
 * ([B, kv, groups·T, hd], the same memory order as [B, heads, T, hd]), so the keys are never copied per head.
 */
export function groupedQueryAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor): tf.Tensor3D {
  const [B, heads, T, hd] = q.shape;
  const [kvHeads, Tk] = [k.shape[1], k.shape[2]];
  const qg = tf.reshape(q, [B, kvHeads, (heads / kvHeads) * T, hd]) as tf.Tensor4D;
  const raw = tf.reshape(tf.matMul(qg, k, false, true), [B, heads, T, Tk]) as tf.Tensor4D;
  const scale = 1 / Math.sqrt(hd);
  const softmax =
    fusedShapes.maskedSoftmax(raw.shape, bias.shape) && trainKernelsActive()
      ? fusedMaskedSoftmax(raw, bias, scale)
      : tf.softmax(tf.add(tf.mul(raw, scale), bias));
  const probs = tf.reshape(softmax, [B, kvHeads, (heads / kvHeads) * T, Tk]) as tf.Tensor4D;
  const ctx = tf.reshape(tf.matMul(probs, v), [B, heads, T, hd]);
  return tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [B, T, heads * hd]) as tf.Tensor3D;
}

/**
 * Per-token log π(target) from logits[..., V] (divided by `temperature` first) via logits − logsumexp. Targets must
 * lie in [0, V): the fused kernel throws on one that does not (the gather would read another row's entry).
 */
export function tokenLogProbs(logits: tf.Tensor, targets: tf.Tensor, temperature = 1): tf.Tensor {
  const vocab = logits.shape[logits.rank - 1];
  if (trainKernelsActive()) {
    // Max, logsumexp and the target's logit in one native pass per row (and the gradient in one more).
    const flat = fusedTokenLogProbs(
      tf.reshape(logits, [-1, vocab]) as tf.Tensor2D,
      tf.reshape(targets, [-1]) as tf.Tensor1D,
      temperature,
    );
    return tf.reshape(flat, targets.shape);
  }
  const z = temperature === 1 ? logits : tf.div(logits, temperature);
  const logp = tf.logSoftmax(z);
  // One gather on the flattened log-probs (row·V + target), not a [N, V] one-hot product: with a 150k vocabulary
  // that product alone would be gigabytes per batch.
  const n = targets.size;
  const index = tf.add(
    tf.mul(tf.range(0, n, 1, 'int32'), tf.scalar(vocab, 'int32')),
    tf.reshape(tf.cast(targets, 'int32'), [n]),
  );
  return tf.reshape(tf.gather(tf.reshape(logp, [n * vocab]), index), targets.shape);
}

/** Per-token entropy H = logsumexp(z) − Σ softmax(z)·z of the temperature-scaled logits. */
export function tokenEntropy(logits: tf.Tensor, temperature = 1): tf.Tensor {
  const z = temperature === 1 ? logits : tf.div(logits, temperature);
  const lse = tf.logSumExp(z, -1);
  return tf.sub(lse, tf.sum(tf.mul(tf.softmax(z), z), -1));
}

/**
 * `H·Σp² + Σp²·log p` per position (the Clip_V paper's N, arXiv 2602.03392; Trinity-RFT 10796ed
 * examples/entropy/clipv_dp_actor.py `compute_N_from_logits`), with p the softmax at `temperature`.
 */
export function tokenNec(logits: tf.Tensor, temperature = 1): tf.Tensor {
  const z = temperature === 1 ? logits : tf.div(logits, temperature);
  const logp = tf.logSoftmax(z, -1);
  const p = tf.exp(logp);
  const p2 = tf.mul(p, p);
  const entropy = tf.neg(tf.sum(tf.mul(p, logp), -1));
  return tf.add(tf.mul(entropy, tf.sum(p2, -1)), tf.sum(tf.mul(p2, logp), -1));
}

/** `tf.tidy` for functions returning structured results (tfjs' TensorContainer type rejects plain interfaces). */
export function tidy<T>(fn: () => T): T {
  return tf.tidy(fn as unknown as () => tf.TensorContainer) as unknown as T;
}
