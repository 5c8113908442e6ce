/**
 * `math_dapo_reward`'s accuracy from v0.4.0 on (Trinity's trinity/common/rewards/naive_dapo_score.py
 * `compute_score`, adapted from Reasoning360, with verl's prime_math `normalize_answer` and `math_equal`):
 *
 * 1. The answer is the content of the last `\boxed{}` after the last `</think>`; with no (non-empty) box, the
 *    WHOLE text after the last `</think>` is graded.
 * 2. `gradeAnswer`: equal after the MATH/prm800k normalisation, or equal after naive_dapo's `_normalize`, or
 *    element-wise (tuples/intervals split on commas, brackets must agree) equal where
 *      - two fractions `a/b` must be written identically (unreduced fractions are not accepted),
 *      - an integer must be matched by an integer,
 *      - otherwise the difference must simplify to 0 (sympy in Trinity; here: our evaluator, |Δ| ≤ 1e-12
 *        relative), and only for expressions with at most two distinct letters and without `^{`, `^(`, `^12`.
 * 3. If that fails, prime_math's `math_equal`: case/space-insensitive string equality, then numbers with
 *    relative tolerance 1e-4 that also accept the truth ×100 or ÷100 (percent leniency: `50` matches `0.5`),
 *    brackets/tuples/comma lists element-wise, then symbolic equality (rel. tolerance 1e-4).
 *    When either side contains `\pi`, Trinity calls `math_equal(..., tiemout=True)` — a misspelt keyword, so the
 *    call raises TypeError, which Trinity catches: only step 2 can accept answers with `\pi`.
 *
 * Where Trinity relies on sympy/pylatexenc we use our own parser (math-equivalence.ts) and a small LaTeX-to-text
 * conversion; these agree on the common answer forms, not on every exotic expression. Trinity's `eval` of a
 * bracketed prediction against a `pmatrix` truth is not reproduced (we answer "not equal").
 */

import { strictLastBoxed } from './boxed';
import { evaluateMathNode, parseMathExpression, type MathNode } from './math-equivalence';
import { pythonRound } from '../../config/python-round';

// ---------------------------------------------------------------------------------------------------------------
// Python helpers

/** Python float(): accepts surrounding whitespace, `_` between digits, inf/nan/infinity; null if it raises. */
export function pyFloat(s: string): number | null {
  const t = s.replace(/^\s+|\s+$/g, '');
  if (/^[+-]?(?:inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  if (!/^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(t)) return null;
  return Number(t.replace(/_/g, ''));
}

function isIntValued(x: number): boolean {
  if (!Number.isFinite(x)) return false;
  return Math.abs(x - pythonRound(x)) <= 1e-7;
}

function pyStripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

function bigIntString(x: number): string {
  // Python str(int(x)) for a finite float: exact digits, no exponent.
  return BigInt(Math.trunc(x)).toString();
}

// ---------------------------------------------------------------------------------------------------------------
// MATH / prm800k normalisation (verl prime_math math_normalize.normalize_answer)

class PyError extends Error {}

function mathdStrip(s: string): string {
  s = s.split('\n').join('');
  s = s.split('\\!').join('');
  s = s.split('\\\\').join('\\');
  s = s.split('tfrac').join('frac').split('dfrac').join('frac');
  s = s.split('\\left').join('').split('\\right').join('');
  s = s.split('^{\\circ}').join('').split('^\\circ').join('');
  s = s.split('\\$').join('');
  if (s.includes('\\text{ ')) {
    const parts = s.split('\\text{ ');
    if (parts.length !== 2) throw new PyError('assert');
    s = parts[0];
  }
  s = s.split('\\%').join('');
  s = s.split(' .').join(' 0.').split('{.').join('{0.');
  if (s.length === 0) return s;
  if (s[0] === '.') s = `0${s}`;
  const eq = s.split('=');
  if (eq.length === 2 && eq[0].length <= 2) s = eq[1];
  if (s.includes('\\sqrt')) {
    const parts = s.split('\\sqrt');
    let out = parts[0];
    for (const p of parts.slice(1)) {
      if (p.length === 0) throw new PyError('IndexError');
      out += p[0] !== '{' ? `\\sqrt{${p[0]}}${p.slice(1)}` : `\\sqrt${p}`;
    }
    s = out;
  }
  s = s.split(' ').join('');
  {
    const parts = s.split('\\frac');
    let out = parts[0];
    let failed = false;
    for (const sub of parts.slice(1)) {
      out += '\\frac';
      if (sub.length === 0) throw new PyError('IndexError');
      if (sub[0] === '{') out += sub;
      else if (sub.length < 2) {
        failed = true;
        break;
      } else if (sub[1] !== '{') out += `{${sub[0]}}{${sub[1]}}${sub.slice(2)}`;
      else out += `{${sub[0]}}${sub[1]}${sub.slice(2)}`;
    }
    if (!failed) s = out;
  }
  if (s === '0.5') s = '\\frac{1}{2}';
  const slash = s.split('/');
  if (slash.length === 2 && /^(0|-?[1-9][0-9]*)$/.test(slash[0]) && /^(0|-?[1-9][0-9]*)$/.test(slash[1])) {
    s = `\\frac{${slash[0]}}{${slash[1]}}`;
  }
  return s;
}

/** prm800k's `normalize_answer` (the "mathd" normalisation). */
export function mathdNormalize(answer: string): string {
  let a = answer.replace(/^\s+|\s+$/g, '');
  try {
    const m = /^\\text\{(.+?)\}$/s.exec(a);
    if (m) a = m[1].replace(/^\s+|\s+$/g, '');
    return mathdStrip(a);
  } catch {
    return a;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// naive_dapo `_normalize`

const DAPO_UNITS = [
  'degree',
  'cm',
  'centimeter',
  'meter',
  'mile',
  'second',
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'foot',
  'feet',
  'inch',
  'yard',
  'liter',
];

/** Index just past the group starting at `i` (`{...}` balanced, else one character). */
function readArg(s: string, i: number): [string, number] {
  while (s[i] === ' ') i++;
  if (s[i] === '{') {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      if (s[j] === '{') depth++;
      else if (s[j] === '}') {
        depth--;
        if (depth === 0) return [s.slice(i + 1, j), j + 1];
      }
    }
    return [s.slice(i + 1), s.length];
  }
  if (s[i] === '\\') {
    const m = /^\\[A-Za-z]+/.exec(s.slice(i));
    if (m) return [m[0], i + m[0].length];
  }
  return [s[i] ?? '', Math.min(s.length, i + 1)];
}

const SYMBOLS: Record<string, string> = {
  pi: 'π',
  infty: '∞',
  cdot: '·',
  times: '×',
  cup: '∪',
  div: '÷',
  pm: '±',
  le: '≤',
  leq: '≤',
  ge: '≥',
  geq: '≥',
  neq: '≠',
  ne: '≠',
  circ: '∘',
  alpha: 'α',
  beta: 'β',
  gamma: 'γ',
  delta: 'δ',
  theta: 'θ',
  lambda: 'λ',
  mu: 'μ',
  sigma: 'σ',
  phi: 'φ',
  omega: 'ω',
  ldots: '...',
  dots: '...',
  cdots: '⋯',
  infin: '∞',
};

/** A small stand-in for pylatexenc's `latex_to_text` on answer-sized LaTeX. */
export function latexToText(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') {
      const m = /^\\([A-Za-z]+|.)/.exec(s.slice(i));
      if (!m) {
        i++;
        continue;
      }
      const name = m[1];
      i += m[0].length;
      if (name === 'frac' || name === 'dfrac' || name === 'tfrac') {
        const [a, i1] = readArg(s, i);
        const [b, i2] = readArg(s, i1);
        i = i2;
        const ta = latexToText(a).trim();
        const tb = latexToText(b).trim();
        const wrap = (t: string) => (/^[\w.]+$/.test(t) ? t : `(${t})`);
        out += `${wrap(ta)}/${wrap(tb)}`;
      } else if (name === 'sqrt') {
        let degree = '';
        if (s[i] === '[') {
          const end = s.indexOf(']', i);
          degree = end > 0 ? s.slice(i + 1, end) : '';
          i = end > 0 ? end + 1 : i + 1;
        }
        const [a, i1] = readArg(s, i);
        i = i1;
        out += `${degree}√(${latexToText(a).trim()})`;
      } else if (/^(text|textbf|textit|mathrm|mathbf|mbox|operatorname|boxed|mathit|textrm|overline)$/.test(name)) {
        const [a, i1] = readArg(s, i);
        i = i1;
        out += latexToText(a);
      } else if (/^(left|right|displaystyle|bigl|bigr|big|Big|,|;|:|!| )$/.test(name)) {
        out += name === ' ' ? ' ' : '';
      } else if (name in SYMBOLS) {
        out += SYMBOLS[name];
      } else if (name.length === 1) {
        out += name; // \{ \} \% \$ \_
      } else if (/^(sin|cos|tan|log|ln|exp|sec|csc|cot|max|min|gcd|lim|arcsin|arccos|arctan)$/.test(name)) {
        out += name;
      }
      // unknown macros vanish
    } else if (c === '{' || c === '}') {
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function dapoParseLatex(expr: string): string {
  expr = expr.split('\\tfrac').join('\\frac').split('\\dfrac').join('\\frac').split('\\frac').join(' \\frac');
  expr = latexToText(expr);
  expr = expr
    .split('√')
    .join('sqrt')
    .split('π')
    .join('pi')
    .split('∞')
    .join('inf')
    .split('∪')
    .join('U')
    .split('·')
    .join('*')
    .split('×')
    .join('*');
  return expr.replace(/^\s+|\s+$/g, '');
}

function stripProperlyFormattedCommas(expr: string): string {
  for (;;) {
    const next = expr.replace(/(\d)(,)(\d\d\d)($|\D)/g, '$1$3$4');
    if (next === expr) return next;
    expr = next;
  }
}

function strIsInt(x: string): boolean {
  const v = pyFloat(stripProperlyFormattedCommas(x));
  return v !== null && isIntValued(v);
}

/** naive_dapo's `_normalize`. */
export function dapoNormalize(expr: string): string {
  const m = /^\\text\{(.+?)\}$/s.exec(expr);
  if (m) expr = m[1];
  expr = expr.split('\\%').join('%').split('\\$').join('$').split('$').join('').split('%').join('');
  expr = expr.split(' or ').join(' , ').split(' and ').join(' , ');
  expr = expr.split('million').join('*10^6').split('billion').join('*10^9').split('trillion').join('*10^12');
  for (const unit of DAPO_UNITS) expr = expr.replace(new RegExp(`${unit}(es)?(s)? *(\\^[0-9]+)?`, 'g'), '');
  expr = expr.replace(/\^ *\\circ/g, '');
  if (expr.length > 0 && expr[0] === '{' && expr[expr.length - 1] === '}') expr = expr.slice(1, -1);
  expr = expr.replace(/,\\! */g, '');
  const f = pyFloat(expr);
  if (f !== null && isIntValued(f)) expr = bigIntString(pythonRound(f));
  if (expr.includes('\\')) expr = dapoParseLatex(expr);
  expr = expr.replace(/- */g, '-');
  expr = expr.replace(/([0-9]) +([0-9])/g, '$1+$2');
  expr = expr.toLowerCase();
  if (strIsInt(expr)) {
    const v = pyFloat(expr.split(',').join(''));
    if (v !== null) expr = bigIntString(v);
  }
  return expr;
}

function isFrac(expr: string): boolean {
  return /^-?[0-9]+.?\/0*[1-9][0-9]*.?$/.test(expr);
}

function splitTuple(expr: string): string[] {
  expr = stripProperlyFormattedCommas(expr);
  if (expr.length === 0) return [];
  const tupleChars = '()[]';
  if (
    expr.length > 2 &&
    tupleChars.includes(expr[0]) &&
    tupleChars.includes(expr[expr.length - 1]) &&
    ![...tupleChars].some((ch) => expr.slice(1, -1).includes(ch))
  ) {
    return expr
      .slice(1, -1)
      .split(',')
      .map((e) => e.trim());
  }
  return [expr];
}

function countUnknownLetters(expr: string): number {
  const t = expr.split('sqrt').join('').split('frac').join('');
  return new Set([...t].filter((ch) => /\p{L}/u.test(ch))).size;
}

function shouldAllowEval(expr: string): boolean {
  if (countUnknownLetters(expr) > 2) return false;
  if (expr.includes('^{') || expr.includes('^(')) return false;
  if (/\^[0-9]+\^/.test(expr) || /\^[0-9][0-9]+/.test(expr)) return false;
  return true;
}

const SAMPLE_POINTS = [0.7310585, 1.4142136, 2.236068];

/** Numeric identity of two parsed expressions at sample points (our stand-in for sympy's simplify/N). */
function nodesAgree(a: MathNode, b: MathNode, relTol: number): boolean {
  const vars = new Set<string>();
  const walk = (n: MathNode) => {
    if (n.t === 'var') vars.add(n.name);
    else if (n.t === 'neg' || n.t === 'fact') walk(n.a);
    else if (n.t === 'bin') {
      walk(n.a);
      walk(n.b);
    } else if (n.t === 'call') n.args.forEach(walk);
  };
  walk(a);
  walk(b);
  const names = [...vars];
  let valid = 0;
  for (let k = 0; k < SAMPLE_POINTS.length; k++) {
    const env: Record<string, number> = {};
    names.forEach((nm, j) => {
      env[nm] = SAMPLE_POINTS[(j + k) % SAMPLE_POINTS.length] + 0.37 * j;
    });
    const x = evaluateMathNode(a, env);
    const y = evaluateMathNode(b, env);
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x === y) {
        valid++;
        continue;
      }
      return false;
    }
    if (Math.abs(x - y) > relTol * Math.max(Math.abs(x), Math.abs(y), 1e-300) && Math.abs(x - y) > 1e-12) return false;
    valid++;
  }
  return valid > 0;
}

function areEqualUnderSympy(truth: string, given: string): boolean {
  if (!shouldAllowEval(`(${truth})-(${given})`)) return false;
  const a = parseMathExpression(truth);
  const b = parseMathExpression(given);
  return a !== null && b !== null && nodesAgree(a, b, 1e-12);
}

/** naive_dapo's `grade_answer` (see the module comment). */
export function gradeAnswer(given: string, truth: string): boolean {
  if (mathdNormalize(truth) === mathdNormalize(given)) return true;
  const gt = dapoNormalize(truth);
  const gv = dapoNormalize(given);
  if (gt === gv) return true;
  if (gv.length === 0) return false;
  const gtElems = splitTuple(gt);
  const gvElems = splitTuple(gv);
  if (gtElems.length > 1 && (gt[0] !== gv[0] || gt[gt.length - 1] !== gv[gv.length - 1])) return false;
  if (gtElems.length !== gvElems.length) return false;
  for (let i = 0; i < gtElems.length; i++) {
    const t = gtElems[i];
    const g = gvElems[i];
    let ok: boolean;
    if (isFrac(t) && isFrac(g)) ok = t === g;
    else if (strIsInt(t) !== strIsInt(g)) ok = false;
    else ok = areEqualUnderSympy(t, g);
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// verl prime_math math_equal

class MathEqualError extends Error {}

type PyVal = string | number;

function primeNormalize(answer: PyVal): PyVal {
  if (typeof answer === 'string' && /^\$\d+(\.\d+)?/.test(answer)) return answer.slice(1);
  if (typeof answer === 'string' && (/^\d+(\.\d+)?%$/.test(answer) || /^\d+(\.\d+)?\\%$/.test(answer))) {
    return answer.split('\\%').join('').split('%').join('');
  }
  if (typeof answer === 'string' && answer.includes('_')) {
    const v = pyFloat(answer.split('_')[0]);
    if (v === null) throw new MathEqualError('ValueError in handle_base');
    if (!Number.isFinite(v)) throw new MathEqualError('OverflowError in handle_base');
    return Math.trunc(v);
  }
  return answer;
}

function isDigit(s: PyVal): number | null {
  const str = typeof s === 'number' ? String(s) : s;
  if (str.includes('{,}')) return pyFloat(str.split('{,}').join(''));
  return pyFloat(str.split(',').join(''));
}

function isClose(a: number, b: number, relTol: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const d = Math.abs(a - b);
  return d <= relTol * Math.abs(b) || d <= relTol * Math.abs(a);
}

function formatIntervals(p: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^Interval\((.*)\)$/s.exec(p))) return `[${m[1]}]`;
  if ((m = /^Interval\.Ropen\((.*)\)$/s.exec(p))) return `[${m[1]})`;
  if ((m = /^Interval\.Lopen\((.*)\)$/s.exec(p))) return `(${m[1]}]`;
  if ((m = /^Interval\.open\((.*)\)$/s.exec(p))) return `(${m[1]})`;
  return p;
}

function symbolicEqual(a: string, b: string, tolerance: number): boolean {
  const na = parseMathExpression(a);
  const nb = parseMathExpression(b);
  if (na === null || nb === null) return false;
  return nodesAgree(na, nb, tolerance);
}

/** prime_math's `math_equal` (include_percentage, tolerance 1e-4); throws MathEqualError where Python raises. */
function primeMathEqual(predictionIn: PyVal, referenceIn: PyVal, tolerance = 1e-4): boolean {
  let prediction = primeNormalize(predictionIn);
  let reference = primeNormalize(referenceIn);
  if (typeof prediction === 'string' && prediction.length > 1000) prediction = prediction.slice(0, 1000);
  if (typeof prediction === 'string' && typeof reference === 'string') {
    if (prediction.trim().toLowerCase() === reference.trim().toLowerCase()) return true;
    if (prediction.split(' ').join('') === reference.split(' ').join('')) return true;
  }
  const pd = isDigit(prediction);
  const rd = isDigit(reference);
  if (pd !== null && rd !== null) {
    for (const item of [rd / 100, rd, rd * 100]) if (isClose(item, pd, tolerance)) return true;
    return false;
  }
  if (prediction === '') return false;
  let ref = String(reference).trim();
  let pred = String(typeof prediction === 'number' ? prediction : prediction).trim();
  pred = formatIntervals(pred);
  let predStr = pred;
  let refStr = ref;
  if (
    (pred.startsWith('[') && pred.endsWith(']') && !ref.startsWith('(')) ||
    (pred.startsWith('(') && pred.endsWith(')') && !ref.startsWith('['))
  ) {
    predStr = pyStripChars(predStr, '[]()');
    refStr = pyStripChars(refStr, '[]()');
  }
  for (const ch of ['{', '}', '(', ')']) {
    refStr = refStr.split(ch).join('');
    predStr = predStr.split(ch).join('');
  }
  if (predStr === refStr) return true;
  if (
    pred &&
    ref &&
    '(['.includes(pred[0]) &&
    ')]'.includes(pred[pred.length - 1]) &&
    pred[0] === ref[0] &&
    pred[pred.length - 1] === ref[ref.length - 1]
  ) {
    const pp = pred.slice(1, -1).split(',');
    const rp = ref.slice(1, -1).split(',');
    if (pp.length === rp.length && pp.every((p, i) => primeMathEqual(p, rp[i], tolerance))) return true;
  }
  if (pred.includes(',') && ref.includes(',')) {
    const pp = pred.split(',').map((x) => x.trim());
    const rp = ref.split(',').map((x) => x.trim());
    if (pp.length === rp.length) return pp.every((p, i) => primeMathEqual(p, rp[i], tolerance));
  }
  if (pred.startsWith('Point')) {
    if (ref.length === 0) throw new MathEqualError('IndexError');
    if (ref[0] === '(' && ref[ref.length - 1] === ')') {
      const pp = pred.slice(pred.indexOf('(') + 1, -1).split(',');
      const rp = ref.slice(1, -1).split(',');
      if (pp.length === rp.length && pp.every((p, i) => primeMathEqual(p, rp[i], tolerance))) return true;
    }
  }
  if (ref.includes('\\begin{pmatrix}') && pred.startsWith('[') && pred.endsWith(']')) {
    // Trinity eval()s the prediction here; we do not run code.
    throw new MathEqualError('eval of a matrix prediction');
  }
  ref = ref.trim();
  return symbolicEqual(pred, ref, tolerance);
}

/** The answer naive_dapo grades: last `\boxed{}` content after the last `</think>`, else that whole tail. */
export function dapoMatchAnswer(response: string): { matched: boolean; answer: string } {
  const parts = response.split('</think>');
  const tail = parts[parts.length - 1];
  const boxed = strictLastBoxed(tail);
  if (boxed) return { matched: true, answer: boxed };
  return { matched: false, answer: tail };
}

/** naive_dapo's `compute_score`: 1.0 or 0.0. */
export function naiveDapoScore(response: string, truth: string): number {
  const { answer } = dapoMatchAnswer(response);
  let correct = gradeAnswer(answer, truth);
  if (!correct) {
    if (answer.includes('\\pi') || truth.includes('\\pi')) {
      correct = false; // math_equal(..., tiemout=True) raises TypeError in Trinity; caught → False
    } else {
      try {
        correct = primeMathEqual(answer, truth);
      } catch {
        correct = false;
      }
    }
  }
  return correct ? 1.0 : 0.0;
}
