/**
 * How Python prints the values a config holds: `str()` (what OmegaConf hands to string fields and string
 * interpolations) and `repr()` (inside lists and dicts), for every caller that must print as Python does — the
 * interpolation resolver, the merge of string fields, and the reward functions' number normalisers.
 */

/** A float that must print as one even when integral (the grammar's FLOAT token: `1.0` stays `1.0`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** Python's repr of a float: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = Math.abs(x).toExponential().split('e');
  const exp = Number(expText);
  const digits = mant.replace('.', '');
  let r: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const intPart = digits.length > exp + 1 ? digits.slice(0, exp + 1) : digits + '0'.repeat(exp + 1 - digits.length);
      r = `${intPart}.${digits.slice(exp + 1) || '0'}`;
    } else r = `0.${'0'.repeat(-exp - 1)}${digits}`;
  } else {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    r = `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return x < 0 ? `-${r}` : r;
}

/** Python's repr of an int held as a double: all digits, never an exponent. */
export function pyInt(x: number): string {
  if (x === 0) return '0';
  return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
}

/** Python's repr of a str: single quotes unless the text has one and no double quote, escapes as CPython. */
export function pyStrRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c <= 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + q;
}

export function isPyDict(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** Python's repr (`['a', 1]`, `{'k': 'v'}`); a container that holds itself prints `[...]` / `{...}`. */
export function pyRepr(v: unknown, seen = new Set<object>()): string {
  if (typeof v === 'string') return pyStrRepr(v);
  if (Array.isArray(v)) {
    if (seen.has(v)) return '[...]';
    seen.add(v);
    const s = `[${v.map((x) => pyRepr(x, seen)).join(', ')}]`;
    seen.delete(v);
    return s;
  }
  if (isPyDict(v)) {
    if (seen.has(v)) return '{...}';
    seen.add(v);
    const s = `{${Object.keys(v)
      .map((k) => `${pyStrRepr(k)}: ${pyRepr(v[k], seen)}`)
      .join(', ')}}`;
    seen.delete(v);
    return s;
  }
  return pyStr(v);
}

/** Python's `str()` of a value as OmegaConf would hold it (True/False/None, 1e-05, ['a', 1], {'k': 'v'}). */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v instanceof PyFloat) return pyFloat(v.value);
  if (typeof v === 'number') return Number.isInteger(v) ? pyInt(v) : pyFloat(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'object') return pyRepr(v);
  return String(v);
}

/** The Python type name of a value (`str`, `int`, `float`, `NoneType`, `list`, `dict`), for error messages. */
export function pyTypeName(v: unknown): string {
  if (typeof v === 'string') return 'str';
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof PyFloat) return 'float';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'dict';
  return typeof v;
}
