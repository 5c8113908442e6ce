/**
 * OmegaConf 2.3 string interpolation: parser and resolver (this folder; the public API is re-exported here).
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
export * from './types';
export { findInterpolations, isInterpolated } from './scan';
export { parseValue } from './parse';
export { splitKey } from './keys';
export { resolveValue } from './resolve';
