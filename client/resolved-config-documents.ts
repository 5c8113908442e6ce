/** Read-only resolved-config documents (`trinity-resolved:/<file> (resolved)?<uri of the config>`), from the server. */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LANGUAGE_ID, type TrinityLanguageClient } from './language-client';

const RESOLVED_SCHEME = 'trinity-resolved';

export function registerResolvedConfig(lsp: TrinityLanguageClient): vscode.Disposable[] {
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    provideTextDocumentContent: async (uri) => {
      const r = await lsp.resolvedConfig(decodeURIComponent(uri.query));
      if (!r) return '# Open the config in an editor first.\n';
      return r.runs
        .map((run) => {
          const head = `# What Trinity-RFT ${r.release} runs${run.stage ? ` in stage ${run.stage}` : ''}; "set by Trinity" marks values it fills in.`;
          const metrics = [
            ...run.metrics.explorer.map((m) => `#   explorer  ${m}`),
            ...run.metrics.trainer.map((m) => `#   trainer   ${m}`),
          ];
          return `${head}\n${run.yaml}\n# Metrics this run logs:\n${metrics.join('\n')}\n`;
        })
        .join('\n---\n');
    },
  };
  const show = async (target?: vscode.Uri): Promise<void> => {
    const doc = target ? await vscode.workspace.openTextDocument(target) : vscode.window.activeTextEditor?.document;
    if (!doc || doc.languageId !== LANGUAGE_ID) {
      void vscode.window.showInformationMessage('Open a Trinity config first.');
      return;
    }
    const uri = vscode.Uri.from({
      scheme: RESOLVED_SCHEME,
      path: `/${path.basename(doc.uri.path)} (resolved)`,
      query: encodeURIComponent(doc.uri.toString()),
    });
    changed.fire(uri);
    const shown = await vscode.languages.setTextDocumentLanguage(await vscode.workspace.openTextDocument(uri), 'yaml');
    await vscode.window.showTextDocument(shown, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  };
  return [
    changed,
    vscode.workspace.registerTextDocumentContentProvider(RESOLVED_SCHEME, provider),
    vscode.commands.registerCommand('trinityWorkbench.showResolvedConfig', (uri?: vscode.Uri) =>
      show(uri instanceof vscode.Uri ? uri : undefined),
    ),
  ];
}
