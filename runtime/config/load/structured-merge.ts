/**
 * OmegaConf's structured merge, for one release: the YAML tree is typed against the schema (defaults are not
 * materialised here; see model/defaults.ts).
 * Unknown keys are errors outside free-form nodes, values are converted the way OmegaConf's typed nodes convert
 * them, and `${...}` values are kept raw here (interpolate-config.ts resolves them against the merged tree).
 */
import type { ConfigDiagnostic, DiagnosticCode, Path } from '../diagnostics';
import { CODES } from '../diagnostics';
import { enumLookup, enumMembersAt, fieldsAt, releasesWithField, typeName } from '../model';
import { RENAMES } from '../model/renames';
import type { ResolvedField, SectionDef, ValueType } from '../model/types';
import { isInterpolated } from '../interpolation';
import { pyStr } from '../python-repr';
import { RELEASES, releaseIndex, type Release } from '../releases';
import type { Range, YEntry, YMap, YNode, YScalar } from './yaml-tree';
import { didYouMean } from '../suggest';

export type CNode = CMap | CList | CScalar;

interface CBase {
  path: Path;
  /** The schema field this node fills; undefined inside free-form nodes and for list items / map values. */
  field?: ResolvedField;
  /** The value's type in the schema; undefined inside free-form nodes. */
  type?: ValueType;
  /** 'yaml' when written in the file, 'default' when it comes from the schema. */
  origin: 'yaml' | 'default';
  keyRange?: Range;
  range?: Range;
}

export interface CMap extends CBase {
  kind: 'map';
  /** Set for dataclass-typed nodes; their unwritten fields take the section's defaults. */
  section?: SectionDef;
  /** What is written (or a fallback for a written value that was invalid). */
  entries: Map<string, CNode>;
}

export interface CList extends CBase {
  kind: 'list';
  items: CNode[];
}

export interface CScalar extends CBase {
  kind: 'scalar';
  value: string | number | boolean | null;
  /** The raw `${...}` text, until interpolation resolves it. */
  interpolation?: string;
  /** Offset in the source where the scalar's text starts (inside quotes). */
  contentStart?: number;
}

export interface MergeResult {
  root: CMap;
  diagnostics: ConfigDiagnostic[];
}

/** Merges a YAML mapping over `root`'s schema; `basePath` prefixes every reported path (for sub-configs). */
export function mergeConfig(
  yroot: YMap | undefined,
  root: SectionDef,
  release: Release,
  basePath: Path = [],
): MergeResult {
  const m = new Merger(release);
  const node = m.section(yroot, root, basePath, 'yaml');
  return { root: node, diagnostics: m.diagnostics };
}

class Merger {
  readonly diagnostics: ConfigDiagnostic[] = [];

  constructor(private readonly release: Release) {}

  private report(code: DiagnosticCode, message: string, range: Range, data?: ConfigDiagnostic['data']): void {
    this.diagnostics.push({ code, severity: CODES[code].severity, message, range, data });
  }

  section(y: YMap | undefined, section: SectionDef, path: Path, origin: CBase['origin']): CMap {
    const fields = fieldsAt(section, this.release);
    const entries = new Map<string, CNode>();
    const written = new Map<string, YEntry>();
    for (const e of y?.entries ?? []) {
      if (fields.has(e.key)) written.set(e.key, e);
      else if (!section.open) this.unknownKey(e, section, path);
    }
    for (const [key, field] of fields) {
      const e = written.get(key);
      if (e) {
        const p = [...path, key];
        this.checkWrittenField(e, field, p);
        entries.set(key, this.value(e.value, field.type, field, p, e.keyRange));
      } else if (field.required && y) {
        const p = [...path, key];
        this.report('TRN023', `\`${pathText(path)}\` needs \`${key}\`.`, y.range, {
          path: p,
          add: { path: p, value: '' },
        });
      }
      // Unwritten fields get no node: their values come from the model's defaults (model/defaults.ts).
    }
    return {
      kind: 'map',
      path,
      field: undefined,
      type: undefined,
      origin,
      keyRange: undefined,
      range: y?.range,
      section,
      entries,
    };
  }

  private checkWrittenField(e: YEntry, field: ResolvedField, p: Path): void {
    if (field.deprecated) {
      const rename = RENAMES[`${field.section.name}.${field.key}`];
      this.report('TRN012', field.deprecated.message, e.keyRange, {
        path: p,
        movedTo: rename?.to || field.deprecated.replacement,
      });
    } else if (field.auto && !isNullScalar(e.value)) {
      this.report(
        'TRN013',
        `\`${pathText(p)}\` is set by Trinity itself; the value written here is overwritten or ignored.`,
        e.keyRange,
        { path: p },
      );
    }
  }

  private unknownKey(e: YEntry, section: SectionDef, path: Path): void {
    const p = [...path, e.key];
    const where = path.length === 0 ? 'the top level' : `\`${pathText(path)}\``;
    const lineage = [section, ...(section.formerly ?? [])];
    const others = [...new Set(lineage.flatMap((s) => releasesWithField(s, e.key)))].sort(
      (a, b) => releaseIndex(a) - releaseIndex(b),
    );
    const rename = lineage.map((s) => RENAMES[`${s.name}.${e.key}`]).find(Boolean);
    if (others.length > 0) {
      const span = others.length === 1 ? others[0] : `${others[0]}–${others[others.length - 1]}`;
      const later = releaseIndex(others[0]) > releaseIndex(this.release);
      let msg = later
        ? `\`${e.key}\` under ${where} was added in Trinity ${others[0]}; this file is checked against ${this.release}.`
        : `\`${e.key}\` under ${where} is not in Trinity ${this.release} (it exists in ${span}).`;
      if (rename && !later) msg += renameHint(rename.to, rename.note);
      this.report('TRN011', msg, e.keyRange, { path: p, movedTo: rename?.to || undefined });
      return;
    }
    const candidates = [...fieldsAt(section, this.release).keys()];
    const hint = didYouMean(e.key, candidates);
    const suggestion = hint ? hint.slice(hint.indexOf('`') + 1, hint.lastIndexOf('`')) : undefined;
    this.report('TRN010', `Unknown key \`${e.key}\` under ${where} (${section.name}).${hint}`, e.keyRange, {
      path: p,
      suggestion,
      candidates,
    });
  }

  value(y: YNode, type: ValueType, field: ResolvedField | undefined, path: Path, keyRange?: Range): CNode {
    const base: CBase = { path, field, type, origin: 'yaml', keyRange, range: y.range };
    if (y.kind === 'scalar' && typeof y.value === 'string' && isInterpolated(y.value)) {
      return scalarNode(base, null, y.value, y.contentStart);
    }
    if (y.kind === 'scalar' && y.value === null && type.kind !== 'any') {
      if (!field && type.kind === 'section') {
        // An element of a typed list or map: OmegaConf's element nodes are not Optional.
        this.report('TRN021', `\`${pathText(path)}\` cannot be null; expected ${typeName(type)}.`, y.range, { path });
        return this.section(undefined, type.section, path, 'default');
      }
      if (field && !field.optional) {
        this.report('TRN021', `\`${pathText(path)}\` cannot be null; expected ${typeName(type)}.`, y.range, { path });
        return this.fallback(type, field, path, base, y.range);
      }
      return scalarNode(base, null);
    }
    switch (type.kind) {
      case 'section':
        if (y.kind !== 'map') return this.typeError(y, type, field, path, base);
        return withBase(this.section(y, type.section, path, 'yaml'), { field, type, keyRange });
      case 'list': {
        if (y.kind !== 'seq') return this.typeError(y, type, field, path, base);
        const items = y.items.map((it, i) => this.value(it, type.item, undefined, [...path, i]));
        return listNode(base, items);
      }
      case 'map': {
        if (y.kind !== 'map') return this.typeError(y, type, field, path, base);
        const entries = new Map<string, CNode>();
        for (const e of y.entries)
          entries.set(e.key, this.value(e.value, type.value, undefined, [...path, e.key], e.keyRange));
        return mapNode(base, entries);
      }
      case 'dict':
        if (y.kind !== 'map') return this.typeError(y, type, field, path, base);
        return freeNode(y, path, field, type, keyRange);
      case 'any':
        return freeNode(y, path, field, type, keyRange);
      default: {
        if (y.kind !== 'scalar') return this.typeError(y, type, field, path, base);
        const c = convertScalar(y.value, type, this.release, y.floatLiteral);
        if (!c.ok) {
          const code = type.kind === 'enum' ? 'TRN022' : 'TRN020';
          const candidates =
            type.kind === 'enum' ? enumMembersAt(type.enum, this.release).map((m) => m.value) : undefined;
          const hint = candidates && typeof y.value === 'string' ? didYouMean(y.value, candidates) : '';
          this.report(code, `\`${pathText(path)}\`: ${c.message}${hint}`, y.range, { path, candidates });
          return this.fallback(type, field, path, base, y.range);
        }
        return scalarNode(base, c.value, undefined, y.contentStart);
      }
    }
  }

  private typeError(y: YNode, type: ValueType, field: ResolvedField | undefined, path: Path, base: CBase): CNode {
    const got = y.kind === 'map' ? 'a mapping' : y.kind === 'seq' ? 'a list' : describeScalar((y as YScalar).value);
    this.report('TRN020', `\`${pathText(path)}\` must be ${article(typeName(type))}, not ${got}.`, y.range, { path });
    return this.fallback(type, field, path, base, y.range);
  }

  /** What a node holds after a reported problem: its default, so later checks see a well-formed config. */
  private fallback(type: ValueType, field: ResolvedField | undefined, path: Path, base: CBase, range: Range): CNode {
    if (field) return withBase(this.fromDefault(field, path), { keyRange: base.keyRange, range, origin: 'yaml' });
    if (type.kind === 'section')
      return withBase(this.section(undefined, type.section, path, 'default'), { keyRange: base.keyRange, range });
    if (type.kind === 'list') return listNode(base, []);
    if (type.kind === 'map' || type.kind === 'dict') return mapNode(base, new Map());
    return scalarNode(base, null);
  }

  fromDefault(field: ResolvedField, path: Path): CNode {
    const base: CBase = { path, field, type: field.type, origin: 'default' };
    if (field.type.kind === 'section' && field.default === undefined && !field.required) {
      return withBase(this.section(undefined, field.type.section, path, 'default'), { field, type: field.type });
    }
    return jsonToNode(field.default ?? null, path, base);
  }
}

function jsonToNode(v: unknown, path: Path, base: CBase): CNode {
  if (Array.isArray(v))
    return listNode(
      base,
      v.map((x, i) => jsonToNode(x, [...path, i], { path: [...path, i], origin: base.origin })),
    );
  if (v !== null && typeof v === 'object') {
    const entries = new Map<string, CNode>();
    for (const [k, x] of Object.entries(v))
      entries.set(k, jsonToNode(x, [...path, k], { path: [...path, k], origin: base.origin }));
    return mapNode(base, entries);
  }
  return scalarNode(base, v as CScalar['value']);
}

/** A free-form subtree: kept as written (interpolations included), with ranges. */
function freeNode(
  y: YNode,
  path: Path,
  field: ResolvedField | undefined,
  type: ValueType | undefined,
  keyRange?: Range,
): CNode {
  const base: CBase = { path, field, type, origin: 'yaml', keyRange, range: y.range };
  if (y.kind === 'map') {
    const entries = new Map<string, CNode>();
    for (const e of y.entries)
      entries.set(e.key, freeNode(e.value, [...path, e.key], undefined, undefined, e.keyRange));
    return mapNode(base, entries);
  }
  if (y.kind === 'seq')
    return listNode(
      base,
      y.items.map((it, i) => freeNode(it, [...path, i], undefined, undefined)),
    );
  if (typeof y.value === 'string' && isInterpolated(y.value)) return scalarNode(base, null, y.value, y.contentStart);
  return scalarNode(base, y.value, undefined, y.contentStart);
}

/*
 * Node constructors write every field out. In Node 20's V8, `{ ...base, more }` gives each object its own hidden
 * class, and such objects survive young-generation GCs with everything they reach (measured: nearly all promoted),
 * which made each edit's merged tree old-generation garbage in the language server.
 */
function scalarNode(b: CBase, value: CScalar['value'], interpolation?: string, contentStart?: number): CScalar {
  return {
    kind: 'scalar',
    path: b.path,
    field: b.field,
    type: b.type,
    origin: b.origin,
    keyRange: b.keyRange,
    range: b.range,
    value,
    interpolation,
    contentStart,
  };
}

function listNode(b: CBase, items: CNode[]): CList {
  return {
    kind: 'list',
    path: b.path,
    field: b.field,
    type: b.type,
    origin: b.origin,
    keyRange: b.keyRange,
    range: b.range,
    items,
  };
}

function mapNode(b: CBase, entries: Map<string, CNode>): CMap {
  return {
    kind: 'map',
    path: b.path,
    field: b.field,
    type: b.type,
    origin: b.origin,
    keyRange: b.keyRange,
    range: b.range,
    section: undefined,
    entries,
  };
}

/** `node` (made for this call, not shared) with some of its base fields replaced. */
function withBase<T extends CNode>(node: T, fields: Partial<CBase>): T {
  return Object.assign(node, fields);
}

export type Conversion = { ok: true; value: string | number | boolean | null } | { ok: false; message: string };

/** Converts a scalar to a typed node's value as OmegaConf does (`"8"` -> 8 for int, `"yes"` -> true for bool). */
export function convertScalar(v: unknown, type: ValueType, release: Release, floatLiteral = false): Conversion {
  switch (type.kind) {
    case 'str':
      if (v === null || typeof v === 'object')
        return { ok: false, message: `expected a string, got ${describeScalar(v)}.` };
      return { ok: true, value: pyStr(v) };
    case 'int': {
      if (typeof v === 'number' && Number.isInteger(v) && !floatLiteral) return { ok: true, value: v };
      if (typeof v === 'string' && /^\s*[-+]?\d[\d_]*\s*$/.test(v))
        return { ok: true, value: Number(v.replace(/_/g, '')) };
      return { ok: false, message: `expected an integer, got ${describeScalar(v)}.` };
    }
    case 'float': {
      if (typeof v === 'number') return { ok: true, value: v };
      if (typeof v === 'string') {
        const t = v.trim().toLowerCase().replace(/_/g, '');
        if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t)) return { ok: true, value: Number(t) };
        if (/^[-+]?(inf|infinity)$/.test(t)) return { ok: true, value: t.startsWith('-') ? -Infinity : Infinity };
        if (t === 'nan') return { ok: true, value: NaN };
      }
      return { ok: false, message: `expected a number, got ${describeScalar(v)}.` };
    }
    case 'bool': {
      if (typeof v === 'boolean') return { ok: true, value: v };
      if (typeof v === 'number' && Number.isInteger(v)) return { ok: true, value: v !== 0 };
      if (typeof v === 'string') {
        const t = v.trim().toLowerCase();
        if (/^[-+]?\d+$/.test(t)) return { ok: true, value: Number(t) !== 0 };
        if (['y', 'yes', 'on', 'true'].includes(t)) return { ok: true, value: true };
        if (['n', 'no', 'off', 'false'].includes(t)) return { ok: true, value: false };
      }
      return { ok: false, message: `expected true or false, got ${describeScalar(v)}.` };
    }
    case 'enum': {
      const members = enumMembersAt(type.enum, release).map((m) => m.value);
      if (typeof v !== 'string')
        return { ok: false, message: `expected one of ${members.join(', ')}, got ${describeScalar(v)}.` };
      const m = enumLookup(type.enum, v, release);
      if (m === undefined) {
        const elsewhere = RELEASES.filter((r) => enumLookup(type.enum, v, r) !== undefined);
        const note =
          elsewhere.length > 0
            ? ` (\`${v}\` is valid in Trinity ${elsewhere[0]}${elsewhere.length > 1 ? `–${elsewhere[elsewhere.length - 1]}` : ''})`
            : '';
        return {
          ok: false,
          message: `\`${v}\` is not a valid ${type.enum.name}; expected one of ${members.join(', ')}${note}.`,
        };
      }
      return { ok: true, value: m };
    }
    default:
      return { ok: false, message: `expected ${typeName(type)}.` };
  }
}

function isNullScalar(y: YNode): boolean {
  return y.kind === 'scalar' && y.value === null;
}

function describeScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return `the string \`${v.length > 40 ? `${v.slice(0, 40)}…` : v}\``;
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'boolean') return `\`${v}\``;
  return 'a value of another type';
}

function article(s: string): string {
  if (/^(one of|mapping of|list of|any)/.test(s))
    return s.startsWith('mapping of') || s.startsWith('list of') ? `a ${s}` : s;
  return /^[aeiou]/.test(s) ? `an ${s}` : `a ${s}`;
}

function renameHint(to: string, note?: string): string {
  if (to && note) return ` Use \`${to}\` instead: ${note}.`;
  if (to) return ` Use \`${to}\` instead.`;
  if (note) return ` Instead, ${note}.`;
  return '';
}

export function pathText(path: Path): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s ? `.${p}` : p;
  return s;
}
