/**
 * The CodeLens at the top of a Trinity config: `Run` (or `Stop` while it runs) · `Resume` when its last run was
 * stopped or killed · `Dashboard` when it has a run · `Resolved`.
 */
import * as vscode from 'vscode';
import { LANGUAGE_ID } from './language-client';
import type { RunController } from './runs/run-controller';
import type { RunsView } from './runs/runs-view';

export class RunCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly sub: vscode.Disposable;
  private lastLive = new Set<string>();

  constructor(
    private readonly runs: RunController,
    private readonly view: RunsView,
  ) {
    // Only a run starting or ending changes the lenses, not every step.
    this.sub = runs.manager.onDidChange(() => {
      const live = new Set(runs.manager.liveRuns().map((r) => r.state.configPath ?? ''));
      if (live.size !== this.lastLive.size || [...live].some((c) => !this.lastLive.has(c))) {
        this.lastLive = live;
        this.changed.fire();
      }
    });
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (doc.languageId !== LANGUAGE_ID || doc.uri.scheme !== 'file') return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const live = this.runs.manager.liveRuns().find((r) => r.state.configPath === doc.uri.fsPath);
    const lenses = [
      live
        ? new vscode.CodeLens(top, {
            title: '$(debug-stop) Stop',
            command: 'trinityWorkbench.stop',
            arguments: [doc.uri],
            tooltip: 'Stop this run after the current step',
          })
        : new vscode.CodeLens(top, {
            title: '$(play) Run',
            command: 'trinityWorkbench.run',
            arguments: [doc.uri],
            tooltip: 'Check this config, then run it',
          }),
    ];
    const last = live ? undefined : this.view.current().find((r) => r.configPath === doc.uri.fsPath);
    if (
      last &&
      (last.status === 'stopped' || last.status === 'interrupted' || last.status === 'failed') &&
      last.checkpoints.length
    ) {
      lenses.push(
        new vscode.CodeLens(top, {
          title: '$(debug-continue) Resume',
          command: 'trinityWorkbench.resume',
          arguments: [doc.uri],
          tooltip: `Continue from global_step_${last.checkpoints.at(-1)!.step}`,
        }),
      );
    }
    const shown = live?.state ?? last;
    if (shown)
      lenses.push(
        new vscode.CodeLens(top, {
          title: '$(graph-line) Dashboard',
          command: 'trinityWorkbench.openDashboard',
          arguments: [doc.uri],
          tooltip: `Reward and loss curves of ${live ? 'this run' : 'the last run'}`,
        }),
      );
    lenses.push(
      new vscode.CodeLens(top, {
        title: 'Resolved',
        command: 'trinityWorkbench.showResolvedConfig',
        arguments: [doc.uri],
        tooltip: 'The config Trinity will run, with the values it fills in',
      }),
    );
    return lenses;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
