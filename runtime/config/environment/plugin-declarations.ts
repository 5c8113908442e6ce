/**
 * What a JavaScript plugin declares its workflows read, beside its `workflows` map:
 *
 *   export const workflowReads = {
 *     my_workflow: { columns: ['seed', 'size'], taskDesc: false, truth: false, workflowArgs: { max_steps: { type: 'int', default: 2, min: 1 } } },
 *   };
 *
 * `columns` are the row keys it reads itself (`ctx.task.raw`), `taskDesc` / `truth` whether it reads
 * `format.prompt_key`'s and `response_key`'s columns, `workflowArgs` the `workflow_args` it reads. The checker reads
 * the literal from the file's text (js-literal.ts), never running it; the runtime's loader holds the module's
 * exported value to the same reading (rft/plugins.ts), so what `check` and the editor assume is what runs.
 */
import { RELEASES } from '../releases';
import type { WorkflowArgSpec, WorkflowArgsSpec, WorkflowArgType } from '../model/workflow-args';
import { readLiteral } from './js-literal';

export const DECLARATION_EXPORT = 'workflowReads';

export interface WorkflowDeclaration {
  columns: string[];
  taskDesc: boolean;
  truth: boolean;
  workflowArgs: WorkflowArgSpec[];
}

export type Declarations = Record<string, WorkflowDeclaration>;

/** Read: the declarations; not readable: why (naming the key); absent: undefined. */
export type DeclarationsRead =
  | { ok: true; value: Declarations; span?: [number, number] }
  | { ok: false; message: string };

const START = /(?:\bexport\s+(?:const|let|var)\s+|\bexports\.|\bmodule\.exports\.)workflowReads\s*=\s*/g;
const ARG_TYPES: readonly WorkflowArgType[] = ['int', 'number', 'bool', 'string', 'dict'];
const KEYS = ['columns', 'taskDesc', 'truth', 'workflowArgs'];
const ARG_KEYS = ['type', 'default', 'min', 'doc'];

/** The `workflowReads` literal of a plugin's source (comments blanked), if it has one. */
export function declarationsIn(code: string): DeclarationsRead | undefined {
  const m = START.exec(code);
  START.lastIndex = 0;
  if (!m) return undefined;
  const from = m.index + m[0].length;
  const lit = readLiteral(code, from);
  if (!lit.ok) {
    const line = code.slice(0, lit.at).split('\n').length;
    return { ok: false, message: `\`${DECLARATION_EXPORT}\` (line ${line}): ${lit.message}` };
  }
  const parsed = parseDeclarations(lit.value);
  return parsed.ok ? { ...parsed, span: [from, lit.end] } : parsed;
}

/** A declarations value (as read from the text, or as the module exports it) checked against the shape above. */
export function parseDeclarations(value: unknown): DeclarationsRead {
  if (!isObject(value)) return { ok: false, message: `\`${DECLARATION_EXPORT}\` is not an object of workflow names` };
  const out: Declarations = {};
  for (const [wf, d] of Object.entries(value)) {
    const at = `${DECLARATION_EXPORT}.${wf}`;
    if (!isObject(d)) return { ok: false, message: `\`${at}\` is not an object` };
    const unknown = Object.keys(d).find((k) => !KEYS.includes(k));
    if (unknown) return { ok: false, message: `\`${at}.${unknown}\` is not one of ${KEYS.join(', ')}` };
    const columns = d.columns ?? [];
    if (!Array.isArray(columns) || columns.some((c) => typeof c !== 'string' || c === ''))
      return { ok: false, message: `\`${at}.columns\` is not a list of column names` };
    for (const k of ['taskDesc', 'truth'])
      if (d[k] !== undefined && typeof d[k] !== 'boolean')
        return { ok: false, message: `\`${at}.${k}\` is not true or false` };
    const args = d.workflowArgs ?? {};
    if (!isObject(args)) return { ok: false, message: `\`${at}.workflowArgs\` is not an object of argument names` };
    const workflowArgs: WorkflowArgSpec[] = [];
    for (const [name, a] of Object.entries(args)) {
      const argAt = `${at}.workflowArgs.${name}`;
      if (!isObject(a)) return { ok: false, message: `\`${argAt}\` is not an object such as { type: 'int' }` };
      const extra = Object.keys(a).find((k) => !ARG_KEYS.includes(k));
      if (extra) return { ok: false, message: `\`${argAt}.${extra}\` is not one of ${ARG_KEYS.join(', ')}` };
      if (!ARG_TYPES.includes(a.type as WorkflowArgType))
        return { ok: false, message: `\`${argAt}.type\` is not one of ${ARG_TYPES.join(', ')}` };
      if (a.min !== undefined && typeof a.min !== 'number')
        return { ok: false, message: `\`${argAt}.min\` is not a number` };
      if (a.doc !== undefined && typeof a.doc !== 'string')
        return { ok: false, message: `\`${argAt}.doc\` is not a string` };
      workflowArgs.push({
        name,
        type: a.type as WorkflowArgType,
        default: a.default ?? null,
        min: a.min as number | undefined,
        doc: (a.doc as string | undefined) ?? '',
        consequence: '',
      });
    }
    out[wf] = {
      columns: columns as string[],
      taskDesc: d.taskDesc === true,
      truth: d.truth === true,
      workflowArgs,
    };
  }
  return { ok: true, value: out };
}

/**
 * A declaration as the checks' WorkflowArgsSpec (workflow-needs.ts: TRN313, TRN316; workflow-rows.ts: TRN317; the
 * editor's hover and completion), `shown` naming the plugin file. Its row keys are warnings: the workflow gets
 * `undefined` for a missing key, and only it knows what that does.
 */
export function declarationSpec(workflow: string, d: WorkflowDeclaration, shown: string): WorkflowArgsSpec {
  const source = `declared in ${shown}`;
  return {
    workflows: [workflow],
    source,
    declaredIn: shown,
    readAt: RELEASES,
    args: d.workflowArgs.map((a) => ({
      ...a,
      doc: a.doc || `Declared by the plugin (${shown}).`,
      consequence: `the plugin declares ${typeWord(a)} (\`${DECLARATION_EXPORT}\` in ${shown}).`,
    })),
    rowKeys: d.columns.map((key) => ({
      key,
      severity: 'warning',
      without: `such a task's \`ctx.task.raw.${key}\` is undefined`,
    })),
  };
}

function typeWord(a: WorkflowArgSpec): string {
  const words: Record<WorkflowArgType, string> = {
    int: 'integer',
    number: 'number',
    bool: 'boolean',
    string: 'string',
    dict: 'mapping',
    'map-rows': 'list of map rows',
  };
  const word = words[a.type];
  return `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}${a.min !== undefined ? ` ≥ ${a.min}` : ''}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
