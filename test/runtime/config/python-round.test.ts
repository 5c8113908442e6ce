/**
 * Python's round() (runtime/config/python-round.ts) against CPython 3's answers, worked out by hand from the
 * stored binary values: ties go to even only where the double is exactly halfway (0.125 = 1/8), so 2.675
 * (stored as 2.67499999999999982236431605997495353221893310546875) rounds down.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PythonRoundError, pythonRound } from '../../../runtime/config/python-round';

describe('pythonRound', () => {
  test('round(x): half to even, an int (no negative zero)', () => {
    const cases: [number, number][] = [
      [0.5, 0],
      [1.5, 2],
      [2.5, 2],
      [3.5, 4],
      [-1.5, -2],
      [-2.5, -2],
      [2.4999999999999996, 2],
      [0.49999999999999994, 0], // the largest double below 0.5: no tie, and x + 0.5 would round up to 1
      [4503599627370497, 4503599627370497], // 2^52 + 1: already an integer
      [1e300, 1e300],
    ];
    for (const [x, want] of cases) assert.equal(pythonRound(x), want, `round(${x})`);
    assert.ok(Object.is(pythonRound(-0.5), 0), 'round(-0.5) is the int 0');
    assert.ok(Object.is(pythonRound(-0.0), 0));
  });

  test('round(x) raises for inf and NaN, as int() of them does', () => {
    assert.throws(() => pythonRound(Infinity), PythonRoundError);
    assert.throws(() => pythonRound(-Infinity), PythonRoundError);
    assert.throws(() => pythonRound(NaN), PythonRoundError);
  });

  test('round(x, n): on the exact binary value, ties (exact halves only) to even', () => {
    const cases: [number, number, number][] = [
      [2.675, 2, 2.67],
      [0.125, 2, 0.12],
      [0.375, 2, 0.38],
      [2.5, 0, 2],
      [3.5, 0, 4],
      [1.005, 2, 1.0], // 1.00499999999999989…
      [0.1 + 0.2, 16, 0.3],
      [1234.5, -1, 1230],
      [1250, -2, 1200],
      [1350, -2, 1400],
      [123.456, 1, 123.5],
    ];
    for (const [x, n, want] of cases) assert.equal(pythonRound(x, n), want, `round(${x}, ${n})`);
  });

  test('round(x, n) keeps the sign of zero, and passes inf/NaN through', () => {
    assert.ok(Object.is(pythonRound(-0.5, 0), -0), 'round(-0.5, 0) is -0.0');
    assert.ok(Object.is(pythonRound(-0.4, 0), -0));
    assert.ok(Object.is(pythonRound(-4, -1), -0));
    assert.equal(pythonRound(Infinity, 2), Infinity);
    assert.ok(Number.isNaN(pythonRound(NaN, 2)));
  });

  test("CPython's digit bounds: beyond 323 digits x is returned, below -308 zero", () => {
    assert.equal(pythonRound(5e-324, 323), 0);
    assert.equal(pythonRound(5e-324, 400), 5e-324);
    assert.equal(pythonRound(1e300, -308), 0);
    assert.ok(Object.is(pythonRound(-123.456, -400), -0));
    assert.throws(() => pythonRound(1.7976931348623157e308, -308), /rounded value too large to represent/);
  });
});
