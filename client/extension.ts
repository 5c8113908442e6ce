/**
 * The VS Code extension: builds the parts and owns their lifetimes. The language server checks configs; the run
 * controller starts and stops runs through launchers (the local runtime as a process); the Runs view, the status
 * bar, CodeLens and tasks show and drive them. Glue only: every Trinity decision is the server's or the runtime's.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { looksLikeTrinityConfig } from '../runtime/config/detect';
import { RunCodeLens } from './code-lens';
import { registerCommands } from './commands';
import { revealConfigKey } from './config-reveal';
import { DashboardPanels } from './dashboard/panel';
import { LANGUAGE_ID, TrinityLanguageClient } from './language-client';
import { ModelPathActions } from './config-tools';
import { registerResolvedConfig } from './resolved-config-documents';
import { RunController } from './runs/run-controller';
import { RunsView } from './runs/runs-view';
import { StatusBar } from './status-bar';
import { GpuStatus } from './gpu-status';
import { TASK_TYPE, TrinityTasks } from './task-provider';

let lsp: TrinityLanguageClient | undefined;
let runs: RunController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  let status: StatusBar | undefined;
  lsp = new TrinityLanguageClient(context, (r) => status?.setRelease(r));
  runs = new RunController(context, lsp);
  const view = new RunsView(runs.board);
  status = new StatusBar(runs);
  const lenses = new RunCodeLens(runs);
  const cliPath = context.asAbsolutePath(path.join('dist', 'cli.js'));
  const client = lsp;
  const dashboards = new DashboardPanels(
    context.extensionUri,
    runs.manager,
    {
      drivers: (tags, config) => client.metricDrivers(tags, config ? vscode.Uri.file(config) : undefined),
      reveal: (config, key) => revealConfigKey(client, config, key),
      resolve: (config) => client.resolvedConfig(vscode.Uri.file(config).toString()),
    },
    runs.board,
  );
  const tree = vscode.window.createTreeView('trinityWorkbench.runs', {
    treeDataProvider: view,
    showCollapseAll: true,
    canSelectMany: true,
  });

  // Whether the active editor's config has a live run (from anywhere): the editor title shows Stop instead of Run.
  // Set only when it changes, from the same board the CodeLens and the status bar read.
  const shownContext = new Map<string, boolean>();
  const setContext = (key: string, value: boolean) => {
    if (shownContext.get(key) === value) return;
    shownContext.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  };
  const setActiveContext = () => {
    const file = vscode.window.activeTextEditor?.document.uri.fsPath;
    setContext('trinityWorkbench.activeConfigRunning', file ? runs!.board.runOf(file)?.live === true : false);
    const listed = runs!.board.list();
    setContext(
      'trinityWorkbench.anyRunLive',
      listed.some((r) => r.live),
    );
    setContext(
      'trinityWorkbench.anyRunOutput',
      listed.some((r) => runs!.hasOutput(r)),
    );
  };
  context.subscriptions.push(
    view,
    tree,
    status,
    new GpuStatus(),
    lenses,
    dashboards,
    ...registerResolvedConfig(lsp),
    ...registerCommands({ context, runs, view, tree, cliPath, dashboards }),
    vscode.languages.registerCodeLensProvider({ language: LANGUAGE_ID, scheme: 'file' }, lenses),
    vscode.languages.registerCodeActionsProvider({ language: LANGUAGE_ID, scheme: 'file' }, new ModelPathActions(), {
      providedCodeActionKinds: ModelPathActions.kinds,
    }),
    vscode.tasks.registerTaskProvider(TASK_TYPE, new TrinityTasks(runs, cliPath)),
    { dispose: runs.board.onDidChange(setActiveContext).dispose },
    vscode.window.onDidChangeActiveTextEditor(setActiveContext),
    vscode.workspace.onDidOpenTextDocument((doc) => void adopt(doc)),
    // Trust granted: restart the server so that it may read plugin directories and probe Python.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void lsp?.restart()),
  );
  await lsp.start();
  for (const doc of vscode.workspace.textDocuments) await adopt(doc);
  setActiveContext();
}

/** Gives a plain YAML document the trinity-yaml language when it is a Trinity config (unless detection is off). */
async function adopt(doc: vscode.TextDocument): Promise<void> {
  if (doc.languageId !== 'yaml' || doc.uri.scheme !== 'file') return;
  if (!vscode.workspace.getConfiguration('trinityWorkbench').get<boolean>('detectConfigs', true)) return;
  if (looksLikeTrinityConfig(doc.getText())) await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE_ID);
}

/** The window is closing: stop the runs it started (their last checkpoints stay valid), then the server. */
export async function deactivate(): Promise<void> {
  await runs?.dispose();
  await lsp?.stop();
}
