/**
 * The string normalisation `math_boxed_reward` compares answers with (Trinity's `strip_string` in
 * trinity/common/rewards/qwen25_eval.py, formerly trinity/utils/math_eval_utils.py; the same from v0.3.0 to main),
 * and its `is_equiv`: two answers are equal iff their normalised strings are equal. There is no numeric
 * comparison: `0.5` and `\frac{1}{2}` differ, `50\%` and `50` differ (see below).
 *
 * Written from the behaviour of that code, step by step, including its quirks:
 * - `%` is removed before `\%`, so `50\%` becomes `50\` (not `50`).
 * - "infinity" becomes `\infty`, then every "inf" (also the one inside `\infty`) becomes `\infty`, so both
 *   `\infty` and "infinity" end as `\\inftyty` — consistently on both sides.
 * - MathQA unit words (`m`, `s`, `a`, `t`, `cm`, `hour`, `percent`, …) are removed when they stand alone between
 *   non-word characters (so `\frac{a}{b}` loses its `a`), twice over; several unit patterns contain `.`, which
 *   matches any character as in Python's `re`.
 * - The word2number step turns number words into digits (`five` → `5`, `two hundred` → `200`), any digit string
 *   into its integer (`007` → `7`), and any text with the word `point` and no other number word into `0`.
 *   Inputs that make word2number fail with something other than ValueError (e.g. `thousand` alone) make
 *   `is_equiv` fall back to comparing the raw strings.
 * - One enclosing pair of `{}` or `()` is dropped, so a tuple `(1,2)` compares as `1,2`.
 * - An answer that normalises to nothing is `None`, and `None == None`: an empty `\boxed{}` matches a truth
 *   like `.` or `$`.
 */
import { pyFloat } from '../../config/python-repr';

const UNIT_TEXTS_BASE = [
  'east',
  'degree',
  'mph',
  'kmph',
  'ft',
  'm sqaure',
  ' m east',
  'sq m',
  'deg',
  'mile',
  'q .',
  'monkey',
  'prime',
  'ratio',
  'profit of rs',
  'rd',
  'o',
  'gm',
  'p . m',
  'lb',
  'tile',
  'per',
  'dm',
  'lt',
  'gain',
  'ab',
  'way',
  'west',
  'a .',
  'b .',
  'c .',
  'd .',
  'e .',
  'f .',
  'g .',
  'h .',
  't',
  'a',
  'h',
  'no change',
  'men',
  'soldier',
  'pie',
  'bc',
  'excess',
  'st',
  'inches',
  'noon',
  'percent',
  'by',
  'gal',
  'kmh',
  'c',
  'acre',
  'rise',
  'a . m',
  'th',
  'π r 2',
  'sq',
  'mark',
  'l',
  'toy',
  'coin',
  'sq . m',
  'gallon',
  '° f',
  'profit',
  'minw',
  'yr',
  'women',
  'feet',
  'am',
  'pm',
  'hr',
  'cu cm',
  'square',
  'v â € ™',
  'are',
  'rupee',
  'rounds',
  'cubic',
  'cc',
  'mtr',
  's',
  'ohm',
  'number',
  'kmph',
  'day',
  'hour',
  'minute',
  'min',
  'second',
  'man',
  'woman',
  'sec',
  'cube',
  'mt',
  'sq inch',
  'mp',
  '∏ cm ³',
  'hectare',
  'more',
  'sec',
  'unit',
  'cu . m',
  'cm 2',
  'rs .',
  'rs',
  'kg',
  'g',
  'month',
  'km',
  'm',
  'cm',
  'mm',
  'apple',
  'liter',
  'loss',
  'yard',
  'pure',
  'year',
  'increase',
  'decrease',
  'd',
  'less',
  'Surface',
  'litre',
  'pi sq m',
  's .',
  'metre',
  'meter',
  'inch',
];

/** The list as Trinity extends it: every entry, then each entry not ending in "s" with an "s" appended. */
export const UNIT_TEXTS: readonly string[] = [
  ...UNIT_TEXTS_BASE,
  ...UNIT_TEXTS_BASE.filter((t) => !t.endsWith('s')).map((t) => `${t}s`),
];

// Python's \W on str patterns: not a letter, not a number, not "_".
const NON_WORD = '[^\\p{L}\\p{N}_]';
const UNIT_RES: RegExp[] = UNIT_TEXTS.map((u) => new RegExp(`(^|${NON_WORD})${u}($|${NON_WORD})`, 'gu'));

// ---------------------------------------------------------------------------------------------------------------
// word2number (w2n.word_to_num), as strip_string uses it

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
  thousand: 1000,
  million: 1000000,
  billion: 1000000000,
};
/** w2n's vocabulary: the number words and "point". */
function isNumberWord(w: string): boolean {
  return w === 'point' || Object.prototype.hasOwnProperty.call(NUMBER_WORDS, w);
}
const DECIMAL_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** word_to_num's outcome: a number (as Python's str() prints it), a ValueError, or another exception. */
export type WordToNum = { kind: 'value'; text: string } | { kind: 'value-error' } | { kind: 'other-error' };

class OtherError extends Error {}

function numberFormation(words: string[]): number {
  const nums = words.map((w) => NUMBER_WORDS[w]);
  if (nums.length === 0) throw new OtherError('IndexError'); // numbers[0] on an empty list
  if (nums.length === 4) return nums[0] * nums[1] + nums[2] + nums[3];
  if (nums.length === 3) return nums[0] * nums[1] + nums[2];
  if (nums.length === 2) return nums.includes(100) ? nums[0] * nums[1] : nums[0] + nums[1];
  return nums[0];
}

/** Value of a string of Unicode decimal digits (Python's int() on `str.isdigit()` text), or null. */
function unicodeDigitsToInt(s: string): string | null {
  if (/^[0-9]+$/.test(s)) return BigInt(s).toString();
  let out = '';
  for (const ch of s) {
    if (!/^\p{Nd}$/u.test(ch)) return null;
    let cp = ch.codePointAt(0)!;
    let k = 0;
    while (k < 60 && /^\p{Nd}$/u.test(String.fromCodePoint(cp - 1))) {
      cp--;
      k++;
    }
    out += String(k % 10);
  }
  return BigInt(out).toString();
}

export function wordToNum(sentence: string): WordToNum {
  try {
    let s = sentence.replace(/-/g, ' ').toLowerCase();
    if (s.length > 0 && /^[\p{Nd}\p{No}]+$/u.test(s)) {
      const v = unicodeDigitsToInt(s);
      return v === null ? { kind: 'value-error' } : { kind: 'value', text: v };
    }
    s = s.trim();
    const words = s.split(/\s+/).filter((w) => w !== '');
    let clean = words.filter(isNumberWord);
    if (clean.length === 0) return { kind: 'value-error' };
    const count = (w: string) => clean.filter((x) => x === w).length;
    if (count('thousand') > 1 || count('million') > 1 || count('billion') > 1 || count('point') > 1) {
      return { kind: 'value-error' };
    }
    let decimals: string[] = [];
    if (count('point') === 1) {
      const p = clean.indexOf('point');
      decimals = clean.slice(p + 1);
      clean = clean.slice(0, p);
    }
    const bi = clean.indexOf('billion');
    const mi = clean.indexOf('million');
    const th = clean.indexOf('thousand');
    if ((th > -1 && (th < mi || th < bi)) || (mi > -1 && mi < bi)) return { kind: 'value-error' };
    let total = 0;
    let isFloat = false;
    if (clean.length > 0) {
      if (clean.length === 1) {
        total += NUMBER_WORDS[clean[0]];
      } else {
        if (bi > -1) total += numberFormation(clean.slice(0, bi)) * 1e9;
        if (mi > -1) total += numberFormation(bi > -1 ? clean.slice(bi + 1, mi) : clean.slice(0, mi)) * 1e6;
        if (th > -1) {
          const from = mi > -1 ? mi + 1 : bi > -1 ? bi + 1 : 0;
          total += numberFormation(clean.slice(from, th)) * 1000;
        }
        let hundreds = 0;
        const last = clean.length - 1;
        if (th > -1 && th !== last) hundreds = numberFormation(clean.slice(th + 1));
        else if (mi > -1 && mi !== last) hundreds = numberFormation(clean.slice(mi + 1));
        else if (bi > -1 && bi !== last) hundreds = numberFormation(clean.slice(bi + 1));
        else if (th === -1 && mi === -1 && bi === -1) hundreds = numberFormation(clean);
        total += hundreds;
      }
    }
    if (decimals.length > 0) {
      if (decimals.every((w) => DECIMAL_WORDS.includes(w))) {
        total += Number(`0.${decimals.map((w) => NUMBER_WORDS[w]).join('')}`);
        isFloat = true;
      }
    }
    return { kind: 'value', text: isFloat ? pyFloat(total) : String(total) };
  } catch (e) {
    if (e instanceof OtherError) return { kind: 'other-error' };
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// strip_string

function fixFracs(s: string): string {
  const parts = s.split('\\frac');
  let out = parts[0];
  for (const sub of parts.slice(1)) {
    out += '\\frac';
    if (sub.length > 0 && sub[0] === '{') {
      out += sub;
      continue;
    }
    if (sub.length < 2) return s;
    const a = sub[0];
    const b = sub[1];
    if (b !== '{') out += `{${a}}{${b}}${sub.slice(2)}`;
    else out += `{${a}}${b}${sub.slice(2)}`;
  }
  return out;
}

/** Python's `str(int(x)) == x` for the a/b check (after `int()` accepts it). */
function canonicalPyInt(x: string): boolean {
  return /^(0|-?[1-9][0-9]*)$/.test(x);
}

function fixASlashB(s: string): string {
  const parts = s.split('/');
  if (parts.length !== 2) return s;
  const [a, b] = parts;
  const aOk = a.includes('sqrt') || canonicalPyInt(a);
  const bOk = b.includes('sqrt') || canonicalPyInt(b);
  if (!aOk || !bOk) return s;
  return `\\frac{${a}}{${b}}`;
}

function fixSqrt(s: string): string {
  if (!s.includes('\\sqrt')) return s;
  return s.replace(/\\sqrt\s*([\p{L}\p{N}_]+)/gu, '\\sqrt{$1}');
}

/** The outcome of strip_string: a string, None (null), or an exception other than ValueError. */
export type StripResult = { kind: 'ok'; value: string | null } | { kind: 'error' };

/** Trinity's `strip_string` (see the module comment). */
export function stripString(input: string): StripResult {
  let s = input.replace(/^\s+|\s+$/g, '');
  s = s.replace(/\n/g, '');
  s = s.replace(/\.+$/, '');
  s = s.split('\\!').join('');
  s = s.split('\\$').join('').split('$').join('');
  s = s.split('%').join('').split('\\%').join('');
  s = s.replace(/\\begin\{array\}\{.*?\}/g, '\\begin{pmatrix}');
  s = s.replace(/\\end\{array\}/g, '\\end{pmatrix}');
  s = s.split('bmatrix').join('pmatrix');
  s = s.split('tfrac').join('frac').split('dfrac').join('frac');
  s = s.split('\\neq').join('\\ne').split('\\leq').join('\\le').split('\\geq').join('\\ge');
  s = s.split('\\left').join('').split('\\right').join('');
  s = s.split('\\{').join('{').split('\\}').join('}');
  s = s.replace(/\\mbox\{.*?\}/g, '');
  s = s.split('\\mathbf').join('');
  s = s.split('^{\\circ}').join('').split('^\\circ').join('');
  s = s.replace(/\\text\{(.*?)\}/g, '$1');
  for (let pass = 0; pass < 2; pass++) {
    for (const re of UNIT_RES) {
      re.lastIndex = 0;
      const next = s.replace(re, '$1$2');
      if (next !== '') s = next;
    }
  }
  const w = wordToNum(s);
  if (w.kind === 'other-error') return { kind: 'error' };
  if (w.kind === 'value') s = w.text;
  s = s.replace(/^[a-zA-Z]\s*=\s*/, '');
  s = s.split('infinity').join('\\infty').split('inf').join('\\infty');
  s = s.replace(/(\p{Nd}+)\.0+([^\p{Nd}]|$)/gu, '$1$2');
  s = s.split(' .').join(' 0.').split('{.').join('{0.');
  if (s.startsWith('.')) s = `0${s}`;
  s = s.split(' ').join('');
  s = fixSqrt(s);
  s = fixFracs(s);
  s = fixASlashB(s);
  if ((s.startsWith('{') && s.endsWith('}')) || (s.startsWith('(') && s.endsWith(')'))) s = s.slice(1, -1);
  if (!s) return { kind: 'ok', value: null };
  return { kind: 'ok', value: s.replace(/^\s+|\s+$/g, '') };
}

/** Trinity's `is_equiv` for `math_boxed_reward`: equal normalised strings (raw equality if normalising fails). */
export function isEquivStrict(a: string | null, b: string | null): boolean {
  if (a === null && b === null) return true;
  if (a === null || b === null) return false;
  const sa = stripString(a);
  const sb = stripString(b);
  if (sa.kind === 'error' || sb.kind === 'error') return a === b;
  return sa.value === sb.value;
}
