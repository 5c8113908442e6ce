/**
 * The Trinity-exact pieces: the three \boxed extractors, strip_string (qwen25_eval) with word2number, and
 * naive_dapo's normalisations. Expected values were worked out by hand from Trinity's Python.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  lastBoxedContent,
  lastBoxedOnlyString,
  removeBoxed,
  strictLastBoxed,
} from '../../../../runtime/rft/rewards/boxed';
import {
  dapoMatchAnswer,
  dapoNormalize,
  gradeAnswer,
  mathdNormalize,
  naiveDapoScore,
} from '../../../../runtime/rft/rewards/dapo-grader';
import { pyFloat as pyFloatRepr } from '../../../../runtime/config/python-repr';
import { isEquivStrict, stripString, wordToNum } from '../../../../runtime/rft/rewards/qwen-strip';
import { createReward } from '../../../../runtime/rft/rewards';

describe('boxed extractors', () => {
  test('lastBoxedOnlyString (hendrycks): brace matching from the last \\boxed', () => {
    assert.equal(lastBoxedOnlyString('a \\boxed{1} b \\boxed{\\frac{1}{2}} c'), '\\boxed{\\frac{1}{2}}');
    assert.equal(lastBoxedOnlyString('\\fbox{7}'), '\\fbox{7}');
    assert.equal(lastBoxedOnlyString('no box'), null);
    assert.equal(lastBoxedOnlyString('\\boxed{unclosed'), null);
    // "\boxed " anywhere switches to the space form, even if a braced box comes later
    assert.equal(lastBoxedOnlyString('$\\boxed 5$ then \\boxed{6}'), '\\boxed 5');
  });

  test("removeBoxed: \\fbox fails Trinity's assertion", () => {
    assert.equal(removeBoxed('\\boxed{\\frac{1}{2}}'), '\\frac{1}{2}');
    assert.equal(removeBoxed('\\boxed 5'), '5');
    assert.equal(removeBoxed('\\fbox{7}'), null);
  });

  test('strictLastBoxed (naive_dapo): stripped content, empty box counts as content ""', () => {
    assert.equal(strictLastBoxed('x \\boxed{ 42 } y'), '42');
    assert.equal(strictLastBoxed('\\boxed{\\frac{a}{b}}'), '\\frac{a}{b}');
    assert.equal(strictLastBoxed('\\boxed{}'), '');
    assert.equal(strictLastBoxed('\\boxed'), null);
    assert.equal(dapoMatchAnswer('<think>\\boxed{1}</think>\\boxed{}  tail').answer, '\\boxed{}  tail');
  });

  test('lastBoxedContent (ours): escaped braces and the space form', () => {
    assert.equal(lastBoxedContent('\\boxed{\\{1,2\\}}'), '\\{1,2\\}');
    assert.equal(lastBoxedContent('\\boxed 12 apples'), '12');
    assert.equal(lastBoxedContent('\\boxed{1} and \\boxed{2}'), '2');
    assert.equal(lastBoxedContent('nothing'), null);
  });
});

describe('strip_string (math_boxed_reward)', () => {
  const cases: Array<[string, string | null]> = [
    ['\\frac{1}{2}', '\\frac{1}{2}'],
    ['\\dfrac12', '\\frac{1}{2}'],
    ['1/2', '\\frac{1}{2}'],
    ['01/2', '01/2'],
    ['0.5', '0.5'],
    ['.5', '0.5'],
    ['3.0', '3'],
    ['3.', '3'],
    ['50\\%', '50\\'],
    ['50%', '50'],
    ['\\$18', '18'],
    ['5 cm', '5'],
    ['x = 5', '5'],
    ['five', '5'],
    ['two hundred', '200'],
    ['007', '7'],
    ['three point five', '3.5'],
    ['point', '0'],
    ['\\infty', '\\\\inftyty'],
    ['infinity', '\\\\inftyty'],
    ['\\frac{a}{b}', '\\frac{}{b}'],
    ['(1,2)', '1,2'],
    ['\\left( 3 \\right)', '3'],
    ['\\sqrt2', '\\sqrt{2}'],
    ['90^\\circ', '90'],
    ['\\text{ cm}', null],
    ['', null],
    ['.', null],
  ];
  for (const [input, out] of cases) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(out)}`, () => {
      assert.deepEqual(stripString(input), { kind: 'ok', value: out });
    });
  }

  test('word2number failures other than ValueError make is_equiv compare the raw strings', () => {
    assert.deepEqual(wordToNum('billion thousand'), { kind: 'other-error' });
    assert.deepEqual(stripString('billion thousand'), { kind: 'error' });
    assert.equal(isEquivStrict('billion thousand', 'billion thousand'), true);
    assert.equal(isEquivStrict('billion thousand', 'billion  thousand'), false);
  });

  test('word2number values and errors', () => {
    assert.deepEqual(wordToNum('one million two hundred thousand five'), { kind: 'value', text: '1200005' });
    assert.deepEqual(wordToNum('twenty-one'), { kind: 'value', text: '21' });
    assert.deepEqual(wordToNum('no numbers here'), { kind: 'value-error' });
    assert.deepEqual(wordToNum('thousand thousand'), { kind: 'value-error' });
    assert.deepEqual(wordToNum('٣٤'), { kind: 'value', text: '34' });
    assert.equal(pyFloatRepr(1e-5), '1e-05');
    assert.equal(pyFloatRepr(3), '3.0');
    assert.equal(pyFloatRepr(0.25), '0.25');
  });

  test('None == None: an empty box matches a truth that normalises to nothing', () => {
    assert.equal(isEquivStrict('', '.'), true);
    const fn = createReward('math_boxed_reward');
    assert.equal(fn({ response: '\\boxed{}', truth: '$' }).accuracy, 1);
  });

  test('never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const r = stripString(s);
        assert.ok(r.kind === 'ok' || r.kind === 'error');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('naive_dapo (math_dapo_reward from v0.4.0)', () => {
  test('mathd (prm800k) normalisation', () => {
    assert.equal(mathdNormalize('\\text{ 0.5 }'), '\\frac{1}{2}');
    assert.equal(mathdNormalize('k = 3'), '3');
    assert.equal(mathdNormalize('10\\%'), '10');
    assert.equal(mathdNormalize('10%'), '10%', 'a bare % stays');
    assert.equal(mathdNormalize('\\sqrt3'), '\\sqrt{3}');
    assert.equal(mathdNormalize('5\\text{ cm}'), '5');
    assert.equal(
      mathdNormalize('5\\text{ cm} and 6\\text{ cm}'),
      '5\\text{ cm} and 6\\text{ cm}',
      'assertion failure returns the input',
    );
  });

  test('_normalize', () => {
    assert.equal(dapoNormalize('\\frac{1}{2}'), '1/2');
    assert.equal(dapoNormalize('5 hours'), '5');
    assert.equal(dapoNormalize('3.0'), '3');
    assert.equal(dapoNormalize('1,000'), '1000');
    assert.equal(dapoNormalize('2 million'), '2 *10^6', 'spaces are not removed');
    assert.equal(dapoNormalize('7 3/4'), '7+3/4');
    assert.equal(dapoNormalize('\\sqrt{2}'), 'sqrt(2)');
    assert.equal(dapoNormalize('\\text{Yes}'), 'yes');
  });

  test('grade_answer rules', () => {
    assert.equal(gradeAnswer('2/4', '1/2'), false, 'unreduced fractions are not accepted here');
    assert.equal(gradeAnswer('0.5', '1/2'), true);
    assert.equal(gradeAnswer('4.0', '4'), true);
    assert.equal(gradeAnswer('4.5', '4'), false);
    assert.equal(gradeAnswer('(1,2)', '[1,2]'), false, 'brackets must agree');
    assert.equal(gradeAnswer('xyz+1', 'zyx+1'), false, 'more than two letters: sympy is not tried');
    assert.equal(gradeAnswer('2x+y', 'y+2x'), true);
  });

  test('…but prime_math math_equal accepts 2/4 for 1/2 afterwards', () => {
    assert.equal(naiveDapoScore('\\boxed{2/4}', '1/2'), 1);
  });

  test('never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.string({ maxLength: 20 }), (r, t) => {
        const s = naiveDapoScore(r, t);
        assert.ok(s === 0 || s === 1);
      }),
      { numRuns: 800 },
    );
  });
});
