/**
 * KL functions: the per-token estimators (float64), the loss form (tensor, with gradient) for each estimator and
 * two aggregation modes, the penalty form on token-level rewards, the adaptive coefficient, and `none`.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { KL_FN_NAMES, KlFn, klScalar, klTensor, type KlFnName } from '../../../../runtime/rft/algorithm/kl';
import {
  assertAllClose,
  assertClose,
  assertMetrics,
  F32,
  F64,
  LP,
  MASK,
  OLD,
  REF,
  scalarOf,
  t2,
  useCpu,
} from './helpers';
import { K2_ADAPTIVE_COEF, K3_PENALTY_REWARDS, KL_PENALTY_METRIC, SCORES } from './kl-expected';
import { KL_LOSS } from './kl-loss-expected';

before(useCpu);

describe('per-token estimators (ℓ = -1.0, ℓ_ref = -0.9, ℓ_old = -1.1)', () => {
  // log r = ℓ_ref - ℓ = 0.1
  const k3 = Math.exp(0.1) - 1 - 0.1; // 0.005170918075647…
  const cases: [KlFnName, number][] = [
    ['none', 0],
    ['k1', -0.1],
    ['k2', 0.005], // ½·0.1²
    ['k3', k3],
    ['low_var_kl', k3], // inside the clamps it equals k3
    ['abs', 0.1],
    ['corrected_k3', Math.exp(0.1) * k3], // weight clamp(exp(ℓ - ℓ_old), 0, 2) = e^0.1: 0.005714748276957…
  ];
  for (const [name, expected] of cases) {
    test(name, () => {
      assertClose(klScalar(name, -1.0, -0.9, -1.1), expected, F64, name);
      assertClose(
        scalarOf(klTensor(name, tf.scalar(-1.0), tf.scalar(-0.9), tf.scalar(-1.1))),
        expected,
        F32,
        name + ' (tensor)',
      );
    });
  }

  test('corrected_k3 without old log-probs is k3', () => {
    assertClose(klScalar('corrected_k3', -1.0, -0.9), k3, F64);
  });

  test('corrected_k3 caps the importance weight at 2', () => {
    // exp(ℓ - ℓ_old) = e^1 > 2
    assertClose(klScalar('corrected_k3', -1.0, -0.9, -2.0), 2 * k3, F64);
  });

  test('low_var_kl clamps log r to ±20 and the result to [-10, 10]; k3 does not', () => {
    // log r = 30 → exp(20) - 21 ≈ 4.85e8 → 10;  log r = -30 → exp(-20) + 19 ≈ 19 → 10
    assertAllClose(klTensor('low_var_kl', t2([[-30, 0]]), t2([[0, -30]])).dataSync(), [10, 10], F32);
    assertClose(klScalar('low_var_kl', -30, 0), 10, F64);
    assertClose(klScalar('k3', -30, 0), Math.exp(30) - 31, F64); // 1.0686474581493e13
    assertClose(klScalar('k3', 0, -30), 29 + Math.exp(-30), F64);
  });
});

// Loss form on the 3x4 batch with kl_coef 0.05 (kl-loss-expected.ts): loss = 0.05·agg(kl). Gradients w.r.t. ℓ.

describe('loss form (kl_coef 0.05)', () => {
  for (const [key, exp] of Object.entries(KL_LOSS)) {
    test(key, () => {
      const [name, mode] = key.split(' ');
      const kl = new KlFn(name, { kl_coef: 0.05 });
      const inputs = { refLogprob: t2(REF), actionMask: t2(MASK), lossAggMode: mode, oldLogprob: t2(OLD) };
      const r = kl.klLoss({ ...inputs, logprob: t2(LP) });
      assertClose(scalarOf(r.loss), exp.loss, F32, 'loss');
      assertMetrics(r.metrics, { kl_loss: exp.kl_loss, kl_coef: 0.05 }, F32, key);
      const g = tf.grad((x: tf.Tensor) => kl.klLoss({ ...inputs, logprob: x }).loss)(t2(LP));
      assertAllClose(g.arraySync() as number[][], exp.grad, F32, 'grad');
    });
  }

  test('none: zero loss, no metrics, no reference needed', () => {
    const r = new KlFn('none').klLoss({ logprob: t2(LP), actionMask: t2(MASK) });
    assert.equal(scalarOf(r.loss), 0);
    assert.deepEqual(r.metrics, {});
  });

  test('a KL loss without reference log-probs is an error', () => {
    assert.throws(() => new KlFn('k2').klLoss({ logprob: t2(LP), actionMask: t2(MASK) }), /refLogprob/);
  });

  test('default coefficient is default_args() kl_coef 0.001, fixed', () => {
    const kl = new KlFn('k3');
    assert.equal(kl.klCoef, 0.001);
    assert.equal(kl.args.adaptive, false);
  });
});

// Penalty form with kl_coef 0.1, computed from the OLD log-probs and the reference's, on SCORES (kl-expected.ts).

describe('penalty form (kl_coef 0.1)', () => {
  test('k1: rewards = scores - 0.1·(ℓ_old - ℓ_ref)·mask; kl = mean over rows of the row mean', () => {
    const kl = new KlFn('k1', { kl_coef: 0.1 });
    const r = kl.applyKlPenaltyToReward({
      tokenLevelScores: SCORES,
      oldLogprob: OLD,
      refLogprob: REF,
      responseMask: MASK,
    });
    // row 0: ℓ_old - ℓ_ref = [-0.2, 0.2, 0.3, ·]; row 1: [0.1, 0.1, -1.4, 0.5]; row 2: [-0.2, 0.1, ·, ·]
    assertAllClose(
      r.tokenLevelRewards,
      [
        [0.02, -0.02, 0.97, 0],
        [-0.01, -0.01, 0.14, 0.45],
        [0.02, 1.99, 0, 0],
      ],
      F64,
      'rewards',
    );
    // row means 0.3/3, -0.7/4, -0.1/2 → mean -0.041666…
    assertMetrics(r.metrics, { kl: (0.1 - 0.175 - 0.05) / 3, kl_coef: 0.1 }, { rtol: 1e-8, atol: 1e-12 }, 'k1');
  });

  for (const [name, klValue] of Object.entries(KL_PENALTY_METRIC)) {
    test(`${name}: kl metric`, () => {
      const r = new KlFn(name, { kl_coef: 0.1 }).applyKlPenaltyToReward({
        tokenLevelScores: SCORES,
        oldLogprob: OLD,
        refLogprob: REF,
        responseMask: MASK,
      });
      assertClose(r.metrics.kl, klValue, F64, name);
      assert.equal(r.metrics.kl_coef, 0.1);
    });
  }

  test('k3 rewards', () => {
    const r = new KlFn('k3', { kl_coef: 0.1 }).applyKlPenaltyToReward({
      tokenLevelScores: SCORES,
      oldLogprob: OLD,
      refLogprob: REF,
      responseMask: MASK,
    });
    assertAllClose(r.tokenLevelRewards, K3_PENALTY_REWARDS, F64, 'rewards');
  });

  test('none passes the scores through, no metrics', () => {
    const r = new KlFn('none').applyKlPenaltyToReward({
      tokenLevelScores: SCORES,
      oldLogprob: OLD,
      responseMask: MASK,
    });
    assert.deepEqual(r.tokenLevelRewards, SCORES);
    assert.deepEqual(r.metrics, {});
  });

  test('a penalty without reference log-probs is an error (Trinity: KeyError)', () => {
    assert.throws(
      () => new KlFn('k2').applyKlPenaltyToReward({ tokenLevelScores: SCORES, oldLogprob: OLD, responseMask: MASK }),
      /ref_log_prob/,
    );
  });
});

describe('adaptive coefficient', () => {
  test('needs target_kl and horizon', () => {
    assert.throws(() => new KlFn('k2', { adaptive: true, target_kl: 0.1 }), /Target KL and horizon must be provided/);
  });

  test('coef ← coef·(1 + clip(kl/target - 1, ±0.2)·B/horizon), applied after the penalty uses the old coef', () => {
    const kl = new KlFn('k2', { adaptive: true, kl_coef: 0.1, target_kl: 0.1, horizon: 100 });
    const inputs = { tokenLevelScores: SCORES, oldLogprob: OLD, refLogprob: REF, responseMask: MASK };
    const first = kl.applyKlPenaltyToReward(inputs);
    assert.equal(first.metrics.kl_coef, 0.1);
    // kl = 0.1065277775 → error 0.065277775 → 0.1·(1 + 0.065277775·3/100)
    assertClose(kl.klCoef, K2_ADAPTIVE_COEF, F64, 'after one step');
    const second = kl.applyKlPenaltyToReward(inputs);
    assertClose(second.metrics.kl_coef, K2_ADAPTIVE_COEF, F64, 'metric of the second step');
  });

  test('the error is clipped to +0.2', () => {
    // k3's kl 0.161 against target 0.05 → error 2.2 → 0.2: 0.1·(1 + 0.2·3/100) = 0.1006
    const kl = new KlFn('k3', { adaptive: true, kl_coef: 0.1, target_kl: 0.05, horizon: 100 });
    kl.applyKlPenaltyToReward({ tokenLevelScores: SCORES, oldLogprob: OLD, refLogprob: REF, responseMask: MASK });
    assertClose(kl.klCoef, 0.1006, F64);
  });

  test('the loss form never updates the coefficient', () => {
    const kl = new KlFn('k2', { adaptive: true, kl_coef: 0.1, target_kl: 0.1, horizon: 100 });
    kl.klLoss({ logprob: t2(LP), refLogprob: t2(REF), actionMask: t2(MASK) });
    assert.equal(kl.klCoef, 0.1);
  });

  test('a fixed controller never moves', () => {
    const kl = new KlFn('k2', { kl_coef: 0.1 });
    kl.updateKlCoef(5, 3);
    assert.equal(kl.klCoef, 0.1);
  });
});

test('the KL registry holds exactly Trinity’s names at main', () => {
  assert.deepEqual([...KL_FN_NAMES], ['none', 'k1', 'k2', 'k3', 'low_var_kl', 'abs', 'corrected_k3']);
});
