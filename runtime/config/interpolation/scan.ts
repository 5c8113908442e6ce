import * as chars from './chars';

// Local bindings: an imported binding is a getter call per read in the CommonJS the tests run (see parse.ts).
const { BS, COLON_C, DOLLAR, DQ, LBRACE, M_DQ, M_INTER, M_SQ, M_VALUE, RBRACE, SPACE, SQ, TAB } = chars;

/** Cheap helpers: is a string interpolated, and where do its interpolations start and end (no full parse). */

/**
 * OmegaConf treats every string containing `${` as an interpolation (escaped ones included: `\${x}` must go through
 * the grammar to be un-escaped to `${x}`).
 */
export function isInterpolated(text: string): boolean {
  return text.includes('${');
}

export function isEscapable(c: number): boolean {
  // characters that form an ESC token after a backslash in value mode: \\ \( \) \[ \] \{ \} \: \= \, \<space> \<tab>
  return (
    c === BS ||
    c === 40 ||
    c === 41 ||
    c === 91 ||
    c === 93 ||
    c === LBRACE ||
    c === RBRACE ||
    c === COLON_C ||
    c === 61 ||
    c === 44 ||
    c === SPACE ||
    c === TAB
  );
}

/**
 * End (exclusive) of the interpolation opening at `start` (where `text` has `${`), following the lexer's mode
 * changes (interpolation / value / quoted); `text.length` when it is never closed. Does not validate.
 */
export function scanInterpolationEnd(text: string, start: number): number {
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
