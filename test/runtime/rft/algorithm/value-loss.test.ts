/**
 * PPO's clipped value loss (algorithm/value-loss.ts) on a 2x3 batch, against float64 values worked out by hand
 * below. The inputs are dyadic (exact in float32), so V_old + (V − V_old) is V exactly and the clip fraction
 * counts only tokens the clip really changes.
 *
 * cliprange_value c = 0.5; per token (V, V_old, R) → V_clip, (V − R)², (V_clip − R)², max, clipped-worse:
 *   row 0: (0.5, 0.25, 1.0)  → 0.5,  0.25,   0.25,   0.25,   no (equal)
 *          (1.0, 0.0, 1.5)   → 0.5,  0.25,   1.0,    1.0,    yes
 *          (−0.25, 0.5, 0.5) → 0.0,  0.5625, 0.25,   0.5625, no
 *   row 1: (2.0, 1.0, 0.5)   → 1.5,  2.25,   1.0,    2.25,   no
 *          (0.0, 0.75, −1.0) → 0.25, 1.0,    1.5625, 1.5625, yes
 *          (0.5, 0.5, 9.0)   masked out
 * Masked maxima sum to 5.625 over 5 tokens; row sums 1.8125 (3 tokens) and 3.8125 (2 tokens).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { LOSS_AGG_MODES } from '../../../../runtime/rft/algorithm/loss-agg';
import { clippedValueLoss, type ValueLossInputs } from '../../../../runtime/rft/algorithm/value-loss';
import { assertAllClose, assertClose, assertMetrics, F32, num, t2, useCpu } from './helpers';

before(useCpu);

const VPRED = [
  [0.5, 1.0, -0.25],
  [2.0, 0.0, 0.5],
];
const inputs = (vpred: tf.Tensor2D): ValueLossInputs => ({
  vpred,
  oldValues: t2([
    [0.25, 0.0, 0.5],
    [1.0, 0.75, 0.5],
  ]),
  returns: t2([
    [1.0, 1.5, 0.5],
    [0.5, -1.0, 9.0],
  ]),
  responseMask: t2([
    [1, 1, 1],
    [1, 1, 0],
  ]),
});

// ½ · agg(max): token-mean 5.625 / 5; seq-mean-token-sum mean(1.8125, 3.8125); seq-mean-token-mean
// mean(1.8125 / 3, 3.8125 / 2); seq-mean-token-sum-norm 5.625 / T (T = 3).
const EXPECTED_LOSS: Record<string, number> = {
  'token-mean': 0.5625,
  'seq-mean-token-sum': 1.40625,
  'seq-mean-token-mean': 0.5 * ((1.8125 / 3 + 3.8125 / 2) / 2), // 0.62760416…
  'seq-mean-token-sum-norm': 0.9375,
};

describe('clippedValueLoss', () => {
  for (const mode of LOSS_AGG_MODES) {
    test(`${mode}: ½·agg of the larger of the clipped and unclipped squared errors`, () => {
      const { loss, metrics } = clippedValueLoss(inputs(t2(VPRED)), { cliprangeValue: 0.5, lossAggMode: mode });
      assertClose(num(loss), EXPECTED_LOSS[mode], F32, 'loss');
      // the clip fraction (2 of 5 tokens) and the mean value (3.25 / 5) do not depend on the mode
      assertMetrics(metrics, { vf_loss: EXPECTED_LOSS[mode], vf_clipfrac: 0.4, vpred_mean: 0.65 }, F32, mode);
      assert.deepEqual(Object.keys(metrics), ['vf_loss', 'vf_clipfrac', 'vpred_mean']);
    });
  }

  test('a clip range wider than every move leaves plain ½·mean (V − R)² and no clipped token', () => {
    // unclipped squared errors: 0.25, 0.25, 0.5625, 2.25, 1.0 → 4.3125 / 5 / 2
    const { loss, metrics } = clippedValueLoss(inputs(t2(VPRED)), { cliprangeValue: 10, lossAggMode: 'token-mean' });
    assertClose(num(loss), 0.43125, F32, 'loss');
    assertClose(num(metrics.vf_clipfrac), 0, F32, 'vf_clipfrac');
  });

  test('the gradient flows only through tokens whose unclipped error wins (token-mean)', () => {
    // d/dV of ½·Σ max / 5 = 0.1 · 2(V − R) where (V − R)² is the max; 0 where the clipped error wins (V_clip
    // does not move with V outside the clip) and under the mask.
    const grad = tf.grad(
      (v: tf.Tensor) =>
        clippedValueLoss(inputs(v as tf.Tensor2D), { cliprangeValue: 0.5, lossAggMode: 'token-mean' }).loss,
    )(t2(VPRED));
    assertAllClose(
      grad.arraySync() as number[][],
      [
        [-0.1, 0, -0.15],
        [0.3, 0, 0],
      ],
      F32,
      'grad',
    );
  });
});
