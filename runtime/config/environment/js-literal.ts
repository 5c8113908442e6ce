/**
 * A JavaScript data literal read from source text without running it: objects, arrays, strings (no `${…}`),
 * numbers, `true`, `false`, `null`. What a plugin declares for the checker must be written this way, because the
 * editor reads plugins of untrusted workspaces too and never imports them.
 */

export type LiteralResult = { ok: true; value: unknown; end: number } | { ok: false; message: string; at: number };

class LiteralError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/** The literal that starts at `from` in `source` (comments already blanked); where it ends, or why it is not one. */
export function readLiteral(source: string, from: number): LiteralResult {
  try {
    const r = new Reader(source, from);
    const value = r.value();
    return { ok: true, value, end: r.i };
  } catch (e) {
    if (e instanceof LiteralError) return { ok: false, message: e.message, at: e.at };
    throw e;
  }
}

const NUMBER = /^-?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?/;
const IDENT = /^[A-Za-z_$][\w$]*/;

class Reader {
  constructor(
    private readonly s: string,
    public i: number,
  ) {}

  value(): unknown {
    this.space();
    const c = this.s[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === "'" || c === '"' || c === '`') return this.string();
    const rest = this.s.slice(this.i, this.i + 64);
    const num = NUMBER.exec(rest);
    if (num) {
      this.i += num[0].length;
      return Number(num[0].replace(/_/g, ''));
    }
    const word = IDENT.exec(rest)?.[0];
    const words: Record<string, unknown> = { true: true, false: false, null: null };
    if (word !== undefined && word in words) {
      this.i += word.length;
      return words[word];
    }
    throw new LiteralError(
      `\`${(word ?? rest.split(/\s/)[0]) || 'the end of the file'}\` is not a plain value (write strings, numbers, true, false, null, [ ] and { } only)`,
      this.i,
    );
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++;
    for (;;) {
      this.space();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const key = this.key();
      this.space();
      if (this.s[this.i] !== ':') throw new LiteralError(`\`${key}\` is not followed by \`:\` and a value`, this.i);
      this.i++;
      out[key] = this.value();
      this.separator('}');
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.i++;
    for (;;) {
      this.space();
      if (this.s[this.i] === ']') {
        this.i++;
        return out;
      }
      out.push(this.value());
      this.separator(']');
    }
  }

  private separator(close: string): void {
    this.space();
    if (this.s[this.i] === ',') this.i++;
    else if (this.s[this.i] !== close) throw new LiteralError(`expected \`,\` or \`${close}\``, this.i);
  }

  private key(): string {
    const c = this.s[this.i];
    if (c === "'" || c === '"') return this.string();
    const word = IDENT.exec(this.s.slice(this.i, this.i + 200))?.[0];
    if (!word) throw new LiteralError('expected a key', this.i);
    this.i += word.length;
    return word;
  }

  private string(): string {
    const quote = this.s[this.i];
    const start = this.i;
    let out = '';
    for (let j = this.i + 1; j < this.s.length; j++) {
      const c = this.s[j];
      if (c === quote) {
        this.i = j + 1;
        return out;
      }
      if (quote === '`' && c === '$' && this.s[j + 1] === '{')
        throw new LiteralError('a template literal with `${…}` is computed, not a plain string', j);
      if (c === '\\') {
        const e = this.s[++j];
        out += ({ n: '\n', t: '\t', r: '\r', '0': '\0' } as Record<string, string>)[e] ?? e;
      } else if (c === '\n' && quote !== '`') break;
      else out += c;
    }
    throw new LiteralError('a string is not closed', start);
  }

  private space(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }
}
