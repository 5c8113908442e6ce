/**
 * Python's `json.loads` and `json.dumps` where a reward compares or prints JSON as Trinity does: an integer and a
 * float stay distinct (`1` and `1.0` load as int and float, and dump differently), integers keep every digit, and
 * `dumps` writes Python's separators (`", "`, `": "`), `ensure_ascii` escapes and float repr.
 */
import { pyFloat } from '../../config/python-repr';

/** A JSON value as Python holds it: ints as bigint, floats wrapped, objects as insertion-ordered maps. */
export type PyJson = null | boolean | string | bigint | PyJsonFloat | PyJson[] | Map<string, PyJson>;

export class PyJsonFloat {
  constructor(readonly value: number) {}
}

/** `json.JSONDecodeError`: the text is not JSON. */
export class PyJsonError extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
const CONSTANTS: [string, PyJson][] = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', new PyJsonFloat(NaN)],
  ['Infinity', new PyJsonFloat(Infinity)],
  ['-Infinity', new PyJsonFloat(-Infinity)],
];

/** `json.loads(text)`: JSON plus Python's NaN/Infinity; a duplicate key keeps its last value, as a dict does. */
export function pyJsonLoads(text: string): PyJson {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const fail = (what: string): never => {
    throw new PyJsonError(`${what} at char ${i}`);
  };
  const value = (): PyJson => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out = new Map<string, PyJson>();
      ws();
      if (text[i] === '}') return (i++, out);
      for (;;) {
        ws();
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        const k = string();
        ws();
        if (text[i++] !== ':') fail("Expecting ':' delimiter");
        out.set(k, value());
        ws();
        const d = text[i++];
        if (d === '}') return out;
        if (d !== ',') fail("Expecting ',' delimiter");
      }
    }
    if (c === '[') {
      i++;
      const out: PyJson[] = [];
      ws();
      if (text[i] === ']') return (i++, out);
      for (;;) {
        out.push(value());
        ws();
        const d = text[i++];
        if (d === ']') return out;
        if (d !== ',') fail("Expecting ',' delimiter");
      }
    }
    if (c === '"') return string();
    for (const [word, v] of CONSTANTS) if (text.startsWith(word, i)) return ((i += word.length), v);
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('Expecting value');
    i += m[0].length;
    return m[1] === undefined && m[2] === undefined ? BigInt(m[0]) : new PyJsonFloat(Number(m[0]));
  };
  const string = (): string => {
    const start = i;
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('Unterminated string');
      if (c === '"') break;
      if (c === '\\') i++;
      else if (c < ' ') fail('Invalid control character');
      i++;
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('Invalid \\escape');
    }
  };
  const v = value();
  ws();
  if (i < text.length) fail('Extra data');
  return v;
}

/** `json.dumps(value, sort_keys=...)` with Python's defaults (ensure_ascii, ", " and ": " separators). */
export function pyJsonDumps(v: PyJson, opts: { sortKeys?: boolean } = {}): string {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return asciiString(v);
  if (v instanceof PyJsonFloat) {
    if (Number.isNaN(v.value)) return 'NaN';
    if (!Number.isFinite(v.value)) return v.value > 0 ? 'Infinity' : '-Infinity';
    return pyFloat(v.value);
  }
  if (Array.isArray(v)) return `[${v.map((x) => pyJsonDumps(x, opts)).join(', ')}]`;
  const keys = [...v.keys()];
  if (opts.sortKeys) keys.sort(codePointOrder);
  return `{${keys.map((k) => `${asciiString(k)}: ${pyJsonDumps(v.get(k)!, opts)}`).join(', ')}}`;
}

/** Python sorts str keys by code point; JavaScript's default sort compares UTF-16 units. */
function codePointOrder(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k] - y[k];
  return x.length - y.length;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function asciiString(s: string): string {
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    const code = s.charCodeAt(k);
    if (SHORT_ESCAPES[c]) out += SHORT_ESCAPES[c];
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return out + '"';
}

/** Python's `dict` test for a loaded value. */
export function isPyJsonObject(v: PyJson): v is Map<string, PyJson> {
  return v instanceof Map;
}
