/**
 * The split form of rotary embedding, x₁·cos − x₂·sin | x₂·cos + x₁·sin over the halves (Hugging Face's
 * rotate_half convention): the reference the runtime's one-matmul form (ops.applyRopeRotation) is tested against.
 */
import * as tf from '@tensorflow/tfjs-core';

/** `cos`/`sin` hold d/2 columns and broadcast against x[..., T, d]; the pairs are (x[i], x[i + d/2]). */
export function applyRope(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor): tf.Tensor {
  const half = x.shape[x.rank - 1] / 2;
  const [x1, x2] = tf.split(x, [half, half], -1);
  return tf.concat([tf.sub(tf.mul(x1, cos), tf.mul(x2, sin)), tf.add(tf.mul(x2, cos), tf.mul(x1, sin))], -1);
}
