/**
 * Entropy loss functions: default (aggregated entropy × entropy_coef), mix (rollout rows only), none.
 * Masked entropy sums of ENT: row 0: 0.9 + 1.3 + 0.4 = 2.6 (3 tokens); row 1: 0.2 + 0.5 + 1.1 + 0.7 = 2.5 (4);
 * row 2: 1.6 + 0.3 = 1.9 (2). Total 7.0 over 9 tokens.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { ENTROPY_LOSS_FN_NAMES, entropyLoss } from '../../../../runtime/rft/algorithm/entropy';
import { assertAllClose, assertClose, assertMetrics, ENT, F32, MASK, scalarOf, t2, useCpu } from './helpers';

before(useCpu);

describe('entropy_loss_fn', () => {
  test('default, token-mean: 0.01 · 7/9; gradient 0.01·mask/9', () => {
    const r = entropyLoss('default', { entropy: t2(ENT), actionMask: t2(MASK) }, { entropy_coef: 0.01 });
    assertClose(scalarOf(r.loss), 0.01 * (7 / 9), F32, 'loss');
    assertMetrics(r.metrics, { entropy_loss: 7 / 9 }, F32);
    const g = tf.grad(
      (e: tf.Tensor) =>
        entropyLoss('default', { entropy: e as tf.Tensor2D, actionMask: t2(MASK) }, { entropy_coef: 0.01 }).loss,
    )(t2(ENT));
    assertAllClose(
      g.arraySync() as number[][],
      MASK.map((r) => r.map((m) => (0.01 * m) / 9)),
      F32,
      'grad',
    );
  });

  test('default, seq-mean-token-sum: 0.01 · 7/3', () => {
    const r = entropyLoss(
      'default',
      { entropy: t2(ENT), actionMask: t2(MASK), lossAggMode: 'seq-mean-token-sum' },
      { entropy_coef: 0.01 },
    );
    assertClose(scalarOf(r.loss), 0.01 * (7 / 3), F32, 'loss');
    assertMetrics(r.metrics, { entropy_loss: 7 / 3 }, F32);
  });

  test('mix: only rows whose expert_mask is false (rows 0 and 2): 0.02 · 4.5/5', () => {
    const inputs = { actionMask: t2(MASK), expertMask: [false, true, false] };
    const r = entropyLoss('mix', { ...inputs, entropy: t2(ENT) }, { entropy_coef: 0.02 });
    assertClose(scalarOf(r.loss), 0.02 * 0.9, F32, 'loss');
    assertMetrics(r.metrics, { entropy_loss: 0.9 }, F32);
    const g = tf.grad(
      (e: tf.Tensor) => entropyLoss('mix', { ...inputs, entropy: e as tf.Tensor2D }, { entropy_coef: 0.02 }).loss,
    )(t2(ENT));
    assertAllClose(
      g.arraySync() as number[][],
      [
        [0.004, 0.004, 0.004, 0],
        [0, 0, 0, 0],
        [0.004, 0.004, 0, 0],
      ],
      F32,
      'grad',
    );
  });

  test('mix requires expert_mask of the batch length', () => {
    assert.throws(
      () => entropyLoss('mix', { entropy: t2(ENT), actionMask: t2(MASK) }, { entropy_coef: 0.02 }),
      /expert_mask is required/,
    );
    assert.throws(
      () => entropyLoss('mix', { entropy: t2(ENT), actionMask: t2(MASK), expertMask: [true] }, { entropy_coef: 0.02 }),
      /len\(expert_mask\)=1 != entropy.shape\[0\]=3/,
    );
  });

  test('none: zero, no metrics', () => {
    const r = entropyLoss('none', { entropy: t2(ENT), actionMask: t2(MASK) }, { entropy_coef: 0.5 });
    assert.equal(scalarOf(r.loss), 0);
    assert.deepEqual(r.metrics, {});
  });

  test('default_args(): entropy_coef 0.0', () => {
    const r = entropyLoss('default', { entropy: t2(ENT), actionMask: t2(MASK) });
    assert.equal(scalarOf(r.loss), 0);
    assertMetrics(r.metrics, { entropy_loss: 7 / 9 }, F32);
  });

  test('registered names', () => {
    assert.deepEqual([...ENTROPY_LOSS_FN_NAMES], ['default', 'mix', 'none']);
    assert.throws(() => entropyLoss('max', { entropy: t2(ENT), actionMask: t2(MASK) }), /not registered/);
  });
});
