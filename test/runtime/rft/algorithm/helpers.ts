/**
 * Shared pieces of the algorithm tests: tolerances, closeness assertions, and the small batch most cases use.
 *
 * Where the expected numbers come from: each was computed once by running Trinity-RFT's own Python functions
 * (trinity/algorithm at 10796ed) under PyTorch in float64 on exactly these inputs (random draws replaced by fixed
 * choices), and is written out literally in the *-expected.ts modules or the test files; a few simple ones are also
 * derived by hand in comments. reference/ regenerates them from Trinity's formulas in plain float64: the advantage
 * and KL-penalty numbers in full, the policy-loss and KL-loss numbers (rounded to 10 significant digits) with their
 * gradients through forward-mode dual numbers (reference-numbers.test.ts holds them equal). Nothing here calls our
 * implementation to produce an expected value.
 */
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';

/** float32 tensor code vs float64 expectations: relative 1e-5, plus 1e-6 absolute for values at or near zero */
export const F32 = { rtol: 1e-5, atol: 1e-6 };
/** float64 host code */
export const F64 = { rtol: 1e-12, atol: 1e-14 };

export async function useCpu(): Promise<void> {
  await tf.setBackend('cpu');
}

export function assertClose(actual: number, expected: number, tol: { rtol: number; atol: number }, what = ''): void {
  const ok = Math.abs(actual - expected) <= tol.atol + tol.rtol * Math.abs(expected);
  assert.ok(ok, `${what}: got ${actual}, expected ${expected} (rtol ${tol.rtol}, atol ${tol.atol})`);
}

export function assertAllClose(
  actual: ArrayLike<unknown>,
  expected: ArrayLike<unknown>,
  tol: { rtol: number; atol: number },
  what = '',
): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (Array.isArray(e) || ArrayBuffer.isView(e))
      assertAllClose(a as ArrayLike<unknown>, e as ArrayLike<unknown>, tol, `${what}[${i}]`);
    else assertClose(a as number, e as number, tol, `${what}[${i}]`);
  }
}

/** A metric as a number: host metrics are numbers, the losses' metrics are device scalars (read here on cpu). */
export function num(x: number | tf.Tensor): number {
  return typeof x === 'number' ? x : x.dataSync()[0];
}

/** Same keys, values close. */
export function assertMetrics(
  actual: Record<string, number | tf.Tensor>,
  expected: Record<string, number>,
  tol: { rtol: number; atol: number },
  what = '',
): void {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${what}: metric names`);
  for (const [k, v] of Object.entries(expected)) assertClose(num(actual[k]), v, tol, `${what} ${k}`);
}

// The batch of most tensor tests: 3 sequences x 4 tokens; row 0 ends after 3 tokens, row 2 after 2.
export const LP = [
  [-1.0, -0.5, -2.0, -0.3],
  [-0.7, -1.2, -0.3, -3.0],
  [-0.2, -0.9, -1.4, -0.6],
];
export const OLD = [
  [-1.1, -0.4, -1.5, -0.3],
  [-0.7, -1.0, -1.6, -2.0],
  [-0.5, -0.9, -1.0, -0.8],
];
export const REF = [
  [-0.9, -0.6, -1.8, -0.2],
  [-0.8, -1.1, -0.2, -2.5],
  [-0.3, -1.0, -1.3, -0.7],
];
export const ADV = [
  [1.5, 1.5, 1.5, 0.0],
  [-0.8, -0.8, -0.8, -0.8],
  [0.4, 0.4, 0.0, 0.0],
];
export const MASK = [
  [1, 1, 1, 0],
  [1, 1, 1, 1],
  [1, 1, 0, 0],
];
export const ENT = [
  [0.9, 1.3, 0.4, 2.0],
  [0.2, 0.5, 1.1, 0.7],
  [1.6, 0.3, 0.8, 0.1],
];

export const t2 = (x: number[][]): tf.Tensor2D => tf.tensor2d(x);

export function scalarOf(x: tf.Tensor): number {
  return x.dataSync()[0];
}
