/**
 * The CodeLens at the top of a Trinity config: `Run` (or `Stop` while it runs) · `Resume` when its last run was
 * stopped or killed · `Dashboard` when it has a run · `Resolved`, from the run board (a run started in a terminal
 * shows `Stop` too).
 */
import * as vscode from 'vscode';
import { LANGUAGE_ID } from './language-client';
import type { RunController } from './runs/run-controller';

export class RunCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly sub: { dispose(): void };
  private shown = '';

  constructor(private readonly runs: RunController) {
    // Only a run starting, stopping or ending changes the lenses, not every step.
    this.sub = runs.board.onDidChange(() => {
      const shown = runs.board
        .list()
        .map((r) => `${r.configPath}:${r.status}:${r.live}:${r.checkpoints.length > 0}`)
        .join('|');
      if (shown === this.shown) return;
      this.shown = shown;
      this.changed.fire();
    });
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (doc.languageId !== LANGUAGE_ID || doc.uri.scheme !== 'file') return [];
    const top = new vscode.Range(0, 0, 0, 0);
    // The board's run of this config: its live run from anywhere, else its last one.
    const shown = this.runs.board.runOf(doc.uri.fsPath);
    const live = shown?.live ? shown : undefined;
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
    const last = live ? undefined : shown;
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
