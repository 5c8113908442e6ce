/**
 * The config model of one release -> a JSON Schema (draft-07 with VS Code's extensions: `markdownDescription`,
 * `markdownEnumDescriptions`, `deprecationMessage`, `defaultSnippets`), as committed under schemas/.
 * Every scalar also accepts an OmegaConf `${...}` interpolation, which takes the resolved value's type.
 */
import { allowedValues, enumMembersAt, fieldsAt, ROOT_SECTION, sectionDoc } from '../model';
import { SECTION_SNIPPETS } from '../model/snippets';
import { describeDomain, joinDomains } from '../model/domains';
import type { Domain, ResolvedField, SectionDef, ValueType } from '../model/types';
import { atLeast, type Release } from '../releases';

type Schema = Record<string, unknown>;

const INTERPOLATION: Schema = {
  type: 'string',
  pattern: '\\$\\{',
  description: 'An OmegaConf interpolation, e.g. ${oc.env:VAR,default} or ${model.max_response_tokens}.',
};

export function generateSchema(release: Release): Schema {
  const definitions: Record<string, Schema> = { interpolation: INTERPOLATION };
  const gen = new Generator(release, definitions);
  const root = gen.sectionBody(ROOT_SECTION);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `https://trinity-workbench.dev/schemas/trinity-${release}.schema.json`,
    title: `Trinity-RFT ${release} configuration`,
    ...root,
    definitions: sortKeys(definitions),
  };
}

class Generator {
  constructor(
    private readonly release: Release,
    private readonly definitions: Record<string, Schema>,
  ) {}

  sectionBody(section: SectionDef): Schema {
    const properties: Record<string, Schema> = {};
    for (const [key, f] of fieldsAt(section, this.release)) properties[key] = this.field(f);
    const out: Schema = { type: 'object', properties, additionalProperties: section.open === true };
    const byEngine = this.engineBounds(section);
    if (byEngine) out.allOf = byEngine;
    const doc = sectionDoc(section);
    if (doc) out.markdownDescription = doc;
    const required = [...fieldsAt(section, this.release).values()].filter((f) => f.required).map((f) => f.key);
    if (required.length) out.required = required;
    const snippets = SECTION_SNIPPETS[section.name]?.filter((s) => !s.since || atLeast(this.release, s.since));
    if (snippets?.length)
      out.defaultSnippets = snippets.map(({ label, description, body }) => ({ label, description, body }));
    return out;
  }

  /** The values a field takes, without its description. */
  private value(f: ResolvedField, domain: Domain | undefined): Schema {
    const t = f.checkedAs ? this.type({ kind: 'section', section: f.checkedAs }) : this.type(f.type, { ...f, domain });
    // A `$ref` with sibling keywords is not resolved by yaml-language-server's completion: wrap it.
    const s = t.$ref ? { allOf: [t] } : t;
    return f.optional ? nullable(s) : s;
  }

  /**
   * A model section that names its engine gets each engine's own bounds: SGLang's where `engine_type: sglang`, the
   * field's (vLLM's) where the type is left out or `vllm`; any other type keeps the bounds both admit. SGLang's
   * top_k bound holds only where the section's own temperature is not greedy (below 1e-6 SGLang sets top_k to 1);
   * a temperature left out comes from `model`, which the section cannot see.
   */
  private engineBounds(section: SectionDef): Schema[] | undefined {
    const fields = fieldsAt(section, this.release);
    const split = [...fields.values()].filter((f) => f.sglangDomain);
    if (!fields.has('engine_type') || split.length === 0) return undefined;
    const props = (of: ResolvedField[], domain: (f: ResolvedField) => Domain | undefined) =>
      Object.fromEntries(of.map((f) => [f.key, this.value(f, domain(f))]));
    const sglang = { properties: { engine_type: { const: 'sglang' } }, required: ['engine_type'] };
    const topK = split.filter((f) => f.key === 'top_k');
    const notGreedy = { properties: { temperature: { type: 'number', minimum: 1e-6 } }, required: ['temperature'] };
    return [
      {
        if: sglang,
        then: {
          properties: props(
            split.filter((f) => f.key !== 'top_k'),
            (f) => f.sglangDomain,
          ),
        },
      },
      ...(topK.length && fields.has('temperature')
        ? [{ if: { allOf: [sglang, notGreedy] }, then: { properties: props(topK, (f) => f.sglangDomain) } }]
        : []),
      {
        if: { anyOf: [{ not: { required: ['engine_type'] } }, { properties: { engine_type: { const: 'vllm' } } }] },
        then: { properties: props(split, (f) => f.domain) },
      },
    ];
  }

  private sectionRef(section: SectionDef): Schema {
    if (!(section.name in this.definitions)) {
      this.definitions[section.name] = {};
      this.definitions[section.name] = this.sectionBody(section);
    }
    return { $ref: `#/definitions/${section.name}` };
  }

  private field(f: ResolvedField): Schema {
    const out: Schema = { ...this.value(f, admitted(f)), markdownDescription: fieldMarkdown(f) };
    if (f.default !== undefined && !(f.type.kind === 'section')) out.default = f.default;
    if (f.deprecated) out.deprecationMessage = f.deprecated.message;
    return out;
  }

  private type(t: ValueType, f?: ResolvedField): Schema {
    switch (t.kind) {
      case 'str': {
        // A closed set some library enforces: no other string (an interpolation still may be anything).
        if (f?.domain?.oneOf) {
          const docs = f.values
            ? new Map(allowedValues(f.values, this.release).map((v) => [v.value.toLowerCase(), v.doc]))
            : new Map<string, string>();
          const en: Schema = {
            type: 'string',
            enum: [...f.domain.oneOf],
            markdownEnumDescriptions: f.domain.oneOf.map((v) => docs.get(v.toLowerCase()) ?? ''),
          };
          // Other spellings of the same names (case-insensitive sets) match a pattern, so completion offers each name once.
          const other: Schema[] = f.domain.caseInsensitive
            ? [{ type: 'string', pattern: `^(${f.domain.oneOf.map(anyCase).join('|')})$` }]
            : [];
          return { anyOf: [en, ...other, { $ref: '#/definitions/interpolation' }] };
        }
        if (f?.values) {
          const vals = allowedValues(f.values, this.release);
          const en: Schema = {
            type: 'string',
            enum: vals.map((v) => v.value),
            markdownEnumDescriptions: vals.map((v) => v.doc + (v.deprecated ? ` *(deprecated: ${v.deprecated})*` : '')),
          };
          // Registries are open (plugins, dotted class paths); choices are closed but case rules vary, so both accept other strings
          // and leave the verdict to the validator, which knows the release's exact rule.
          return { anyOf: [en, { type: 'string' }] };
        }
        return { type: 'string' };
      }
      case 'int':
        return {
          anyOf: [
            { type: 'integer', ...bounds(f?.domain) },
            ...sentinels(f?.domain),
            { $ref: '#/definitions/interpolation' },
          ],
        };
      case 'float':
        return {
          anyOf: [
            { type: 'number', ...bounds(f?.domain) },
            ...sentinels(f?.domain),
            { $ref: '#/definitions/interpolation' },
          ],
        };
      case 'bool':
        return { anyOf: [{ type: 'boolean' }, { $ref: '#/definitions/interpolation' }] };
      case 'enum': {
        const members = enumMembersAt(t.enum, this.release);
        return {
          anyOf: [
            { type: 'string', enum: members.map((m) => m.value), markdownEnumDescriptions: members.map((m) => m.doc) },
            { $ref: '#/definitions/interpolation' },
          ],
        };
      }
      case 'section':
        return this.sectionRef(t.section);
      case 'list':
        return { anyOf: [{ type: 'array', items: this.type(t.item) }, { $ref: '#/definitions/interpolation' }] };
      case 'map':
        return {
          anyOf: [
            { type: 'object', additionalProperties: this.type(t.value) },
            { $ref: '#/definitions/interpolation' },
          ],
        };
      case 'dict':
        return { anyOf: [{ type: 'object' }, { $ref: '#/definitions/interpolation' }] };
      case 'any':
        return {};
    }
  }
}

/** A regular expression matching `word` in any letter case: `[fF][iI][lL][eE]`. */
function anyCase(word: string): string {
  return [...word]
    .map((c) =>
      c.toLowerCase() !== c.toUpperCase()
        ? `[${c.toLowerCase()}${c.toUpperCase()}]`
        : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
}

/** The bounds a field's schema states: for a value that may reach either engine, what both admit. */
function admitted(f: ResolvedField): Domain | undefined {
  if (!f.sglangDomain || !f.domain || f.domain.oneOf) return f.domain;
  return joinDomains(f.domain, f.sglangDomain);
}

/** JSON Schema bounds of a numeric domain. */
function bounds(d: Domain | undefined): Schema {
  if (!d || d.oneOf) return {};
  const out: Schema = {};
  if (d.min !== undefined) out[d.minExclusive ? 'exclusiveMinimum' : 'minimum'] = d.min;
  if (d.max !== undefined) out[d.maxExclusive ? 'exclusiveMaximum' : 'maximum'] = d.max;
  return out;
}

/** The sentinel numbers a domain allows outside its range (-1 = unlimited, …). */
function sentinels(d: Domain | undefined): Schema[] {
  return d?.except?.length ? [{ enum: [...d.except] }] : [];
}

function nullable(s: Schema): Schema {
  if (s.anyOf) return { anyOf: [...(s.anyOf as Schema[]), { type: 'null' }] };
  if (s.allOf) return { anyOf: [s, { type: 'null' }] };
  if (typeof s.type === 'string') return { ...s, type: [s.type, 'null'] };
  return s;
}

/** The hover text: description, then type, default and the release that added the key. */
export function fieldMarkdown(f: ResolvedField): string {
  const parts: string[] = [];
  if (f.doc) parts.push(f.doc);
  const facts: string[] = [];
  if (f.default !== undefined && f.type.kind !== 'section') facts.push(`Default: \`${JSON.stringify(f.default)}\``);
  if (f.auto) facts.push('Set by Trinity');
  facts.push(`Since Trinity ${f.since}`);
  parts.push(facts.join(' · '));
  parts.push(...domainNotes(f));
  if (f.deprecated) parts.push(`**Deprecated:** ${f.deprecated.message}`);
  return parts.join('\n\n');
}

/** What a field's value must be, and why: for hover and the config reference. */
export function domainNotes(f: ResolvedField): string[] {
  const note = (d: Domain) => `${describeDomain(d)} (${d.severity}: ${d.source}).`;
  return [
    ...(f.domain ? [`Allowed: ${note(f.domain)}`] : []),
    ...(f.sglangDomain ? [`With an SGLang engine (\`engine_type: sglang\`): ${note(f.sglangDomain)}`] : []),
  ];
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
