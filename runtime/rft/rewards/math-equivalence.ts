/**
 * Our own math-answer equivalence checker: the behaviour Trinity's math rewards get from math_verify /
 * latex2sympy (accuracy_reward, math_reward) and from sympy in naive_dapo (math_dapo_reward), without a CAS.
 *
 * 1. `normalizeAnswerLatex` turns an answer into plain math text: the last `\boxed{}` is unwrapped, `$`/`\(`/`\[`
 *    delimiters, `\left`/`\right`, LaTeX spacing (`\,` `\!` `\;` `~`), `^\circ`/`°`, `\%`/`%`, `\$`, unit text on the
 *    right (`\text{ cm}`, `\mbox{ dollars}`, `5 cm`) and a trailing `.` are removed; `\dfrac`/`\tfrac` become
 *    `\frac`; a whole-answer `\text{...}` is unwrapped.
 * 2. `parseMathAnswer` reads the result as one of
 *      number     integers, decimals, `1,000` (thousands), `3/4`, `\frac{3}{4}`, `\frac34`, mixed numbers
 *                 (`2\frac{1}{2}`, `2 1/2`), negatives, scientific notation (`1.5e3`, `1.5\times10^{3}`),
 *                 `\sqrt{2}`, `\sqrt[3]{8}`, `\pi`, `\infty`, `\binom{5}{2}`, `n!`, functions, any arithmetic of these;
 *      expr       the same with variables (`2x+1`, `\alpha r^2`), compared by evaluation at fixed sample points;
 *      tuple      `(1, 2)`, intervals `[0, 1)` (brackets must agree);
 *      list       bare comma lists and sets `\{1, 2\}` and unions `A \cup B` (order does not matter);
 *      equation   `x = 5` / `y = 2x+1` (compared by right-hand side against a non-equation);
 *      text       anything else (compared as normalised text).
 * 3. `mathEquivalent` compares two answers: equal normalised text, else equal values. Numbers are equal when
 *    |a − b| ≤ max(ABSOLUTE_TOLERANCE, RELATIVE_TOLERANCE · max(|a|, |b|)) — relative 1e-6 (math_verify rounds
 *    to 6 significant decimals), absolute 1e-9 — and infinities equal only themselves.
 *
 * No `eval`/`Function`: everything is a recursive-descent parser over the normalised text.
 */

import { lastBoxedContent, matchBrace } from './boxed';

export const RELATIVE_TOLERANCE = 1e-6;
export const ABSOLUTE_TOLERANCE = 1e-9;

export interface EquivalenceOptions {
  relTol?: number;
  absTol?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// AST

export type MathNode =
  | { t: 'num'; v: number }
  | { t: 'var'; name: string }
  | { t: 'neg'; a: MathNode }
  | { t: 'bin'; op: '+' | '-' | '*' | '/' | '^'; a: MathNode; b: MathNode }
  | { t: 'call'; fn: string; args: MathNode[] }
  | { t: 'fact'; a: MathNode };

export type MathValue =
  | { kind: 'number'; value: number }
  | { kind: 'expr'; node: MathNode; vars: string[] }
  | { kind: 'tuple'; open: string; close: string; items: MathValue[] }
  | { kind: 'list'; items: MathValue[] }
  | { kind: 'equation'; lhs: string; rhs: MathValue }
  | { kind: 'text'; text: string };

// ---------------------------------------------------------------------------------------------------------------
// normalisation

const TEXT_MACROS = 'text|textbf|textit|textrm|textnormal|mathrm|mathbf|mathit|mbox|operatorname|mathbb|mathsf';

/** Replaces every `\macro{content}` (balanced) by `fn(content, precededByContent)`. */
function replaceTextMacros(s: string, fn: (content: string, before: string, after: string) => string): string {
  const re = new RegExp(`\\\\(?:${TEXT_MACROS})\\s*\\{`, 'g');
  let out = '';
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const open = m.index + m[0].length - 1;
    const end = matchBrace(s, open);
    if (end < 0) break;
    const before = out + s.slice(last, m.index);
    out = before + fn(s.slice(open + 1, end - 1), before, s.slice(end));
    last = end;
    re.lastIndex = end;
  }
  return out + s.slice(last);
}

/** A word that reads as a unit or counted noun (`cm`, `dollars`, `square feet`, `km/h`, `m^2`). */
const MATH_WORDS = /(?:^|[^A-Za-z])(?:pi|sqrt|sin|cos|tan|log|ln|exp|inf|infty|i)(?:[^A-Za-z]|$)/;

function isUnitText(t: string): boolean {
  const w = t.trim();
  return w.length > 0 && /^[A-Za-z][A-Za-z\s./^\d-]*$/.test(w) && !/^[a-zA-Z]$/.test(w) && !MATH_WORDS.test(w);
}

/**
 * LaTeX/plain answer → plain math text (see the module comment). Idempotent on its own output.
 */
export function normalizeAnswerLatex(answer: string): string {
  let s = String(answer ?? '').trim();
  const boxed = lastBoxedContent(s);
  if (boxed !== null) s = boxed;
  s = s
    .replace(/\\\$/g, '')
    .replace(/\$/g, '')
    .replace(/\\\(|\\\)|\\\[|\\\]/g, ' ')
    .replace(/\\(?:left|right)\./g, '')
    .replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![A-Za-z])/g, '')
    .replace(/\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits)(?![A-Za-z])/g, '')
    .replace(/\\(?:quad|qquad)(?![A-Za-z])/g, ' ')
    .replace(/(\d)\\,(?=\d{3}(?!\d))/g, '$1')
    .replace(/\\[,:;! ]/g, ' ')
    .replace(/~/g, ' ')
    .replace(/\{,\}/g, '')
    .replace(/\\[dtc]frac(?![A-Za-z])/g, '\\frac')
    .replace(/\\[dt]binom(?![A-Za-z])/g, '\\binom')
    .replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![A-Za-z])|°|\\degree(?![A-Za-z])/g, '')
    .replace(/\\%|%/g, '')
    .replace(/\\(?:mathrm|text)\s*\{\s*\}/g, '')
    .replace(/\u2212/g, '-')
    .replace(/[\u00d7\u22c5\u00b7]/g, '*')
    .replace(/\u00f7/g, '/')
    .replace(/π/g, '\\pi ')
    .replace(/∞/g, '\\infty ')
    .replace(/√/g, '\\sqrt')
    .replace(/\\\\/g, ' ');
  // A whole-answer \text{...} is the answer; \text{...} after other content is a unit.
  const whole = new RegExp(`^\\\\(?:${TEXT_MACROS})\\s*\\{`).exec(s.trim());
  if (whole) {
    const t = s.trim();
    const end = matchBrace(t, whole[0].length - 1);
    if (end === t.length) s = t.slice(whole[0].length, -1);
  }
  s = replaceTextMacros(s, (content, before) => (before.trim() !== '' && isUnitText(content) ? ' ' : content));
  s = s.replace(/\s+/g, ' ').trim();
  // Trailing sentence dot.
  s = s.replace(/\.+$/, '').trim();
  // Plain unit words after a number: "5 cm", "18 dollars", "3 square feet".
  const unit = /^([-+]?[\d.,]*\d(?:\s*\/\s*\d+)?)\s+([A-Za-z][A-Za-z\s./^\d-]*)$/.exec(s);
  if (unit && isUnitText(unit[2])) s = unit[1];
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// expression parser (scannerless, over normalised text)

class ParseFail extends Error {}

const FUNCS = new Set([
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'arcsin',
  'arccos',
  'arctan',
  'sinh',
  'cosh',
  'tanh',
  'ln',
  'log',
  'exp',
  'sqrt',
  'abs',
]);
const GREEK = new Set([
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'varepsilon',
  'zeta',
  'eta',
  'theta',
  'vartheta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'varphi',
  'chi',
  'psi',
  'omega',
  'Gamma',
  'Delta',
  'Theta',
  'Lambda',
  'Xi',
  'Sigma',
  'Phi',
  'Psi',
  'Omega',
]);

const MAX_DEPTH = 200;

/** Multi-letter words the plain-text parser reads as math. */
const KNOWN_WORDS = new Set([...FUNCS, 'pi', 'inf', 'infty', 'infinity']);

class MathParser {
  private i = 0;
  private depth = 0;

  constructor(private readonly s: string) {}

  parseAll(): MathNode {
    const n = this.expr();
    this.ws();
    if (this.i < this.s.length) throw new ParseFail(`unexpected ${this.s[this.i]}`);
    return n;
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  private peekCommand(): string | null {
    const m = /^\\([A-Za-z]+)/.exec(this.s.slice(this.i, this.i + 40));
    return m ? m[1] : null;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseFail('too deep');
  }

  private expr(): MathNode {
    this.enter();
    let left = this.term();
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      if (c === '+' || c === '-') {
        this.i++;
        const right = this.term();
        left = { t: 'bin', op: c, a: left, b: right };
      } else break;
    }
    this.depth--;
    return left;
  }

  private startsPrimary(): boolean {
    this.ws();
    const c = this.s[this.i];
    if (c === undefined) return false;
    if (/[A-Za-z({[]/.test(c)) return true;
    if (c === '\\') {
      const cmd = this.peekCommand();
      return (
        cmd !== null &&
        ![
          'times',
          'cdot',
          'ast',
          'div',
          'pm',
          'mp',
          'cup',
          'cap',
          'le',
          'leq',
          'ge',
          'geq',
          'ne',
          'neq',
          'in',
        ].includes(cmd)
      );
    }
    return false;
  }

  private term(): MathNode {
    let left = this.unary();
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      const cmd = c === '\\' ? this.peekCommand() : null;
      if (c === '*' || cmd === 'times' || cmd === 'cdot' || cmd === 'ast') {
        this.i += c === '*' ? 1 : 1 + (cmd as string).length;
        left = { t: 'bin', op: '*', a: left, b: this.unary() };
      } else if (c === '/' || cmd === 'div') {
        this.i += c === '/' ? 1 : 4;
        left = { t: 'bin', op: '/', a: left, b: this.unary() };
      } else if (this.startsPrimary()) {
        // implicit multiplication: 2x, 3\sqrt{2}, 2\pi, (a)(b), xy
        left = { t: 'bin', op: '*', a: left, b: this.power() };
      } else break;
    }
    return left;
  }

  private unary(): MathNode {
    this.ws();
    const c = this.s[this.i];
    if (c === '-' || c === '+') {
      this.i++;
      this.enter();
      const a = this.unary();
      this.depth--;
      return c === '-' ? { t: 'neg', a } : a;
    }
    return this.power();
  }

  private power(): MathNode {
    let base = this.postfix(this.primary());
    this.ws();
    if (this.s[this.i] === '^' || this.s.startsWith('**', this.i)) {
      this.i += this.s[this.i] === '^' ? 1 : 2;
      this.ws();
      this.enter();
      const exp = this.s[this.i] === '{' ? this.group() : this.unary();
      this.depth--;
      base = { t: 'bin', op: '^', a: base, b: exp };
    }
    return base;
  }

  private postfix(n: MathNode): MathNode {
    while (this.s[this.i] === '!' && this.s[this.i + 1] !== '=') {
      this.i++;
      n = { t: 'fact', a: n };
    }
    return n;
  }

  /** `{...}` group, or a single character/command argument (`\frac12`, `\sqrt2`). */
  private group(): MathNode {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') {
      this.i++;
      this.enter();
      const n = this.expr();
      this.depth--;
      this.ws();
      if (this.s[this.i] !== '}') throw new ParseFail('missing }');
      this.i++;
      return n;
    }
    if (c !== undefined && /[0-9]/.test(c)) {
      this.i++;
      return { t: 'num', v: Number(c) };
    }
    if (c !== undefined && /[A-Za-z]/.test(c)) {
      this.i++;
      return { t: 'var', name: c };
    }
    if (c === '\\') return this.primary();
    throw new ParseFail('missing argument');
  }

  private number(): MathNode {
    const m = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+(?![A-Za-z]))?/.exec(this.s.slice(this.i));
    if (!m) throw new ParseFail('bad number');
    this.i += m[0].length;
    return { t: 'num', v: Number(m[0]) };
  }

  private primary(): MathNode {
    this.ws();
    const c = this.s[this.i];
    if (c === undefined) throw new ParseFail('unexpected end');
    if (/[0-9.]/.test(c)) return this.number();
    if (c === '(' || c === '[' || c === '{') {
      const close = c === '(' ? ')' : c === '[' ? ']' : '}';
      this.i++;
      this.enter();
      const n = this.expr();
      this.depth--;
      this.ws();
      if (this.s[this.i] !== close) throw new ParseFail(`missing ${close}`);
      this.i++;
      return n;
    }
    if (c === '|') {
      this.i++;
      this.enter();
      const n = this.expr();
      this.depth--;
      this.ws();
      if (this.s[this.i] !== '|') throw new ParseFail('missing |');
      this.i++;
      return { t: 'call', fn: 'abs', args: [n] };
    }
    if (c === '\\') {
      const cmd = this.peekCommand();
      if (!cmd) throw new ParseFail('bad command');
      this.i += 1 + cmd.length;
      return this.command(cmd);
    }
    if (/[A-Za-z]/.test(c)) {
      const word = /^[A-Za-z]+/.exec(this.s.slice(this.i))![0];
      for (const w of [
        'arcsin',
        'arccos',
        'arctan',
        'sqrt',
        'sinh',
        'cosh',
        'tanh',
        'sin',
        'cos',
        'tan',
        'sec',
        'csc',
        'cot',
        'log',
        'exp',
        'ln',
        'abs',
      ]) {
        if (word.startsWith(w) && (word.length === w.length || this.s[this.i + w.length] === '(')) {
          this.i += w.length;
          return this.funcArg(w);
        }
      }
      if (word === 'pi') {
        this.i += 2;
        return { t: 'num', v: Math.PI };
      }
      if (word === 'inf' || word === 'infty' || word === 'infinity' || word === 'oo') {
        this.i += word.length;
        return { t: 'num', v: Infinity };
      }
      this.i++;
      let name = c;
      if (this.s[this.i] === '_') {
        this.i++;
        const sub = this.s[this.i] === '{' ? this.rawGroup() : (this.s[this.i++] ?? '');
        name += `_${sub}`;
      }
      return { t: 'var', name };
    }
    throw new ParseFail(`unexpected ${c}`);
  }

  /** Raw text of a `{...}` group (for subscripts). */
  private rawGroup(): string {
    const end = matchBrace(this.s, this.i);
    if (end < 0) throw new ParseFail('missing }');
    const t = this.s.slice(this.i + 1, end - 1).replace(/\s+/g, '');
    this.i = end;
    return t;
  }

  private funcArg(fn: string): MathNode {
    this.ws();
    // \sin^2 x
    let powArg: MathNode | null = null;
    if (this.s[this.i] === '^') {
      this.i++;
      powArg = this.s[this.i] === '{' ? this.group() : this.number();
      this.ws();
    }
    let arg: MathNode;
    if (this.s[this.i] === '(' || this.s[this.i] === '{') arg = this.primary();
    else arg = this.power();
    const call: MathNode = { t: 'call', fn, args: [arg] };
    return powArg ? { t: 'bin', op: '^', a: call, b: powArg } : call;
  }

  private command(cmd: string): MathNode {
    switch (cmd) {
      case 'frac': {
        const a = this.group();
        const b = this.group();
        return { t: 'bin', op: '/', a, b };
      }
      case 'binom': {
        const a = this.group();
        const b = this.group();
        return { t: 'call', fn: 'binom', args: [a, b] };
      }
      case 'sqrt': {
        this.ws();
        if (this.s[this.i] === '[') {
          this.i++;
          const n = this.expr();
          this.ws();
          if (this.s[this.i] !== ']') throw new ParseFail('missing ]');
          this.i++;
          const a = this.group();
          return { t: 'call', fn: 'root', args: [a, n] };
        }
        return { t: 'call', fn: 'sqrt', args: [this.group()] };
      }
      case 'pi':
        return { t: 'num', v: Math.PI };
      case 'infty':
      case 'infin':
        return { t: 'num', v: Infinity };
      default:
        if (FUNCS.has(cmd)) return this.funcArg(cmd);
        if (GREEK.has(cmd)) return { t: 'var', name: cmd };
        throw new ParseFail(`unsupported \\${cmd}`);
    }
  }
}

function factorial(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) return NaN;
  let r = 1;
  for (let k = 2; k <= n; k++) r *= k;
  return r;
}

export function evaluateMathNode(n: MathNode, env: Record<string, number> = {}): number {
  switch (n.t) {
    case 'num':
      return n.v;
    case 'var':
      return env[n.name] ?? NaN;
    case 'neg':
      return -evaluateMathNode(n.a, env);
    case 'fact':
      return factorial(evaluateMathNode(n.a, env));
    case 'bin': {
      const a = evaluateMathNode(n.a, env);
      const b = evaluateMathNode(n.b, env);
      switch (n.op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return b === 0 ? NaN : a / b;
        case '^':
          return Math.pow(a, b);
      }
      return NaN;
    }
    case 'call': {
      const x = evaluateMathNode(n.args[0], env);
      switch (n.fn) {
        case 'sqrt':
          return Math.sqrt(x);
        case 'root': {
          const k = evaluateMathNode(n.args[1], env);
          if (x < 0 && Number.isInteger(k) && k % 2 === 1) return -Math.pow(-x, 1 / k);
          return Math.pow(x, 1 / k);
        }
        case 'binom': {
          const k = evaluateMathNode(n.args[1], env);
          if (!Number.isInteger(x) || !Number.isInteger(k) || k < 0 || x < 0 || k > x) return NaN;
          let r = 1;
          for (let j = 1; j <= k; j++) r = (r * (x - k + j)) / j;
          return Math.round(r);
        }
        case 'sin':
          return Math.sin(x);
        case 'cos':
          return Math.cos(x);
        case 'tan':
          return Math.tan(x);
        case 'sec':
          return 1 / Math.cos(x);
        case 'csc':
          return 1 / Math.sin(x);
        case 'cot':
          return 1 / Math.tan(x);
        case 'arcsin':
          return Math.asin(x);
        case 'arccos':
          return Math.acos(x);
        case 'arctan':
          return Math.atan(x);
        case 'sinh':
          return Math.sinh(x);
        case 'cosh':
          return Math.cosh(x);
        case 'tanh':
          return Math.tanh(x);
        case 'ln':
        case 'log':
          return Math.log(x);
        case 'exp':
          return Math.exp(x);
        case 'abs':
          return Math.abs(x);
      }
      return NaN;
    }
  }
}

function collectVars(n: MathNode, out: Set<string>): Set<string> {
  switch (n.t) {
    case 'var':
      out.add(n.name);
      break;
    case 'neg':
    case 'fact':
      collectVars(n.a, out);
      break;
    case 'bin':
      collectVars(n.a, out);
      collectVars(n.b, out);
      break;
    case 'call':
      for (const a of n.args) collectVars(a, out);
      break;
  }
  return out;
}

/** Parses plain math text (the output of `normalizeAnswerLatex`) into an expression tree, or null. */
export function parseMathExpression(text: string): MathNode | null {
  try {
    if (text.trim() === '') return null;
    return new MathParser(text).parseAll();
  } catch (e) {
    if (e instanceof ParseFail || e instanceof RangeError) return null;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// answers

/** Splits on top-level occurrences of `sep` (outside (), [], {}), or returns null when there is none. */
function splitTopLevel(s: string, sep: string): string[] | null {
  const parts: string[] = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && (s[i + 1] === '{' || s[i + 1] === '}')) {
      depth += s[i + 1] === '{' ? 1 : -1;
      i++;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(last, i));
      last = i + sep.length;
      i += sep.length - 1;
    }
  }
  if (parts.length === 0) return null;
  parts.push(s.slice(last));
  return parts;
}

/** Index of the bracket closing the one at 0 (any of ([{ closed by any of )]}), or -1. */
function closingOfFirst(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

const THOUSANDS = /^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;

function canonicalText(s: string): string {
  return s.replace(/\s+/g, '');
}

/** Commas between digit groups of three are thousands separators (`1,000,000`), outside brackets. */
function stripThousands(s: string): string {
  return /^[([]/.test(s) ? s : s.replace(/(\d),(?=\d{3}(?:\D|$))/g, '$1');
}

/**
 * Reads an answer (LaTeX or plain) as a `MathValue`. Never throws.
 */
export function parseMathAnswer(answer: string): MathValue {
  return parseNormalized(normalizeAnswerLatex(answer), 0);
}

function parseNormalized(s: string, depth: number): MathValue {
  s = s.trim();
  if (depth > 20) return { kind: 'text', text: canonicalText(s) };
  if (s === '') return { kind: 'text', text: '' };
  // thousands separators
  if (THOUSANDS.test(s)) return { kind: 'number', value: Number(s.replace(/,/g, '')) };
  s = stripThousands(s);
  // set braces
  if (s.startsWith('\\{') && s.endsWith('\\}')) {
    const inner = s.slice(2, -2);
    const parts = splitTopLevel(inner, ',') ?? [inner];
    return { kind: 'list', items: parts.map((p) => parseNormalized(p, depth + 1)) };
  }
  // unions of intervals/sets
  for (const sep of ['\\cup', ' U ']) {
    const parts = splitTopLevel(s, sep);
    if (parts) return { kind: 'list', items: parts.map((p) => parseNormalized(p, depth + 1)) };
  }
  // tuples and intervals
  const first = s[0];
  const last = s[s.length - 1];
  if ((first === '(' || first === '[') && (last === ')' || last === ']') && closingOfFirst(s) === s.length - 1) {
    const inner = s.slice(1, -1);
    const parts = splitTopLevel(inner, ',');
    if (parts && !THOUSANDS.test(inner.trim())) {
      return { kind: 'tuple', open: first, close: last, items: parts.map((p) => parseNormalized(p, depth + 1)) };
    }
  }
  // bare lists: 1, 2, 3 (a thousands number was handled above)
  const commas = splitTopLevel(s, ',');
  if (commas) return { kind: 'list', items: commas.map((p) => parseNormalized(p, depth + 1)) };
  // equations: x = 5, y = 2x + 1, a = b = 3 (last part is the value)
  if (!/[<>]|\\(?:le|ge|leq|geq|ne|neq|lt|gt)(?![A-Za-z])/.test(s)) {
    const eq = splitTopLevel(s, '=');
    if (eq && eq.every((p) => p.trim() !== '')) {
      return { kind: 'equation', lhs: canonicalText(eq[0]), rhs: parseNormalized(eq[eq.length - 1], depth + 1) };
    }
  }
  // mixed numbers: 2\frac{1}{2}, 2 1/2
  const mixed =
    /^([-+]?)(\d+)\s*\\frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}$/.exec(s) ??
    /^([-+]?)(\d+)\s+(\d+)\s*\/\s*(\d+)$/.exec(s);
  if (mixed) {
    const v = Number(mixed[2]) + Number(mixed[3]) / Number(mixed[4]);
    return { kind: 'number', value: mixed[1] === '-' ? -v : v };
  }
  // Words that are not math (Monday, yes, triangle) are text, not products of single-letter variables.
  const words = s.replace(/\\[A-Za-z]+/g, ' ').match(/[A-Za-z]{3,}/g) ?? [];
  const node = words.some((w) => !KNOWN_WORDS.has(w)) ? null : parseMathExpression(s);
  if (node) {
    const vars = [...collectVars(node, new Set())].sort();
    if (vars.length === 0) {
      const v = evaluateMathNode(node);
      if (!Number.isNaN(v)) return { kind: 'number', value: v };
    } else {
      return { kind: 'expr', node, vars };
    }
  }
  return { kind: 'text', text: canonicalText(s) };
}

export function numbersClose(a: number, b: number, opts: EquivalenceOptions = {}): boolean {
  const rel = opts.relTol ?? RELATIVE_TOLERANCE;
  const abs = opts.absTol ?? ABSOLUTE_TOLERANCE;
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= Math.max(abs, rel * Math.max(Math.abs(a), Math.abs(b)));
}

const SAMPLES = [0.7310585, 1.4142136, 2.236068, 0.5772157, 3.1622777, 1.618034];

function asNode(v: MathValue): MathNode | null {
  if (v.kind === 'number') return { t: 'num', v: v.value };
  if (v.kind === 'expr') return v.node;
  return null;
}

/** Equal at (almost) every sample point of the union of their variables. */
function nodesEqual(a: MathNode, b: MathNode, opts: EquivalenceOptions): boolean {
  const vars = [...collectVars(a, collectVars(b, new Set()))];
  let valid = 0;
  for (let k = 0; k < 5; k++) {
    const env: Record<string, number> = {};
    vars.forEach((name, j) => {
      env[name] = SAMPLES[(j + k) % SAMPLES.length] + j * 0.1371;
    });
    const x = evaluateMathNode(a, env);
    const y = evaluateMathNode(b, env);
    if (Number.isNaN(x) && Number.isNaN(y)) continue;
    if (!numbersClose(x, y, opts)) return false;
    valid++;
  }
  return valid >= (vars.length === 0 ? 1 : 2);
}

function listsEqual(a: MathValue[], b: MathValue[], opts: EquivalenceOptions): boolean {
  if (a.length !== b.length) return false;
  const used = new Array<boolean>(b.length).fill(false);
  for (const x of a) {
    const j = b.findIndex((y, k) => !used[k] && mathValuesEqual(x, y, opts));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

function orderedEqual(a: MathValue[], b: MathValue[], opts: EquivalenceOptions): boolean {
  return a.length === b.length && a.every((x, i) => mathValuesEqual(x, b[i], opts));
}

/** Structural/numeric equality of two parsed answers. */
export function mathValuesEqual(a: MathValue, b: MathValue, opts: EquivalenceOptions = {}): boolean {
  if (a.kind === 'equation' && b.kind === 'equation') {
    return a.lhs === b.lhs && mathValuesEqual(a.rhs, b.rhs, opts);
  }
  if (a.kind === 'equation') return mathValuesEqual(a.rhs, b, opts);
  if (b.kind === 'equation') return mathValuesEqual(a, b.rhs, opts);
  if (a.kind === 'number' && b.kind === 'number') return numbersClose(a.value, b.value, opts);
  const na = asNode(a);
  const nb = asNode(b);
  if (na && nb) return nodesEqual(na, nb, opts);
  if (a.kind === 'tuple' && b.kind === 'tuple') {
    return a.open === b.open && a.close === b.close && orderedEqual(a.items, b.items, opts);
  }
  if (a.kind === 'tuple' && b.kind === 'list')
    return a.open === '(' && a.close === ')' && orderedEqual(a.items, b.items, opts);
  if (a.kind === 'list' && b.kind === 'tuple') return mathValuesEqual(b, a, opts);
  if (a.kind === 'list' && b.kind === 'list') return listsEqual(a.items, b.items, opts);
  if (a.kind === 'list' && a.items.length === 1) return mathValuesEqual(a.items[0], b, opts);
  if (b.kind === 'list' && b.items.length === 1) return mathValuesEqual(a, b.items[0], opts);
  if (a.kind === 'text' && b.kind === 'text') {
    const ta = a.text.replace(/[{}]/g, '').toLowerCase();
    return ta !== '' && ta === b.text.replace(/[{}]/g, '').toLowerCase();
  }
  return false;
}

/**
 * True when two answers are the same mathematical answer (see the module comment for what that covers).
 * Never throws.
 */
export function mathEquivalent(a: string, b: string, opts: EquivalenceOptions = {}): boolean {
  try {
    const na = normalizeAnswerLatex(a);
    const nb = normalizeAnswerLatex(b);
    if (na !== '' && canonicalText(na) === canonicalText(nb)) return true;
    return mathValuesEqual(parseNormalized(na, 0), parseNormalized(nb, 0), opts);
  } catch {
    return false;
  }
}
