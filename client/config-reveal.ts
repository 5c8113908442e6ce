/**
 * Shows a config key in its file (the dashboard's "which keys drive this card" links): opens the config, asks the
 * server where the key is (`trinity/keyLocation`: written, else its nearest written ancestor) and selects it.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TrinityLanguageClient } from './language-client';

/** The server learns of a document when the editor opens it: ask again a few times before giving up. */
const TRIES = 10;
const WAIT_MS = 150;

export async function revealConfigKey(lsp: TrinityLanguageClient, configPath: string, key: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(configPath));
  const editor = await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One, preview: false });
  let loc = null;
  for (let i = 0; i < TRIES && !loc; i++) {
    loc = await lsp.keyLocation(doc.uri, key).catch(() => null);
    if (!loc) await new Promise((r) => setTimeout(r, WAIT_MS));
  }
  if (!loc)
    return void vscode.window.showWarningMessage(
      `${key}: ${path.basename(configPath)} is not checked as a Trinity config.`,
    );
  const range = new vscode.Range(
    loc.range.start.line,
    loc.range.start.character,
    loc.range.end.line,
    loc.range.end.character,
  );
  editor.selection = new vscode.Selection(range.start, range.end);
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  if (!loc.written)
    void vscode.window.showInformationMessage(
      `${key} is not written in ${path.basename(configPath)} (Trinity uses its default); its nearest section is shown.`,
    );
}
