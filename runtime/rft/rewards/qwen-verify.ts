/**
 * Trinity's `verify_math_answer` (trinity/common/rewards/qwen25_eval.py from v0.4.0, trinity/utils/math_eval_utils.py
 * before; the same function in every release): the answer extracted from
 * the response (`extract_answer`: the last `boxed` part, else "final/the answer is …", else the last number) against
 * the one extracted from the truth, compared by `math_equal`: equal strings, numbers within rel_tol 1e-4 (the
 * truth also taken ×100 and ÷100), intervals and pmatrix element-wise, `x = v` against `v`, then sympy's symbolic
 * equality. That last step has no CAS here: `mathEquivalent` (our parser and evaluator) stands in for it, with the
 * same 1e-4 relative tolerance for the numeric-value check.
 *
 * `strip_string` failing with something other than ValueError (word2number) raises in Trinity; here too.
 */
import { pyFloat } from './dapo-grader';
import { mathEquivalent } from './math-equivalence';
import { stripString } from './qwen-strip';

export class VerifyMathError extends Error {}

function strip(s: string): string | null {
  const r = stripString(s);
  if (r.kind === 'error') throw new VerifyMathError(`strip_string failed on ${JSON.stringify(s)} (word2number)`);
  return r.value;
}

const ANSWER_IS = [/(?:final|the)\s+answer\s+is\s*:?\s*(.+)/iu, /答案是\s*:?\s*(.+)/iu];

/** Trinity's `extract_answer`. */
export function extractAnswer(text: string): string | null {
  if (text.includes('boxed')) {
    const parts = text.split('boxed');
    const ans = parts[parts.length - 1];
    if (!ans) return null;
    if (ans.startsWith('{')) {
      let stack = 1;
      let out = '';
      for (const ch of ans.slice(1)) {
        if (ch === '{') stack++;
        else if (ch === '}') {
          stack--;
          if (stack === 0) break;
        }
        out += ch;
      }
      if (stack === 0) return strip(out);
    }
    const m = /\{?([^$}]+)\}?/u.exec(ans);
    if (m) return strip(m[1]);
  }
  for (const re of ANSWER_IS) {
    const m = re.exec(text);
    if (!m) continue;
    let pred = strip(m[1]);
    if (pred && pred.endsWith('.')) pred = pred.slice(0, -1);
    return pred;
  }
  const numbers = text.replace(/,/g, '').match(/[-+]?\p{Nd}*\.?\p{Nd}+/gu);
  return numbers ? numbers[numbers.length - 1] : null;
}

/** Python's `math.isclose(b, a, rel_tol=1e-4)`. */
function numericEqual(a: number, b: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= 1e-4 * Math.max(Math.abs(a), Math.abs(b));
}

function compareNumerical(pred: string, ref: string): boolean | null {
  const p = pyFloat(pred.replace(/,/g, ''));
  const r = pyFloat(ref.replace(/,/g, ''));
  if (p === null || r === null) return null;
  return [r, r / 100, r * 100].some((v) => numericEqual(p, v));
}

const PMATRIX_OPEN = '\\begin{pmatrix}';
const PMATRIX_CLOSE = '\\end{pmatrix}';

function compareStructures(pred: string, ref: string): boolean | null {
  const interval = (s: string) => /^[([]/.test(s) && /[)\]]$/.test(s);
  if (interval(pred) && interval(ref)) {
    const p = pred.slice(1, -1).split(',');
    const r = ref.slice(1, -1).split(',');
    if (p.length === r.length && p.every((x, i) => mathEqual(x.trim(), r[i].trim()))) return true;
  }
  if (pred.startsWith(PMATRIX_OPEN) && ref.startsWith(PMATRIX_OPEN)) {
    // Python slices `[len(open) : -len(close)]` whether or not the string ends with the close tag.
    const rows = (s: string) =>
      s
        .slice(PMATRIX_OPEN.length, s.length - PMATRIX_CLOSE.length)
        .split('\\\\')
        .map((row) => row.split('&'));
    const p = rows(pred);
    const r = rows(ref);
    if (
      p.length === r.length &&
      p[0].length === r[0].length &&
      p.every((row, i) => row.every((x, j) => j >= r[i].length || mathEqual(x.trim(), r[i][j].trim())))
    )
      return true;
  }
  return null;
}

function compareEquations(pred: string, ref: string): boolean | null {
  const eqs = (s: string) => s.split('=').length - 1;
  if (eqs(pred) === 1 && eqs(ref) === 1) {
    const [pl, pr] = pred.split('=').map((x) => x.trim());
    const [rl, rr] = ref.split('=').map((x) => x.trim());
    if (symbolicEqual(`(${pl})-(${pr})`, `(${rl})-(${rr})`)) return true;
  }
  if (eqs(pred) === 1 && eqs(ref) === 0) {
    const [v, val] = pred.split('=').map((x) => x.trim());
    if (v.length <= 2 && mathEqual(val, ref)) return true;
  }
  if (eqs(ref) === 1 && eqs(pred) === 0) {
    const [v, val] = ref.split('=').map((x) => x.trim());
    if (v.length <= 2 && mathEqual(pred, val)) return true;
  }
  return null;
}

function symbolicEqual(a: string, b: string): boolean {
  return mathEquivalent(a, b, { relTol: 1e-4 });
}

/** Trinity's `math_equal`. */
export function mathEqual(pred: string | null, ref: string | null): boolean {
  if (pred === null || ref === null) return false;
  if (pred === ref) return true;
  for (const f of [compareNumerical, compareStructures, compareEquations]) {
    const r = f(pred, ref);
    if (r !== null) return r;
  }
  return symbolicEqual(pred, ref);
}

/** Trinity's `verify_math_answer`: 1 when the extracted answers are equal, else 0. */
export function verifyMathAnswer(response: string, truth: string): number {
  return mathEqual(extractAnswer(response), extractAnswer(String(truth))) ? 1 : 0;
}
