/**
 * A small arithmetic parser/evaluator for Countdown equations, written for `countdown_reward`.
 *
 * Trinity (TinyZero's countdown scorer) checks the equation against `^[\d+\-*\/().\s]+$` and then runs Python's
 * `eval` on it. This module accepts exactly the Python expressions those characters can form and gives them
 * Python's meaning, without evaluating any code:
 *
 *   expr   := term   (('+' | '-') term)*
 *   term   := factor (('*' | '/' | '//') factor)*
 *   factor := ('+' | '-') factor | power
 *   power  := atom ('**' factor)?            (so -2**2 = -4 and 2**-1 = 0.5, as in Python)
 *   atom   := NUMBER | '(' expr ')'
 *
 * Numbers are Python literals: `12`, `0`, `007` is rejected (Python: leading zeros), `1.5`, `1.`, `.5`.
 * Values are exact rationals while every step allows it (integers, `/`, `//`, integer powers) and plain numbers
 * otherwise (fractional powers). Anything Python's `eval` would reject or fail on gives `{ ok: false }` with a
 * reason instead of a throw: garbage, `()` (an empty tuple), `2(3)` (calling a number), division by zero, zero
 * to a negative power, a complex result (negative base to a fractional power), a result too large to compute,
 * more than 200 nested parentheses (Python's parser limit).
 */

/** An exact rational: `den > 0`, reduced. */
export interface Rational {
  num: bigint;
  den: bigint;
}

export type CountdownEvaluation =
  | {
      ok: true;
      /** The value as a JS number (what the reward compares with the target). */
      value: number;
      /** The exact value when every step was exact, else null. */
      exact: Rational | null;
      /** The numeric literals in the order written. */
      numbers: number[];
    }
  | {
      ok: false;
      reason: string;
      /** Character offset the problem was found at, when there is one. */
      position?: number;
      /** The numeric literals read before the problem. */
      numbers: number[];
    };

/** Python's parser gives up beyond 200 nested parentheses ("too many nested parentheses"). */
export const MAX_PAREN_DEPTH = 200;
/** Our own cap on the bits of an exact power's result (Python would grind on; the score is the same). */
const MAX_POWER_BITS = 100_000;
/** Guard on unary-operator chains and other recursion (Python fails on absurdly deep expressions too). */
const MAX_RECURSION = 1_000;

type Tok =
  | { kind: 'num'; text: string; pos: number }
  | { kind: 'op'; op: '+' | '-' | '*' | '/' | '**' | '//' | '(' | ')'; pos: number }
  | { kind: 'end'; pos: number };

interface Val {
  exact: Rational | null;
  value: number;
}

class Invalid {
  constructor(
    readonly reason: string,
    readonly position?: number,
  ) {}
}

// ---------------------------------------------------------------------------------------------------------------
// rationals

function bigAbs(a: bigint): bigint {
  return a < 0n ? -a : a;
}

function gcd(a: bigint, b: bigint): bigint {
  a = bigAbs(a);
  b = bigAbs(b);
  while (b !== 0n) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

function rat(num: bigint, den: bigint = 1n): Rational {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

function bitLength(a: bigint): number {
  return bigAbs(a).toString(2).length;
}

/** A rational as the nearest double, also when numerator or denominator are beyond 2^1024. */
export function rationalToNumber(r: Rational): number {
  const nb = bitLength(r.num);
  const db = bitLength(r.den);
  if (nb <= 53 && db <= 53) return Number(r.num) / Number(r.den);
  if (r.num === 0n) return 0;
  // q = |num| · 2^shift / den carries ~66 significant bits; scale back by 2^-shift in two exact steps.
  const a = bigAbs(r.num);
  const shift = db - nb + 66;
  const q = shift >= 0 ? (a << BigInt(shift)) / r.den : a / (r.den << BigInt(-shift));
  const half = Math.trunc(shift / 2);
  const v = Number(q) * Math.pow(2, -half) * Math.pow(2, -(shift - half));
  return r.num < 0n ? -v : v;
}

function val(exact: Rational): Val {
  return { exact, value: rationalToNumber(exact) };
}

function floatVal(value: number): Val {
  return { exact: null, value };
}

function isZero(v: Val): boolean {
  return v.exact ? v.exact.num === 0n : v.value === 0;
}

/** Parses a Python float/int literal into an exact rational. */
function literalToRational(text: string): Rational {
  const dot = text.indexOf('.');
  if (dot < 0) return rat(BigInt(text));
  const intPart = text.slice(0, dot) || '0';
  const frac = text.slice(dot + 1);
  const den = 10n ** BigInt(frac.length);
  return rat(BigInt(intPart) * den + BigInt(frac || '0'), den);
}

// ---------------------------------------------------------------------------------------------------------------
// tokens

function tokenize(text: string, numbers: number[]): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const n = text.length;
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\f') {
      i++;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(text[i + 1]))) {
      const start = i;
      while (isDigit(text[i])) i++;
      let isFloat = false;
      if (text[i] === '.') {
        isFloat = true;
        i++;
        while (isDigit(text[i])) i++;
      }
      const lit = text.slice(start, i);
      if (!isFloat && lit.length > 1 && lit[0] === '0' && /[1-9]/.test(lit)) {
        throw new Invalid(`leading zeros are not allowed in the integer ${lit}`, start);
      }
      toks.push({ kind: 'num', text: lit, pos: start });
      numbers.push(Number(lit));
      continue;
    }
    if (c === '*' || c === '/') {
      if (text[i + 1] === c) {
        toks.push({ kind: 'op', op: c === '*' ? '**' : '//', pos: i });
        i += 2;
      } else {
        toks.push({ kind: 'op', op: c, pos: i });
        i++;
      }
      continue;
    }
    if (c === '+' || c === '-' || c === '(' || c === ')') {
      toks.push({ kind: 'op', op: c, pos: i });
      i++;
      continue;
    }
    throw new Invalid(`unexpected character ${JSON.stringify(c)}`, i);
  }
  toks.push({ kind: 'end', pos: n });
  return toks;
}

// ---------------------------------------------------------------------------------------------------------------
// parser

class Parser {
  private i = 0;
  private parens = 0;
  private depth = 0;

  constructor(private readonly toks: Tok[]) {}

  parse(): Val {
    const v = this.expr();
    const t = this.peek();
    if (t.kind !== 'end') {
      throw new Invalid(t.kind === 'op' && t.op === ')' ? 'unbalanced )' : 'unexpected token', t.pos);
    }
    return v;
  }

  private peek(): Tok {
    return this.toks[this.i];
  }

  private isOp(op: string): boolean {
    const t = this.toks[this.i];
    return t.kind === 'op' && t.op === op;
  }

  private enter(pos: number): void {
    if (++this.depth > MAX_RECURSION) throw new Invalid('expression nested too deeply', pos);
  }

  private expr(): Val {
    this.enter(this.peek().pos);
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.toks[this.i++] as { op: string }).op;
      const right = this.term();
      left = op === '+' ? add(left, right) : add(left, neg(right));
    }
    this.depth--;
    return left;
  }

  private term(): Val {
    let left = this.factor();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//')) {
      const t = this.toks[this.i++] as { op: string; pos: number };
      const right = this.factor();
      if (t.op === '*') left = mul(left, right);
      else if (t.op === '/') left = div(left, right, t.pos);
      else left = floorDiv(left, right, t.pos);
    }
    return left;
  }

  private factor(): Val {
    if (this.isOp('+') || this.isOp('-')) {
      const t = this.toks[this.i++] as { op: string; pos: number };
      this.enter(t.pos);
      const v = this.factor();
      this.depth--;
      return t.op === '-' ? neg(v) : v;
    }
    return this.power();
  }

  private power(): Val {
    const base = this.atom();
    if (this.isOp('**')) {
      const t = this.toks[this.i++];
      this.enter(t.pos);
      const exp = this.factor();
      this.depth--;
      return pow(base, exp, t.pos);
    }
    return base;
  }

  private atom(): Val {
    const t = this.peek();
    let v: Val;
    if (t.kind === 'num') {
      this.i++;
      v = val(literalToRational(t.text));
    } else if (t.kind === 'op' && t.op === '(') {
      this.i++;
      if (++this.parens > MAX_PAREN_DEPTH) throw new Invalid('too many nested parentheses', t.pos);
      if (this.isOp(')')) throw new Invalid('() is an empty tuple, not a number', t.pos);
      v = this.expr();
      if (!this.isOp(')')) throw new Invalid('missing )', this.peek().pos);
      this.i++;
      this.parens--;
    } else if (t.kind === 'end') {
      throw new Invalid('unexpected end of expression', t.pos);
    } else {
      throw new Invalid(`unexpected ${(t as { op: string }).op}`, t.pos);
    }
    const next = this.peek();
    if (next.kind === 'op' && next.op === '(') throw new Invalid('a number is not callable', next.pos);
    if (next.kind === 'num') throw new Invalid('missing operator between numbers', next.pos);
    return v;
  }
}

function neg(a: Val): Val {
  return a.exact ? val({ num: -a.exact.num, den: a.exact.den }) : floatVal(-a.value);
}

function add(a: Val, b: Val): Val {
  if (a.exact && b.exact)
    return val(rat(a.exact.num * b.exact.den + b.exact.num * a.exact.den, a.exact.den * b.exact.den));
  return floatVal(a.value + b.value);
}

function mul(a: Val, b: Val): Val {
  if (a.exact && b.exact) return val(rat(a.exact.num * b.exact.num, a.exact.den * b.exact.den));
  return floatVal(a.value * b.value);
}

function div(a: Val, b: Val, pos: number): Val {
  if (isZero(b)) throw new Invalid('division by zero', pos);
  if (a.exact && b.exact) return val(rat(a.exact.num * b.exact.den, a.exact.den * b.exact.num));
  return floatVal(a.value / b.value);
}

function floorDiv(a: Val, b: Val, pos: number): Val {
  if (isZero(b)) throw new Invalid('division by zero', pos);
  if (a.exact && b.exact) {
    const q = rat(a.exact.num * b.exact.den, a.exact.den * b.exact.num);
    // floor for bigint division (which truncates toward zero)
    let f = q.num / q.den;
    if (q.num % q.den !== 0n && q.num < 0n) f -= 1n;
    return val(rat(f));
  }
  return floatVal(Math.floor(a.value / b.value));
}

function pow(base: Val, exp: Val, pos: number): Val {
  if (base.exact && exp.exact && exp.exact.den === 1n) {
    const e = exp.exact.num;
    if (e < 0n && base.exact.num === 0n) throw new Invalid('zero to a negative power', pos);
    const absE = bigAbs(e);
    const bits = Math.max(bitLength(base.exact.num), bitLength(base.exact.den));
    if (bits > 1 && Number(absE) * (bits - 1) > MAX_POWER_BITS) throw new Invalid('result too large', pos);
    let num = base.exact.num ** absE;
    let den = base.exact.den ** absE;
    if (e < 0n) [num, den] = [den, num];
    return val(rat(num, den));
  }
  if (isZero(base) && exp.value < 0) throw new Invalid('zero to a negative power', pos);
  if (base.value < 0 && !Number.isInteger(exp.value)) throw new Invalid('complex result', pos);
  const r = Math.pow(base.value, exp.value);
  if (!Number.isFinite(r)) throw new Invalid('result too large', pos);
  return floatVal(r);
}

/**
 * Evaluates a Countdown equation. Never throws: every failure, including a bug-triggered exception, comes back
 * as `{ ok: false, reason }`.
 */
export function evaluateCountdownExpression(text: string): CountdownEvaluation {
  const numbers: number[] = [];
  try {
    if (typeof text !== 'string') return { ok: false, reason: 'not a string', numbers };
    const toks = tokenize(text, numbers);
    const v = new Parser(toks).parse();
    return { ok: true, value: v.value, exact: v.exact, numbers };
  } catch (e) {
    if (e instanceof Invalid) {
      return e.position === undefined
        ? { ok: false, reason: e.reason, numbers }
        : { ok: false, reason: e.reason, position: e.position, numbers };
    }
    return {
      ok: false,
      reason: e instanceof RangeError ? 'expression too large' : `internal error: ${String(e)}`,
      numbers,
    };
  }
}

/**
 * The numbers Trinity's `validate_equation` sees: every run of digits, as an integer (`re.findall(r"\d+")`), so
 * `2.5` counts as 2 and 5 and signs are ignored.
 */
export function digitRuns(text: string): number[] {
  return (text.match(/[0-9]+/g) ?? []).map((s) => Number(s));
}

/** Trinity's character whitelist before `eval` (`^[\d+\-*\/().\s]+$`). */
export function passesCountdownWhitelist(text: string): boolean {
  return /^[0-9+\-*/().\s]+$/.test(text);
}
