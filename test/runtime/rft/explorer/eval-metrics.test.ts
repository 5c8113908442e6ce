/**
 * Eval task reduction (Trinity's `calculate_task_level_metrics(is_eval=True)`) per release, with v0.5.0+'s
 * bootstrapped best@k/worst@k: legacy `np.random.seed(42)` + `np.random.choice(n, k, replace=True)`, 1000 samples,
 * then `np.mean` (pairwise summation) of the sample maxima/minima.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { evalTaskMetrics } from '../../../../runtime/rft/explorer/eval-metrics';
import { LegacyRandomState } from '../../../../runtime/rft/numpy/numpy-legacy-random';
import { npMean, npStd } from '../../../../runtime/rft/numpy/numpy-stats';

const runs = (key: string, values: number[]) => values.map((v) => ({ [key]: v }));

describe('NumPy legacy RandomState (MT19937)', () => {
  test('init_genrand(5489): the 10000th output is 4123659995 (the C++ standard’s check value for std::mt19937)', () => {
    const rs = new LegacyRandomState(5489);
    let v = 0;
    for (let i = 0; i < 10000; i++) v = rs.nextUint32();
    assert.equal(v, 4123659995);
  });

  test('np.random.seed(42); np.random.choice(10, 5, replace=True) is [6, 3, 7, 4, 6]', () => {
    assert.deepEqual(new LegacyRandomState(42).choiceWithReplacement(10, 5), [6, 3, 7, 4, 6]);
  });

  test('np.mean / np.std sum pairwise: 8 values add as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7))', () => {
    const xs = [0.1, 0.7, 0.3, 0.9, 0.2, 0.25, 0.33, 0.6];
    // sequentially, 0.1+0.7+…+0.6 = 3.3800000000000003; in NumPy's order it is 3.38
    assert.equal(npMean(xs), 3.38 / 8);
    assert.equal(npMean(xs), 0.4225);
    assert.equal(npStd(xs), 0.2606122598804592);
  });
});

describe('eval task metrics by release', () => {
  test('≤ v0.3.2: the mean over runs', () => {
    assert.deepEqual(evalTaskMetrics('v0.3.2', runs('accuracy', [1, 0, 0.5])), { accuracy: 0.5 });
  });

  test('v0.4.0: mean/best/worst over the first k runs (k = 2, then n)', () => {
    assert.deepEqual(evalTaskMetrics('v0.4.0', runs('accuracy', [1, 0, 0.5])), {
      'accuracy/mean@2': 0.5,
      'accuracy/best@2': 1,
      'accuracy/worst@2': 0,
      'accuracy/mean@3': 0.5,
      'accuracy/best@3': 1,
      'accuracy/worst@3': 0,
    });
  });

  test('main, runs [1, 0, 0.5]: mean@3, population std@3 and the bootstrap with seed 42', () => {
    // std: deviations 0.5, −0.5, 0 → √(0.5/3) = √(1/6). Every bootstrap max/min is 0, 0.5 or 1, so each best/worst is
    // (count of 1s + ½ count of 0.5s) / 1000 over the 1000 draws of seed 42: 730/1000, 285/1000, 835/1000, 167.5/1000.
    assert.deepEqual(evalTaskMetrics('main', runs('accuracy', [1, 0, 0.5])), {
      'accuracy/mean@3': 0.5,
      'accuracy/std@3': Math.sqrt(1 / 6),
      'accuracy/best@2': 0.73,
      'accuracy/worst@2': 0.285,
      'accuracy/best@3': 0.835,
      'accuracy/worst@3': 0.1675,
    });
  });

  test('main, 9 fractional runs: k = 2, 4, 8, 9, float64 as NumPy computes it', () => {
    // Expected: Trinity's bootstrap_metric(values, k, [np.max, np.min]) under NumPy 2.x, printed with repr().
    const m = evalTaskMetrics('v0.5.0', runs('score', [0.1, 0.7, 0.3, 0.9, 0.2, 0.25, 0.33, 0.6, 0.45]));
    assert.deepEqual(m, {
      'score/mean@9': 0.4255555555555556,
      'score/std@9': 0.24585954034823812,
      'score/best@2': 0.55426,
      'score/worst@2': 0.28163,
      'score/best@4': 0.68972,
      'score/worst@4': 0.19726000000000002,
      'score/best@8': 0.79761,
      'score/worst@8': 0.14616,
      'score/best@9': 0.81027,
      'score/worst@9': 0.13988000000000003,
    });
  });

  test('main: one run gives mean@1 and std@1 only; time keys are plain means', () => {
    assert.deepEqual(evalTaskMetrics('main', [{ accuracy: 1, 'time/run_execution': 2 }]), {
      'accuracy/mean@1': 1,
      'accuracy/std@1': 0,
      'time/run_execution': 2,
    });
    const two = evalTaskMetrics('main', [
      { accuracy: 1, 'time/run_execution': 1 },
      { accuracy: 1, 'time/run_execution': 2 },
    ]);
    assert.equal(two['time/run_execution'], 1.5);
    assert.deepEqual([two['accuracy/best@2'], two['accuracy/worst@2']], [1, 1]);
  });
});
