/**
 * Finding `\boxed{...}` answers. Trinity has three different extractors, each with its own edge behaviour; they
 * are reproduced separately because the rewards score differently on the same text:
 *
 * - `lastBoxedOnlyString` + `removeBoxed` (lm-eval hendrycks_math, used by `math_boxed_reward` and, up to v0.3.2,
 *   `math_dapo_reward`): if the text contains `"\boxed "` (with a space) anywhere, the answer is whatever follows
 *   the LAST `"\boxed "` up to the next `$`; otherwise brace matching from the last `\boxed` (or, if none, the last
 *   `\fbox`). `removeBoxed` then requires the string to start with `\boxed{`, so an `\fbox{...}` answer fails
 *   there (Trinity catches the AssertionError and scores 0).
 * - `strictLastBoxed` (naive_dapo's `_last_boxed_only_string`, `math_dapo_reward` from v0.4.0): the content
 *   between the first `{` after the last `\boxed`/`\fbox` and its matching `}`, stripped.
 * - `lastBoxedContent`: our own general extractor for the equivalence checker (balanced braces, `\boxed 5` form).
 */

/** Trinity's `last_boxed_only_string` (hendrycks_math): the last `\boxed{...}` including the macro, or null. */
export function lastBoxedOnlyString(text: string): string | null {
  const spaced = '\\boxed ';
  if (text.includes(spaced)) {
    const parts = text.split(spaced);
    return spaced + parts[parts.length - 1].split('$')[0];
  }
  let idx = text.lastIndexOf('\\boxed');
  if (idx < 0) {
    idx = text.lastIndexOf('\\fbox');
    if (idx < 0) return null;
  }
  let open = 0;
  for (let i = idx; i < text.length; i++) {
    const c = text[i];
    if (c === '{') open++;
    if (c === '}') {
      open--;
      if (open === 0) return text.slice(idx, i + 1);
    }
  }
  return null;
}

/**
 * Trinity's `remove_boxed`: strips `\boxed ` or `\boxed{` … `}`. Returns null where Trinity's assertions fail
 * (e.g. an `\fbox{...}` string), which Trinity's caller turns into a 0 score.
 */
export function removeBoxed(s: string): string | null {
  const spaced = '\\boxed ';
  if (s.includes(spaced)) return s.startsWith(spaced) ? s.slice(spaced.length) : null;
  const left = '\\boxed{';
  if (!s.startsWith(left) || !s.endsWith('}')) return null;
  return s.slice(left.length, -1);
}

/** naive_dapo's `_last_boxed_only_string`: content of the last `\boxed{}`/`\fbox{}` (stripped), or null. */
export function strictLastBoxed(text: string): string | null {
  let idx = text.lastIndexOf('\\boxed');
  if (idx < 0) {
    idx = text.lastIndexOf('\\fbox');
    if (idx < 0) return null;
  }
  let open = 0;
  let left = -1;
  for (let i = idx; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      open++;
      if (left < 0) left = i;
    } else if (c === '}') {
      open--;
      if (open === 0) return left < 0 ? null : pyStrip(text.slice(left + 1, i));
    }
  }
  return null;
}

/**
 * Our general extractor: the content of the last `\boxed{...}` / `\fbox{...}` with balanced braces (escaped
 * braces `\{ \}` do not count), or the token after `\boxed ` (`\boxed 5`). Null when there is none or it is
 * unterminated.
 */
export function lastBoxedContent(text: string): string | null {
  const re = /\\(?:boxed|fbox)\b/g;
  let last = -1;
  let lastLen = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    last = m.index;
    lastLen = m[0].length;
  }
  if (last < 0) return null;
  let i = last + lastLen;
  while (text[i] === ' ') i++;
  if (text[i] !== '{') {
    const m = /^[^\s$]+/.exec(text.slice(i));
    return m ? m[0] : null;
  }
  const end = matchBrace(text, i);
  return end < 0 ? null : text.slice(i + 1, end - 1);
}

/** Index just past the `}` matching the `{` at `open` (escaped braces `\{ \}` do not count), or -1. */
export function matchBrace(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Python's `str.strip()` (whitespace on both ends). */
export function pyStrip(s: string): string {
  return s.replace(/^\s+|\s+$/g, '');
}
