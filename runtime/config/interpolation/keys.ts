import type { ConfigPath } from './types';

/** Config keys as OmegaConf writes and splits them (`a.b[0].c`, `..x`). */

/** `a.b[0].c` (OmegaConf's full-key style); the root is `<root>`. */
export function dotted(path: ConfigPath): string {
  if (path.length === 0) return '<root>';
  let s = '';
  for (const k of path) {
    if (typeof k === 'number') s += `[${k}]`;
    else s += s === '' ? k : `.${k}`;
  }
  return s;
}

export function pathKey(path: ConfigPath): string {
  return JSON.stringify(path.map(String));
}

export function isPrefix(a: ConfigPath, b: ConfigPath): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (String(a[i]) !== String(b[i])) return false;
  return true;
}

/** Python's `int(s)` succeeds (ASCII digits; signs, single underscores between digits, surrounding spaces). */
export const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

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
