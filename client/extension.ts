/**
 * The VS Code extension: starts the language server for `trinity-yaml` documents, gives YAML files that are Trinity
 * configs that language, shows the release each file is checked against, and opens the resolved config.
 * Glue only: every Trinity decision is the server's (or runtime/config's).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { looksLikeTrinityConfig } from '../runtime/config/detect';
import { DOCUMENT_RELEASE_NOTIFICATION, RESOLVED_CONFIG_REQUEST, type DocumentReleaseParams, type ResolvedConfigResponse } from '../server/protocol';

const LANGUAGE_ID = 'trinity-yaml';
const RESOLVED_SCHEME = 'trinity-resolved';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const serverModule = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module: serverModule, transport: TransportKind.ipc },
    debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6010'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: LANGUAGE_ID }],
    synchronize: { configurationSection: 'trinityWorkbench' },
  };
  client = new LanguageClient('trinityWorkbench', 'Trinity RFT Workbench', serverOptions, clientOptions);

  const releases = new Map<string, DocumentReleaseParams>();
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = 'trinityWorkbench.showResolvedConfig';
  context.subscriptions.push(status);
  const showStatus = () => {
    const doc = vscode.window.activeTextEditor?.document;
    const r = doc && doc.languageId === LANGUAGE_ID ? releases.get(doc.uri.toString()) : undefined;
    if (!r) {
      status.hide();
      return;
    }
    const why = { comment: 'from the # trinity-version comment', setting: 'from trinityWorkbench.trinityVersion', python: 'the installed trinity-rft', default: 'the newest modelled release' }[r.source];
    status.text = `$(beaker) Trinity ${r.release}`;
    status.tooltip = `Checked against Trinity-RFT ${r.release} (${why}). Click for the resolved config.`;
    status.show();
  };

  // Resolved configs open as read-only documents: trinity-resolved:/<file>?<uri of the config>.
  const resolvedDocs = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(RESOLVED_SCHEME, {
      onDidChange: resolvedDocs.event,
      provideTextDocumentContent: async (uri) => {
        const target = decodeURIComponent(uri.query);
        const r = await client?.sendRequest<ResolvedConfigResponse | null>(RESOLVED_CONFIG_REQUEST, { uri: target });
        if (!r) return '# Open the config in an editor first.\n';
        return r.runs
          .map((run) => {
            const head = [`# What Trinity-RFT ${r.release} runs${run.stage ? ` in stage ${run.stage}` : ''}; "set by Trinity" marks values it fills in.`];
            const metrics = [...run.metrics.explorer.map((m) => `#   explorer  ${m}`), ...run.metrics.trainer.map((m) => `#   trainer   ${m}`)];
            return `${head.join('\n')}\n${run.yaml}\n# Metrics this run logs:\n${metrics.join('\n')}\n`;
          })
          .join('\n---\n');
      },
    }),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('trinityWorkbench.showResolvedConfig', async () => {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || doc.languageId !== LANGUAGE_ID) {
        void vscode.window.showInformationMessage('Open a Trinity config first.');
        return;
      }
      const uri = vscode.Uri.from({ scheme: RESOLVED_SCHEME, path: `/${path.basename(doc.uri.path)} (resolved)`, query: encodeURIComponent(doc.uri.toString()) });
      resolvedDocs.fire(uri);
      const shown = await vscode.languages.setTextDocumentLanguage(await vscode.workspace.openTextDocument(uri), 'yaml');
      await vscode.window.showTextDocument(shown, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    }),
    vscode.window.onDidChangeActiveTextEditor(showStatus),
    vscode.workspace.onDidOpenTextDocument((doc) => void adopt(doc)),
  );

  await client.start();
  client.onNotification(DOCUMENT_RELEASE_NOTIFICATION, (r: DocumentReleaseParams) => {
    releases.set(r.uri, r);
    showStatus();
  });
  for (const doc of vscode.workspace.textDocuments) await adopt(doc);
  showStatus();
}

/** Gives a plain YAML document the trinity-yaml language when it is a Trinity config (unless detection is off). */
async function adopt(doc: vscode.TextDocument): Promise<void> {
  if (doc.languageId !== 'yaml' || doc.uri.scheme !== 'file') return;
  if (!vscode.workspace.getConfiguration('trinityWorkbench').get<boolean>('detectConfigs', true)) return;
  if (looksLikeTrinityConfig(doc.getText())) await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE_ID);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
