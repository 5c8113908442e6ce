/**
 * The status bar item beside the release: which GPU the memory checks are for (`trinityWorkbench.gpu`), shown while
 * a Trinity config is the active editor; a click opens the setting.
 */
import * as vscode from 'vscode';
import { LANGUAGE_ID } from './language-client';

const SETTING = 'trinityWorkbench.gpu';

export class GpuStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'trinityWorkbench.gpu',
    vscode.StatusBarAlignment.Right,
    99,
  );
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    this.item.name = 'Trinity GPU';
    this.item.command = {
      title: 'Select GPU',
      command: 'workbench.action.openSettings',
      arguments: [`@id:${SETTING}`],
    };
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.show()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SETTING)) this.show();
      }),
    );
    this.show();
  }

  private show(): void {
    const doc = vscode.window.activeTextEditor?.document;
    if (!doc || doc.languageId !== LANGUAGE_ID) return this.item.hide();
    const value = vscode.workspace.getConfiguration('trinityWorkbench').get<string | number>('gpu') ?? 'H100-80G';
    const name = typeof value === 'number' ? `${value} GiB` : value;
    this.item.text = `$(server) ${name}`;
    this.item.tooltip = `GPU memory estimates (hints at trainer and rollout_model) are for ${name}: Trinity's own estimate for the trainer, vLLM's budget for the rollout engines. Click to change ${SETTING}.`;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
