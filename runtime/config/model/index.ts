/** The config model as one release sees it: fields with ranges and per-release overrides applied. */
import { RELEASES, inRange, type Release } from '../releases';
import { FIELD_DOCS, SECTION_DOCS } from './descriptions';
import { REGISTRIES, registryEntriesAt, type RegistryEntry, type RegistryId } from './registries';
import { Config } from './sections';
import { domainOf, sglangDomainOf } from './domains';
// Links trainer.trainer_config to veRL's sections (checkedAs); imported here so every consumer of the model sees it.
import './verl-sections';
import type {
  ChoiceValue,
  EnumDef,
  EnumMember,
  FieldDef,
  ResolvedField,
  SectionDef,
  ValueSet,
  ValueType,
} from './types';

export { Config as ROOT_SECTION } from './sections';

const cache = new Map<string, ReadonlyMap<string, ResolvedField>>();

/** The fields of `section` in `release`, in declaration order. */
export function fieldsAt(section: SectionDef, release: Release): ReadonlyMap<string, ResolvedField> {
  const k = `${section.name}@${release}`;
  let m = cache.get(k);
  if (!m) {
    m = new Map();
    for (const [key, def] of Object.entries(section.fields)) {
      const f = resolveField(section, key, def, release);
      if (f) (m as Map<string, ResolvedField>).set(key, f);
    }
    cache.set(k, m);
  }
  return m;
}

export function fieldAt(section: SectionDef, key: string, release: Release): ResolvedField | undefined {
  return fieldsAt(section, release).get(key);
}

function resolveField(section: SectionDef, key: string, def: FieldDef, release: Release): ResolvedField | undefined {
  if (!inRange(release, def.since, def.until)) return undefined;
  const { since, until: _until, versions, ...shape } = def;
  const resolved: ResolvedField = {
    ...shape,
    key,
    section,
    doc: FIELD_DOCS[`${section.name}.${key}`] ?? '',
    since: since ?? firstReleaseOf(section),
  };
  for (const v of versions ?? []) {
    if (!inRange(release, v.since, v.until)) continue;
    const { since: _s, until: _u, ...override } = v;
    Object.assign(resolved, override);
  }
  resolved.domain ??= domainOf(`${section.name}.${key}`, release, inRange);
  if (!resolved.domain) delete resolved.domain;
  const sglang = sglangDomainOf(`${section.name}.${key}`, release, inRange);
  if (sglang) resolved.sglangDomain = sglang;
  // A deprecation applies from the release that made it, not before.
  if (resolved.deprecated?.since && !inRange(release, resolved.deprecated.since)) delete resolved.deprecated;
  return resolved;
}

/** The releases in which `section` has a field named `key` (for "added in" / "removed in" messages). */
export function releasesWithField(section: SectionDef, key: string): Release[] {
  const def = section.fields[key];
  if (!def) return [];
  return RELEASES.filter((r) => inRange(r, def.since, def.until));
}

function firstReleaseOf(section: SectionDef): Release {
  for (const r of RELEASES) if (sectionsAt(r).has(section)) return r;
  return RELEASES[0];
}

const sectionsCache = new Map<Release, Set<SectionDef>>();

/** Every section reachable from the root in `release`. */
export function sectionsAt(release: Release): Set<SectionDef> {
  let s = sectionsCache.get(release);
  if (s) return s;
  s = new Set();
  const visit = (sec: SectionDef) => {
    if (s!.has(sec)) return;
    s!.add(sec);
    for (const [, def] of Object.entries(sec.fields)) {
      if (!inRange(release, def.since, def.until)) continue;
      const types = [
        def.type,
        ...(def.versions ?? []).filter((v) => inRange(release, v.since, v.until)).map((v) => v.type),
      ];
      const t = types.filter((x): x is ValueType => x !== undefined).pop();
      if (t) forEachSection(t, visit);
    }
  };
  visit(Config);
  sectionsCache.set(release, s);
  return s;
}

function forEachSection(t: ValueType, f: (s: SectionDef) => void): void {
  if (t.kind === 'section') f(t.section);
  else if (t.kind === 'list') forEachSection(t.item, f);
  else if (t.kind === 'map') forEachSection(t.value, f);
}

export function sectionDoc(section: SectionDef): string {
  return SECTION_DOCS[section.name] ?? '';
}

export function enumMembersAt(e: EnumDef, release: Release): EnumMember[] {
  return e.members.filter((m) => inRange(release, m.since, m.until));
}

/** Resolves a YAML string to an enum member the way Trinity's case-insensitive enums do, or undefined. */
export function enumLookup(e: EnumDef, text: string, release: Release): string | undefined {
  let name = text.trim();
  if (name.startsWith(`${e.name}.`)) name = name.slice(e.name.length + 1);
  const lower = name.toLowerCase();
  const alias = e.aliases?.find((a) => a.alias === lower && inRange(release, a.since, a.until));
  const target = alias ? alias.member : lower;
  return enumMembersAt(e, release).find((m) => m.value === target)?.value;
}

export function choicesAt(values: readonly ChoiceValue[], release: Release): ChoiceValue[] {
  return values.filter((c) => inRange(release, c.since, c.until));
}

export function registryAt(id: RegistryId, release: Release): RegistryEntry[] {
  return registryEntriesAt(id, release);
}

export function registryTitle(id: RegistryId): string {
  return REGISTRIES[id].title;
}

/** The allowed names of a value set in a release, with their docs. */
export function allowedValues(
  values: ValueSet,
  release: Release,
): { value: string; doc: string; deprecated?: string }[] {
  if ('registry' in values)
    return registryAt(values.registry, release).map((e) => ({ value: e.name, doc: e.doc, deprecated: e.deprecated }));
  return choicesAt(values.choice, release).map((c) => ({ value: c.value, doc: c.doc }));
}

/** A short human name of a value type, for messages: `int`, `list of TasksetConfig`, ... */
export function typeName(t: ValueType): string {
  switch (t.kind) {
    case 'str':
      return 'string';
    case 'int':
      return 'integer';
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'enum':
      return `one of ${t.enum.members.map((m) => m.value).join(', ')}`;
    case 'section':
      return `mapping (${t.section.name})`;
    case 'list':
      return `list of ${typeName(t.item)}`;
    case 'map':
      return `mapping of name to ${typeName(t.value)}`;
    case 'dict':
      return 'mapping';
    case 'any':
      return 'any value';
  }
}

/** The schema at a config path in a release: the field that holds it and its value type (undefined inside free-form nodes). */
export function schemaAt(
  path: readonly (string | number)[],
  release: Release,
): { field?: ResolvedField; type?: ValueType } {
  let type: ValueType = { kind: 'section', section: Config };
  let field: ResolvedField | undefined;
  for (const k of path) {
    if (type.kind === 'section') {
      field = fieldAt(type.section, String(k), release);
      if (!field) return {};
      type = field.checkedAs ? { kind: 'section', section: field.checkedAs } : field.type;
    } else if (type.kind === 'list' && typeof k === 'number') {
      type = type.item;
      field = undefined;
    } else if (type.kind === 'map') {
      type = type.value;
      field = undefined;
    } else {
      return {};
    }
  }
  return { field, type };
}
