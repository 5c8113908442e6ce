/**
 * OmegaConf 2.3 string interpolation: parser and resolver.
 *
 * This re-implements, from the grammar (`OmegaConfGrammarLexer.g4` / `OmegaConfGrammarParser.g4`, v2.3) and the
 * documented semantics, how OmegaConf reads a YAML string value such as `run_${name}`, `${oc.env:HOME,/tmp}` or
 * `${..lr}`. It is pure (no I/O): config values come from `ResolveContext.lookup`, environment variables from
 * `ResolveContext.env`.
 *
 * Lexer modes are mirrored exactly:
 *  - top level: only `${`, `\${` (escaped) and backslash runs in front of `${` are special;
 *  - inside `${ ... }` (interpolation mode): keys, `.`, `[`, `]`, `:` (switches to value mode), `}`;
 *  - after `name:` (value mode): resolver arguments, i.e. primitives, quoted strings, `[lists]`, `{dicts}`;
 *  - inside quotes: like top level, plus escaped quotes.
 *
 * Everything is linear in the input length: hand-written scanners, no backtracking regular expressions, nesting
 * capped (`MAX_NESTING`), and parse / resolve never throw.
 */

// ---------------------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------------------

/** Keys and list indices from the config root. */
export type ConfigPath = (string | number)[];

/** Literal text between interpolations. `value` is the text after un-escaping (`\${` gives `${`). */
export interface TextPart {
  type: 'text';
  value: string;
  start: number;
  end: number;
}

/** Where one key of a node interpolation was written (for `${a[0].b}`: `a`, `0` (bracket: true), `b`). */
export interface KeySpan {
  start: number;
  end: number;
  /** written as `[key]` rather than `.key` */
  bracket: boolean;
}

export interface NodeRef {
  /**
   * Number of leading dots. 0: absolute (`${a.b}`, from the config root). 1: `${.x}`, a sibling (key of the container
   * holding the value). 2: `${..x}`, a key of that container's parent. Each extra dot climbs one more level, so the
   * number of levels climbed above the holding container is `up - 1`.
   */
  up: number;
  /** The keys in order; a nested `${...}` key is kept as its AST node (`${a.${b}}`). */
  keys: (string | Interpolation)[];
  /** Source range of each entry of `keys` (same length). */
  spans: KeySpan[];
}

/** `${a.b}`, `${.x}`, `${..x}`, `${a[0].b}`, `${a.${b}}` */
export interface NodeInterpolation {
  type: 'node';
  ref: NodeRef;
  start: number;
  end: number;
}

/** `${oc.env:VAR,default}` */
export interface ResolverInterpolation {
  type: 'resolver';
  /** The name as written, e.g. `oc.env` (a nested `${...}` in the name appears as its source text). */
  name: string;
  /** Name components separated by dots; nested interpolations (`${${x}:a}`, `${ns.${x}:a}`) kept as nodes. */
  nameParts: (string | Interpolation)[];
  nameStart: number;
  nameEnd: number;
  args: Arg[];
  start: number;
  end: number;
}

export type Interpolation = NodeInterpolation | ResolverInterpolation;
export type Part = TextPart | Interpolation;

/**
 * A resolver argument (an `element` of the grammar).
 * - an Interpolation when the argument is exactly one `${...}` (its value is passed as is, not stringified);
 * - `literal`: a single token: `abc` (string), `10` (int), `1.5` / `1e-3` / `inf` / `nan` (float), `true` (bool),
 *   `null`, an escape such as `\,`; also an omitted argument (`${f:a,}`): `value: ''`, `raw: ''`, `start === end`;
 * - `string`: a quoted string (`'a,b'`, `"x ${y}"`) or several unquoted tokens (`/tmp/${x}`, `a b`), concatenated;
 * - `list` / `dict`.
 */
export type Arg = Interpolation | LiteralArg | StringArg | ListArg | DictArg;

export interface LiteralArg {
  type: 'literal';
  value: string | number | boolean | null;
  /** true for FLOAT tokens (`1.0` is a Python float and prints as `1.0`) */
  float: boolean;
  raw: string;
  start: number;
  end: number;
}

export interface StringArg {
  type: 'string';
  /** the quote character, or null for unquoted text made of several tokens */
  quote: "'" | '"' | null;
  parts: Part[];
  start: number;
  end: number;
}

export interface ListArg {
  type: 'list';
  items: Arg[];
  start: number;
  end: number;
}

export interface DictEntry {
  /** dict keys are typed like literals (`{0: a}` has the int key 0) and never contain interpolations */
  key: LiteralArg;
  value: Arg;
}

export interface DictArg {
  type: 'dict';
  entries: DictEntry[];
  start: number;
  end: number;
}

export interface ParseError {
  /** range of the whole failing top-level `${...}` (to the end of the text when it is not closed) */
  start: number;
  end: number;
  /** the exact offset where the grammar was violated */
  offset: number;
  message: string;
}

export type ParsedValue =
  | { kind: 'plain' }
  | {
      kind: 'interpolated';
      /** true when the value is exactly one `${...}` (OmegaConf then returns the referenced value with its type) */
      whole: boolean;
      /** Text and interpolations in order. A `${...}` that failed to parse appears as a text part with its raw text. */
      parts: Part[];
      errors: ParseError[];
    };

export interface ResolveContext {
  /** path (keys/indices from the config root) of the node whose value is `text` */
  path: (string | number)[];
  /** returns the raw value stored at an absolute path, or not-found. The raw value may itself be a string with interpolations. */
  lookup(path: (string | number)[]): { found: true; value: unknown } | { found: false; /** longest existing prefix length, for messages */ existingPrefix: number };
  env: Record<string, string | undefined>;
  /** resolvers beyond the built-ins; return value or throw Error(message) */
  resolvers?: Record<string, (args: unknown[]) => unknown>;
}

export type ResolveResult = { ok: true; value: unknown; refs: ResolvedRef[] } | { ok: false; errors: ResolveError[]; refs: ResolvedRef[] };

export interface ResolvedRef {
  start: number;
  end: number;
  kind: 'node' | 'env';
  /** node: absolute path of the node the value comes from; env: the variable name */
  target: (string | number)[] | string;
  value?: unknown;
}

export interface ResolveError {
  start: number;
  end: number;
  code: 'parse' | 'missing-key' | 'missing-env' | 'cycle' | 'unknown-resolver' | 'resolver-error' | 'type';
  message: string;
  /** missing-key / type / cycle: dotted config path (`a.b[0].c`); missing-env: variable; resolvers: resolver name */
  target?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Cheap helpers: detection and scanning
// ---------------------------------------------------------------------------------------------------------------

/**
 * OmegaConf treats every string containing `${` as an interpolation (escaped ones included: `\${x}` must go through
 * the grammar to be un-escaped to `${x}`).
 */
export function isInterpolated(text: string): boolean {
  return text.includes('${');
}

const BS = 92; // \
const DOLLAR = 36; // $
const LBRACE = 123; // {
const RBRACE = 125; // }
const SQ = 39; // '
const DQ = 34; // "
const COLON_C = 58; // :
const SPACE = 32;
const TAB = 9;

const M_INTER = 0;
const M_VALUE = 1;
const M_SQ = 2;
const M_DQ = 3;

function isEscapable(c: number): boolean {
  // characters that form an ESC token after a backslash in value mode: \\ \( \) \[ \] \{ \} \: \= \, \<space> \<tab>
  return c === BS || c === 40 || c === 41 || c === 91 || c === 93 || c === LBRACE || c === RBRACE || c === COLON_C || c === 61 || c === 44 || c === SPACE || c === TAB;
}

/**
 * End (exclusive) of the interpolation opening at `start` (where `text` has `${`), following the lexer's mode
 * changes (interpolation / value / quoted); `text.length` when it is never closed. Does not validate.
 */
function scanInterpolationEnd(text: string, start: number): number {
  const n = text.length;
  const stack: number[] = [M_INTER];
  let i = start + 2;
  while (i < n) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (top === M_INTER) {
      if (c === DOLLAR && text.charCodeAt(i + 1) === LBRACE) {
        stack.push(M_INTER);
        i += 2;
      } else if (c === COLON_C) {
        stack[stack.length - 1] = M_VALUE;
        i++;
      } else if (c === RBRACE) {
        stack.pop();
        i++;
        if (stack.length === 0) return i;
      } else i++;
    } else if (top === M_VALUE) {
      if (c === BS) i += isEscapable(text.charCodeAt(i + 1)) ? 2 : 1;
      else if (c === DOLLAR && text.charCodeAt(i + 1) === LBRACE) {
        stack.push(M_INTER);
        i += 2;
      } else if (c === LBRACE) {
        stack.push(M_VALUE);
        i++;
      } else if (c === RBRACE) {
        stack.pop();
        i++;
        if (stack.length === 0) return i;
      } else if (c === SQ) {
        stack.push(M_SQ);
        i++;
      } else if (c === DQ) {
        stack.push(M_DQ);
        i++;
      } else i++;
    } else {
      const q = top === M_SQ ? SQ : DQ;
      if (c === BS) {
        let j = i;
        while (j < n && text.charCodeAt(j) === BS) j++;
        const odd = (j - i) % 2 === 1;
        if (text.charCodeAt(j) === DOLLAR && text.charCodeAt(j + 1) === LBRACE) i = odd ? j + 2 : j;
        else if (text.charCodeAt(j) === q) i = odd ? j + 1 : j;
        else i = j;
      } else if (c === DOLLAR && text.charCodeAt(i + 1) === LBRACE) {
        stack.push(M_INTER);
        i += 2;
      } else if (c === q) {
        stack.pop();
        i++;
      } else i++;
    }
  }
  return n;
}

/**
 * Ranges of the top-level `${...}` in `text` (escaped `\${` skipped; nested ones are inside their parent's range;
 * an unclosed one runs to the end of the text). Cheap: no AST, no validation.
 */
export function findInterpolations(text: string): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const n = text.length;
  let i = text.indexOf('${');
  if (i < 0) return out;
  i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === BS) {
      let j = i;
      while (j < n && text.charCodeAt(j) === BS) j++;
      if ((j - i) % 2 === 1 && text.charCodeAt(j) === DOLLAR && text.charCodeAt(j + 1) === LBRACE) i = j + 2;
      else i = j;
    } else if (c === DOLLAR && text.charCodeAt(i + 1) === LBRACE) {
      const end = scanInterpolationEnd(text, i);
      out.push({ start: i, end });
      i = end;
    } else i++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------------------------

/** Deepest nesting of `${`, quotes, lists and dicts accepted (OmegaConf's Python parser would hit its recursion limit). */
const MAX_NESTING = 100;

type Kind =
  | 'EOF'
  | 'BAD'
  | 'OPEN' // ${
  | 'COLON'
  | 'CLOSE' // } closing a node interpolation
  | 'DOT'
  | 'LB'
  | 'RB'
  | 'ID'
  | 'KEY' // INTER_KEY
  | 'BOPEN'
  | 'BCLOSE'
  | 'QUOTE'
  | 'COMMA'
  | 'INT'
  | 'FLOAT'
  | 'BOOL'
  | 'NULL'
  | 'UQ' // UNQUOTED_CHAR
  | 'ESC'
  | 'WS';

interface Tok {
  k: Kind;
  s: number;
  e: number;
  why?: string;
}

const PRIMITIVE_KINDS = new Set<Kind>(['ID', 'NULL', 'INT', 'FLOAT', 'BOOL', 'UQ', 'COLON', 'ESC', 'WS', 'OPEN']);
const DICT_KEY_KINDS = new Set<Kind>(['ID', 'NULL', 'INT', 'FLOAT', 'BOOL', 'UQ', 'ESC', 'WS']);

class ParseFail {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}
/** INTER_KEY: ~[\\{}()[\]:. \t'"] */
function isInterKeyChar(c: number): boolean {
  return !(c === BS || c === LBRACE || c === RBRACE || c === 40 || c === 41 || c === 91 || c === 93 || c === COLON_C || c === 46 || c === SPACE || c === TAB || c === SQ || c === DQ);
}
function isIdChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 95 || c === 45;
}
/** UNQUOTED_CHAR: [/\-\\+.$%*@?|] */
function isUnquotedChar(c: number): boolean {
  return c === 47 || c === 45 || c === BS || c === 43 || c === 46 || c === DOLLAR || c === 37 || c === 42 || c === 64 || c === 63 || c === 124;
}

function describe(text: string, t: Tok): string {
  if (t.k === 'EOF') return 'end of text';
  const s = text.slice(t.s, Math.min(t.e, t.s + 20)).trim() || text.slice(t.s, t.s + 1);
  return `'${s}'`;
}

function halve(raw: string): string {
  // un-escape an escape sequence the way OmegaConf does: keep every second character (`text[1::2]`)
  let out = '';
  for (let i = 1; i < raw.length; i += 2) out += raw[i];
  return out;
}

function toInt(raw: string): number {
  const v = Number(raw.replace(/_/g, ''));
  return v === 0 ? 0 : v;
}

function toFloat(raw: string): number {
  const s = raw.replace(/_/g, '');
  const body = s.replace(/^[+-]/, '').toLowerCase();
  const neg = s.startsWith('-');
  if (body === 'inf') return neg ? -Infinity : Infinity;
  if (body === 'nan') return NaN;
  return Number(s);
}

class Parser {
  private pos = 0;
  private depth = 0;
  private readonly n: number;

  constructor(private readonly src: string) {
    this.n = src.length;
  }

  // ---- entry points ----

  parseTop(): { parts: Part[]; errors: ParseError[] } {
    const src = this.src;
    const n = this.n;
    const parts: Part[] = [];
    const errors: ParseError[] = [];
    let buf = '';
    let bufStart = 0;
    let i = 0;
    const flush = (end: number) => {
      if (end > bufStart) parts.push({ type: 'text', value: buf, start: bufStart, end });
      buf = '';
    };
    while (i < n) {
      const c = src.charCodeAt(i);
      if (c === DOLLAR && src.charCodeAt(i + 1) === LBRACE) {
        let node: Interpolation;
        try {
          this.pos = i;
          this.depth = 0;
          node = this.parseInterp();
        } catch (e) {
          if (!(e instanceof ParseFail)) throw e;
          const end = Math.max(scanInterpolationEnd(src, i), i + 2);
          errors.push({ start: i, end, offset: e.offset, message: e.message });
          buf += src.slice(i, end);
          i = end;
          continue;
        }
        flush(i);
        parts.push(node);
        i = node.end;
        bufStart = i;
        continue;
      }
      if (c === BS) {
        let j = i;
        while (j < n && src.charCodeAt(j) === BS) j++;
        const nb = j - i;
        if (src.charCodeAt(j) === DOLLAR && src.charCodeAt(j + 1) === LBRACE) {
          if (nb % 2 === 1) {
            // ESC_INTER: an odd run of backslashes then `${`: escaped interpolation, backslash pairs halved
            buf += '\\'.repeat((nb - 1) / 2) + '${';
            i = j + 2;
          } else {
            // TOP_ESC followed by an interpolation: halved
            buf += '\\'.repeat(nb / 2);
            i = j;
          }
        } else {
          buf += src.slice(i, j); // backslashes anywhere else are kept as written
          i = j;
        }
        continue;
      }
      if (c === DOLLAR) {
        buf += '$';
        i++;
        continue;
      }
      let k = i + 1;
      while (k < n) {
        const d = src.charCodeAt(k);
        if (d === DOLLAR || d === BS) break;
        k++;
      }
      buf += src.slice(i, k);
      i = k;
    }
    flush(n);
    return { parts, errors };
  }

  /** The grammar's `singleElement` rule in value mode (what `oc.decode` parses). */
  parseSingle(): Arg {
    this.pos = 0;
    this.depth = 0;
    const t = this.vpeek();
    if (t.k === 'EOF') this.fail(0, 'expected a value but the text is empty');
    const el = this.parseElement();
    const e = this.vpeek();
    if (e.k !== 'EOF') this.failTok(e, 'expected end of text');
    return el;
  }

  // ---- errors / nesting ----

  private fail(offset: number, message: string): never {
    throw new ParseFail(offset, message);
  }

  private failTok(t: Tok, expected: string): never {
    if (t.k === 'BAD') this.fail(t.s, t.why ?? `unexpected ${describe(this.src, t)}`);
    if (t.k === 'EOF') this.fail(this.n, `unexpected end of text: ${expected}`);
    this.fail(t.s, `unexpected ${describe(this.src, t)}: ${expected}`);
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) this.fail(this.pos, `nesting deeper than ${MAX_NESTING} levels`);
  }

  // ---- tokens ----

  private skipWs(p: number): number {
    const src = this.src;
    while (p < this.n) {
      const c = src.charCodeAt(p);
      if (c !== SPACE && c !== TAB) break;
      p++;
    }
    return p;
  }

  /** next token in interpolation mode */
  private ipeek(): Tok {
    const src = this.src;
    const p = this.pos;
    if (p >= this.n) return { k: 'EOF', s: p, e: p };
    const c = src.charCodeAt(p);
    if (c === SPACE || c === TAB) {
      const q = this.skipWs(p);
      const d = src.charCodeAt(q);
      if (d === COLON_C) return { k: 'COLON', s: p, e: this.skipWs(q + 1) };
      if (d === RBRACE) return { k: 'CLOSE', s: p, e: q + 1 };
      return { k: 'BAD', s: p, e: q, why: 'whitespace is not allowed inside an interpolation key' };
    }
    if (c === DOLLAR && src.charCodeAt(p + 1) === LBRACE) return { k: 'OPEN', s: p, e: p + 2 };
    if (c === COLON_C) return { k: 'COLON', s: p, e: this.skipWs(p + 1) };
    if (c === RBRACE) return { k: 'CLOSE', s: p, e: p + 1 };
    if (c === 46) return { k: 'DOT', s: p, e: p + 1 };
    if (c === 91) return { k: 'LB', s: p, e: p + 1 };
    if (c === 93) return { k: 'RB', s: p, e: p + 1 };
    if (isInterKeyChar(c)) {
      // INTER_KEY takes the longest run; when that run is exactly an ID, ID wins (declared first)
      let ident = isAlpha(c) || c === 95;
      let q = p;
      while (q < this.n) {
        const d = src.charCodeAt(q);
        if (!isInterKeyChar(d)) break;
        if (!isIdChar(d)) ident = false;
        q++;
      }
      return { k: ident ? 'ID' : 'KEY', s: p, e: q };
    }
    return { k: 'BAD', s: p, e: p + 1, why: `character '${src[p]}' is not allowed in an interpolation key` };
  }

  /** next token in value mode (resolver arguments) */
  private vpeek(): Tok {
    const src = this.src;
    const p = this.pos;
    const n = this.n;
    if (p >= n) return { k: 'EOF', s: p, e: p };
    const c = src.charCodeAt(p);
    if (c === SPACE || c === TAB) {
      const q = this.skipWs(p);
      const d = src.charCodeAt(q);
      if (d === RBRACE) return { k: 'BCLOSE', s: p, e: q + 1 };
      if (d === 44) return { k: 'COMMA', s: p, e: this.skipWs(q + 1) };
      if (d === 93) return { k: 'RB', s: p, e: q + 1 };
      if (d === COLON_C) return { k: 'COLON', s: p, e: this.skipWs(q + 1) };
      return { k: 'WS', s: p, e: q };
    }
    switch (c) {
      case DOLLAR:
        if (src.charCodeAt(p + 1) === LBRACE) return { k: 'OPEN', s: p, e: p + 2 };
        return { k: 'UQ', s: p, e: p + 1 };
      case LBRACE:
        return { k: 'BOPEN', s: p, e: this.skipWs(p + 1) };
      case RBRACE:
        return { k: 'BCLOSE', s: p, e: p + 1 };
      case SQ:
      case DQ:
        return { k: 'QUOTE', s: p, e: p + 1 };
      case 44:
        return { k: 'COMMA', s: p, e: this.skipWs(p + 1) };
      case 91:
        return { k: 'LB', s: p, e: this.skipWs(p + 1) };
      case 93:
        return { k: 'RB', s: p, e: p + 1 };
      case COLON_C:
        return { k: 'COLON', s: p, e: this.skipWs(p + 1) };
      case BS: {
        if (!isEscapable(src.charCodeAt(p + 1))) return { k: 'UQ', s: p, e: p + 1 };
        let q = p;
        while (q < n && src.charCodeAt(q) === BS && isEscapable(src.charCodeAt(q + 1))) q += 2;
        return { k: 'ESC', s: p, e: q };
      }
    }
    if (isDigit(c) || c === 43 || c === 45 || c === 46) {
      const num = this.matchNumber(p);
      if (num) return num;
      return { k: 'UQ', s: p, e: p + 1 };
    }
    if (isAlpha(c) || c === 95) {
      let q = p + 1;
      while (q < n && isIdChar(src.charCodeAt(q))) q++;
      if (q - p <= 5) {
        const w = src.slice(p, q).toLowerCase();
        if (w === 'true' || w === 'false') return { k: 'BOOL', s: p, e: q };
        if (w === 'null') return { k: 'NULL', s: p, e: q };
        if (w === 'inf' || w === 'nan') return { k: 'FLOAT', s: p, e: q };
      }
      return { k: 'ID', s: p, e: q };
    }
    if (isUnquotedChar(c)) return { k: 'UQ', s: p, e: p + 1 };
    const ch = String.fromCodePoint(src.codePointAt(p) ?? c);
    return { k: 'BAD', s: p, e: p + ch.length, why: `character ${JSON.stringify(ch)} is not allowed in an unquoted resolver argument (quote the argument)` };
  }

  /** digits, optionally separated by single underscores: DIGIT ('_'? DIGIT)* (the first digit already consumed) */
  private digitsTail(r: number): number {
    const src = this.src;
    for (;;) {
      const c = src.charCodeAt(r);
      if (isDigit(c)) r++;
      else if (c === 95 && isDigit(src.charCodeAt(r + 1))) r += 2;
      else return r;
    }
  }

  /** longest INT / FLOAT token at p, or null */
  private matchNumber(p: number): Tok | null {
    const src = this.src;
    let q = p;
    const c0 = src.charCodeAt(q);
    if (c0 === 43 || c0 === 45) q++;
    const kw = src.slice(q, q + 3).toLowerCase();
    if (kw === 'inf' || kw === 'nan') return { k: 'FLOAT', s: p, e: q + 3 };
    let intEnd = -1;
    const c = src.charCodeAt(q);
    if (c === 48) intEnd = q + 1;
    else if (c >= 49 && c <= 57) intEnd = this.digitsTail(q + 1);
    let best = intEnd;
    let isFloat = false;
    let base = intEnd;
    const dot = intEnd >= 0 ? intEnd : q;
    if (src.charCodeAt(dot) === 46) {
      let pf = -1;
      if (isDigit(src.charCodeAt(dot + 1))) pf = this.digitsTail(dot + 2);
      else if (intEnd >= 0) pf = dot + 1;
      if (pf >= 0) {
        best = pf;
        base = pf;
        isFloat = true;
      }
    }
    if (base >= 0) {
      const e = src.charCodeAt(base);
      if (e === 101 || e === 69) {
        let r = base + 1;
        const sgn = src.charCodeAt(r);
        if (sgn === 43 || sgn === 45) r++;
        if (isDigit(src.charCodeAt(r))) {
          best = this.digitsTail(r + 1);
          isFloat = true;
        }
      }
    }
    if (best < 0) return null;
    return { k: isFloat ? 'FLOAT' : 'INT', s: p, e: best };
  }

  // ---- interpolations ----

  /** `this.pos` is at `${` */
  private parseInterp(): Interpolation {
    const src = this.src;
    const start = this.pos;
    this.enter();
    try {
      this.pos = this.skipWs(start + 2);
      let up = 0;
      let t = this.ipeek();
      while (t.k === 'DOT') {
        up++;
        this.pos = t.e;
        t = this.ipeek();
      }
      const keys: (string | Interpolation)[] = [];
      const spans: KeySpan[] = [];
      let bracketUsed = false;
      let interKeyUsed = false;
      const nameStart = t.s;
      let nameEnd = t.s;
      for (;;) {
        let bracket = false;
        if (t.k === 'LB') {
          bracket = true;
          bracketUsed = true;
          this.pos = t.e;
          t = this.ipeek();
        }
        let key: string | Interpolation;
        const ks = t.s;
        let ke: number;
        if (t.k === 'OPEN') {
          key = this.parseInterp();
          ke = key.end;
        } else if (t.k === 'ID' || t.k === 'KEY') {
          key = src.slice(t.s, t.e);
          if (t.k === 'KEY') interKeyUsed = true;
          ke = t.e;
          this.pos = t.e;
        } else if (t.k === 'CLOSE' && keys.length === 0 && up === 0 && !bracket) {
          this.fail(t.s, 'empty interpolation: expected a key or a resolver name');
        } else {
          this.failTok(t, up > 0 && keys.length === 0 && !bracket ? `expected a key after '${'.'.repeat(up)}'` : 'expected a key');
        }
        if (bracket) {
          const rb = this.ipeek();
          if (rb.k !== 'RB') this.failTok(rb, "expected ']'");
          this.pos = rb.e;
        }
        keys.push(key);
        spans.push({ start: ks, end: ke, bracket });
        nameEnd = ke;
        t = this.ipeek();
        if (t.k === 'DOT') {
          this.pos = t.e;
          t = this.ipeek();
          if (t.k === 'LB') this.failTok(t, "expected a key after '.'");
          continue;
        }
        if (t.k === 'LB') continue;
        break;
      }
      if (t.k === 'CLOSE') {
        this.pos = t.e;
        return { type: 'node', ref: { up, keys, spans }, start, end: t.e };
      }
      if (t.k === 'COLON') {
        if (up > 0 || bracketUsed || interKeyUsed) {
          this.fail(nameStart, `invalid resolver name '${src.slice(nameStart, nameEnd)}': expected identifiers separated by dots, like oc.env`);
        }
        this.pos = t.e;
        let args: Arg[] = [];
        const v = this.vpeek();
        if (v.k !== 'BCLOSE') args = this.parseSequence('BCLOSE');
        const close = this.vpeek();
        if (close.k !== 'BCLOSE') this.failTok(close, "expected ',' or '}'");
        this.pos = close.e;
        return {
          type: 'resolver',
          name: src.slice(nameStart, nameEnd),
          nameParts: keys,
          nameStart,
          nameEnd,
          args,
          start,
          end: close.e,
        };
      }
      return this.failTok(t, keys.length === 1 && !bracketUsed ? "expected '.', '[', ':' or '}'" : "expected '.', '[' or '}'");
    } finally {
      this.depth--;
    }
  }

  // ---- value mode ----

  private parseSequence(close: 'BCLOSE' | 'RB'): Arg[] {
    const items: Arg[] = [];
    let prevComma = true;
    for (;;) {
      const t = this.vpeek();
      if (t.k === 'COMMA') {
        if (prevComma) items.push(emptyArg(t.s));
        prevComma = true;
        this.pos = t.e;
        continue;
      }
      if (t.k === close) {
        if (prevComma) items.push(emptyArg(t.s));
        return items;
      }
      if (!prevComma) this.failTok(t, close === 'RB' ? "expected ',' or ']'" : "expected ',' or '}'");
      items.push(this.parseElement());
      prevComma = false;
    }
  }

  private parseElement(): Arg {
    const t = this.vpeek();
    if (t.k === 'QUOTE') return this.parseQuoted();
    if (t.k === 'LB') return this.parseList();
    if (t.k === 'BOPEN') return this.parseDict();
    if (PRIMITIVE_KINDS.has(t.k)) return this.parsePrimitive();
    return this.failTok(t, 'expected a value');
  }

  private literal(t: Tok): LiteralArg {
    const raw = this.src.slice(t.s, t.e);
    let value: LiteralArg['value'] = raw;
    let float = false;
    switch (t.k) {
      case 'NULL':
        value = null;
        break;
      case 'BOOL':
        value = raw.toLowerCase() === 'true';
        break;
      case 'INT':
        value = toInt(raw);
        break;
      case 'FLOAT':
        value = toFloat(raw);
        float = true;
        break;
      case 'ESC':
        value = halve(raw);
        break;
    }
    return { type: 'literal', value, float, raw, start: t.s, end: t.e };
  }

  private parsePrimitive(): Arg {
    const start = this.pos;
    const items: (Tok | Interpolation)[] = [];
    for (;;) {
      const t = this.vpeek();
      if (!PRIMITIVE_KINDS.has(t.k)) break;
      if (t.k === 'OPEN') items.push(this.parseInterp());
      else {
        items.push(t);
        this.pos = t.e;
      }
    }
    if (items.length === 1) {
      const only = items[0];
      return 'type' in only ? only : this.literal(only);
    }
    const parts: Part[] = [];
    let buf = '';
    let bufStart = start;
    let last = start;
    for (const it of items) {
      if ('type' in it) {
        if (it.start > bufStart) parts.push({ type: 'text', value: buf, start: bufStart, end: it.start });
        buf = '';
        parts.push(it);
        bufStart = it.end;
        last = it.end;
      } else {
        const raw = this.src.slice(it.s, it.e);
        buf += it.k === 'ESC' ? halve(raw) : raw;
        last = it.e;
      }
    }
    if (last > bufStart) parts.push({ type: 'text', value: buf, start: bufStart, end: last });
    return { type: 'string', quote: null, parts, start, end: last };
  }

  private parseList(): ListArg {
    const start = this.pos;
    this.enter();
    try {
      this.pos = this.vpeek().e; // [
      let items: Arg[] = [];
      if (this.vpeek().k !== 'RB') items = this.parseSequence('RB');
      const rb = this.vpeek();
      if (rb.k !== 'RB') this.failTok(rb, "expected ',' or ']'");
      this.pos = rb.e;
      return { type: 'list', items, start, end: rb.e };
    } finally {
      this.depth--;
    }
  }

  private parseDict(): DictArg {
    const start = this.pos;
    this.enter();
    try {
      this.pos = this.vpeek().e; // {
      const entries: DictEntry[] = [];
      let t = this.vpeek();
      if (t.k === 'BCLOSE') {
        this.pos = t.e;
        return { type: 'dict', entries, start, end: t.e };
      }
      for (;;) {
        const keyToks: Tok[] = [];
        for (;;) {
          const k = this.vpeek();
          if (!DICT_KEY_KINDS.has(k.k)) break;
          keyToks.push(k);
          this.pos = k.e;
        }
        if (keyToks.length === 0) this.failTok(this.vpeek(), 'expected a dictionary key (unquoted, without interpolations)');
        const colon = this.vpeek();
        if (colon.k !== 'COLON') this.failTok(colon, "expected ':' after the dictionary key");
        this.pos = colon.e;
        let key: LiteralArg;
        if (keyToks.length === 1) key = this.literal(keyToks[0]);
        else {
          const ks = keyToks[0].s;
          const ke = keyToks[keyToks.length - 1].e;
          let v = '';
          for (const k of keyToks) {
            const raw = this.src.slice(k.s, k.e);
            v += k.k === 'ESC' ? halve(raw) : raw;
          }
          key = { type: 'literal', value: v, float: false, raw: this.src.slice(ks, ke), start: ks, end: ke };
        }
        const value = this.parseElement();
        entries.push({ key, value });
        t = this.vpeek();
        if (t.k === 'COMMA') {
          this.pos = t.e;
          continue;
        }
        if (t.k === 'BCLOSE') {
          this.pos = t.e;
          return { type: 'dict', entries, start, end: t.e };
        }
        this.failTok(t, "expected ',' or '}'");
      }
    } finally {
      this.depth--;
    }
  }

  private parseQuoted(): StringArg {
    const src = this.src;
    const n = this.n;
    const start = this.pos;
    const qc = src.charCodeAt(start);
    const quote = qc === SQ ? "'" : '"';
    this.enter();
    try {
      let p = start + 1;
      const parts: Part[] = [];
      let buf = '';
      let bufStart = p;
      for (;;) {
        if (p >= n) this.fail(n, `unterminated quoted string (missing ${quote})`);
        const c = src.charCodeAt(p);
        if (c === qc) {
          if (p > bufStart) parts.push({ type: 'text', value: buf, start: bufStart, end: p });
          this.pos = p + 1;
          return { type: 'string', quote, parts, start, end: p + 1 };
        }
        if (c === DOLLAR && src.charCodeAt(p + 1) === LBRACE) {
          if (p > bufStart) parts.push({ type: 'text', value: buf, start: bufStart, end: p });
          buf = '';
          this.pos = p;
          const node = this.parseInterp();
          parts.push(node);
          p = node.end;
          bufStart = p;
          continue;
        }
        if (c === BS) {
          let j = p;
          while (j < n && src.charCodeAt(j) === BS) j++;
          const nb = j - p;
          const odd = nb % 2 === 1;
          if (src.charCodeAt(j) === DOLLAR && src.charCodeAt(j + 1) === LBRACE) {
            if (odd) {
              buf += '\\'.repeat((nb - 1) / 2) + '${';
              p = j + 2;
            } else {
              buf += '\\'.repeat(nb / 2);
              p = j;
            }
          } else if (src.charCodeAt(j) === qc) {
            if (odd) {
              buf += '\\'.repeat((nb - 1) / 2) + quote; // escaped quote
              p = j + 1;
            } else {
              buf += '\\'.repeat(nb / 2); // backslashes ending the string
              p = j;
            }
          } else {
            buf += src.slice(p, j);
            p = j;
          }
          continue;
        }
        let k = p + 1;
        while (k < n) {
          const d = src.charCodeAt(k);
          if (d === qc || d === DOLLAR || d === BS) break;
          k++;
        }
        buf += src.slice(p, k);
        p = k;
      }
    } finally {
      this.depth--;
    }
  }
}

function emptyArg(at: number): LiteralArg {
  return { type: 'literal', value: '', float: false, raw: '', start: at, end: at };
}

/** Parse a whole YAML string value. Never throws; linear time. */
export function parseValue(text: string): ParsedValue {
  if (typeof text !== 'string' || !text.includes('${')) return { kind: 'plain' };
  try {
    const { parts, errors } = new Parser(text).parseTop();
    const whole = errors.length === 0 && parts.length === 1 && parts[0].type !== 'text';
    return { kind: 'interpolated', whole, parts, errors };
  } catch (e) {
    return {
      kind: 'interpolated',
      whole: false,
      parts: [{ type: 'text', value: text, start: 0, end: text.length }],
      errors: [{ start: 0, end: text.length, offset: 0, message: `internal parser error: ${errorMessage(e)}` }],
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Python formatting (what OmegaConf's str() produces)
// ---------------------------------------------------------------------------------------------------------------

/** A Python float produced by the grammar (FLOAT token), so that `1.0` prints as `1.0`. Internal only. */
class PyFloat {
  constructor(readonly value: number) {}
}

function floatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const neg = x < 0;
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
  return neg ? `-${r}` : r;
}

function intRepr(x: number): string {
  if (x === 0) return '0';
  return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
}

function strRepr(s: string): string {
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

function pyRepr(v: unknown, seen: Set<object>): string {
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v)) {
    if (seen.has(v)) return '[...]';
    seen.add(v);
    const s = `[${v.map((x) => pyRepr(x, seen)).join(', ')}]`;
    seen.delete(v);
    return s;
  }
  if (isDict(v)) {
    if (seen.has(v)) return '{...}';
    seen.add(v);
    const s = `{${Object.keys(v)
      .map((k) => `${strRepr(k)}: ${pyRepr(v[k], seen)}`)
      .join(', ')}}`;
    seen.delete(v);
    return s;
  }
  return pyStr(v);
}

/** Python's `str()` of a value as OmegaConf would hold it (True/False/None, 1e-05, ['a', 1], {'k': 'v'}). */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (typeof v === 'number') return Number.isInteger(v) ? intRepr(v) : floatRepr(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'object') return pyRepr(v, new Set());
  return String(v);
}

function pyTypeName(v: unknown): string {
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

function isDict(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

function isContainer(v: unknown): boolean {
  return Array.isArray(v) || isDict(v);
}

function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function setProp(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

// ---------------------------------------------------------------------------------------------------------------
// Config keys
// ---------------------------------------------------------------------------------------------------------------

/** `a.b[0].c` (OmegaConf's full-key style); the root is `<root>`. */
function dotted(path: ConfigPath): string {
  if (path.length === 0) return '<root>';
  let s = '';
  for (const k of path) {
    if (typeof k === 'number') s += `[${k}]`;
    else s += s === '' ? k : `.${k}`;
  }
  return s;
}

function pathKey(path: ConfigPath): string {
  return JSON.stringify(path.map(String));
}

function isPrefix(a: ConfigPath, b: ConfigPath): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (String(a[i]) !== String(b[i])) return false;
  return true;
}

/** Python's `int(s)` succeeds (ASCII digits; signs, single underscores between digits, surrounding spaces). */
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/**
 * OmegaConf's `split_key`: `a.b` → [a, b]; `a[b]` → [a, b]; `[a].b` → [a, b]. Keys are re-split after nested
 * interpolations are substituted, exactly as OmegaConf joins and re-splits the key text.
 */
export function splitKey(key: string): string[] {
  const n = key.length;
  let i = 0;
  while (i < n && key.charCodeAt(i) === 46) i++;
  while (i < n) {
    const c = key.charCodeAt(i);
    if (c === 46 || c === 91) break;
    i++;
  }
  const first = i;
  const tokens = key.slice(0, first).split('.');
  if (first === n) return tokens;
  if (key.charCodeAt(first) === 91 && tokens[tokens.length - 1] === '') tokens.pop();
  let p = first;
  let nextClose = -2;
  let nextNl = -2;
  while (p < n) {
    const c = key.charCodeAt(p);
    if (c === 46) {
      let q = p + 1;
      while (q < n) {
        const d = key.charCodeAt(q);
        if (d === 46 || d === 91) break;
        q++;
      }
      tokens.push(key.slice(p + 1, q));
      p = q;
    } else if (c === 91) {
      // `\[(.*?)\]`: the first `]` on the same line
      if (nextClose !== -1 && nextClose <= p) nextClose = key.indexOf(']', p + 1);
      if (nextNl !== -1 && nextNl <= p) nextNl = key.indexOf('\n', p + 1);
      if (nextClose !== -1 && (nextNl === -1 || nextNl > nextClose)) {
        tokens.push(key.slice(p + 1, nextClose));
        p = nextClose + 1;
      } else p++;
    } else p++;
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------------------------
// Resolver
// ---------------------------------------------------------------------------------------------------------------

/** Longest chain of interpolations followed (`a: ${b}`, `b: ${c}`, ...) plus nesting, before giving up. */
const MAX_EVAL_DEPTH = 400;
/** Longest string an interpolation may produce (string interpolations can double in size at each reference level). */
const MAX_STRING_LENGTH = 1_000_000;
/** Total interpolations evaluated by one resolveValue call before giving up (a safety net; results are cached). */
const MAX_STEPS = 200_000;

type Code = ResolveError['code'];

interface InnerError {
  start: number;
  end: number;
  code: Code;
  message: string;
  target?: string;
  /** the nodes whose values were being resolved between the reporting `${...}` and the failure */
  via: ConfigPath[];
}

interface Frame {
  /** path of the node whose value is being resolved */
  path: ConfigPath;
  errors: InnerError[];
  /** collected only for the text given to resolveValue */
  refs: ResolvedRef[] | null;
}

/**
 * `loc`: the value is exactly the config node at that path (a node interpolation's target), so it can be walked
 * further through `lookup`. `cfg`: a config container that is not in the tree (`oc.create`), walkable as an object.
 * Neither: a plain value (a resolver's output, a string), which OmegaConf does not let you select into.
 */
type Outcome = { ok: true; value: unknown; loc?: ConfigPath; cfg?: boolean } | { ok: false };
type AtResult = { ok: true; value: unknown; loc?: ConfigPath; cfg?: boolean } | { ok: false; error: InnerError };

type Sel =
  | { k: 'ok'; value: unknown; loc?: ConfigPath; cfg?: boolean; at?: ConfigPath }
  | { k: 'notfound'; message: string; target: string }
  | { k: 'missing'; message: string; target: string }
  | { k: 'notcontainer'; message: string; target: string }
  | { k: 'badindex'; message: string; target: string }
  | { k: 'aboveroot'; message: string; target: string }
  | { k: 'failed'; error: InnerError; via: ConfigPath };

const FAIL: Outcome = { ok: false };

const BUILTINS = new Set(['oc.env', 'oc.select', 'oc.decode', 'oc.create', 'oc.deprecated', 'oc.dict.keys', 'oc.dict.values']);

function ok(value: unknown): Outcome {
  return { ok: true, value };
}

class Evaluator {
  private depth = 0;
  private steps = 0;
  private readonly cache = new Map<string, AtResult>();
  private readonly stackKeys: string[] = [];
  private readonly stackPaths: ConfigPath[] = [];
  /** lists / dicts built from resolver arguments (they may hold PyFloat and are copied by unwrap) */
  private readonly created = new WeakSet<object>();

  constructor(private readonly ctx: ResolveContext) {}

  resolveTop(parsed: { whole: boolean; parts: Part[] }, frame: Frame): Outcome {
    this.stackKeys.push(pathKey(frame.path));
    this.stackPaths.push(frame.path);
    try {
      return this.evalParts(parsed, frame);
    } finally {
      this.stackKeys.pop();
      this.stackPaths.pop();
    }
  }

  unwrap(v: unknown): unknown {
    if (v instanceof PyFloat) return v.value;
    if (typeof v === 'object' && v !== null && this.created.has(v)) {
      if (Array.isArray(v)) return v.map((x) => this.unwrap(x));
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v)) setProp(o, k, this.unwrap((v as Record<string, unknown>)[k]));
      return o;
    }
    return v;
  }

  // ---- evaluation ----

  private evalParts(pv: { whole: boolean; parts: Part[] }, frame: Frame): Outcome {
    if (pv.whole && pv.parts.length === 1 && pv.parts[0].type !== 'text') return this.evalInterp(pv.parts[0], frame);
    return this.concat(pv.parts, frame);
  }

  private concat(parts: Part[], frame: Frame): Outcome {
    let out = '';
    let failed = false;
    for (const p of parts) {
      if (p.type === 'text') out += p.value;
      else {
        const r = this.evalInterp(p, frame);
        if (!r.ok) failed = true;
        else if (!failed) out += pyStr(r.value);
      }
      if (!failed && out.length > MAX_STRING_LENGTH) {
        // e.g. `a: ${b}${b}`, `b: ${c}${c}`, ...: the result doubles at each level
        return this.err(frame, p, 'resolver-error', `The resolved string is longer than ${MAX_STRING_LENGTH} characters`);
      }
    }
    return failed ? FAIL : ok(out);
  }

  private err(frame: Frame, at: { start: number; end: number }, code: Code, message: string, target?: string): Outcome {
    frame.errors.push({ start: at.start, end: at.end, code, message, target, via: [] });
    return FAIL;
  }

  /** report, at `at`, a failure that happened while resolving the node at `via` */
  private propagate(frame: Frame, at: { start: number; end: number }, e: InnerError, via: ConfigPath | null): Outcome {
    frame.errors.push({
      start: at.start,
      end: at.end,
      code: e.code,
      message: e.message,
      target: e.target,
      via: via && e.code !== 'cycle' ? [via, ...e.via] : e.via,
    });
    return FAIL;
  }

  private addRef(frame: Frame, ref: ResolvedRef): void {
    if (frame.refs) frame.refs.push({ ...ref, value: this.unwrap(ref.value) });
  }

  private evalInterp(node: Interpolation, frame: Frame): Outcome {
    if (this.depth >= MAX_EVAL_DEPTH) {
      return this.err(frame, node, 'cycle', `Interpolation nesting / reference chain deeper than ${MAX_EVAL_DEPTH} levels`);
    }
    if (++this.steps > MAX_STEPS) {
      return this.err(frame, node, 'resolver-error', `Resolution abandoned after ${MAX_STEPS} interpolation steps`);
    }
    this.depth++;
    try {
      return node.type === 'node' ? this.evalNode(node, frame) : this.evalResolver(node, frame);
    } finally {
      this.depth--;
    }
  }

  private evalArg(arg: Arg, frame: Frame): Outcome {
    switch (arg.type) {
      case 'node':
      case 'resolver':
        return this.evalInterp(arg, frame);
      case 'literal':
        return ok(arg.float && typeof arg.value === 'number' ? new PyFloat(arg.value) : arg.value);
      case 'string':
        return this.concat(arg.parts, frame);
      case 'list': {
        const out: unknown[] = [];
        let failed = false;
        for (const item of arg.items) {
          const r = this.evalArg(item, frame);
          if (!r.ok) failed = true;
          else out.push(r.value);
        }
        if (failed) return FAIL;
        this.created.add(out);
        return ok(out);
      }
      case 'dict': {
        const out: Record<string, unknown> = {};
        let failed = false;
        for (const { key, value } of arg.entries) {
          const r = this.evalArg(value, frame);
          if (!r.ok) {
            failed = true;
            continue;
          }
          const k = typeof key.value === 'string' ? key.value : pyStr(key.float && typeof key.value === 'number' ? new PyFloat(key.value) : key.value);
          setProp(out, k, r.value);
        }
        if (failed) return FAIL;
        this.created.add(out);
        return ok(out);
      }
    }
  }

  /** evaluate a nested `${...}` used as (part of) a key or resolver name: it must give a string */
  private evalKeyPart(k: string | Interpolation, frame: Frame, what: string): string | null {
    if (typeof k === 'string') return k;
    const r = this.evalInterp(k, frame);
    if (!r.ok) return null;
    if (typeof r.value !== 'string') {
      this.err(
        frame,
        k,
        'type',
        `A nested interpolation used as ${what} must resolve to a string, but it resolved to \`${pyStr(r.value)}\` of type ${pyTypeName(r.value)}`,
      );
      return null;
    }
    return r.value;
  }

  private evalNode(node: NodeInterpolation, frame: Frame): Outcome {
    let key = '.'.repeat(node.ref.up);
    let failed = false;
    for (let i = 0; i < node.ref.keys.length; i++) {
      const s = this.evalKeyPart(node.ref.keys[i], frame, 'a config key');
      if (s === null) {
        failed = true;
        continue;
      }
      key += node.ref.spans[i].bracket ? `[${s}]` : i === 0 ? s : `.${s}`;
    }
    if (failed) return FAIL;
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok': {
        const container = frame.path.slice(0, -1);
        if (sel.loc && isPrefix(sel.loc, container)) {
          return this.err(
            frame,
            node,
            'cycle',
            `Interpolation to parent node detected: '${key}' refers to '${dotted(sel.loc)}', which contains '${dotted(frame.path)}'`,
            dotted(sel.loc),
          );
        }
        this.addRef(frame, { start: node.start, end: node.end, kind: 'node', target: sel.at ?? sel.loc ?? key, value: sel.value });
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      }
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'notfound':
      case 'missing':
      case 'aboveroot':
        return this.err(frame, node, 'missing-key', sel.message, sel.target);
      case 'notcontainer':
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
    }
  }

  private evalResolver(node: ResolverInterpolation, frame: Frame): Outcome {
    const names: string[] = [];
    let failed = false;
    for (const part of node.nameParts) {
      const s = this.evalKeyPart(part, frame, 'a resolver name');
      if (s === null) failed = true;
      else names.push(s);
    }
    const args: unknown[] = [];
    for (const a of node.args) {
      const r = this.evalArg(a, frame);
      if (!r.ok) failed = true;
      else args.push(r.value);
    }
    const name = names.join('.');
    const custom = this.ctx.resolvers && hasOwn(this.ctx.resolvers, name) ? this.ctx.resolvers[name] : undefined;
    if (failed) {
      // an unknown name is worth reporting even when an argument failed too
      if (names.length === node.nameParts.length && typeof custom !== 'function' && !BUILTINS.has(name)) {
        this.err(frame, node, 'unknown-resolver', `Unsupported interpolation type ${name}`, name);
      }
      return FAIL;
    }
    if (typeof custom === 'function') {
      try {
        return ok(custom(args.map((a) => this.unwrap(a))));
      } catch (e) {
        return this.err(frame, node, 'resolver-error', `Resolver '${name}' failed: ${errorMessage(e)}`, name);
      }
    }
    if (!BUILTINS.has(name)) return this.err(frame, node, 'unknown-resolver', `Unsupported interpolation type ${name}`, name);
    switch (name) {
      case 'oc.env':
        return this.ocEnv(node, args, frame);
      case 'oc.select':
        return this.ocSelect(node, args, frame);
      case 'oc.decode':
        return this.ocDecode(node, args, frame);
      case 'oc.create':
        return this.ocCreate(node, args, frame);
      case 'oc.deprecated':
        return this.ocDeprecated(node, args, frame);
      default:
        return this.ocDict(node, name, args, frame);
    }
  }

  private arity(node: ResolverInterpolation, frame: Frame, args: unknown[], min: number, max: number, usage: string): boolean {
    if (args.length >= min && args.length <= max) return true;
    const want = min === max ? `${min}` : `${min} to ${max}`;
    this.err(frame, node, 'resolver-error', `${node.name} takes ${want} argument${max === 1 ? '' : 's'} (${usage}) but ${args.length} ${args.length === 1 ? 'was' : 'were'} given`, node.name);
    return false;
  }

  private ocEnv(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (args.length === 0) {
      return this.err(frame, node, 'resolver-error', 'oc.env needs the name of an environment variable: ${oc.env:NAME} or ${oc.env:NAME,default}', 'oc.env');
    }
    if (!this.arity(node, frame, args, 1, 2, 'name, default')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(frame, node, 'resolver-error', `oc.env: the variable name must be a string, not ${pyTypeName(key)} \`${pyStr(key)}\``, 'oc.env');
    }
    const env = this.ctx.env;
    const v = hasOwn(env, key) ? env[key] : undefined;
    if (typeof v === 'string') {
      this.addRef(frame, { start: node.start, end: node.end, kind: 'env', target: key, value: v });
      return ok(v);
    }
    if (args.length === 2) {
      // the default is converted with str() unless it is None
      const d = args[1] === null ? null : pyStr(args[1]);
      this.addRef(frame, { start: node.start, end: node.end, kind: 'env', target: key, value: d });
      return ok(d);
    }
    return this.err(frame, node, 'missing-env', `Environment variable '${key}' not found`, key);
  }

  private ocSelect(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 2, 'key, default')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') return this.err(frame, node, 'resolver-error', `oc.select: the key must be a string, not ${pyTypeName(key)}`, 'oc.select');
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok':
        this.addRef(frame, { start: node.start, end: node.end, kind: 'node', target: sel.at ?? sel.loc ?? key, value: sel.value });
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      case 'notfound':
      case 'missing':
      case 'notcontainer':
        return ok(args.length === 2 ? args[1] : null);
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'aboveroot':
        return this.err(frame, node, 'missing-key', sel.message, sel.target);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
    }
  }

  private ocDeprecated(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 2, 'key, message')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(frame, node, 'resolver-error', `oc.deprecated: interpolation key type is not a string (${pyTypeName(key)})`, 'oc.deprecated');
    }
    if (args.length === 2 && typeof args[1] !== 'string') {
      return this.err(frame, node, 'resolver-error', `oc.deprecated: interpolation message type is not a string (${pyTypeName(args[1])})`, 'oc.deprecated');
    }
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok':
        this.addRef(frame, { start: node.start, end: node.end, kind: 'node', target: sel.at ?? sel.loc ?? key, value: sel.value });
        return { ok: true, value: sel.value, loc: sel.loc, cfg: sel.cfg };
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
      default:
        return this.err(frame, node, 'missing-key', `In oc.deprecated resolver at '${dotted(frame.path)}': Key not found: '${key}'`, sel.target);
    }
  }

  private ocDecode(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'expr')) return FAIL;
    const x = args[0];
    if (x === null) return ok(null);
    if (typeof x !== 'string') {
      return this.err(frame, node, 'resolver-error', `\`oc.decode\` can only take strings or None as input, but \`${pyStr(x)}\` is of type ${pyTypeName(x)}`, 'oc.decode');
    }
    let el: Arg;
    try {
      el = new Parser(x).parseSingle();
    } catch (e) {
      if (!(e instanceof ParseFail)) throw e;
      return this.err(frame, node, 'resolver-error', `oc.decode cannot parse ${strRepr(x)}: ${e.message} (at offset ${e.offset})`, 'oc.decode');
    }
    if (el.type === 'literal' && el.raw !== '' && el.raw.trim() === '') {
      // OmegaConf fails here too (an assertion in its visitor: a lone whitespace token)
      return this.err(frame, node, 'resolver-error', `oc.decode cannot decode whitespace-only input ${strRepr(x)}`, 'oc.decode');
    }
    // interpolations inside the decoded text resolve relative to the same node; their offsets are in `x`, so
    // failures are reported on the oc.decode interpolation
    const sub: Frame = { path: frame.path, errors: [], refs: null };
    const r = this.evalArg(el, sub);
    if (!r.ok) {
      const e = sub.errors[0];
      if (!e) return this.err(frame, node, 'resolver-error', `oc.decode failed on ${strRepr(x)}`, 'oc.decode');
      return this.propagate(frame, node, { ...e, message: `in oc.decode of ${strRepr(x)}: ${e.message}` }, null);
    }
    return ok(r.value);
  }

  private ocCreate(node: ResolverInterpolation, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'obj')) return FAIL;
    const x = args[0];
    if (isContainer(x)) return { ok: true, value: x, cfg: true };
    // OmegaConf would parse a string as YAML; that is not emulated: the string is returned unchanged
    if (x === null || typeof x === 'string') return ok(x);
    return this.err(frame, node, 'resolver-error', `oc.create: cannot create a config from ${pyTypeName(x)} \`${pyStr(x)}\``, 'oc.create');
  }

  private ocDict(node: ResolverInterpolation, name: string, args: unknown[], frame: Frame): Outcome {
    if (!this.arity(node, frame, args, 1, 1, 'key')) return FAIL;
    const key = args[0];
    if (typeof key !== 'string') {
      return this.err(frame, node, 'type', `\`${name}\` requires a string as input, but obtained \`${pyStr(key)}\` of type: ${pyTypeName(key)}`, name);
    }
    const sel = this.select(key, frame.path);
    switch (sel.k) {
      case 'ok': {
        if (!isDict(sel.value)) {
          const t = Array.isArray(sel.value) ? 'ListConfig' : pyTypeName(sel.value);
          return this.err(frame, node, 'type', `\`${name}\` cannot be applied to objects of type: ${t}`, sel.at ? dotted(sel.at) : key);
        }
        this.addRef(frame, { start: node.start, end: node.end, kind: 'node', target: sel.at ?? sel.loc ?? key, value: sel.value });
        const d = sel.value;
        const out = name === 'oc.dict.keys' ? Object.keys(d) : Object.keys(d).map((k) => d[k]);
        return ok(out);
      }
      case 'missing':
        return this.err(frame, node, 'missing-key', `Missing mandatory value: ${sel.target}`, sel.target);
      case 'failed':
        return this.propagate(frame, node, sel.error, sel.via);
      case 'badindex':
        return this.err(frame, node, 'type', sel.message, sel.target);
      default:
        return this.err(frame, node, 'missing-key', `Key not found: '${key}'`, sel.target);
    }
  }

  // ---- selection ----

  private look(path: ConfigPath): { found: boolean; value?: unknown } {
    try {
      const r = this.ctx.lookup(path);
      return r && r.found ? { found: true, value: r.value } : { found: false };
    } catch {
      return { found: false };
    }
  }

  /**
   * OmegaConf's `_resolve_key_and_root` + `_select_impl`: select `key` (as a node interpolation would) from the node
   * at `nodePath`. Interpolated values met on the way are resolved (relative to their own node).
   */
  private select(key: string, nodePath: ConfigPath): Sel {
    const container = nodePath.slice(0, -1);
    let k = key;
    let root: ConfigPath = [];
    if (k.charCodeAt(0) === 46) {
      let d = 0;
      while (d < k.length && k.charCodeAt(d) === 46) d++;
      const up = d - 1;
      if (up > container.length) {
        return { k: 'aboveroot', message: `Relative interpolation '${key}' goes above the config root (from '${dotted(nodePath)}')`, target: key };
      }
      root = container.slice(0, container.length - up);
      k = k.slice(d);
    }
    if (k === '') {
      const r = this.look(root);
      return { k: 'ok', value: r.found ? r.value : undefined, loc: root, at: root };
    }
    const toks = splitKey(k);
    const absTarget = (upto: number) => dotted([...root, ...toks.slice(0, upto)]);
    const rootLook = this.look(root);
    let curVal: unknown = rootLook.found ? rootLook.value : undefined;
    let curLoc: ConfigPath | undefined = root;
    let curCfg = false;
    for (let i = 0; i < toks.length; i++) {
      const tok = toks[i];
      const last = i === toks.length - 1;
      let childKey: string | number = tok;
      if (Array.isArray(curVal)) {
        if (!PY_INT.test(tok)) {
          return { k: 'badindex', message: `Index '${tok}' (str) is not an int (while selecting '${key}')`, target: absTarget(i + 1) };
        }
        const idx = Number(tok.trim().replace(/_/g, ''));
        if (!(idx >= 0 && idx < curVal.length)) {
          return { k: 'notfound', message: `Interpolation key '${key}' not found: index ${tok.trim()} is out of range for '${dotted(curLoc ?? [])}' (length ${curVal.length})`, target: absTarget(toks.length) };
        }
        childKey = idx;
      }
      let found: boolean;
      let val: unknown;
      let childLoc: ConfigPath | undefined;
      if (curLoc) {
        childLoc = [...curLoc, childKey];
        const r = this.look(childLoc);
        found = r.found;
        val = r.value;
      } else if (Array.isArray(curVal)) {
        found = true;
        val = curVal[childKey as number];
      } else if (isDict(curVal) && hasOwn(curVal, tok)) {
        found = true;
        val = curVal[tok];
      } else found = false;
      if (!found) {
        const where = i === 0 && root.length === 0 ? 'the config root' : `'${curLoc ? dotted(curLoc) : toks.slice(0, i).join('.')}'`;
        return { k: 'notfound', message: `Interpolation key '${key}' not found (${where} has no key '${tok}')`, target: absTarget(toks.length) };
      }
      if (val === '???') {
        return { k: 'missing', message: `Interpolation key '${key}' points to a missing mandatory value ('???') at '${absTarget(i + 1)}'`, target: absTarget(i + 1) };
      }
      let walkLoc: ConfigPath | undefined = childLoc;
      let walkCfg: boolean = !childLoc && curCfg;
      if (childLoc && typeof val === 'string' && val.includes('${')) {
        const r = this.resolveAt(childLoc, val);
        if (!r.ok) return { k: 'failed', error: r.error, via: childLoc };
        val = r.value;
        walkLoc = r.loc;
        walkCfg = r.cfg === true;
      }
      if (last) return { k: 'ok', value: val, loc: walkLoc, cfg: walkCfg, at: childLoc };
      if (!isContainer(val) || (!walkLoc && !walkCfg)) {
        return {
          k: 'notcontainer',
          message: `Error trying to access ${k}: node \`${toks.slice(0, i + 1).join('.')}\` is not a container and thus cannot contain \`${toks[i + 1]}\``,
          target: absTarget(i + 1),
        };
      }
      curVal = val;
      curLoc = walkLoc;
      curCfg = walkCfg;
    }
    return { k: 'notfound', message: `Interpolation key '${key}' not found`, target: key };
  }

  /** resolve the interpolated raw value stored at `path` (relative to that node), with cycle detection and caching */
  private resolveAt(path: ConfigPath, raw: string): AtResult {
    const key = pathKey(path);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const idx = this.stackKeys.indexOf(key);
    if (idx >= 0) {
      const chain = [...this.stackPaths.slice(idx), path].map(dotted).join(' -> ');
      return { ok: false, error: { start: 0, end: 0, code: 'cycle', message: `Recursive interpolation detected: ${chain}`, target: dotted(path), via: [] } };
    }
    if (this.depth >= MAX_EVAL_DEPTH) {
      return {
        ok: false,
        error: { start: 0, end: 0, code: 'cycle', message: `Interpolation nesting / reference chain deeper than ${MAX_EVAL_DEPTH} levels`, target: dotted(path), via: [] },
      };
    }
    const parsed = parseValue(raw);
    let result: AtResult;
    if (parsed.kind === 'plain') result = { ok: true, value: raw };
    else if (parsed.errors.length > 0) {
      const pe = parsed.errors[0];
      result = { ok: false, error: { start: 0, end: 0, code: 'parse', message: `Invalid interpolation syntax in the value of '${dotted(path)}': ${pe.message}`, target: dotted(path), via: [] } };
    } else {
      const frame: Frame = { path, errors: [], refs: null };
      this.stackKeys.push(key);
      this.stackPaths.push(path);
      this.depth++;
      let r: Outcome;
      try {
        r = this.evalParts(parsed, frame);
      } finally {
        this.stackKeys.pop();
        this.stackPaths.pop();
        this.depth--;
      }
      if (r.ok) result = { ok: true, value: r.value, loc: r.loc, cfg: r.cfg };
      else {
        const e = frame.errors[0] ?? { start: 0, end: 0, code: 'resolver-error' as const, message: `Could not resolve '${dotted(path)}'`, via: [] };
        result = { ok: false, error: e };
      }
    }
    // every outcome is cached, failures included (also the depth-limit ones: otherwise `a: ${b}${b}` chains that hit
    // the limit would be re-evaluated exponentially often)
    this.cache.set(key, result);
    return result;
  }
}

function finishError(e: InnerError): ResolveError {
  let message = e.message;
  const via = e.via.filter((p, i) => i === 0 || pathKey(p) !== pathKey(e.via[i - 1]));
  if (via.length > 0) message += ` (while resolving ${via.map(dotted).join(' -> ')})`;
  const out: ResolveError = { start: e.start, end: e.end, code: e.code, message };
  if (e.target !== undefined) out.target = e.target;
  return out;
}

/**
 * Resolve a string value the way OmegaConf does when the node at `ctx.path` is read. Never throws.
 *
 * - exactly one `${...}`: the referenced / returned value with its type (number, boolean, null, object, array);
 *   a referenced container is returned raw (its own interpolations unresolved, as OmegaConf returns the node);
 * - otherwise a string, each interpolation converted with Python's str() (True / False / None, 1e-05, ['a', 1]);
 * - no `${` at all: the text itself.
 */
export function resolveValue(text: string, ctx: ResolveContext): ResolveResult {
  const refs: ResolvedRef[] = [];
  try {
    if (typeof text !== 'string' || !text.includes('${')) return { ok: true, value: text, refs };
    const parsed = parseValue(text);
    if (parsed.kind === 'plain') return { ok: true, value: text, refs };
    if (parsed.errors.length > 0) {
      return {
        ok: false,
        errors: parsed.errors.map((e) => ({ start: e.start, end: e.end, code: 'parse' as const, message: `Invalid interpolation: ${e.message} (at offset ${e.offset})` })),
        refs,
      };
    }
    const ev = new Evaluator(ctx);
    const frame: Frame = { path: Array.isArray(ctx.path) ? ctx.path : [], errors: [], refs };
    const r = ev.resolveTop(parsed, frame);
    if (frame.errors.length > 0 || !r.ok) {
      const errors = frame.errors.map(finishError);
      if (errors.length === 0) errors.push({ start: 0, end: text.length, code: 'resolver-error', message: 'Could not resolve the value' });
      return { ok: false, errors, refs };
    }
    return { ok: true, value: ev.unwrap(r.value), refs };
  } catch (e) {
    return { ok: false, errors: [{ start: 0, end: typeof text === 'string' ? text.length : 0, code: 'resolver-error', message: `Internal error while resolving: ${errorMessage(e)}` }], refs };
  }
}
