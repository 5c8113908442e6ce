import * as chars from './chars';
import * as scan from './scan';
import type {
  Arg,
  DictArg,
  DictEntry,
  Interpolation,
  ListArg,
  LiteralArg,
  ParsedValue,
  ParseError,
  Part,
  StringArg,
  KeySpan,
} from './types';

// Local bindings of what the lexer reads per character: an imported binding is a getter call per read in the
// CommonJS that tsx and the tests run (measured: the parser 8x slower on long inputs); locals cost nothing.
const { BS, COLON_C, DOLLAR, DQ, LBRACE, RBRACE, SPACE, SQ, TAB } = chars;
const { isEscapable, scanInterpolationEnd } = scan;

/** The parser: OmegaConf's lexer modes and grammar, by hand, linear in the input and never throwing. */

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

export class ParseFail {
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
  return !(
    c === BS ||
    c === LBRACE ||
    c === RBRACE ||
    c === 40 ||
    c === 41 ||
    c === 91 ||
    c === 93 ||
    c === COLON_C ||
    c === 46 ||
    c === SPACE ||
    c === TAB ||
    c === SQ ||
    c === DQ
  );
}
function isIdChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 95 || c === 45;
}
/** UNQUOTED_CHAR: [/\-\\+.$%*@?|] */
function isUnquotedChar(c: number): boolean {
  return (
    c === 47 ||
    c === 45 ||
    c === BS ||
    c === 43 ||
    c === 46 ||
    c === DOLLAR ||
    c === 37 ||
    c === 42 ||
    c === 64 ||
    c === 63 ||
    c === 124
  );
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

export class Parser {
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
    return {
      k: 'BAD',
      s: p,
      e: p + ch.length,
      why: `character ${JSON.stringify(ch)} is not allowed in an unquoted resolver argument (quote the argument)`,
    };
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
          this.failTok(
            t,
            up > 0 && keys.length === 0 && !bracket ? `expected a key after '${'.'.repeat(up)}'` : 'expected a key',
          );
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
          this.fail(
            nameStart,
            `invalid resolver name '${src.slice(nameStart, nameEnd)}': expected identifiers separated by dots, like oc.env`,
          );
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
      return this.failTok(
        t,
        keys.length === 1 && !bracketUsed ? "expected '.', '[', ':' or '}'" : "expected '.', '[' or '}'",
      );
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
        if (keyToks.length === 0)
          this.failTok(this.vpeek(), 'expected a dictionary key (unquoted, without interpolations)');
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

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
