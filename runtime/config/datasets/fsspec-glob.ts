/** fsspec-style glob patterns over a listing's relative POSIX paths, as `datasets` resolves `data_files`. */

/** A relative path or pattern without `\`, leading `./` or trailing `/`. */
export function normalizeRel(p: string): string {
  return p
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
}

/** The files (in pattern order, each once) that match any of `patterns`. */
export function matchPatterns(patterns: string[], files: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of patterns) {
    const re = globToRegExp(p);
    for (const f of files) {
      if (!seen.has(f) && re.test(f)) {
        seen.add(f);
        out.push(f);
      }
    }
  }
  return out;
}

/** fsspec-style glob: `**\/` any directories (or none), `/**` anything below, `*` and `?` within a name, `[...]` classes. */
function globToRegExp(pattern: string): RegExp {
  const p = normalizeRel(pattern);
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        if (atStart && p[i + 2] === '/') {
          re += '(?:[^/]+/)*';
          i += 2;
        } else if (atStart && i + 2 === p.length) {
          re += '.*';
          i += 1;
        } else {
          re += '.*';
          i += 1;
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
      } else {
        let body = p.slice(i + 1, end);
        if (body.startsWith('!')) body = '^' + body.slice(1);
        re += '[' + body.replace(/\\/g, '\\\\') + ']';
        i = end;
      }
    } else if (c === '\\' && i + 1 < p.length) {
      re += '\\' + p[++i];
    } else {
      re += /[.+^${}()|\]\\]/.test(c) ? '\\' + c : c;
    }
  }
  try {
    return new RegExp('^' + re + '$');
  } catch {
    return /(?!)/;
  }
}
