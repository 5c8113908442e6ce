/**
 * A training step's metrics, summed with weights, while they are still scalars on the device: each recorded value is
 * kept (a clone, so the loss that produced it may be disposed), and {@link DeviceMetricSums.read} reads them all back
 * with one asynchronous read at the end of the step. No synchronous read: webgpu cannot do one in Node.
 */
import * as tf from '@tensorflow/tfjs-core';

export class DeviceMetricSums {
  private readonly pending: { key: string; value: tf.Scalar; weight: number }[] = [];

  /** Adds `weight · value` to `key` (called inside the loss closure: the clone survives its tidy). */
  add(key: string, value: tf.Scalar, weight: number): void {
    this.pending.push({ key, value: tf.keep(tf.clone(value)), weight });
  }

  /** The weighted sums, in first-recorded key order; frees every recorded scalar. */
  async read(): Promise<Map<string, number>> {
    const sums = new Map<string, number>();
    if (this.pending.length === 0) return sums;
    try {
      const stacked = tf.tidy(() => tf.stack(this.pending.map((p) => p.value)));
      const values = await stacked.data();
      stacked.dispose();
      this.pending.forEach((p, i) => sums.set(p.key, (sums.get(p.key) ?? 0) + values[i] * p.weight));
    } finally {
      this.dispose();
    }
    return sums;
  }

  dispose(): void {
    for (const p of this.pending) p.value.dispose();
    this.pending.length = 0;
  }
}
