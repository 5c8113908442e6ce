/**
 * Command ids -> handlers. A command gets a config `Uri` (editor title, CodeLens, explorer), a Runs view node
 * (context menus), or nothing (command palette: the active editor's config, or the run picked from a list).
 */
import * as vscode from 'vscode';
import { checkAllConfigs, createSmallModel, newConfigFromExample, selectRelease, type CreateModelArgs } from './config-tools';
import type { RunController } from './runs/run-controller';
import { runLabel } from './runs/run-controller';
import { runOfNode, type RunsNode, type RunsView } from './runs/runs-view';
import type { RunState } from './runs/run-state';
import { COMMANDS } from './command-ids';
import type { DashboardPanels } from './dashboard/panel';

export interface CommandParts {
  context: vscode.ExtensionContext;
  runs: RunController;
  view: RunsView;
  tree: vscode.TreeView<RunsNode>;
  cliPath: string;
  dashboards: DashboardPanels;
}


export function registerCommands(p: CommandParts): vscode.Disposable[] {
  const { runs, view } = p;
  /** The run a command is about: a view node, the run of a config file, or one picked from the list. */
  const runFor = async (arg: unknown, want: (r: RunState) => boolean, verb: string): Promise<RunState | undefined> => {
    const fromNode = runOfNode(arg);
    if (fromNode) return fromNode;
    const all = view.current();
    if (arg instanceof vscode.Uri) return all.find((r) => r.configPath === arg.fsPath && want(r)) ?? all.find((r) => r.configPath === arg.fsPath);
    const file = vscode.window.activeTextEditor?.document.uri.fsPath;
    const candidates = all.filter(want);
    const mine = candidates.find((r) => r.configPath === file);
    if (mine) return mine;
    if (candidates.length <= 1) return candidates[0];
    const pick = await vscode.window.showQuickPick(
      candidates.map((r) => ({ label: runLabel(r), description: r.status, detail: r.jobDir, run: r })),
      { title: `${verb} which run?` },
    );
    return pick?.run;
  };
  const resumable = (r: RunState) => !r.live && (r.status === 'stopped' || r.status === 'interrupted' || r.status === 'failed');
  const releases = (p.context.extension.packageJSON?.contributes?.configuration?.properties?.['trinityWorkbench.trinityVersion']?.enum as string[] | undefined) ?? ['auto'];

  const handlers: Record<(typeof COMMANDS)[number], (...args: unknown[]) => unknown> = {
    'trinityWorkbench.run': (arg) => runs.run(arg instanceof vscode.Uri ? arg : undefined),
    'trinityWorkbench.stop': async (arg) => {
      const run = await runFor(arg, (r) => r.live, 'Stop');
      return run ? runs.stop(run.key) : runs.stop(undefined);
    },
    'trinityWorkbench.resume': async (arg) => {
      const run = await runFor(arg, resumable, 'Resume');
      if (!run) return void vscode.window.showInformationMessage('No stopped or interrupted run to resume.');
      return runs.resume(run);
    },
    'trinityWorkbench.rerun': async (arg) => {
      const run = await runFor(arg, (r) => !r.live && !!r.configPath, 'Rerun');
      if (run) await runs.rerun(run);
    },
    'trinityWorkbench.showRuns': () => vscode.commands.executeCommand('trinityWorkbench.runs.focus'),
    'trinityWorkbench.refreshRuns': () => view.refresh(),
    'trinityWorkbench.showRunOutput': async (arg) => {
      const run = await runFor(arg, () => true, 'Show the output of');
      if (run) runs.showOutput(run.key);
    },
    'trinityWorkbench.revealJobFolder': async (arg) => {
      const run = await runFor(arg, () => true, 'Reveal');
      if (run) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(run.jobDir));
    },
    'trinityWorkbench.openRunConfig': async (arg) => {
      const run = await runFor(arg, (r) => !!r.configPath, 'Open the config of');
      if (run?.configPath) await vscode.window.showTextDocument(vscode.Uri.file(run.configPath));
    },
    'trinityWorkbench.deleteRun': async (arg, selected) => {
      const many = Array.isArray(selected) ? selected.map(runOfNode).filter((r): r is RunState => !!r) : [];
      const targets = many.length > 1 ? many : [await runFor(arg, (r) => !r.live, 'Delete')].filter((r): r is RunState => !!r);
      for (const run of targets) await runs.deleteRun(run);
      view.refresh();
    },
    'trinityWorkbench.openDashboard': async (arg) => {
      const anyLive = view.current().some((r) => r.live);
      const run = await runFor(arg, (r) => !anyLive || r.live, 'Open the dashboard of');
      if (!run) return void vscode.window.showInformationMessage(arg instanceof vscode.Uri ? 'This config has no run yet: Run it first.' : 'No run to show: Run a config first.');
      p.dashboards.show(run, runLabel(run));
    },
    'trinityWorkbench.checkAllConfigs': () => checkAllConfigs(),
    'trinityWorkbench.newConfigFromExample': () => newConfigFromExample(p.context.asAbsolutePath('examples')),
    'trinityWorkbench.createSmallModel': (arg) => createSmallModel(p.cliPath, (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri) ? arg : { config: arg instanceof vscode.Uri ? arg : undefined }) as CreateModelArgs),
    'trinityWorkbench.selectRelease': () => selectRelease(releases),
  };
  return COMMANDS.map((id) => vscode.commands.registerCommand(id, handlers[id]));
}

