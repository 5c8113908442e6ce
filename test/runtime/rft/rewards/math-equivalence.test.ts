/**
 * The math-answer equivalence checker on the answer forms GSM8K and MATH use, both ways (equal and not equal).
 * Numbers compare with relative tolerance 1e-6 (absolute 1e-9).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ABSOLUTE_TOLERANCE,
  RELATIVE_TOLERANCE,
  mathEquivalent,
  normalizeAnswerLatex,
  numbersClose,
  parseMathAnswer,
} from '../../../../runtime/rft/rewards/math-equivalence';

const EQUAL: Array<[string, string]> = [
  // integers, signs, decimals
  ['18', '18'],
  ['18', '18.0'],
  ['-3', '-3.00'],
  ['0.5', '.5'],
  ['+7', '7'],
  ['3.', '3'],
  // thousands separators
  ['1,000', '1000'],
  ['1,234,567', '1234567'],
  ['1{,}000', '1000'],
  ['1\\,000', '1000'],
  ['$80,000', '80000'],
  // fractions
  ['\\frac{1}{2}', '0.5'],
  ['\\dfrac{3}{4}', '3/4'],
  ['\\tfrac{3}{4}', '0.75'],
  ['\\frac12', '\\frac{1}{2}'],
  ['\\frac{2}{4}', '\\frac{1}{2}'],
  ['-\\frac{1}{3}', '\\frac{-1}{3}'],
  ['\\frac{\\sqrt{3}}{2}', '\\frac{1}{2}\\sqrt{3}'],
  // mixed numbers
  ['2\\frac{1}{2}', '2.5'],
  ['2 1/2', '5/2'],
  ['-1\\frac{1}{4}', '-1.25'],
  // scientific notation
  ['1.5e3', '1500'],
  ['1.5\\times10^{3}', '1500'],
  ['3 \\cdot 10^{-2}', '0.03'],
  // roots, pi
  ['\\sqrt{2}', '1.41421356237'],
  ['2\\sqrt{2}', '\\sqrt{8}'],
  ['\\sqrt[3]{8}', '2'],
  ['2\\pi', '6.283185307179586'],
  ['\\pi r^2', 'r^2\\pi'],
  ['\\frac{\\pi}{2}', '1.5707963267948966'],
  // wrappers, delimiters, spacing, trailing dot
  ['\\boxed{\\frac{1}{2}}', '\\frac{1}{2}'],
  ['\\boxed{5}', '5'],
  ['$5$', '5'],
  ['\\(5\\)', '5'],
  ['\\left( 1, 2 \\right)', '(1,2)'],
  ['5.', '5'],
  ['\\! 5 \\;', '5'],
  // degrees, percent, dollars, units
  ['90^\\circ', '90'],
  ['90^{\\circ}', '90'],
  ['50\\%', '50'],
  ['50%', '50'],
  ['\\$18', '18'],
  ['5\\text{ cm}', '5'],
  ['5 \\mbox{ inches}', '5'],
  ['18 dollars', '18'],
  ['3 square feet', '3'],
  ['\\text{(A)}', 'A'],
  ['\\text{Monday}', 'monday'],
  // equations, expressions with variables
  ['x = 5', '5'],
  ['x=5', 'x = 5'],
  ['y = 2x + 1', '2x+1'],
  ['2x+1', '1+2x'],
  ['x^2 - 1', '(x-1)(x+1)'],
  ['\\frac{x}{2}', '0.5x'],
  ['a+b', 'b+a'],
  // tuples, intervals, sets, lists
  ['(1,2)', '(1, 2)'],
  ['(\\frac{1}{2}, 3)', '(0.5, 3)'],
  ['[0, 1)', '[0,1)'],
  ['(-\\infty, 2)', '(-\\infty,2)'],
  ['\\{1, 2, 3\\}', '\\{3, 1, 2\\}'],
  ['1, 2, 3', '3, 2, 1'],
  ['(-\\infty, 2) \\cup (3, \\infty)', '(3,\\infty)\\cup(-\\infty,2)'],
  // functions, binomials, factorials
  ['\\binom{5}{2}', '10'],
  ['5!', '120'],
  ['\\ln e^2', '2\\ln e'],
  ['\\sin^2 x + \\cos^2 x', '1'],
  // within tolerance
  ['0.3333333', '\\frac{1}{3}'],
  ['1000000', '1000000.0001'],
];

const NOT_EQUAL: Array<[string, string]> = [
  ['18', '17'],
  ['18', '-18'],
  ['0.5', '0.05'],
  ['\\frac{12}{3}', '\\frac{1}{23}'],
  ['\\frac{1}{2}', '\\frac{2}{1}'],
  ['0.3333', '\\frac{1}{3}'],
  ['1,000', '1'],
  ['1.5e3', '150'],
  ['\\sqrt{2}', '1.414'],
  ['2\\pi', '6.28'],
  ['x^2', 'x^3'],
  ['2x+1', '2x-1'],
  ['x', 'y'],
  ['A', 'B'],
  ['(1,2)', '(2,1)'],
  ['[0,1)', '[0,1]'],
  ['(0,1)', '[0,1]'],
  ['(1,2)', '(1,2,3)'],
  ['\\{1,2\\}', '\\{1,2,3\\}'],
  ['1, 2', '1, 3'],
  ['x = 5', 'x = 6'],
  ['x = 5', 'y = 5'],
  ['\\text{Monday}', '\\text{Tuesday}'],
  ['\\infty', '-\\infty'],
  ['5', ''],
  ['', ''],
  ['5!', '24'],
  ['\\binom{5}{2}', '20'],
  ['2\\frac{1}{2}', '1'],
  ['yes', 'no'],
];

describe('mathEquivalent: equal pairs', () => {
  for (const [a, b] of EQUAL) {
    test(`${a}  ≡  ${b}`, () => {
      assert.equal(mathEquivalent(a, b), true);
      assert.equal(mathEquivalent(b, a), true, 'symmetric');
    });
  }
});

describe('mathEquivalent: not-equal pairs', () => {
  for (const [a, b] of NOT_EQUAL) {
    test(`${a}  ≢  ${b}`, () => {
      assert.equal(mathEquivalent(a, b), false);
      assert.equal(mathEquivalent(b, a), false, 'symmetric');
    });
  }
});

describe('equivalence details', () => {
  test('the table has at least 60 pairs', () => {
    assert.ok(EQUAL.length + NOT_EQUAL.length >= 60, `${EQUAL.length + NOT_EQUAL.length}`);
  });

  test('stated tolerances', () => {
    assert.equal(RELATIVE_TOLERANCE, 1e-6);
    assert.equal(ABSOLUTE_TOLERANCE, 1e-9);
    assert.ok(numbersClose(1e6, 1e6 + 0.5));
    assert.ok(!numbersClose(1e6, 1e6 + 2));
    assert.ok(numbersClose(0, 1e-10));
    assert.ok(!numbersClose(0, 1e-8));
    assert.ok(numbersClose(Infinity, Infinity));
    assert.ok(!numbersClose(Infinity, -Infinity));
    assert.ok(!numbersClose(NaN, NaN));
    assert.ok(mathEquivalent('3.14', '\\pi', { relTol: 1e-3 }));
  });

  test('normalisation', () => {
    assert.equal(normalizeAnswerLatex('The answer is \\boxed{\\dfrac{1}{2}}.'), '\\frac{1}{2}');
    assert.equal(normalizeAnswerLatex('$\\left(1,2\\right)$'), '(1,2)');
    assert.equal(normalizeAnswerLatex('12\\text{ cm}'), '12');
    assert.equal(normalizeAnswerLatex('90^\\circ'), '90');
    assert.equal(normalizeAnswerLatex('25\\%'), '25');
    assert.equal(normalizeAnswerLatex('\\$5.50'), '5.50');
    assert.equal(normalizeAnswerLatex('5 cm'), '5');
    assert.equal(normalizeAnswerLatex('2 pi'), '2 pi', 'pi is not a unit');
  });

  test('parsed kinds', () => {
    assert.deepEqual(parseMathAnswer('1,000'), { kind: 'number', value: 1000 });
    assert.equal(parseMathAnswer('(1, 2]').kind, 'tuple');
    assert.equal(parseMathAnswer('\\{1, 2\\}').kind, 'list');
    assert.equal(parseMathAnswer('x = 3').kind, 'equation');
    assert.equal(parseMathAnswer('2x').kind, 'expr');
    assert.equal(parseMathAnswer('\\text{blue}').kind, 'text');
    assert.equal(parseMathAnswer('\\unknownmacro{3}').kind, 'text');
  });

  test('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 80 }), (a, b) => {
        assert.equal(typeof mathEquivalent(a, b), 'boolean');
      }),
      { numRuns: 1500 },
    );
    const latexish = fc.string({
      unit: fc.constantFrom(...'\\{}()[]^_$,.=+-*/0123456789xπ%', '\\frac', '\\sqrt', '\\boxed', '\\left', '\\text'),
      maxLength: 40,
    });
    fc.assert(
      fc.property(latexish, latexish, (a, b) => {
        assert.equal(typeof mathEquivalent(a, b), 'boolean');
      }),
      { numRuns: 1500 },
    );
    assert.equal(mathEquivalent(`${'('.repeat(5000)}1${')'.repeat(5000)}`, '1'), false);
  });
});
