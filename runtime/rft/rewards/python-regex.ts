/**
 * Python `re` patterns (as users write them in `reward_fn_args.pattern`) to JavaScript RegExps, and Python's
 * `re.match` (anchored at the start, not at the end).
 *
 * Translated: named groups `(?P<n>...)` → `(?<n>...)`, backreferences `(?P=n)` → `\k<n>`, `\A` → start of input,
 * `\Z` → end of input, leading global inline flags `(?s)`, `(?m)`, `(?i)`, `(?x)`-less combinations → RegExp
 * flags. Python's `$` in MULTILINE mode matches before `\n` only; JavaScript's also before `\r`, U+2028, U+2029 —
 * the one difference left for the format patterns.
 */

export class PythonRegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonRegexError';
  }
}

export interface PyFlags {
  dotAll?: boolean;
  multiline?: boolean;
  ignoreCase?: boolean;
}

export function pythonRegex(pattern: string, flags: PyFlags = {}): RegExp {
  let p = pattern;
  let dotAll = !!flags.dotAll;
  let multiline = !!flags.multiline;
  let ignoreCase = !!flags.ignoreCase;
  const inline = /^\(\?([aiLmsux]+)\)/.exec(p);
  if (inline) {
    if (inline[1].includes('x')) throw new PythonRegexError('verbose (?x) patterns are not supported');
    if (inline[1].includes('s')) dotAll = true;
    if (inline[1].includes('m')) multiline = true;
    if (inline[1].includes('i')) ignoreCase = true;
    p = p.slice(inline[0].length);
  }
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const n = p[i + 1];
      if (n === 'A') out += '(?<![\\s\\S])';
      else if (n === 'Z') out += '(?![\\s\\S])';
      else out += c + (n ?? '');
      i++;
      continue;
    }
    if (p.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    const back = /^\(\?P=(\w+)\)/.exec(p.slice(i));
    if (back) {
      out += `\\k<${back[1]}>`;
      i += back[0].length - 1;
      continue;
    }
    out += c;
  }
  try {
    return new RegExp(out, `${dotAll ? 's' : ''}${multiline ? 'm' : ''}${ignoreCase ? 'i' : ''}`);
  } catch (e) {
    throw new PythonRegexError(`invalid pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`);
  }
}

/** Python's `re.match(pattern, text)`: a match that starts at index 0. */
export function pyMatch(re: RegExp, text: string): RegExpExecArray | null {
  const sticky = new RegExp(re.source, re.flags.includes('y') ? re.flags : `${re.flags}y`);
  sticky.lastIndex = 0;
  return sticky.exec(text);
}
