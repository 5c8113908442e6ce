/**
 * Small tensor helpers shared by the algorithm pieces: a stop-gradient (tfjs has none), masks as float32, and
 * metric scalars (kept on the device, read back asynchronously in one go).
 *
 * Importing runtime/engine/ops registers every gradient (the core package's Node entry registers none).
 */
import * as tf from '@tensorflow/tfjs-core';
import { tidy } from '../../engine/ops';

export { tidy };

/**
 * `x.detach()`: the same values, no gradient flowing back into `x`. An identity whose gradient is zero, built
 * with `tf.customGrad` (tfjs-core has no stop-gradient op).
 */
export const detach = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
  void save;
  return { value: tf.clone(x), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as <T extends tf.Tensor>(x: T) => T;

/** A mask as float32 (bool/int masks are cast; float masks are used as they are, weights included). */
export function floatMask(mask: tf.Tensor): tf.Tensor {
  return mask.dtype === 'float32' ? mask : tf.cast(mask, 'float32');
}

/** A boolean condition as a float32 0/1 tensor. */
export function asFloat(cond: tf.Tensor): tf.Tensor {
  return tf.cast(cond, 'float32');
}

/**
 * Named metric scalars, left on the device: nothing here reads them (a backend such as webgpu cannot read
 * synchronously), the trainer reads a whole step's worth at once with {@link readMetrics}.
 */
export type ScalarMetrics = Record<string, tf.Scalar>;

/** Each named tensor as a scalar (a tensor of one value, reshaped). */
export function metricScalars(named: Record<string, tf.Tensor>): ScalarMetrics {
  const out: ScalarMetrics = {};
  for (const [k, t] of Object.entries(named)) out[k] = tf.reshape(t, []) as tf.Scalar;
  return out;
}

/** Reads metric scalars back as numbers with one asynchronous read (they are stacked first); disposes nothing. */
export async function readMetrics(named: ScalarMetrics): Promise<Record<string, number>> {
  const keys = Object.keys(named);
  if (keys.length === 0) return {};
  const stacked = tf.tidy(() => tf.stack(keys.map((k) => named[k])));
  const values = await stacked.data();
  stacked.dispose();
  const out: Record<string, number> = {};
  keys.forEach((k, i) => (out[k] = values[i]));
  return out;
}

/** Rows of a [B, ...] tensor whose `keep[i]` is true (Python's `x[bool_mask]` on the first axis). */
export function selectRows<T extends tf.Tensor>(x: T, keep: ArrayLike<boolean>): T {
  const idx: number[] = [];
  for (let i = 0; i < keep.length; i++) if (keep[i]) idx.push(i);
  if (idx.length === x.shape[0]) return x;
  return tf.gather(x, tf.tensor1d(idx, 'int32'), 0) as T;
}

/*
 * Comparisons as float32 0/1 tensors built from `step` (tfjs registers no gradient for Greater, Less, LessEqual,
 * LogicalAnd, …, so a boolean condition computed from the differentiated log-probs breaks `tf.grad` as soon as it
 * feeds the loss, even through a stop-gradient). For finite floats a − b > 0 exactly when a > b, so these agree with
 * the boolean ops; their gradient is zero.
 */

/** [a > b] */
export function gtF(a: tf.Tensor | number, b: tf.Tensor | number): tf.Tensor {
  return tf.step(tf.sub(a, b));
}

/** [a ≥ b] */
export function geF(a: tf.Tensor | number, b: tf.Tensor | number): tf.Tensor {
  return tf.sub(1, tf.step(tf.sub(b, a)));
}

/** [a < b] */
export function ltF(a: tf.Tensor | number, b: tf.Tensor | number): tf.Tensor {
  return gtF(b, a);
}

/** [a ≤ b] */
export function leF(a: tf.Tensor | number, b: tf.Tensor | number): tf.Tensor {
  return geF(b, a);
}

/** x ∧ y for 0/1 floats */
export function andF(x: tf.Tensor, y: tf.Tensor): tf.Tensor {
  return tf.mul(x, y);
}

/** x ∨ y for 0/1 floats */
export function orF(x: tf.Tensor, y: tf.Tensor): tf.Tensor {
  return tf.maximum(x, y);
}

/** ¬x for 0/1 floats */
export function notF(x: tf.Tensor): tf.Tensor {
  return tf.sub(1, x);
}
