/**
 * Resolves every `${...}` in a merged config tree, as OmegaConf's `to_object` does at load time: against the merged
 * config (schema defaults included, but only written keys inside free-form nodes), then converts the result to the
 * node's type. Each failure is reported at the range of its own `${...}`.
 */
import type { ConfigDiagnostic, DiagnosticCode, Path } from '../diagnostics';
import { CODES } from '../diagnostics';
import { resolveValue, splitKey, type ResolveError, type ResolvedRef } from '../interpolation';
import { convertScalar, pathText, type CMap, type CNode, type CScalar } from './structured-merge';
import { didYouMean } from '../suggest';
import { cloneData, sectionDefaults } from '../model/defaults';
import type { Release } from '../releases';
import type { Range } from './yaml-tree';

export interface ResolvedScalar extends CScalar {
  refs?: ResolvedRef[];
}

export function resolveInterpolations(
  root: CMap,
  env: Record<string, string | undefined>,
  release: Release,
): ConfigDiagnostic[] {
  const diagnostics: ConfigDiagnostic[] = [];
  const lookup = (path: (string | number)[]) => lookupRaw(root, path, release);
  walk(root, (node) => {
    if (node.kind !== 'scalar' || node.interpolation === undefined) return;
    const text = node.interpolation;
    const r = resolveValue(text, { path: node.path, lookup, env });
    (node as ResolvedScalar).refs = r.refs;
    const at = (s: number, e: number): Range => {
      const base = node.contentStart ?? node.range?.[0] ?? 0;
      return [base + s, base + Math.max(e, s + 1)];
    };
    if (!r.ok) {
      for (const err of r.errors) diagnostics.push(toDiagnostic(err, at(err.start, err.end), node.path, root, release));
      node.value = unresolvedValue(node);
      return;
    }
    const value = r.value;
    const t = node.type;
    if (t && (t.kind === 'str' || t.kind === 'int' || t.kind === 'float' || t.kind === 'bool' || t.kind === 'enum')) {
      if (value === null) {
        if (node.field && !node.field.optional) {
          diagnostics.push(
            diag(
              'TRN106',
              `\`${pathText(node.path)}\` resolves to null, but the key cannot be null.`,
              at(0, text.length),
              node.path,
            ),
          );
        }
        node.value = null;
        return;
      }
      const c = convertScalar(value, t, release);
      if (!c.ok) {
        diagnostics.push(
          diag(
            'TRN106',
            `\`${pathText(node.path)}\` resolves to ${JSON.stringify(value)}: ${c.message}`,
            at(0, text.length),
            node.path,
          ),
        );
        node.value = null;
        return;
      }
      node.value = c.value;
      return;
    }
    node.value = value as CScalar['value'];
  });
  return diagnostics;
}

/**
 * What a node holds when its interpolation fails, so later checks do not cascade on a hole: a string keeps its raw
 * text (a path is then still "set"), anything else its schema default.
 */
function unresolvedValue(node: CScalar): CScalar['value'] {
  if (!node.type || node.type.kind === 'str' || node.type.kind === 'any' || node.type.kind === 'dict')
    return node.interpolation ?? null;
  const d = node.field?.default;
  return d === undefined || (d !== null && typeof d === 'object') ? null : (d as CScalar['value']);
}

const KNOWN_RESOLVERS = [
  'oc.env',
  'oc.select',
  'oc.decode',
  'oc.create',
  'oc.deprecated',
  'oc.dict.keys',
  'oc.dict.values',
];

function toDiagnostic(err: ResolveError, range: Range, path: Path, root: CMap, release: Release): ConfigDiagnostic {
  const codes: Record<ResolveError['code'], DiagnosticCode> = {
    parse: 'TRN100',
    'missing-key': 'TRN101',
    'missing-env': 'TRN102',
    cycle: 'TRN103',
    'unknown-resolver': 'TRN104',
    'resolver-error': 'TRN107',
    type: 'TRN106',
  };
  let code = codes[err.code];
  // Offsets belong in the range, not in the text a user reads.
  let message = err.message.replace(/\s*\(at offset \d+\)/g, '');
  if (err.code === 'missing-env' && err.target) {
    message = `Environment variable \`${err.target}\` is not set, and \`\${oc.env:${err.target}}\` has no default: set it (or add it to .env), or write \`\${oc.env:${err.target},<default>}\`.`;
  } else if (err.code === 'unknown-resolver') {
    message = `${message}. Trinity registers no resolvers of its own; OmegaConf's are ${KNOWN_RESOLVERS.map((r) => `\`${r}\``).join(', ')}.`;
  } else if (err.code === 'missing-key' && err.target) {
    const hint = keySuggestion(root, err.target, release);
    if (hint) message = `${message.replace(/[.]?$/, '.')}${hint}`;
  }
  if (err.code === 'missing-key' && err.target?.startsWith('trainer.trainer_config.')) {
    code = 'TRN105';
    message =
      `\`\${${err.target}}\` cannot resolve: \`trainer.trainer_config\` is free-form, so only keys written in this file exist ` +
      `when Trinity loads it (veRL defaults are merged later). Write \`${err.target.slice('trainer.trainer_config.'.length)}\` under \`trainer.trainer_config\`, or use a literal value.`;
  }
  return diag(code, message, range, path);
}

/** "Did you mean" for the last key of a reference whose parent exists. */
function keySuggestion(root: CMap, target: string, release: Release): string {
  const keys = splitKey(target).filter(Boolean);
  const last = keys.pop();
  if (!last) return '';
  const parent = lookupRaw(root, keys, release);
  if (!parent.found || parent.value === null || typeof parent.value !== 'object') return '';
  return didYouMean(last, Object.keys(parent.value));
}

function diag(code: DiagnosticCode, message: string, range: Range, path: Path): ConfigDiagnostic {
  return { code, severity: CODES[code].severity, message, range, data: { path } };
}

/**
 * The raw value at a path: a pending interpolation's text, a scalar, or plain data for a subtree. Unwritten
 * fields of typed sections resolve to their defaults, as OmegaConf's merged config holds them.
 */
export function lookupRaw(
  root: CNode,
  path: (string | number)[],
  release: Release,
): { found: true; value: unknown } | { found: false; existingPrefix: number } {
  let node: CNode = root;
  for (let i = 0; i < path.length; i++) {
    const k = path[i];
    let next: CNode | undefined;
    if (node.kind === 'map') {
      next = node.entries.get(String(k));
      if (!next && node.section) {
        const defaults = sectionDefaults(node.section, release);
        if (!Object.prototype.hasOwnProperty.call(defaults, String(k))) return { found: false, existingPrefix: i };
        return descendPlain(defaults[String(k)], path, i + 1);
      }
    } else if (node.kind === 'list') {
      const idx = typeof k === 'number' ? k : /^\d+$/.test(k) ? Number(k) : NaN;
      next = node.items[idx];
    }
    if (!next) return { found: false, existingPrefix: i };
    node = next;
  }
  return { found: true, value: rawValue(node, release) };
}

function descendPlain(
  v: unknown,
  path: (string | number)[],
  from: number,
): { found: true; value: unknown } | { found: false; existingPrefix: number } {
  for (let i = from; i < path.length; i++) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, String(path[i])))
      return { found: false, existingPrefix: i };
    v = (v as Record<string, unknown>)[String(path[i])];
  }
  return { found: true, value: cloneData(v) };
}

function rawValue(node: CNode, release: Release): unknown {
  if (node.kind === 'scalar') return node.interpolation ?? node.value;
  if (node.kind === 'list') return node.items.map((n) => rawValue(n, release));
  const o: Record<string, unknown> = node.section ? cloneData(sectionDefaults(node.section, release)) : {};
  for (const [k, v] of node.entries) o[k] = rawValue(v, release);
  return o;
}

export function walk(node: CNode, f: (n: CNode) => void): void {
  f(node);
  if (node.kind === 'map') for (const c of node.entries.values()) walk(c, f);
  else if (node.kind === 'list') for (const c of node.items) walk(c, f);
}

/** The resolved tree as plain data, defaults included: what Trinity's dataclasses hold after loading. */
export function toPlain(node: CNode, release: Release): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'list') return node.items.map((n) => toPlain(n, release));
  const o: Record<string, unknown> = node.section ? cloneData(sectionDefaults(node.section, release)) : {};
  for (const [k, v] of node.entries) o[k] = toPlain(v, release);
  return o;
}
