/**
 * loss_agg_mode: every mode Trinity's aggregate_loss knows, on a masked 3x4 batch, against hand computations
 * (Trinity's 1e-8 epsilons change these at the 1e-9 level only).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { aggregateLoss, LOSS_AGG_MODES, maskedMean, maskedSum } from '../../../../runtime/rft/algorithm/loss-agg';
import { assertAllClose, assertClose, F32, LP, MASK, scalarOf, t2, useCpu } from './helpers';

before(useCpu);

// Masked row sums of LP: row 0: -1 - 0.5 - 2 = -3.5 (3 tokens); row 1: -0.7 - 1.2 - 0.3 - 3 = -5.2 (4 tokens);
// row 2: -0.2 - 0.9 = -1.1 (2 tokens). Total -9.8 over 9 tokens, padded length T = 4.
const EXPECTED: Record<string, number> = {
  'token-mean': -9.8 / 9, // -1.0888…
  'seq-mean-token-sum': -9.8 / 3, // -3.2666…
  'seq-mean-token-mean': (-3.5 / 3 - 5.2 / 4 - 1.1 / 2) / 3, // -1.00555…
  'seq-mean-token-sum-norm': -9.8 / 4, // divided by T, not by the number of sequences: -2.45
};

describe('aggregateLoss', () => {
  test('knows exactly Trinity’s four modes', () => {
    assert.deepEqual(
      [...LOSS_AGG_MODES],
      ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'],
    );
  });

  for (const mode of LOSS_AGG_MODES) {
    test(mode, () => {
      assertClose(scalarOf(aggregateLoss(t2(LP), t2(MASK), mode)), EXPECTED[mode], F32, mode);
    });
  }

  test('seq-mean-token-sum-norm with an explicit normalizer: -9.8 / 2.5', () => {
    assertClose(scalarOf(aggregateLoss(t2(LP), t2(MASK), 'seq-mean-token-sum-norm', 2.5)), -3.92, F32);
  });

  test('defaults to token-mean', () => {
    assertClose(scalarOf(aggregateLoss(t2(LP), t2(MASK))), -9.8 / 9, F32);
  });

  test('an all-zero mask gives 0 (Σ mask + 1e-8 in the denominator), not NaN', () => {
    assert.equal(scalarOf(aggregateLoss(t2(LP), tf.zeros([3, 4]), 'token-mean')), 0);
    assert.equal(scalarOf(aggregateLoss(t2(LP), tf.zeros([3, 4]), 'seq-mean-token-mean')), 0);
  });

  test('non-finite values under a zero mask never reach the result', () => {
    const v = t2([
      [1, 2, NaN, Infinity],
      [3, -Infinity, 5, 6],
    ]);
    const m = t2([
      [1, 1, 0, 0],
      [1, 0, 1, 1],
    ]);
    assertClose(scalarOf(aggregateLoss(v, m, 'token-mean')), 17 / 5, F32);
    assertAllClose(maskedSum(v, m, -1).dataSync(), [3, 14], F32);
    assertAllClose(maskedMean(v, m, -1).dataSync(), [1.5, 14 / 3], F32);
  });

  test('a fractional mask weights the tokens: Σ m·v / Σ m', () => {
    const v = t2([[2, 4]]);
    const m = t2([[0.5, 1]]);
    assertClose(scalarOf(maskedMean(v, m)), (1 + 4) / 1.5, F32);
  });

  test('gradient of token-mean w.r.t. the values is mask / Σ mask', () => {
    const g = tf.grad((x: tf.Tensor) => aggregateLoss(x, t2(MASK), 'token-mean'))(t2(LP));
    assertAllClose(
      g.arraySync() as number[][],
      MASK.map((r) => r.map((m) => m / 9)),
      F32,
      'grad',
    );
  });

  test('an unknown mode names the valid ones', () => {
    assert.throws(
      () => aggregateLoss(t2(LP), t2(MASK), 'token-sum'),
      /Invalid loss_agg_mode: token-sum\. Choose from \['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'\]/,
    );
  });
});
