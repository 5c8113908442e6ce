/**
 * Names registered by plugin directories (`--plugin-dir DIR`, `TRINITY_PLUGIN_DIRS`): Trinity imports every `.py`
 * file there, and each `@REGISTRY.register_module("name")` adds a name to a registry; the local runtime imports each
 * `.js`/`.mjs`/`.cjs` file directly in the directory (runtime/rft/plugins.ts), whose `workflows` and `rewards` maps
 * add theirs. Both are read from the source text, never run: the editor scans untrusted workspaces too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { RegistryId } from '../model/registries';
import type { PluginTaskColumns, TaskColumnsRead } from '../model/task-columns';
import type { PluginWorkflowSpecs, WorkflowArgsSpec } from '../model/workflow-args';
import { declarationSpec, declarationsIn } from './plugin-declarations';

export type PluginNames = Partial<Record<RegistryId, string[]>>;

/** What plugin directories register, and which task columns their JavaScript workflows read. */
export interface PluginScan {
  names: PluginNames;
  /** The names JavaScript plugins register: the local runtime loads those (runtime/rft/plugins.ts), not Python's. */
  local: PluginNames;
  taskColumns: PluginTaskColumns;
  /** The workflows a `workflowReads` declaration covers, as the checks' specs (row keys, `workflow_args`). */
  workflowSpecs: PluginWorkflowSpecs;
}

const REGISTRY_VARS: Record<string, RegistryId> = {
  WORKFLOWS: 'workflow',
  REWARD_FUNCTIONS: 'reward_fn',
  ALGORITHM_TYPE: 'algorithm_type',
  ADVANTAGE_FN: 'advantage_fn',
  POLICY_LOSS_FN: 'policy_loss_fn',
  KL_FN: 'kl_fn',
  ENTROPY_LOSS_FN: 'entropy_loss_fn',
  SAMPLE_STRATEGY: 'sample_strategy',
  MONITOR: 'monitor',
  EXPERIENCE_OPERATORS: 'experience_operator',
  SELECTORS: 'selector',
  PRIORITY_FUNC: 'priority_fn',
};

const REGISTRATION = /\b([A-Z_]+)\.register_module\(\s*(?:name\s*=\s*)?["']([^"']+)["']/g;

/** Registrations in Python source text. */
export function registrationsIn(source: string): PluginNames {
  const out: PluginNames = {};
  for (const m of source.matchAll(REGISTRATION)) {
    const id = REGISTRY_VARS[m[1]];
    if (id) (out[id] ??= []).push(m[2]);
  }
  return out;
}

const JS_PLUGIN = /\.(m|c)?js$/;
const JS_MAPS: Record<string, RegistryId> = { workflows: 'workflow', rewards: 'reward_fn' };
const JS_MAP_START = /(?:\bexport\s+(?:const|let|var)\s+|\bexports\.|\bmodule\.exports\.)(workflows|rewards)\s*=\s*\{/g;
const JS_KEY = /^\s*(?:([A-Za-z_$][\w$]*)|'([^'\\]*)'|"([^"\\]*)")\s*[:(,}]/;

/**
 * The keys of a JavaScript plugin's `workflows` / `rewards` object literals: the names at the literal's top level
 * (`name: …`, `'name': …`, `name(ctx) {…}`, shorthand `name,`). Strings, template literals and comments are passed
 * over; a map built some other way registers nothing here (the run still loads it).
 */
export function jsExportsIn(text: string): PluginNames {
  const out: PluginNames = {};
  const source = withoutComments(text);
  for (const m of source.matchAll(JS_MAP_START)) {
    const id = JS_MAPS[m[1]];
    const names = topLevelKeys(source, (m.index ?? 0) + m[0].length);
    if (names.length) (out[id] ??= []).push(...names);
  }
  return out;
}

/** What a JavaScript plugin file's workflows read: declared (`workflowReads`), else inferred from its text. */
export interface JsPluginReads {
  columns: Record<string, TaskColumnsRead>;
  specs: Record<string, WorkflowArgsSpec>;
}

/** `workflows` are the file's workflow names; `shown` names the file in messages (its folder and name). */
export function jsPluginReadsIn(text: string, workflows: readonly string[], shown: string): JsPluginReads {
  const code = withoutComments(text);
  const declared = declarationsIn(code);
  // The declaration's own `taskDesc:` / `truth:` keys are no reads: the inference looks at the code around it.
  const span = declared?.ok ? declared.span : undefined;
  const inferred = jsTaskColumnsIn(span ? code.slice(0, span[0]) + code.slice(span[1]) : code);
  const out: JsPluginReads = { columns: {}, specs: {} };
  for (const wf of workflows) {
    const d = declared?.ok ? declared.value[wf] : undefined;
    if (!d) {
      out.columns[wf] = inferred;
      continue;
    }
    out.columns[wf] = { prompt: d.taskDesc, response: d.truth, declaredIn: shown };
    out.specs[wf] = declarationSpec(wf, d, shown);
  }
  return out;
}

/** A plugin file as messages name it: its folder and its name. */
export function shownPluginFile(file: string): string {
  return join(basename(join(file, '..')), basename(file));
}

/**
 * Which task columns the workflows of a JavaScript plugin read, when it declares nothing. A runtime workflow sees `format.prompt_key`'s column
 * only as `ctx.task.taskDesc` and `response_key`'s only as `ctx.task.truth` (rft/workflows/types.ts WorkflowTask; the
 * format itself is not passed), so a file that never names them reads neither; one that does counts for all its
 * workflows (a helper function may be shared).
 */
export function jsTaskColumnsIn(text: string): TaskColumnsRead {
  const code = withoutComments(text);
  return { prompt: /\btaskDesc\b/.test(code), response: /\btruth\b/.test(code) };
}

/** The text with its comments blanked (strings kept), so that a commented-out map names nothing. */
export function withoutComments(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    let end = i + 1;
    if (c === '/' && source[i + 1] === '/') end = lineEnd(source, i);
    else if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      end = close < 0 ? source.length : close + 2;
    } else if (c === "'" || c === '"' || c === '`') end = stringEnd(source, i) + 1;
    out += end > i + 1 && c === '/' ? source.slice(i, end).replace(/[^\n]/g, ' ') : source.slice(i, end);
    i = end;
  }
  return out;
}

function topLevelKeys(source: string, from: number): string[] {
  const keys: string[] = [];
  let depth = 1;
  let expectKey = true;
  for (let i = from; i < source.length && depth > 0; i++) {
    const c = source[i];
    if (c === "'" || c === '"' || c === '`') {
      if (depth === 1 && expectKey && c !== '`') {
        const key = JS_KEY.exec(source.slice(i, i + 200));
        if (key) keys.push(key[2] ?? key[3]);
        expectKey = false;
      }
      i = stringEnd(source, i);
    } else if ('{[('.includes(c)) depth++;
    else if ('}])'.includes(c)) depth--;
    else if (depth === 1 && c === ',') expectKey = true;
    else if (depth === 1 && c === '.')
      expectKey = false; // `...others`: a spread names no key here
    else if (depth === 1 && expectKey && /[A-Za-z_$*]/.test(c)) {
      const text = source.slice(i, i + 200);
      // `async name(…)`, `get name()`, `*name()`: the name follows the keyword.
      const method = /^(?:(?:async|get|set)\s+\*?|\*)\s*([A-Za-z_$][\w$]*)\s*\(/.exec(text);
      const key = method ?? JS_KEY.exec(text);
      if (key?.[1]) keys.push(key[1]);
      expectKey = false;
    }
  }
  return keys;
}

function lineEnd(source: string, i: number): number {
  const end = source.indexOf('\n', i);
  return end < 0 ? source.length : end;
}

/** The index of the quote that closes the string opened at `i` (escapes honoured; template `${…}` not parsed). */
function stringEnd(source: string, i: number): number {
  const quote = source[i];
  for (let j = i + 1; j < source.length; j++) {
    if (source[j] === '\\') j++;
    else if (source[j] === quote) return j;
  }
  return source.length;
}

/** Scans plugin directories (recursively, at most `maxFiles` .py files); unreadable entries are skipped. */
export function scanPluginDirs(dirs: readonly string[], maxFiles = 2000): PluginScan {
  const out: PluginNames = {};
  const local: PluginNames = {};
  const taskColumns: Record<string, TaskColumnsRead> = {};
  const workflowSpecs: Record<string, WorkflowArgsSpec> = {};
  let budget = maxFiles;
  let root = '';
  const visit = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (budget <= 0 || name.startsWith('.') || name === '__pycache__') continue;
      const p = join(dir, name);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        continue;
      }
      if (isDir) visit(p);
      else if (name.endsWith('.py') || (JS_PLUGIN.test(name) && dir === root)) {
        budget--;
        try {
          const text = readFileSync(p, 'utf8');
          if (name.endsWith('.py')) mergeNames(out, registrationsIn(text));
          else {
            const names = jsExportsIn(text);
            mergeNames(out, names);
            mergeNames(local, names);
            const reads = jsPluginReadsIn(text, names.workflow ?? [], shownPluginFile(p));
            Object.assign(taskColumns, reads.columns);
            Object.assign(workflowSpecs, reads.specs);
          }
        } catch {
          // An unreadable plugin file registers nothing, as a failing import would.
        }
      }
    }
  };
  for (const d of dirs) {
    root = d;
    visit(d);
  }
  return { names: out, local, taskColumns, workflowSpecs };
}

/**
 * The folder `dir` and the folders directly in it whose own files register names (a `.py` file's registrations, a
 * JavaScript plugin's maps): where an editor looks for a workflow the settings do not know yet. Shallow and bounded,
 * so a workspace of checkpoints costs a directory listing.
 */
export function pluginFoldersAt(dir: string, maxFolders = 64): { dir: string; names: PluginNames }[] {
  const folders = [dir];
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules' && folders.length <= maxFolders)
        folders.push(join(dir, e.name));
  } catch {
    return [];
  }
  const out: { dir: string; names: PluginNames }[] = [];
  for (const folder of folders) {
    const names: PluginNames = {};
    let files: string[];
    try {
      files = readdirSync(folder).filter((n) => n.endsWith('.py') || JS_PLUGIN.test(n));
    } catch {
      continue;
    }
    for (const name of files.slice(0, 64)) {
      try {
        const text = readFileSync(join(folder, name), 'utf8');
        mergeNames(names, name.endsWith('.py') ? registrationsIn(text) : jsExportsIn(text));
      } catch {
        // Unreadable (or a folder named like a file): registers nothing.
      }
    }
    if (Object.keys(names).length) out.push({ dir: folder, names });
  }
  return out;
}

export function mergeNames(into: PluginNames, from: PluginNames): PluginNames {
  for (const [k, names] of Object.entries(from) as [RegistryId, string[]][])
    into[k] = [...new Set([...(into[k] ?? []), ...names])];
  return into;
}
