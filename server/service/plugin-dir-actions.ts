/**
 * "Add <folder> to trinityWorkbench.pluginDirs": the fix for TRN307 on a workflow or reward function name that a
 * folder beside the config registers (the agents-plugin example's `plugins/`). The client's command writes the
 * workspace setting; the server hears of it (workspace/didChangeConfiguration), scans the plugin dirs again and the
 * error clears, with no reload.
 */
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver-types';
import type { DiagnosticData } from '../../runtime/config/diagnostics';
import { ynodeAt } from '../../runtime/config/load/yaml-tree';
import type { Analysis, PluginFolder } from './analyze';
import { ADD_PLUGIN_DIR_COMMAND } from './client-commands';

export function pluginDirActions(
  analysis: Analysis,
  diagnostics: Diagnostic[],
  folders: () => PluginFolder[],
): CodeAction[] {
  const out: CodeAction[] = [];
  for (const d of diagnostics) {
    const path = (d.data as DiagnosticData | undefined)?.path;
    if (d.source !== 'trinity' || d.code !== 'TRN307' || !path?.length) continue;
    const node = ynodeAt(analysis.result.loaded.source.root, path);
    if (node?.kind !== 'scalar' || typeof node.value !== 'string') continue; // "names no workflow": nothing to find
    const name = node.value;
    const registry = String(path[path.length - 1]).includes('reward_fn') ? 'reward_fn' : 'workflow';
    for (const f of folders()) {
      if (!f.names[registry]?.includes(name)) continue;
      const title = `Add ${f.shown} to trinityWorkbench.pluginDirs`;
      out.push({
        title,
        kind: CodeActionKind.QuickFix,
        diagnostics: [d],
        isPreferred: true,
        command: { title, command: ADD_PLUGIN_DIR_COMMAND, arguments: [f.dir] },
      });
    }
  }
  return out;
}
