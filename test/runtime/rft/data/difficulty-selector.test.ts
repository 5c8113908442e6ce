/**
 * The difficulty_based selector (Trinity's DifficultyBasedSelector + InterpolationBetaPREstimator) and NumPy's beta
 * draws under it. Estimator numbers are worked out by hand below and agree with Trinity's difficulty_estimator.py at
 * 10796ed run on the same inputs (NumPy 2.4); NumPy draws come from NumPy 2.4.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  InterpolationBetaPREstimator,
  difficultyBasedSelector,
} from '../../../../runtime/rft/data/difficulty-selector';
import {
  beta,
  standardExponential,
  standardGamma,
  standardNormal,
} from '../../../../runtime/rft/numpy/numpy-distributions';
import { defaultRng, Pcg64 } from '../../../../runtime/rft/numpy/numpy-random';
import { BatchReader } from '../../../../runtime/rft/data/reader';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import type { Experience } from '../../../../runtime/rft/experience';

const close = (got: ArrayLike<number>, want: readonly number[], rel = 1e-12) => {
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++)
    assert.ok(Math.abs(got[i] - want[i]) <= rel * Math.abs(want[i]), `[${i}] ${got[i]} vs ${want[i]}`);
};

describe('NumPy Generator distributions (PCG64)', () => {
  it('standard_normal, standard_exponential, standard_gamma: NumPy 2.4 values to 1e-12', () => {
    const draw = (f: (bg: Pcg64) => number) => {
      const bg = new Pcg64(7);
      return [f(bg), f(bg), f(bg)];
    };
    close(draw(standardNormal), [0.0012301533574825742, 0.2987455375084699, -0.2741378553622176]);
    close(draw(standardExponential), [0.7075292557919215, 1.025203348294905, 0.5685486573832514]);
    const bg = new Pcg64(7);
    close(
      [0.5, 2.5, 1.0].map((s) => standardGamma(bg, s)),
      [0.41469522451592433, 1.787678811970317, 0.20653275401650553],
    );
  });

  it('beta over arrays: Jöhnk below 1, gammas above; the stream stays aligned over 5000 draws', () => {
    close(
      defaultRng(7).beta([0.5, 1, 3.2, 17.5], [0.7, 1, 1.4, 2.25]),
      [0.8350163452827672, 0.006370652818501594, 0.5603305849512734, 0.9036905689318593],
    );
    // np.linspace(1, 20, 5000), np.linspace(30, 1.5, 5000): one draw consuming a different number of raw values would
    // throw every later draw off.
    const n = 5000;
    const a = Array.from({ length: n }, (_, i) => 1 + (19 * i) / (n - 1));
    const b = Array.from({ length: n }, (_, i) => 30 - (28.5 * i) / (n - 1));
    const x = defaultRng(7).beta(a, b);
    close(x.slice(-3), [0.9395481157289349, 0.9293665482063613, 0.9541089195488563], 1e-9);
    assert.ok(Math.abs(x.reduce((s, v) => s + v, 0) - 2132.679132448341) < 1e-9);
  });

  it('Beta(1, 1) (a fresh estimator) is exact: Jöhnk uses no table', () => {
    assert.deepEqual(
      [...defaultRng(42).beta([1, 1, 1, 1], [1, 1, 1, 1])],
      [0.22145847498048798, 0.6611679233762598, 0.8968029669142108, 0.7999647830577266],
    );
    const bg = new Pcg64(42);
    assert.equal(beta(bg, 1, 1), 0.22145847498048798);
  });
});

// Four tasks; each row holds the pass rates of two anchor models (weaker, stronger).
const FEATURES = [
  [0, 0.5],
  [0.25, 0.75],
  [0.5, 1],
  [0, 1],
] as const;

describe('InterpolationBetaPREstimator', () => {
  it('one update, worked by hand (m 4, λ 0.5, ρ 0.5; tasks 0 and 2 passed 1/4 and 3/4)', () => {
    const e = new InterpolationBetaPREstimator(FEATURES, { m: 4, lamb: 0.5, rho: 0.5 });
    e.update([0, 2], [0.25, 0.75]);
    // Observed mean 0.5; the anchors' means over tasks 0 and 2 are 0.25 and 0.75, so
    // cap = (0.5 − 0.25) / (0.75 − 0.25 + 1e-6) = 0.25 / 0.500001.
    assert.equal(e.capCoef, 0.499999000002);
    // p̃ = clip((f1 − f0)·cap + f0): tasks 1 and 3 interpolate to 0.25 + cap/2 = 0.499999500001 and cap; tasks 0 and 2
    // take their observed 0.25 and 0.75. α = 0.5·1 + 0.5 + 0.5·s̄ + 0.5·p̃·4 with s̄ = (1, 0, 3, 0):
    assert.deepEqual([...e.alphas], [2, 1.999999000002, 4, 1.999998000004]);
    // β = 1 + 0.5·f̄ + 2·(1 − p̃) with f̄ = (3, 0, 1, 0):
    assert.deepEqual([...e.betas], [4, 2.000000999998, 2, 2.000001999996]);
    // Beta means α / (α + β):
    assert.deepEqual([...e.predictPr(defaultRng(0), false)], [1 / 3, 0.4999997500005, 2 / 3, 0.499999500001]);
  });

  it('a second update moves cap by an EMA (0.9 old + 0.1 new)', () => {
    const e = new InterpolationBetaPREstimator(FEATURES, { m: 4, lamb: 0.5, rho: 0.5 });
    e.update([0, 2], [0.25, 0.75]);
    e.update([1, 3], [1, 0]);
    assert.equal(e.capCoef, 0.4999990333352222);
    assert.deepEqual([...e.alphas], [1.9999990333352222, 5.499999500001, 3.9999990333352224, 1.499999000002]);
    assert.deepEqual([...e.betas], [4.000000966664778, 1.500000499999, 2.0000009666647776, 5.500000999998]);
  });

  it('adaptive_rho halves ρ when the interpolation misses the observed rates by ≥ 0.25 on average', () => {
    const e = new InterpolationBetaPREstimator(FEATURES, { m: 4, lamb: 0.5, rho: 0.5, adaptiveRho: true });
    e.update([0, 3], [1, 0]);
    // cap = 0.5 / 0.750001; p̃ = (cap/2, cap) on tasks (0, 3) against (1, 0): mean error ≈ 0.67, so ρ = 0.25.
    assert.equal(e.rho, 0.25);
    assert.equal(e.capCoef, 0.666665777778963);
    assert.deepEqual([...e.alphas], [5, 1.5833328888894815, 1.8333328888894815, 1]);
    assert.deepEqual([...e.betas], [1, 1.4166671111105185, 1.1666671111105185, 5]);
  });

  it('do_sample: one NumPy beta draw per task from default_rng(seed + current_index)', () => {
    const e = new InterpolationBetaPREstimator(FEATURES, { m: 4, lamb: 0.5, rho: 0.5 });
    e.update([0, 2], [0.25, 0.75]);
    close(
      e.predictPr(defaultRng(50), true),
      [0.3177359916828424, 0.6649791625603491, 0.8992922705524692, 0.44606238209916776],
    );
  });
});

const KW = { m: 4, lamb: 0.5, rho: 0.5, tau: 0 };

describe('difficulty_based selector', () => {
  it('scores −|target − pr|; greedy (tau 0) takes the nearest to the target, ties by lower index', () => {
    const s = difficultyBasedSelector(FEATURES, {
      seed: 42,
      kwargs: { ...KW, target_reward: 0.5 },
      start: 0,
      name: 't',
    });
    assert.deepEqual([...s.scores()], [-0, -0, -0, -0], 'Beta(1, 1): every mean is 0.5');
    assert.deepEqual(s.getIndices(2), [0, 1]);
    s.feedback([0, 2], [0.25, 0.75]);
    assert.deepEqual(
      [...s.scores()],
      [-0.16666666666666669, -2.499994999904942e-7, -0.16666666666666663, -4.999989999809884e-7],
    );
    assert.deepEqual(s.getIndices(2), [1, 3], 'feedback moved the selection to the tasks predicted nearest 0.5');
    assert.equal(s.currentIndex, 4);
  });

  it('the target decides which tasks come first', () => {
    const s = difficultyBasedSelector(FEATURES, { seed: 42, kwargs: { ...KW, target_reward: 1 }, start: 0, name: 't' });
    s.feedback([0, 2], [0.25, 0.75]);
    assert.deepEqual(s.getIndices(2), [2, 1]);
  });

  it('tau > 0: k distinct rows drawn from softmax(scores / tau), reproducible per seed + current_index', () => {
    const make = (start: number) =>
      difficultyBasedSelector(FEATURES, {
        seed: 3,
        kwargs: { m: 4, lamb: 0.5, rho: 0.5, target_reward: 0.5, tau: 0.05 },
        start,
        name: 't',
      });
    const a = make(0);
    a.feedback([0, 2], [0.25, 0.75]);
    const b = make(0);
    b.feedback([0, 2], [0.25, 0.75]);
    const picked = a.getIndices(3);
    assert.equal(new Set(picked).size, 3);
    assert.deepEqual(b.getIndices(3), picked);
    // Tasks 1 and 3 score ~0 and tasks 0, 2 score −1/6: at tau 0.05 each of the last two is e^(−10/3) ≈ 3.6% as likely.
    const firsts = new Map<number, number>();
    for (let start = 0; start < 400; start++) {
      const s = make(start);
      s.feedback([0, 2], [0.25, 0.75]);
      const first = s.getIndices(1)[0];
      firsts.set(first, (firsts.get(first) ?? 0) + 1);
    }
    assert.ok((firsts.get(1) ?? 0) + (firsts.get(3) ?? 0) > 360, JSON.stringify([...firsts]));
    assert.ok((firsts.get(1) ?? 0) > 150 && (firsts.get(3) ?? 0) > 150, JSON.stringify([...firsts]));
  });

  it('kwargs defaults and checks', () => {
    const s = difficultyBasedSelector(FEATURES, { seed: 42, kwargs: {}, start: 0, name: 't' });
    assert.equal(s.estimator.rho, 0.2);
    assert.throws(
      () => difficultyBasedSelector(FEATURES, { seed: 42, kwargs: { tau: 'hot' }, start: 0, name: 't' }),
      /kwargs\.tau must be a number/,
    );
    assert.throws(
      () => difficultyBasedSelector(FEATURES, { seed: 42, kwargs: { tau: 0 }, start: 0, name: 't' }).getIndices(5),
      /out of range/,
    );
  });
});

describe('difficulty_based through BatchReader', () => {
  const rows = FEATURES.map(([lo, hi], i) => ({ i, lo, hi }));
  const reader = (offset = 0) =>
    new BatchReader(rows, {
      batchSize: 2,
      totalSteps: 3,
      offset,
      selector: {
        selector_type: 'difficulty_based',
        seed: 42,
        feature_keys: ['lo', 'hi'],
        kwargs: { ...KW, target_reward: 0.5 },
      },
      column: (k) => rows.map((r) => r[k as 'lo' | 'hi']),
      name: 'tiny',
    });

  it('reads the two feature columns; feedback reaches the selector', () => {
    const r = reader();
    assert.deepEqual(r.next()!.indices, [0, 1]);
    r.feedback([0, 2], [0.25, 0.75]);
    assert.deepEqual(r.next()!.indices, [1, 3]);
    assert.deepEqual(r.state(), { current_index: 4 });
  });

  it('resumes from current_index (Trinity keeps only that; the estimator starts afresh)', () => {
    const r = reader();
    r.next();
    assert.deepEqual(reader(2).next()!.indices, r.next()!.indices);
  });

  it('needs exactly two numeric feature keys', () => {
    const bad = (feature_keys: string[], column: (k: string) => unknown[]) => () =>
      new BatchReader(rows, {
        batchSize: 1,
        selector: { selector_type: 'difficulty_based', feature_keys },
        column,
        name: 'tiny',
      });
    assert.throws(
      bad(['lo'], () => [0, 0, 0, 0]),
      /requires exactly 2 feature keys, but got 1/,
    );
    assert.throws(
      bad(['lo', 'hi'], () => [0, 'x', 0, 0]),
      /feature 'lo' of row 1 is "x", not a number/,
    );
  });
});

describe('pass_rate_calculator', () => {
  const exp = (index: number, reward: number, tasksetId: number | null = 0): Experience => ({
    eid: { batch: 1, task: index, run: 0, step: 0, suffix: 'x' },
    tokens: [1, 2],
    promptLength: 1,
    reward,
    info: { task_index: tasksetId === null ? { index } : { index, taskset_id: tasksetId } },
  });

  it("each task's mean reward per taskset for the selector, and the pass-rate shares as metrics", () => {
    const r = new ExperiencePipeline([{ name: 'pass_rate_calculator', args: {} }], undefined, 'main').process([
      exp(3, 1),
      exp(1, 0),
      exp(3, 0),
      exp(1, 0),
      exp(2, 1, 1),
    ]);
    assert.deepEqual(r.selectorFeedback, [
      { tasksetId: 0, indices: [3, 1], values: [0.5, 0] },
      { tasksetId: 1, indices: [2], values: [1] },
    ]);
    assert.equal(r.metrics['experience_pipeline/selection/valid_ratio'], 1 / 3);
    assert.equal(r.metrics['experience_pipeline/selection/<1_ratio'], 2 / 3);
    assert.equal(r.metrics['experience_pipeline/selection/>0_ratio'], 2 / 3);
    assert.equal(r.exps.length, 5);
  });

  it("fails as Trinity's assertion does when tasks carry no taskset (a sequential taskset)", () => {
    assert.throws(
      () =>
        new ExperiencePipeline([{ name: 'pass_rate_calculator', args: {} }], undefined, 'main').process([
          exp(0, 1, null),
        ]),
      /no taskset_id/,
    );
  });
});
