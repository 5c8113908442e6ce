/**
 * Two status bar items: the release the active config is checked against (from `trinity/documentRelease`), and,
 * while a run is live (this window's or one started elsewhere), its progress (`$(sync~spin) grpo step 37/250 ·
 * reward 0.41`), redrawn with every change of the run board (at most every 100 ms).
 */
import * as vscode from 'vscode';
import type { DocumentReleaseParams } from '../server/lsp-messages';
import { LANGUAGE_ID } from './language-client';
import type { RunController } from './runs/run-controller';
import { runStatusText } from './runs/run-state';

const WHY: Record<DocumentReleaseParams['source'], string> = {
  comment: 'from the # trinity-version comment',
  setting: 'from trinityWorkbench.trinityVersion',
  python: 'the installed trinity-rft',
  default: 'the newest modelled release',
};

export class StatusBar implements vscode.Disposable {
  private readonly release = vscode.window.createStatusBarItem(
    'trinityWorkbench.release',
    vscode.StatusBarAlignment.Right,
    100,
  );
  private readonly run = vscode.window.createStatusBarItem('trinityWorkbench.run', vscode.StatusBarAlignment.Left, 50);
  private readonly releases = new Map<string, DocumentReleaseParams>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly runs: RunController) {
    this.release.name = 'Trinity release';
    this.release.command = 'trinityWorkbench.selectRelease';
    this.run.name = 'Trinity run';
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.showRelease();
        this.showRun();
      }),
      { dispose: runs.board.onDidChange(() => this.showRun()).dispose },
    );
  }

  setRelease(r: DocumentReleaseParams): void {
    this.releases.set(r.uri, r);
    this.showRelease();
  }

  private showRelease(): void {
    const doc = vscode.window.activeTextEditor?.document;
    const r = doc && doc.languageId === LANGUAGE_ID ? this.releases.get(doc.uri.toString()) : undefined;
    if (!r) return this.release.hide();
    this.release.text = `$(beaker) Trinity ${r.release}`;
    this.release.tooltip = `Checked against Trinity-RFT ${r.release} (${WHY[r.source]}). Click to select the release.`;
    this.release.show();
  }

  private showRun(): void {
    const s = this.runs.activeRun();
    if (!s) return this.run.hide();
    this.run.text = runStatusText(s);
    this.run.tooltip = `${s.configPath ?? s.jobDir}: ${s.status}. Click for its dashboard.`;
    // Shaped as a Runs view node, which the command takes.
    this.run.command = {
      title: 'Open Dashboard',
      command: 'trinityWorkbench.openDashboard',
      arguments: [{ kind: 'run', run: s }],
    };
    this.run.show();
  }

  dispose(): void {
    this.release.dispose();
    this.run.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
