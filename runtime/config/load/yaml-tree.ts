/**
 * YAML text -> a plain node tree that keeps every node's source range.
 * Parsed as YAML 1.1 with OmegaConf's float rule (`1e-5` is a float), like Trinity's loader. Aliases and `<<` merge
 * keys are expanded here, under a node budget, so that an alias bomb is refused quickly instead of hanging.
 */
import { isAlias, isMap, isPair, isScalar, isSeq } from 'yaml';
import type { Scalar } from 'yaml';
import type { Alias, Node as YamlNode, Document } from 'yaml';
import type { Range } from '../diagnostics';
import { MAX_NESTING, parseYamlDocument, TOO_DEEP_MESSAGE } from './yaml-document';

export type { Range };

export type YNode = YMap | YSeq | YScalar;

export interface YMap {
  kind: 'map';
  entries: YEntry[];
  range: Range;
}

export interface YEntry {
  key: string;
  keyRange: Range;
  value: YNode;
}

export interface YSeq {
  kind: 'seq';
  items: YNode[];
  range: Range;
}

export interface YScalar {
  kind: 'scalar';
  value: string | number | boolean | null;
  /** Quoted scalars are always strings; OmegaConf reads `'8'` as the string "8" too. */
  quoted: boolean;
  /** Offset of the value's first character inside the source (after an opening quote). */
  contentStart: number;
  range: Range;
  /** A number written as a float (`8.0`, `1e3`): OmegaConf refuses it for an int field. */
  floatLiteral?: boolean;
}

export interface SourceProblem {
  kind: 'syntax' | 'duplicate-key' | 'alias-budget' | 'not-a-mapping' | 'complex-key';
  message: string;
  range: Range;
}

export interface ParsedSource {
  text: string;
  /** `undefined` when the document is empty or not a mapping. */
  root: YMap | undefined;
  problems: SourceProblem[];
  /** Comment lines, for `# trinity-version:` and `# trinity-disable-next-line` directives. */
  lineStarts: number[];
}

/** The most nodes alias expansion may produce; real configs have a few thousand. */
export const NODE_BUDGET = 200_000;

class BudgetExceeded extends Error {
  constructor(readonly why: 'nodes' | 'depth') {
    super(why);
  }
}

export function parseSource(text: string): ParsedSource {
  const lineStarts = computeLineStarts(text);
  const problems: SourceProblem[] = [];
  let doc: Document.Parsed;
  try {
    doc = parseYamlDocument(text, {
      version: '1.1',
      uniqueKeys: true,
      merge: true,
      keepSourceTokens: false,
      prettyErrors: false,
    });
  } catch (e) {
    problems.push({ kind: 'syntax', message: `YAML could not be parsed: ${(e as Error).message}`, range: [0, 0] });
    return { text, root: undefined, problems, lineStarts };
  }
  for (const err of doc.errors) {
    const [start, end] = err.pos;
    const kind =
      err.code === 'DUPLICATE_KEY' ? 'duplicate-key' : err.code === 'RESOURCE_EXHAUSTION' ? 'alias-budget' : 'syntax';
    problems.push({ kind, message: firstLine(err.message), range: [start, Math.max(end, start + 1)] });
  }
  const contents = doc.contents as YamlNode | null;
  if (contents === null || contents === undefined) return { text, root: undefined, problems, lineStarts };
  const walker = new Walker(doc, text, problems);
  let root: YNode | undefined;
  try {
    root = walker.node(contents, 0);
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
    problems.push({
      kind: 'alias-budget',
      message:
        e.why === 'depth'
          ? TOO_DEEP_MESSAGE
          : `YAML aliases expand to more than ${NODE_BUDGET} nodes; refusing to load (an alias bomb?).`,
      range: rangeOf(contents, text),
    });
    return { text, root: undefined, problems, lineStarts };
  }
  if (root.kind !== 'map') {
    problems.push({
      kind: 'not-a-mapping',
      message: 'A Trinity config must be a mapping of sections at the top level.',
      range: root.range,
    });
    return { text, root: undefined, problems, lineStarts };
  }
  return { text, root, problems, lineStarts };
}

class Walker {
  private count = 0;
  private readonly resolving = new Set<YamlNode>();

  constructor(
    private readonly doc: Document.Parsed,
    private readonly text: string,
    private readonly problems: SourceProblem[],
  ) {}

  node(n: YamlNode, depth: number): YNode {
    if (++this.count > NODE_BUDGET) throw new BudgetExceeded('nodes');
    if (depth > MAX_NESTING) throw new BudgetExceeded('depth');
    if (isAlias(n)) {
      const target = this.anchorTarget(n);
      if (!target || this.resolving.has(target)) {
        return {
          kind: 'scalar',
          value: null,
          quoted: false,
          contentStart: rangeOf(n, this.text)[0],
          range: rangeOf(n, this.text),
        };
      }
      this.resolving.add(target);
      try {
        const resolved = this.node(target, depth + 1);
        // Report problems at the alias, where the user wrote it.
        return { ...resolved, range: rangeOf(n, this.text) } as YNode;
      } finally {
        this.resolving.delete(target);
      }
    }
    if (isMap(n)) return this.map(n as unknown as MapLike, depth);
    if (isSeq(n)) {
      const items = (n.items as YamlNode[]).map((it) =>
        it === null ? this.nullAt(rangeOf(n, this.text)[1]) : this.node(it, depth + 1),
      );
      return { kind: 'seq', items, range: rangeOf(n, this.text) };
    }
    if (isScalar(n)) return this.scalar(n);
    return this.nullAt(0);
  }

  private map(n: MapLike, depth: number): YMap {
    const entries: YEntry[] = [];
    const seen = new Map<string, number>();
    const put = (e: YEntry, fromMerge: boolean) => {
      const at = seen.get(e.key);
      if (at !== undefined) {
        // Explicit keys override merged ones; among merged sources the first wins (YAML merge semantics).
        if (fromMerge) return;
        entries[at] = e;
        return;
      }
      seen.set(e.key, entries.length);
      entries.push(e);
    };
    const merged: YEntry[] = [];
    for (const pair of n.items) {
      if (!isPair(pair)) continue;
      const k = pair.key as YamlNode | null;
      const v = pair.value as YamlNode | null;
      if (isScalar(k) && (typeof k.value === 'symbol' || (k as Scalar).source === '<<')) {
        const sources = v === null ? [] : isSeq(v) ? (v.items as YamlNode[]) : [v];
        for (const src of sources) {
          const m = this.node(src, depth + 1);
          if (m.kind === 'map') merged.push(...m.entries);
        }
        continue;
      }
      if (k !== null && !isScalar(k)) {
        this.problems.push({
          kind: 'complex-key',
          message: 'Only plain keys are supported in a Trinity config.',
          range: rangeOf(k, this.text),
        });
        continue;
      }
      const keyText = k === null ? '' : keyTextOf(k as Scalar);
      const keyRange = k === null ? ([0, 0] as const) : rangeOf(k, this.text);
      const value = v === null ? this.nullAt(keyRange[1]) : this.node(v, depth + 1);
      put({ key: keyText, keyRange, value }, false);
    }
    for (const e of merged) put(e, true);
    return { kind: 'map', entries, range: rangeOf(n as unknown as YamlNode, this.text) };
  }

  private scalar(n: Scalar): YScalar {
    const range = rangeOf(n, this.text);
    const quoted = n.type === 'QUOTE_DOUBLE' || n.type === 'QUOTE_SINGLE';
    let value = n.value as unknown;
    if (typeof value === 'bigint') value = Number(value);
    if (value instanceof Date) value = (n.source ?? '') || this.text.slice(range[0], range[1]);
    if (typeof value === 'string' && !quoted && isOmegaConfFloat(value)) value = Number(value);
    // PyYAML (and so OmegaConf) reads y/n as strings; the yaml package's 1.1 schema reads them as booleans.
    if (typeof value === 'boolean' && !quoted && /^[yYnN]$/.test(n.source ?? '')) value = n.source as string;
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      value = String(value);
    }
    const contentStart = quoted ? range[0] + 1 : range[0];
    const floatLiteral =
      typeof value === 'number' && !quoted && /^[-+]?[\d_]*(\.|[eE][-+]?\d)|^[-+]?\.(inf|nan)/i.test(n.source ?? '');
    return {
      kind: 'scalar',
      value: value as YScalar['value'],
      quoted,
      contentStart,
      range,
      ...(floatLiteral ? { floatLiteral } : {}),
    };
  }

  private nullAt(offset: number): YScalar {
    return { kind: 'scalar', value: null, quoted: false, contentStart: offset, range: [offset, offset] };
  }

  private anchorTarget(n: Alias): YamlNode | undefined {
    return (n.resolve(this.doc) as YamlNode | undefined) ?? undefined;
  }
}

type MapLike = { items: unknown[] };

function keyTextOf(k: Scalar): string {
  if (k.type === 'PLAIN' && typeof k.source === 'string') return k.source;
  return k.value === null ? 'null' : String(k.value);
}

/** OmegaConf's YAML loader treats `1e-5`, `1E+3`, `.5e2` as floats, which plain YAML 1.1 leaves as strings. */
function isOmegaConfFloat(s: string): boolean {
  return (
    /^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$/.test(s) || /^[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?$/.test(s)
  );
}

function rangeOf(n: YamlNode, text: string): Range {
  const r = (n as { range?: [number, number, number] }).range;
  if (!r) return [0, 0];
  const start = Math.min(r[0], text.length);
  return [start, Math.max(start, Math.min(r[1], text.length))];
}

function firstLine(s: string): string {
  return s.split('\n')[0].trim();
}

export function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** 0-based line and UTF-16 column of an offset. */
export function positionAt(lineStarts: readonly number[], offset: number): { line: number; character: number } {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - lineStarts[lo] };
}

export function offsetAt(lineStarts: readonly number[], line: number, character: number): number {
  if (line >= lineStarts.length) return lineStarts[lineStarts.length - 1];
  return lineStarts[Math.max(0, line)] + Math.max(0, character);
}

/** The YAML node at a path of keys and list indices, if written. */
export function ynodeAt(root: YNode | undefined, path: readonly (string | number)[]): YNode | undefined {
  let n: YNode | undefined = root;
  for (const k of path) {
    if (!n) return undefined;
    if (n.kind === 'map') n = n.entries.find((e) => e.key === String(k))?.value;
    else if (n.kind === 'seq') n = n.items[Number(k)];
    else return undefined;
  }
  return n;
}
