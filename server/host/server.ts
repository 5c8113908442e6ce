/**
 * LSP wiring only: the handlers of one connection, registered by feature group; the session (server-session.ts)
 * holds the documents, settings and the outside world (environment, .env, file system, installed trinity-rft). No
 * Trinity logic lives here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  TextDocumentSyncKind,
  type Connection,
  type InitializeResult,
  type ServerCapabilities,
} from 'vscode-languageserver/node';
import { URI } from 'vscode-uri';
import {
  KEY_LOCATION_REQUEST,
  METRIC_DRIVERS_REQUEST,
  RESOLVED_CONFIG_REQUEST,
  RUN_PLAN_REQUEST,
  type KeyLocationParams,
  type MetricDriversParams,
  type RunPlanModel,
} from '../lsp-messages';
import { isHubId, resolveModelPath } from '../../runtime/engine/lm/hub';
import { SEMANTIC_LEGEND } from '../service/semantic-tokens';
import { documentDirs, ServerSession } from './server-session';

declare const __VERSION__: string | undefined;

export function startServer(connection: Connection): void {
  const session = new ServerSession(connection);
  registerLifecycle(connection, session);
  registerDocumentSync(session);
  registerNavigation(connection, session);
  registerEditing(connection, session);
  registerPresentation(connection, session);
  registerConfigRequests(connection, session);
  registerRunRequests(connection, session);
  session.documents.listen(connection);
  connection.listen();
}

/** initialize, initialized, shutdown, and settings changes. */
function registerLifecycle(connection: Connection, session: ServerSession): void {
  connection.onInitialize((params): InitializeResult => {
    session.initialize(params);
    return {
      capabilities: capabilities(),
      serverInfo: { name: 'trinity-workbench', version: typeof __VERSION__ === 'string' ? __VERSION__ : 'dev' },
    };
  });
  connection.onInitialized(() => void session.loadSettings());
  // No more reading job dirs (and publishing) once the client shuts the server down.
  connection.onShutdown(() => {
    session.watcher.dispose();
    session.datasetChecks.dispose();
  });
  connection.onDidChangeConfiguration((change) => {
    session.settingsPushed(change.settings);
    void session.loadSettings();
  });
  // Files came or went (a dataset, a model folder, a plugin): checks that look at the disk are redone.
  connection.onDidChangeWatchedFiles(() => session.filesChanged());
}

function capabilities(): ServerCapabilities {
  return {
    textDocumentSync: TextDocumentSyncKind.Incremental,
    completionProvider: { triggerCharacters: [':', ' ', '.', '{', '$', '-'] },
    hoverProvider: true,
    definitionProvider: true,
    referencesProvider: true,
    documentSymbolProvider: true,
    foldingRangeProvider: true,
    selectionRangeProvider: true,
    documentFormattingProvider: true,
    codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.Source] },
    inlayHintProvider: true,
    documentLinkProvider: {},
    semanticTokensProvider: { legend: SEMANTIC_LEGEND, full: true },
  };
}

/** An edit schedules validation; a close forgets the document. */
function registerDocumentSync(session: ServerSession): void {
  session.documents.onDidChangeContent((e) => session.validation.schedule(e.document));
  session.documents.onDidClose((e) => session.close(e.document.uri));
}

/** Hover, definition, references, symbols, folding and selection ranges. */
function registerNavigation(connection: Connection, session: ServerSession): void {
  const { service } = session;
  connection.onHover((p) => session.withDoc(p.textDocument.uri, null, 'hover', (d) => service.hover(d, p.position)));
  connection.onDefinition((p) =>
    session.withDoc(p.textDocument.uri, [], 'definition', (d) => service.definition(d, p.position)),
  );
  connection.onReferences((p) =>
    session.withDoc(p.textDocument.uri, [], 'references', (d) => service.references(d, p.position)),
  );
  connection.onDocumentSymbol((p) => session.withDoc(p.textDocument.uri, [], 'symbols', (d) => service.symbols(d)));
  connection.onFoldingRanges((p) => session.withDoc(p.textDocument.uri, [], 'folding', (d) => service.folding(d)));
  connection.onSelectionRanges((p) =>
    session.withDoc(p.textDocument.uri, [], 'selection ranges', (d) => service.selectionRanges(d, p.positions)),
  );
}

/** Completion, formatting and code actions. */
function registerEditing(connection: Connection, session: ServerSession): void {
  const { service, documents } = session;
  connection.onCompletion((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? session.guardAsync('completion', null, () => service.complete(doc, p.position)) : null;
  });
  connection.onDocumentFormatting((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? session.guardAsync('formatting', [], () => service.format(doc, p.options)) : [];
  });
  connection.onCodeAction((p) =>
    session.withDoc(p.textDocument.uri, [], 'code actions', (d) => service.codeActions(d, p.context.diagnostics)),
  );
}

/** Inlay hints, document links and semantic tokens. */
function registerPresentation(connection: Connection, session: ServerSession): void {
  const { service } = session;
  connection.languages.inlayHint.on((p) =>
    session.withDoc(p.textDocument.uri, [], 'inlay hints', (d) => service.inlayHints(d, p.range)),
  );
  connection.onDocumentLinks((p) =>
    session.withDoc(p.textDocument.uri, [], 'document links', (d) => service.documentLinks(d)),
  );
  connection.languages.semanticTokens.on((p) =>
    session.withDoc(p.textDocument.uri, { data: [] }, 'semantic tokens', (d) => service.semanticTokens(d)),
  );
}

/** `trinity/resolvedConfig` and `trinity/keyLocation`: a config as it resolves, and where a key is written. */
function registerConfigRequests(connection: Connection, session: ServerSession): void {
  const { service, documents } = session;
  // An open document as it is in the editor; else the file on disk (the dashboard's Config tab asks for the config a
  // run was started with), analysed once and not kept.
  connection.onRequest(RESOLVED_CONFIG_REQUEST, (p: { uri: string }) => {
    if (typeof p?.uri !== 'string') return null;
    if (documents.get(p.uri)) return session.withDoc(p.uri, null, 'resolved config', (d) => service.resolvedConfig(d));
    return session.guard('resolved config', null, () => {
      const file = URI.parse(p.uri);
      if (file.scheme !== 'file' || !existsSync(file.fsPath)) return null;
      const doc = TextDocument.create(p.uri, 'trinity-yaml', -1, readFileSync(file.fsPath, 'utf8'));
      try {
        return service.resolvedConfig(doc);
      } finally {
        service.forget(p.uri);
      }
    });
  });
  connection.onRequest(KEY_LOCATION_REQUEST, (p: KeyLocationParams) =>
    session.withDoc(p.uri, null, 'key location', (d) =>
      typeof p.key === 'string' ? service.keyLocation(d, p.key) : null,
    ),
  );
}

/** `trinity/runPlan` and `trinity/metricDrivers`: what a Run would do, and the keys that drive a run's metrics. */
function registerRunRequests(connection: Connection, session: ServerSession): void {
  const { service, documents } = session;
  connection.onRequest(RUN_PLAN_REQUEST, (p: { uri: string }) =>
    session.withDoc(p.uri, null, 'run plan', (d) => {
      // What is on disk now, whatever the last validation saw; the Problems panel gets the same.
      session.recheckDisk(d);
      const plan = service.runPlan(d);
      return { ...plan, models: plan.models.map((m) => ({ ...m, ...findModel(m.path, documentDirs(d.uri)) })) };
    }),
  );
  connection.onRequest(METRIC_DRIVERS_REQUEST, (p: MetricDriversParams) =>
    session.guard('metric drivers', {}, () =>
      service.metricDrivers(
        Array.isArray(p?.tags) ? p.tags.filter((t) => typeof t === 'string') : [],
        p?.uri ? documents.get(p.uri) : undefined,
      ),
    ),
  );
}

/** Whether a model path loads here, looked up as the runtime does: from the config's folder, where Run starts it. */
function findModel(model: string, baseDirs: string[]): Pick<RunPlanModel, 'found' | 'hubId' | 'problem'> {
  let problem = '';
  for (const baseDir of baseDirs.length ? baseDirs : [process.cwd()]) {
    try {
      resolveModelPath(model, { baseDir });
      return { found: true, hubId: isHubId(model) };
    } catch (e) {
      problem ||= (e as Error).message;
    }
  }
  return { found: false, hubId: isHubId(model), problem };
}
