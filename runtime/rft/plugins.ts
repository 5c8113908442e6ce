/**
 * Runtime plugins: JavaScript modules in plugin directories (`--plugin-dir`, `$TRINITY_PLUGIN_DIRS`), the local
 * counterpart of the Python files Trinity imports from its plugin dirs. Each `.js`/`.mjs`/`.cjs` file directly in a
 * directory may export `workflows` and `rewards` maps; their names join the registries, and the config checker
 * counts them as known. Loading runs the module's code: only the CLI (run by the user) and a trusted VS Code
 * workspace load plugins.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { jsTaskColumnsIn, type PluginNames } from '../config/environment/plugin-names';
import type { TaskColumnsRead } from '../config/model/task-columns';
import { registerReward, type RewardFactory } from './rewards';
import { registerWorkflow } from './workflows/registry';
import type { WorkflowFactory } from './workflows/types';

export interface RuntimePluginModule {
  workflows?: Record<string, WorkflowFactory>;
  rewards?: Record<string, RewardFactory>;
}

export interface LoadedPlugins {
  files: string[];
  names: PluginNames;
  /** The task columns each workflow reads, from its file's source (see jsTaskColumnsIn). */
  taskColumns: Record<string, TaskColumnsRead>;
}

export class PluginError extends Error {}

export async function loadRuntimePlugins(dirs: readonly string[]): Promise<LoadedPlugins> {
  const out: LoadedPlugins = { files: [], names: {}, taskColumns: {} };
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
      const reads = jsTaskColumnsIn(readFileSync(file, 'utf8'));
      for (const [wf, factory] of Object.entries(exports.workflows ?? {})) {
        if (typeof factory !== 'function') throw new PluginError(`plugin ${file}: workflows.${wf} is not a function`);
        registerWorkflow(wf, factory);
        (out.names.workflow ??= []).push(wf);
        out.taskColumns[wf] = reads;
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
