/** Small constructors that keep the section tables readable. */
import type { ChoiceValue, EnumDef, FieldDef, SectionDef, ValueType } from './types';

export const STR: ValueType = { kind: 'str' };
export const INT: ValueType = { kind: 'int' };
export const FLOAT: ValueType = { kind: 'float' };
export const BOOL: ValueType = { kind: 'bool' };
export const DICT: ValueType = { kind: 'dict' };
export const ANY: ValueType = { kind: 'any' };

export const enumOf = (e: EnumDef): ValueType => ({ kind: 'enum', enum: e });
export const sectionOf = (s: SectionDef): ValueType => ({ kind: 'section', section: s });
export const listOf = (item: ValueType): ValueType => ({ kind: 'list', item });
export const mapOf = (value: ValueType): ValueType => ({ kind: 'map', value });

export function section(name: string, fields: Record<string, FieldDef>): SectionDef {
  return { name, fields };
}

/** A section that inherits fields this project does not model: unknown keys in it are accepted. */
export function openSection(name: string, fields: Record<string, FieldDef>): SectionDef {
  return { name, fields, open: true };
}

export function choices(...values: [string, string, Partial<ChoiceValue>?][]): ChoiceValue[] {
  return values.map(([value, doc, extra]) => ({ value, doc, ...extra }));
}
