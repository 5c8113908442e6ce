/**
 * Runtime plugins: JavaScript modules in plugin directories (`--plugin-dir`, `$TRINITY_PLUGIN_DIRS`), the local
 * counterpart of the Python files Trinity imports from its plugin dirs. Each `.js`/`.mjs`/`.cjs` file directly in a
 * directory may export `workflows` and `rewards` maps; their names join the registries, and the config checker
 * counts them as known. A `workflowReads` export declares what each workflow reads (environment/plugin-declarations.ts):
 * the loader refuses one the checker could not read from the file's text, or one that differs from it. Loading runs the module's code: only the CLI (run by the user) and a trusted VS Code
 * workspace load plugins.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  jsPluginReadsIn,
  shownPluginFile,
  withoutComments,
  type PluginNames,
} from '../config/environment/plugin-names';
import { DECLARATION_EXPORT, declarationsIn, parseDeclarations } from '../config/environment/plugin-declarations';
import type { TaskColumnsRead } from '../config/model/task-columns';
import type { WorkflowArgsSpec } from '../config/model/workflow-args';
import { registerReward, type RewardFactory } from './rewards';
import { registerWorkflow } from './workflows/registry';
import type { WorkflowFactory } from './workflows/types';

export interface RuntimePluginModule {
  workflows?: Record<string, WorkflowFactory>;
  rewards?: Record<string, RewardFactory>;
  workflowReads?: unknown;
}

export interface LoadedPlugins {
  files: string[];
  names: PluginNames;
  /** The task columns each workflow reads: declared, else from its file's source (plugin-names.ts jsPluginReadsIn). */
  taskColumns: Record<string, TaskColumnsRead>;
  /** The declared workflows' specs for the checks (row keys, `workflow_args`). */
  workflowSpecs: Record<string, WorkflowArgsSpec>;
}

export class PluginError extends Error {}

export async function loadRuntimePlugins(dirs: readonly string[]): Promise<LoadedPlugins> {
  const out: LoadedPlugins = { files: [], names: {}, taskColumns: {}, workflowSpecs: {} };
  for (const dir of dirs.map((d) => resolve(d))) {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      throw new PluginError(`plugin directory ${dir} does not exist`);
    }
    for (const name of entries.filter((n) => /\.(m|c)?js$/.test(n))) {
      const file = join(dir, name);
      if (!statSync(file).isFile()) continue;
      let mod: RuntimePluginModule & { default?: RuntimePluginModule };
      try {
        mod = (await import(pathToFileURL(file).href)) as RuntimePluginModule & { default?: RuntimePluginModule };
      } catch (e) {
        throw new PluginError(`plugin ${file} failed to load: ${(e as Error).message}`);
      }
      const exports = { ...mod.default, ...mod };
      const text = readFileSync(file, 'utf8');
      const workflows = Object.keys(exports.workflows ?? {});
      checkDeclarations(file, text, exports.workflowReads, workflows);
      const reads = jsPluginReadsIn(text, workflows, shownPluginFile(file));
      for (const [wf, factory] of Object.entries(exports.workflows ?? {})) {
        if (typeof factory !== 'function') throw new PluginError(`plugin ${file}: workflows.${wf} is not a function`);
        registerWorkflow(wf, factory);
        (out.names.workflow ??= []).push(wf);
        out.taskColumns[wf] = reads.columns[wf];
        if (reads.specs[wf]) out.workflowSpecs[wf] = reads.specs[wf];
      }
      for (const [rw, factory] of Object.entries(exports.rewards ?? {})) {
        if (typeof factory !== 'function') throw new PluginError(`plugin ${file}: rewards.${rw} is not a function`);
        registerReward(rw, factory, { doc: `from ${file}` });
        (out.names.reward_fn ??= []).push(rw);
      }
      out.files.push(file);
    }
  }
  return out;
}

/**
 * A `workflowReads` export must be what the checker reads from the file's text (a plain literal), name only the
 * file's own workflows, and have the declaration's shape: otherwise `check` and the editor would assume other
 * columns than the workflow reads.
 */
function checkDeclarations(file: string, text: string, exported: unknown, workflows: readonly string[]): void {
  const read = declarationsIn(withoutComments(text));
  if (exported === undefined) {
    if (read) throw new PluginError(`plugin ${file}: \`${DECLARATION_EXPORT}\` is written but not exported`);
    return;
  }
  const value = parseDeclarations(exported);
  if (!value.ok) throw new PluginError(`plugin ${file}: ${value.message}`);
  if (!read)
    throw new PluginError(
      `plugin ${file}: \`${DECLARATION_EXPORT}\` must be written as \`export const ${DECLARATION_EXPORT} = { … }\`, a literal the checker reads without running the file`,
    );
  if (!read.ok) throw new PluginError(`plugin ${file}: ${read.message}`);
  if (JSON.stringify(read.value) !== JSON.stringify(value.value))
    throw new PluginError(
      `plugin ${file}: the exported \`${DECLARATION_EXPORT}\` differs from its literal in the file (was it changed after its declaration?)`,
    );
  const stray = Object.keys(value.value).find((wf) => !workflows.includes(wf));
  if (stray)
    throw new PluginError(
      `plugin ${file}: \`${DECLARATION_EXPORT}.${stray}\` declares a workflow the file's \`workflows\` map does not have (it has ${workflows.map((w) => `\`${w}\``).join(', ') || 'none'})`,
    );
}
