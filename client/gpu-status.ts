/**
 * The status bar item beside the release: which GPU the memory checks are for (`trinityWorkbench.gpu`), shown while
 * a Trinity config is the active editor; a click runs Select GPU.
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
    this.item.command = 'trinityWorkbench.selectGpu';
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.show()),
      // A plain .yaml file becomes a Trinity config after it is shown (content detection sets its language): VS Code
      // reports that as the document closed and opened again, not as a change of the active editor.
      vscode.workspace.onDidOpenTextDocument(() => this.show()),
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
    this.item.tooltip = `GPU memory estimates (hints at trainer and rollout_model) are for ${name}: Trinity's own estimate for the trainer, vLLM's budget for the rollout engines. Click to pick another (${SETTING}).`;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

const OTHER = 'Other…';

/**
 * Select GPU: one of `cards` (the setting's examples in package.json) or a memory size in GiB, written to
 * `trinityWorkbench.gpu` for the workspace (for the user when no folder is open).
 */
export async function selectGpu(cards: string[]): Promise<void> {
  const current = vscode.workspace.getConfiguration('trinityWorkbench').get<string | number>('gpu');
  const pick = await vscode.window.showQuickPick(
    [
      ...cards.map((label) => ({ label, description: label === current ? 'current' : undefined })),
      { label: OTHER, description: 'its memory in GiB' },
    ],
    { title: 'GPU the memory estimates are for' },
  );
  if (!pick) return;
  let value: string | number = pick.label;
  if (pick.label === OTHER) {
    const gib = await vscode.window.showInputBox({
      title: 'GPU memory in GiB',
      prompt: 'As CUDA reports it (PyTorch\'s "total capacity"), e.g. 79.1 for an 80 GB card',
      validateInput: (t) => (Number(t) > 0 && Number(t) < 10_000 ? undefined : 'A number of GiB, e.g. 80'),
    });
    if (!gib) return;
    value = Number(gib);
  }
  await vscode.workspace
    .getConfiguration('trinityWorkbench')
    .update(
      'gpu',
      value,
      vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
    );
}
