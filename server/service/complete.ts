/**
 * Completion: config paths after `${`, environment variables after `${oc.env:`, and everywhere else the keys,
 * values and section snippets of the release's schema (through yaml-language-server).
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CompletionItemKind,
  MarkupKind,
  type CompletionItem,
  type CompletionList,
  type Position,
} from 'vscode-languageserver-types';
import { fieldsAt, schemaAt } from '../../runtime/config/model';
import { sectionDefaults } from '../../runtime/config/model/defaults';
import { fieldMarkdown } from '../../runtime/config/codegen/schema-gen';
import type { Analysis } from './analyze';
import { algorithmSummary } from './hover';
import { yamlService } from './yaml-service';
import { locate } from './locate';
import { workflowArgsAt } from './workflow-args';
import { workflowArgMarkdown, workflowArgTypeName } from '../../runtime/config/model/workflow-args';

/** Variables Trinity's own code and examples read (trinity/common/constants.py). */
const TRINITY_ENV_VARS = [
  'TRINITY_CHECKPOINT_ROOT_DIR',
  'TRINITY_MODEL_PATH',
  'TRINITY_TASKSET_PATH',
  'TRINITY_EVAL_TASKSET_PATH',
  'TRINITY_SFT_DATASET_PATH',
  'TRINITY_BUFFER_PATH',
  'TRINITY_AUX_MODEL_PATH',
  'TRINITY_PLUGIN_DIRS',
  'TRINITY_PREV_STAGE_CKPT_DIR',
  'TRINITY_LOG_DIR',
  'TRINITY_LOG_LEVEL',
];

const RESOLVERS = [
  { label: 'oc.env:', detail: 'an environment variable: ${oc.env:NAME} or ${oc.env:NAME,default}' },
  { label: 'oc.select:', detail: 'a config key with a fallback: ${oc.select:a.b,default}' },
  { label: 'oc.decode:', detail: 'parse a string into a value: ${oc.decode:${oc.env:X}}' },
];

export async function complete(
  doc: TextDocument,
  analysis: Analysis,
  position: Position,
  env: Record<string, string | undefined>,
): Promise<CompletionList> {
  const line = doc.getText({ start: { line: position.line, character: 0 }, end: position });
  const inside = openInterpolation(line);
  if (inside !== undefined) return { isIncomplete: false, items: interpolationItems(inside, analysis, position, env) };
  const list = await yamlService(analysis.release).doComplete(doc, position, false);
  if (/^\s*algorithm_type\s*:\s*[\w.-]*$/.test(line)) for (const item of list.items) enrich(item, analysis);
  list.items.push(...workflowArgItems(doc, analysis, position));
  return list;
}

/**
 * The arguments the taskset's workflow reads, when the cursor starts a key inside its `workflow_args` (a free-form
 * mapping to the schema, so yaml-language-server offers nothing there).
 */
function workflowArgItems(doc: TextDocument, analysis: Analysis, position: Position): CompletionItem[] {
  const typed = /^(\s*)(\w*)$/.exec(doc.getText({ start: { line: position.line, character: 0 }, end: position }));
  if (!typed) return [];
  const indent = typed[1].length;
  for (let line = position.line - 1; line >= 0; line--) {
    const text = doc.getText({ start: { line, character: 0 }, end: { line: line + 1, character: 0 } });
    if (/^\s*(#.*)?$/.test(text)) continue;
    const parent = /^(\s*)workflow_args\s*:\s*(#.*)?$/.exec(text.replace(/\r?\n$/, ''));
    if (text.length - text.trimStart().length >= indent) continue;
    if (!parent) return [];
    const keyAt = doc.offsetAt({ line, character: parent[1].length });
    const hit = locate(analysis.result.loaded.source.root, keyAt);
    const at = hit && workflowArgsAt(analysis.result, hit.path, analysis.release, analysis.host.pluginWorkflowSpecs);
    if (!at) return [];
    const written = hit.node.kind === 'map' ? hit.node.entries.map((e) => e.key) : [];
    return at.spec.args
      .filter((a) => !written.includes(a.name))
      .map((a) => ({
        label: a.name,
        kind: CompletionItemKind.Property,
        detail: `${workflowArgTypeName(a)} = ${JSON.stringify(a.default)}`,
        documentation: { kind: MarkupKind.Markdown, value: workflowArgMarkdown(a, at.spec) },
        insertText: `${a.name}: `,
      }));
  }
  return [];
}

/** The text typed after the innermost unclosed `${` on the line before the cursor, if any. */
function openInterpolation(before: string): string | undefined {
  let depth = 0;
  let start = -1;
  for (let i = before.length - 1; i >= 1; i--) {
    if (before[i] === '}') depth++;
    else if (before[i] === '{' && before[i - 1] === '$') {
      if (depth === 0) {
        start = i + 1;
        break;
      }
      depth--;
    }
  }
  return start < 0 ? undefined : before.slice(start);
}

function interpolationItems(
  typed: string,
  analysis: Analysis,
  position: Position,
  env: Record<string, string | undefined>,
): CompletionItem[] {
  const replace = (len: number) => ({
    start: { line: position.line, character: position.character - len },
    end: position,
  });
  const envMatch = /(?:^|[,{:])oc\.env:([A-Za-z0-9_]*)$/.exec(typed);
  if (envMatch) {
    const partial = envMatch[1];
    const names = [...new Set([...Object.keys(env), ...TRINITY_ENV_VARS])]
      .filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n))
      .sort();
    return names.map((name) => ({
      label: name,
      kind: CompletionItemKind.Variable,
      detail: env[name] !== undefined ? `= ${truncate(String(env[name]))}` : 'not set in this environment',
      sortText: `${TRINITY_ENV_VARS.includes(name) ? '0' : '1'}${name}`,
      textEdit: { range: replace(partial.length), newText: name },
    }));
  }
  const m = /([A-Za-z0-9_.[\]]*)$/.exec(typed);
  const expr = m ? m[1] : '';
  const segments = expr.split('.');
  const partial = segments.pop() ?? '';
  const parent = segments.filter((s) => s !== '');
  const items: CompletionItem[] = [];
  const keys = childKeys(parent, analysis);
  for (const [key, doc] of keys) {
    items.push({
      label: key,
      kind: doc.section ? CompletionItemKind.Module : CompletionItemKind.Property,
      detail: doc.detail,
      documentation: doc.markdown ? { kind: MarkupKind.Markdown, value: doc.markdown } : undefined,
      textEdit: { range: replace(partial.length), newText: key },
    });
  }
  if (parent.length === 0) {
    for (const r of RESOLVERS)
      items.push({
        label: r.label,
        kind: CompletionItemKind.Function,
        detail: r.detail,
        textEdit: { range: replace(partial.length), newText: r.label },
      });
  }
  return items;
}

interface KeyDoc {
  detail?: string;
  markdown?: string;
  section?: boolean;
}

/** Keys under a config path: the schema's fields (with docs) and whatever free-form keys are written there. */
function childKeys(parent: string[], analysis: Analysis): Map<string, KeyDoc> {
  const out = new Map<string, KeyDoc>();
  const path = parent.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const { type } = schemaAt(path, analysis.release);
  if (type?.kind === 'section') {
    const defaults = sectionDefaults(type.section, analysis.release);
    for (const [key, f] of fieldsAt(type.section, analysis.release)) {
      const value = valueAt(analysis, [...parent, key]) ?? defaults[key];
      out.set(key, {
        detail: f.type.kind === 'section' ? f.type.section.name : `= ${truncate(JSON.stringify(value))}`,
        markdown: fieldMarkdown(f),
        section: f.type.kind === 'section',
      });
    }
  }
  const v = valueAt(analysis, parent);
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const key of Object.keys(v))
      if (!out.has(key)) out.set(key, { detail: `= ${truncate(JSON.stringify((v as Record<string, unknown>)[key]))}` });
  }
  return out;
}

/** A value of the loaded config (what an interpolation sees: before Trinity's checks fill anything in). */
function valueAt(analysis: Analysis, path: string[]): unknown {
  let v: unknown = analysis.result.loaded.value;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** Adds what yaml-language-server cannot know: what an algorithm type brings with it. */
function enrich(item: CompletionItem, analysis: Analysis): void {
  const summary = algorithmSummary(String(item.label), analysis);
  if (!summary) return;
  const doc = typeof item.documentation === 'string' ? item.documentation : (item.documentation?.value ?? '');
  if (!doc.includes('Defaults:'))
    item.documentation = { kind: MarkupKind.Markdown, value: [doc, summary].filter(Boolean).join('\n\n') };
}

function truncate(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}
