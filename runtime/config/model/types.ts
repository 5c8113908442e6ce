/**
 * The vocabulary of the config model: what a section, a field and a value type are.
 * Everything else (JSON Schema, validator, runtime types, docs) is derived from values of these types.
 */
import type { Release } from '../releases';
import type { RegistryId } from './registries';

/** A Python `Enum` of Trinity's constants: looked up by member NAME, case-insensitively, with optional aliases. */
export interface EnumDef {
  /** Python class name, e.g. `SyncMethod`. */
  name: string;
  /** Members as written in YAML (lower-case value), per release. */
  members: readonly EnumMember[];
  /** Alias names accepted from YAML, mapped to a member; `since` says from which release. */
  aliases?: readonly { alias: string; member: string; since?: Release; until?: Release }[];
}

export interface EnumMember {
  value: string;
  doc: string;
  since?: Release;
  until?: Release;
}

/** A closed set of strings that Trinity checks itself (e.g. `mode`), without a Python Enum. */
export interface ChoiceValue {
  value: string;
  doc: string;
  since?: Release;
  until?: Release;
}

export type ValueType =
  | { kind: 'str' }
  | { kind: 'int' }
  | { kind: 'float' }
  | { kind: 'bool' }
  | { kind: 'enum'; enum: EnumDef }
  | { kind: 'section'; section: SectionDef }
  | { kind: 'list'; item: ValueType }
  /** `Dict[str, <section>]`: keys are free, values are typed. */
  | { kind: 'map'; value: ValueType }
  /** `dict` / `Dict[str, Any]`: free-form, no key checking (OmegaConf's untyped DictConfig). */
  | { kind: 'dict' }
  /** `Any`: anything at all. */
  | { kind: 'any' };

/** Where a string field's allowed values come from, beyond its Python type. */
export type ValueSet = { registry: RegistryId } | { choice: readonly ChoiceValue[]; caseInsensitive?: boolean };

export interface Deprecation {
  /** What the user reads; names the replacement. */
  message: string;
  /** Dotted path (relative to the config root) of the key that replaces this one, if any. */
  replacement?: string;
  since?: Release;
}

/**
 * The values a library accepts for a field beyond its Python type: a numeric range (with values allowed outside
 * it, such as -1 for "no limit") or a closed set of strings. Each names the code that enforces it.
 */
export interface Domain {
  min?: number;
  /** `min` itself is not allowed. */
  minExclusive?: boolean;
  max?: number;
  maxExclusive?: boolean;
  /** Numbers allowed outside the range (sentinels such as -1 = unlimited, 0 = auto). */
  except?: readonly number[];
  /** A closed set of strings. */
  oneOf?: readonly string[];
  caseInsensitive?: boolean;
  /** `error` where the library raises; `warning` where it silently clamps or ignores the value. */
  severity: 'error' | 'warning';
  /** Where the rule comes from (file and function of Trinity, veRL, vLLM or torch): shown on hover and in messages. */
  source: string;
}

/** Properties of a field that may differ between releases. */
export interface FieldShape {
  type: ValueType;
  /** `Optional[...]`: `null` is accepted. */
  optional?: boolean;
  /** The dataclass default as a JSON value; `undefined` for a section (its own defaults apply) or a required field. */
  default?: unknown;
  /** The field has no default: YAML must set it (only `stages[].stage_name`). */
  required?: boolean;
  values?: ValueSet;
  /** Trinity fills this in itself ("DO NOT SET"); what the user writes is overwritten or unused. */
  auto?: boolean;
  /**
   * Free-form when the YAML is loaded, but merged strictly into this section when Trinity checks the config
   * (`trainer.trainer_config` -> veRL's config): editors complete and explain it with this section.
   */
  checkedAs?: SectionDef;
  deprecated?: Deprecation;
  /** The values some library accepts (model/domains.ts); checked after interpolation. */
  domain?: Domain;
  /**
   * What an SGLang engine (`engine_type: sglang`, main) accepts instead of `domain`, for a sampling value that reaches
   * one; check/domains.ts works out which engines a value reaches.
   */
  sglangDomain?: Domain;
}

export interface FieldDef extends FieldShape {
  since?: Release;
  until?: Release;
  /** Release ranges in which some properties differ; later entries win. */
  versions?: readonly ({ since?: Release; until?: Release } & Partial<FieldShape>)[];
}

export interface SectionDef {
  /** The Python dataclass name, e.g. `BufferConfig`. */
  name: string;
  fields: Record<string, FieldDef>;
  /** Inherits fields from a class that is not modelled, so keys beyond `fields` are not errors. */
  open?: boolean;
  /** Sections this one replaced in a later release (its keys' history continues there). */
  formerly?: SectionDef[];
}

/** A field as it is in one release: ranges and per-release overrides applied, docs attached. */
export interface ResolvedField extends FieldShape {
  key: string;
  section: SectionDef;
  doc: string;
  /** The first modelled release that has this field. */
  since: Release;
}
