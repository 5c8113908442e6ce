/**
 * Code actions: quick fixes built from each diagnostic's data (did-you-mean for keys and values, renames, setting a
 * value Trinity needs, adding missing keys), and "Migrate this file to Trinity <release>".
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  type CodeAction,
  type Diagnostic,
  type Range,
  type TextEdit,
} from 'vscode-languageserver-types';
import { stringify } from 'yaml';
import type { DiagnosticData, Path } from '../../runtime/config/diagnostics';
import { migrate, type MigrationHost } from '../../runtime/config/migrate';
import { NEWEST_RELEASE, releaseIndex } from '../../runtime/config/releases';
import type { YEntry, YMap, YNode } from '../../runtime/config/load/yaml-tree';
import { ynodeAt } from '../../runtime/config/load/yaml-tree';
import { closest } from '../../runtime/config/suggest';
import type { Analysis } from './analyze';

/** Codes whose value must be one of `data.candidates`: a did-you-mean on the value fixes them. */
const VALUE_CODES = new Set([
  'TRN022',
  'TRN024',
  'TRN200',
  'TRN201',
  'TRN202',
  'TRN240',
  'TRN256',
  'TRN260',
  'TRN270',
  'TRN300',
  'TRN307',
]);

/** Fixes for the given diagnostics (the client sends those in the requested range), plus the migration. */
export function codeActions(
  doc: TextDocument,
  analysis: Analysis,
  diagnostics: Diagnostic[],
  migration: CodeAction | undefined,
): CodeAction[] {
  const out: CodeAction[] = [];
  const root = analysis.result.loaded.source.root;
  for (const d of diagnostics) {
    if (d.source !== 'trinity') continue;
    const data = (d.data ?? {}) as DiagnosticData;
    const fix = (title: string, edits: TextEdit[], preferred = false) =>
      out.push({
        title,
        kind: CodeActionKind.QuickFix,
        diagnostics: [d],
        isPreferred: preferred,
        edit: { changes: { [doc.uri]: edits } },
      });

    if (
      (d.code === 'TRN010' || d.code === 'TRN011' || d.code === 'TRN012' || d.code === 'TRN316') &&
      (data.suggestion || isSiblingKey(data.movedTo))
    ) {
      const to = data.suggestion ?? data.movedTo!;
      fix(`Change to \`${to}\``, [{ range: d.range, newText: to }], true);
    }
    if (VALUE_CODES.has(String(d.code)) && data.candidates?.length && data.path) {
      const node = ynodeAt(root, data.path);
      const best =
        node?.kind === 'scalar' && typeof node.value === 'string' ? closest(node.value, data.candidates) : undefined;
      const valueRange = valueRangeOf(doc, root, data.path);
      if (best && valueRange) fix(`Change to \`${best}\``, [{ range: valueRange, newText: best }], true);
    }
    if (
      data.path &&
      data.value !== undefined &&
      data.value !== null &&
      typeof data.value !== 'object' &&
      !data.candidates
    ) {
      const edit = setValueEdit(doc, root, data.path, data.value);
      if (edit) fix(`Set \`${data.path[data.path.length - 1]}\` to \`${data.value}\``, [edit], d.severity === 1);
    }
    if (data.remove && data.path) {
      const edit = removeEdit(doc, root, data.path);
      if (edit) fix(`Remove \`${data.path[data.path.length - 1]}\``, [edit], true);
    }
    for (const f of data.fixes ?? []) {
      const edits = f.set.map((s) => setValueEdit(doc, root, s.path, s.value));
      if (edits.length > 0 && edits.every((e) => e !== undefined)) fix(f.title, edits as TextEdit[]);
    }
    if (data.add && data.add.value !== undefined) {
      const edit = addEdit(doc, root, data.add.path, data.add.value);
      if (edit) fix(`Add \`${data.add.path.slice(-1)[0]}\``, [edit]);
    }
  }
  if (migration) out.push(migration);
  return out;
}

/** "Migrate this file to Trinity <newest>": offered when the file is checked against an older release. */
export function migrationAction(
  doc: TextDocument,
  analysis: Analysis,
  host: MigrationHost = {},
): CodeAction | undefined {
  if (releaseIndex(analysis.release) >= releaseIndex(NEWEST_RELEASE)) return undefined;
  const text = doc.getText();
  const result = migrate(text, analysis.release, NEWEST_RELEASE, host);
  if (result.text === text) return undefined;
  return {
    title: `Migrate this file to Trinity ${NEWEST_RELEASE} (${result.changes.length} change${result.changes.length === 1 ? '' : 's'})`,
    kind: CodeActionKind.Source,
    edit: {
      changes: {
        [doc.uri]: [{ range: { start: doc.positionAt(0), end: doc.positionAt(text.length) }, newText: result.text }],
      },
    },
  };
}

function isSiblingKey(movedTo: string | undefined): movedTo is string {
  return !!movedTo && /^[A-Za-z_]\w*$/.test(movedTo);
}

function valueRangeOf(doc: TextDocument, root: YMap | undefined, path: Path): Range | undefined {
  const n = ynodeAt(root, path);
  if (!n || n.kind !== 'scalar' || n.range[1] <= n.range[0]) return undefined;
  return { start: doc.positionAt(n.range[0]), end: doc.positionAt(n.range[1]) };
}

/** Replaces a written scalar, or adds the key under its (written) parent mapping. */
function setValueEdit(doc: TextDocument, root: YMap | undefined, path: Path, value: unknown): TextEdit | undefined {
  const n = ynodeAt(root, path);
  if (n && n.kind === 'scalar' && n.range[1] > n.range[0]) {
    return {
      range: { start: doc.positionAt(n.range[0]), end: doc.positionAt(n.range[1]) },
      newText: yamlScalar(value),
    };
  }
  if (n) return undefined;
  return addEdit(doc, root, path, value);
}

/**
 * Inserts `key: value` (a scalar or a mapping) under the deepest written ancestor of `path`, creating the
 * missing intermediate mappings, indented like that ancestor's other keys.
 */
function addEdit(doc: TextDocument, root: YMap | undefined, path: Path, value: unknown): TextEdit | undefined {
  if (!root || path.some((k) => typeof k === 'number')) return undefined;
  let depth = path.length - 1;
  let parent: YNode | undefined;
  for (; depth >= 0; depth--) {
    parent = depth === 0 ? root : ynodeAt(root, path.slice(0, depth));
    if (parent && parent.kind === 'map') break;
    if (parent && !(parent.kind === 'scalar' && parent.value === null)) return undefined;
  }
  if (!parent || parent.kind !== 'map') return undefined;
  const missing = path.slice(depth) as string[];
  const existing = parent.entries.find((e) => e.key === missing[0]);
  if (
    existing &&
    existing.value.kind === 'map' &&
    existing.value.entries.length > 0 &&
    typeof value === 'object' &&
    value !== null
  ) {
    // Adding keys into an existing mapping (e.g. missing *_args entries).
    return insertInto(doc, existing.value, value as Record<string, unknown>);
  }
  if (existing) return undefined;
  let body: unknown = value;
  for (let i = missing.length - 1; i >= 1; i--) body = { [missing[i]]: body };
  return insertInto(doc, parent, { [missing[0]]: body });
}

/**
 * Deletes the lines of the entry at `path`, and of each parent mapping it would leave empty (an empty parent would
 * read as null, which is not the same as absent), up to the top-level section. Block layouts only.
 */
function removeEdit(doc: TextDocument, root: YMap | undefined, path: Path): TextEdit | undefined {
  let depth = path.length;
  while (depth > 2) {
    const parent = ynodeAt(root, path.slice(0, depth - 1));
    if (parent?.kind !== 'map' || parent.entries.length !== 1) break;
    depth--;
  }
  const parent = depth === 1 ? root : ynodeAt(root, path.slice(0, depth - 1));
  const entry = parent?.kind === 'map' ? parent.entries.find((e) => e.key === String(path[depth - 1])) : undefined;
  if (!entry) return undefined;
  const text = doc.getText();
  const start = text.lastIndexOf('\n', entry.keyRange[0] - 1) + 1;
  if (!/^[ ]*$/.test(text.slice(start, entry.keyRange[0]))) return undefined;
  return { range: { start: doc.positionAt(start), end: doc.positionAt(afterEntry(text, entry)) }, newText: '' };
}

/** The start of the line after `entry`'s last one (a block value's range runs on through the newline after it). */
function afterEntry(text: string, entry: YEntry): number {
  let end = Math.max(entry.value.range[1], entry.keyRange[1]);
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  const nl = text.indexOf('\n', end);
  return nl < 0 ? text.length : nl + 1;
}

function insertInto(doc: TextDocument, map: YMap, obj: Record<string, unknown>): TextEdit | undefined {
  const text = doc.getText();
  let indent: string;
  let at: number;
  if (map.entries.length > 0) {
    const first = map.entries[0].keyRange[0];
    const lineStart = text.lastIndexOf('\n', first - 1) + 1;
    indent = text.slice(lineStart, first);
    if (!/^[ ]*$/.test(indent)) return undefined; // Flow mappings and odd layouts: leave them to the user.
    at = afterEntry(text, map.entries[map.entries.length - 1]);
  } else {
    return undefined;
  }
  const body = stringify(obj, { indent: 2, lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .map((l) => indent + l)
    .join('\n');
  const prefix = at === text.length && !text.endsWith('\n') ? '\n' : '';
  const pos = doc.positionAt(at);
  return { range: { start: pos, end: pos }, newText: `${prefix}${body}\n` };
}

function yamlScalar(v: unknown): string {
  return stringify(v, { lineWidth: 0 }).trimEnd();
}
