/**
 * Command ids -> handlers. A command gets a config `Uri` (editor title, CodeLens, explorer), a Runs view node
 * (context menus), or nothing (command palette: the active editor's config, or the run picked from a list).
 */
import * as vscode from 'vscode';
import {
  addPluginDir,
  checkAllConfigs,
  createSmallModel,
  newConfigFromExample,
  selectRelease,
  type CreateModelArgs,
} from './config-tools';
import type { RunController } from './runs/run-controller';
import { runLabel } from './runs/run-controller';
import { runOfNode, type RunsNode, type RunsView } from './runs/runs-view';
import type { RunState } from './runs/run-state';
import { COMMANDS } from './command-ids';
import { selectGpu } from './gpu-status';
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
    if (arg instanceof vscode.Uri)
      return all.find((r) => r.configPath === arg.fsPath && want(r)) ?? all.find((r) => r.configPath === arg.fsPath);
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
  const resumable = (r: RunState) =>
    !r.live && (r.status === 'stopped' || r.status === 'interrupted' || r.status === 'failed');
  const releases = (p.context.extension.packageJSON?.contributes?.configuration?.properties?.[
    'trinityWorkbench.trinityVersion'
  ]?.enum as string[] | undefined) ?? ['auto'];
  const gpuCards = (
    (p.context.extension.packageJSON?.contributes?.configuration?.properties?.['trinityWorkbench.gpu']?.examples ??
      []) as unknown[]
  ).filter((e): e is string => typeof e === 'string');

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
      const run = await runFor(arg, (r) => runs.hasOutput(r), 'Show the output of');
      if (run) await runs.showOutput(run);
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
      const targets =
        many.length > 1 ? many : [await runFor(arg, (r) => !r.live, 'Delete')].filter((r): r is RunState => !!r);
      for (const run of targets) await runs.deleteRun(run);
      view.refresh();
    },
    'trinityWorkbench.openDashboard': async (arg) => {
      const anyLive = view.current().some((r) => r.live);
      const run = await runFor(arg, (r) => !anyLive || r.live, 'Open the dashboard of');
      if (!run)
        return void vscode.window.showInformationMessage(
          arg instanceof vscode.Uri
            ? 'This config has no run yet: Run it first.'
            : 'No run to show: Run a config first.',
        );
      p.dashboards.show(run, runLabel(run));
    },
    'trinityWorkbench.compareRuns': async (arg, selected) => {
      // From the Runs view: the selected runs (the clicked one first if it is not among them); else a pick.
      const fromView = [runOfNode(arg), ...(Array.isArray(selected) ? selected.map(runOfNode) : [])].filter(
        (r): r is RunState => !!r,
      );
      let targets = [...new Map(fromView.map((r) => [r.key, r])).values()];
      if (targets.length < 2) {
        const all = view.current();
        if (all.length < 2)
          return void vscode.window.showInformationMessage('Comparing needs two runs or more: Run a config first.');
        const picks = await vscode.window.showQuickPick(
          all.map((r) => ({
            label: runLabel(r),
            description: r.status,
            detail: r.jobDir,
            picked: targets.some((t) => t.key === r.key),
            run: r,
          })),
          { title: 'Compare which runs?', canPickMany: true, placeHolder: 'Pick two runs or more' },
        );
        if (!picks) return;
        targets = picks.map((x) => x.run);
        if (targets.length < 2) return void vscode.window.showInformationMessage('Pick two runs or more to compare.');
      }
      p.dashboards.compare(targets.map((run) => ({ run, title: runLabel(run) })));
    },
    'trinityWorkbench.checkAllConfigs': () => checkAllConfigs(),
    'trinityWorkbench.newConfigFromExample': () => newConfigFromExample(p.context.asAbsolutePath('examples')),
    'trinityWorkbench.createSmallModel': (arg) =>
      createSmallModel(
        p.cliPath,
        (uri) => runs.plan(uri),
        (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri)
          ? arg
          : { config: arg instanceof vscode.Uri ? arg : undefined }) as CreateModelArgs,
      ),
    'trinityWorkbench.selectRelease': () => selectRelease(releases),
    'trinityWorkbench.selectGpu': () => selectGpu(gpuCards),
    'trinityWorkbench.addPluginDir': (dir) => addPluginDir(dir),
  };
  return COMMANDS.map((id) => vscode.commands.registerCommand(id, handlers[id]));
}
