/**
 * One optimizer step over micro-batches: each micro-batch's loss is differentiated on its own (so memory holds one
 * micro-batch's activations), the gradients are summed, then AdamW applies them at the scheduled learning rate.
 * Each micro-batch loss must already carry its share of the batch's normalisation.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AdamW } from './adamw';
import { learningRate, type LrSchedule } from './schedule';

export interface StepResult {
  /** Sum of the micro-batch losses (each already scaled by the caller). */
  loss: number;
  gradNorm: number;
  lr: number;
  skipped: boolean;
}

/**
 * Differentiates each micro-batch loss on its own and sums the gradients (in `vars` order; a variable a loss does not
 * reach gets zeros). Returns the summed gradients and the sum of the losses (a scalar still on the device: nothing is
 * read back here), both owned by the caller. `beforeEach` is awaited before each micro-batch (the caller's chance to
 * give the step up: what it throws is thrown here, with the partial sums freed).
 */
export async function accumulateGradients(
  vars: readonly tf.Variable[],
  microBatchLosses: readonly (() => tf.Scalar)[],
  beforeEach?: () => Promise<void>,
): Promise<{ grads: tf.Tensor[]; loss: tf.Scalar }> {
  let sums: tf.Tensor[] | undefined;
  let loss: tf.Scalar | undefined;
  for (const f of microBatchLosses) {
    if (beforeEach) {
      try {
        await beforeEach();
      } catch (e) {
        tf.dispose([...(sums ?? []), ...(loss ? [loss] : [])]);
        throw e;
      }
    }
    const { value, grads } = tf.variableGrads(f, vars as tf.Variable[]);
    if (!loss) loss = value;
    else {
      const total = tf.add(loss, value) as tf.Scalar;
      loss.dispose();
      value.dispose();
      loss = total;
    }
    const ordered = vars.map((v) => grads[v.name] ?? tf.zerosLike(v));
    if (!sums) sums = ordered;
    else {
      const next = sums.map((s, i) => tf.add(s, ordered[i]));
      for (const t of [...sums, ...ordered]) t.dispose();
      sums = next;
    }
  }
  if (!sums || !loss) throw new Error('accumulateGradients: no micro-batches');
  return { grads: sums, loss };
}

export class Trainer {
  constructor(
    readonly optimizer: AdamW,
    readonly schedule: LrSchedule,
  ) {}

  async step(microBatchLosses: readonly (() => tf.Scalar)[]): Promise<StepResult> {
    const { grads, loss: lossT } = await accumulateGradients(
      this.optimizer.variables as tf.Variable[],
      microBatchLosses,
    );
    const lr = learningRate(this.schedule, this.optimizer.step);
    const { gradNorm, skipped } = await this.optimizer.apply(grads, lr);
    const loss = (await lossT.data())[0];
    lossT.dispose();
    return { loss, gradNorm, lr, skipped };
  }
}
