/** The parsed form of an OmegaConf 2.3 string value and the results of resolving it. */
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
  lookup(
    path: (string | number)[],
  ):
    | { found: true; value: unknown }
    | { found: false; /** longest existing prefix length, for messages */ existingPrefix: number };
  env: Record<string, string | undefined>;
  /** resolvers beyond the built-ins; return value or throw Error(message) */
  resolvers?: Record<string, (args: unknown[]) => unknown>;
}

export type ResolveResult =
  | { ok: true; value: unknown; refs: ResolvedRef[] }
  | { ok: false; errors: ResolveError[]; refs: ResolvedRef[] };

export interface ResolvedRef {
  start: number;
  end: number;
  kind: 'node' | 'env';
  /** node: absolute path of the node the value comes from; env: the variable name */
  target: (string | number)[] | string;
  value?: unknown;
  /** env: the variable is not set, and the value is the interpolation's default. */
  defaulted?: true;
}

export interface ResolveError {
  start: number;
  end: number;
  code: 'parse' | 'missing-key' | 'missing-env' | 'cycle' | 'unknown-resolver' | 'resolver-error' | 'type';
  message: string;
  /** missing-key / type / cycle: dotted config path (`a.b[0].c`); missing-env: variable; resolvers: resolver name */
  target?: string;
}
