/**
 * The Countdown equation parser/evaluator: Python `eval` semantics on the characters TinyZero's whitelist allows,
 * without evaluating code; never throws (fuzzed with fast-check).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  MAX_PAREN_DEPTH,
  digitRuns,
  evaluateCountdownExpression,
  passesCountdownWhitelist,
  rationalToNumber,
} from '../../../../runtime/rft/rewards/countdown-expression';

function value(expr: string): number {
  const r = evaluateCountdownExpression(expr);
  assert.ok(r.ok, `${expr}: ${r.ok ? '' : r.reason}`);
  return r.value;
}

function invalid(expr: string): string {
  const r = evaluateCountdownExpression(expr);
  assert.equal(r.ok, false, `${expr} should be invalid`);
  return r.ok ? '' : r.reason;
}

describe('countdown expression: values', () => {
  test('precedence and associativity as in Python', () => {
    assert.equal(value('2 + 3 * 4'), 14);
    assert.equal(value('(2 + 3) * 4'), 20);
    assert.equal(value('10 - 4 - 3'), 3);
    assert.equal(value('100 / 10 / 5'), 2);
    assert.equal(value('2 * 3 + 4 * 5'), 26);
    assert.equal(value('((((7))))'), 7);
    assert.equal(value('2 ** 3 ** 2'), 512); // right-associative
    assert.equal(value('-2 ** 2'), -4); // unary minus binds looser than **
    assert.equal(value('2 ** -1'), 0.5);
    assert.equal(value('(-2) ** 2'), 4);
  });

  test('unary minus and plus, chains', () => {
    assert.equal(value('-3 + 5'), 2);
    assert.equal(value('--3'), 3);
    assert.equal(value('1 - -1'), 2);
    assert.equal(value('+-+-1'), 1);
    assert.equal(value('-(4 - 9)'), 5);
  });

  test('division is exact (rational) and floor division floors', () => {
    const r = evaluateCountdownExpression('1 / 3 * 3');
    assert.ok(r.ok);
    assert.deepEqual(r.exact, { num: 1n, den: 1n });
    assert.equal(r.value, 1);
    const s = evaluateCountdownExpression('(83 + 1) - (78 / 39)');
    assert.ok(s.ok);
    assert.deepEqual(s.exact, { num: 82n, den: 1n });
    assert.equal(value('7 // 2'), 3);
    assert.equal(value('-7 // 2'), -4);
    assert.equal(value('7.5 // 2'), 3);
  });

  test('decimals and Python literal forms', () => {
    assert.equal(value('2.5 * 4'), 10);
    assert.equal(value('1. + .5'), 1.5);
    assert.equal(value('0 + 00'), 0);
    const r = evaluateCountdownExpression('0.1 + 0.2');
    assert.ok(r.ok);
    assert.deepEqual(r.exact, { num: 3n, den: 10n });
  });

  test('fractional powers fall back to floating point', () => {
    const r = evaluateCountdownExpression('4 ** 0.5');
    assert.ok(r.ok);
    assert.equal(r.exact, null);
    assert.equal(r.value, 2);
  });

  test('numbers used are reported in order', () => {
    const r = evaluateCountdownExpression('(44 + 19) + 35');
    assert.ok(r.ok);
    assert.deepEqual(r.numbers, [44, 19, 35]);
  });

  test('huge exact values convert to doubles without overflow to NaN', () => {
    assert.equal(rationalToNumber({ num: 10n ** 400n, den: 10n ** 399n }), 10);
    assert.equal(value('(10 ** 400) / (10 ** 399)'), 10);
  });
});

describe('countdown expression: invalid input gives a reason, never a throw', () => {
  const cases: Array<[string, RegExp]> = [
    ['1 / 0', /division by zero/],
    ['(1 + 2) / (3 - 3)', /division by zero/],
    ['5 // 0', /division by zero/],
    ['0 ** -1', /zero to a negative power/],
    ['(-8) ** 0.5', /complex/],
    ['', /end of expression/],
    ['   ', /end of expression/],
    ['1 +', /end of expression/],
    ['(1 + 2', /missing \)/],
    ['1 + 2)', /unbalanced/],
    ['()', /empty tuple/],
    ['2(3)', /not callable/],
    ['(2)(3)', /not callable/],
    ['1 2', /missing operator/],
    ['1.2.3', /missing operator/],
    ['07 + 1', /leading zeros/],
    ['2 * * 3', /unexpected/],
    ['x + 1', /unexpected character/],
    ['1 % 2', /unexpected character/],
    ['1 + 2 = 3', /unexpected character/],
    ['1\u00a0+ 2', /unexpected character/],
    ['9 ** 9 ** 9', /too large/],
    ['.', /unexpected character/],
  ];
  for (const [expr, reason] of cases) {
    test(JSON.stringify(expr), () => {
      assert.match(invalid(expr), reason);
    });
  }

  test(`more than ${MAX_PAREN_DEPTH} nested parentheses (Python's parser limit)`, () => {
    assert.equal(value(`${'('.repeat(MAX_PAREN_DEPTH)}1${')'.repeat(MAX_PAREN_DEPTH)}`), 1);
    assert.match(invalid(`${'('.repeat(MAX_PAREN_DEPTH + 1)}1${')'.repeat(MAX_PAREN_DEPTH + 1)}`), /nested/);
  });

  test('very long unary chains are refused, not a stack overflow', () => {
    assert.match(invalid(`${'-'.repeat(100_000)}1`), /nested too deeply/);
  });

  test('invalid results report the position', () => {
    const r = evaluateCountdownExpression('12 + 3 / 0');
    assert.equal(r.ok, false);
    assert.equal(r.ok ? -1 : r.position, 7);
  });
});

describe('Trinity helpers', () => {
  test('digitRuns reads numbers like validate_equation (decimals split, signs ignored)', () => {
    assert.deepEqual(digitRuns('(44 + 19) - 35'), [44, 19, 35]);
    assert.deepEqual(digitRuns('2.5 * -4'), [2, 5, 4]);
    assert.deepEqual(digitRuns('no numbers'), []);
  });

  test('whitelist', () => {
    assert.ok(passesCountdownWhitelist('(1 + 2) * 3 / 4 - 5'));
    assert.ok(!passesCountdownWhitelist('1 + x'));
    assert.ok(!passesCountdownWhitelist(''));
  });
});

describe('countdown expression: fuzz', () => {
  const ALPHABET = [...'0123456789+-*/(). \t', '**', '//', 'x', '\u00a0', '\n'];

  test('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const r = evaluateCountdownExpression(s);
        assert.equal(typeof r.ok, 'boolean');
      }),
      { numRuns: 2000 },
    );
  });

  test('never throws on strings made of expression characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 120 }), (s) => {
        const r = evaluateCountdownExpression(s);
        if (r.ok) assert.equal(typeof r.value, 'number');
        else assert.equal(typeof r.reason, 'string');
      }),
      { numRuns: 3000 },
    );
  });

  test('never throws on non-strings', () => {
    for (const v of [undefined, null, 42, {}, []]) {
      assert.equal(evaluateCountdownExpression(v as unknown as string).ok, false);
    }
  });

  // Random expression trees, printed fully parenthesised, evaluate to the tree's value (computed independently).
  type Tree = { n: number } | { op: '+' | '-' | '*' | '/'; a: Tree; b: Tree };
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
    t: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({ n: fc.integer({ min: 0, max: 100 }) }),
      fc.record({ op: fc.constantFrom('+', '-', '*', '/'), a: tie('t'), b: tie('t') }) as fc.Arbitrary<Tree>,
    ),
  })).t;
  const show = (t: Tree): string => ('n' in t ? String(t.n) : `(${show(t.a)} ${t.op} ${show(t.b)})`);
  const evalTree = (t: Tree): number => {
    if ('n' in t) return t.n;
    const a = evalTree(t.a);
    const b = evalTree(t.b);
    if (t.op === '+') return a + b;
    if (t.op === '-') return a - b;
    if (t.op === '*') return a * b;
    return b === 0 ? NaN : a / b;
  };

  test('agrees with a direct evaluation of random expression trees', () => {
    fc.assert(
      fc.property(tree, (t) => {
        const expected = evalTree(t);
        const r = evaluateCountdownExpression(show(t));
        if (Number.isNaN(expected)) {
          assert.equal(r.ok, false);
          return;
        }
        assert.ok(r.ok, show(t));
        assert.ok(
          Math.abs(r.value - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
          `${show(t)}: ${r.value} vs ${expected}`,
        );
      }),
      { numRuns: 1000 },
    );
  });
});
