/**
 * LSP wiring only: documents, settings, debounce, capabilities, the custom request, and the outside world
 * (environment, .env, file system, installed trinity-rft). No Trinity logic lives here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  CodeActionKind,
  TextDocuments,
  TextDocumentSyncKind,
  type Connection,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { URI } from 'vscode-uri';
import { parseDotEnv } from '../../runtime/config/environment/dotenv';
import { scanPluginDirs } from '../../runtime/config/environment/plugin-names';
import { parseRelease, type Release } from '../../runtime/config/releases';
import {
  DOCUMENT_RELEASE_NOTIFICATION,
  KEY_LOCATION_REQUEST,
  METRIC_DRIVERS_REQUEST,
  RESOLVED_CONFIG_REQUEST,
  RUN_PLAN_REQUEST,
  type DocumentReleaseParams,
  type KeyLocationParams,
  type MetricDriversParams,
  type RunPlanResponse,
} from '../lsp-messages';
import { isHubId, resolveModelPath } from '../../runtime/engine/model/hub';
import { TrinityLanguageService } from '../service';
import { SEMANTIC_LEGEND } from '../service/semantic-tokens';
import type { Analysis } from '../service/analyze';
import { DEFAULT_SETTINGS, type ServiceSettings } from '../service/settings';
import { detectTrinityRelease } from './python';
import { RunWatcher } from './run-watcher';
import { DEFAULT_HEALTH_THRESHOLDS, type RunHealthThresholds } from '../../runtime/config/runs/run-health';

declare const __VERSION__: string | undefined;

interface InitOptions {
  /** Delay between the last edit and validation, in ms (default 200). */
  debounceMs?: number;
  /** Settings to use when the client does not answer `workspace/configuration`. */
  settings?: Partial<
    Omit<ServiceSettings, 'runHealth'> & {
      pythonPath: string;
      pluginDirs: string[];
      runWith: string;
      runHealth: Record<string, unknown>;
    }
  >;
  /** Skip looking for an installed trinity-rft (tests). */
  detectPython?: boolean;
}

export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const timers = new Map<string, NodeJS.Timeout>();
  let debounceMs = 200;
  let workspaceRoot: string | undefined;
  let pullConfiguration = false;
  let initSettings: InitOptions['settings'] = {};
  let detectedRelease: Release | undefined;
  let detectPython = true;

  const readFile = (p: string) => {
    try {
      return readFileSync(workspaceRoot && !isAbsolute(p) ? join(workspaceRoot, p) : p, 'utf8');
    } catch {
      return undefined;
    }
  };
  const service = new TrinityLanguageService({
    env: { ...process.env },
    host: { exists: existsSync },
    baseDirsFor: documentDirs,
    readFile,
  });

  const reportFailure = (what: string, e: unknown) =>
    connection.console.error(`trinity-workbench: ${what} failed: ${(e as Error).stack ?? e}`);
  /** A handler's failure is logged and answered with a fallback: one bad request never takes the server down. */
  const guard = <T>(what: string, fallback: T, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      reportFailure(what, e);
      return fallback;
    }
  };
  const guardAsync = async <T>(what: string, fallback: T, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      reportFailure(what, e);
      return fallback;
    }
  };

  const environment = (): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = {};
    if (workspaceRoot) {
      try {
        Object.assign(env, parseDotEnv(readFileSync(join(workspaceRoot, '.env'), 'utf8')));
      } catch {
        // No .env: fine.
      }
    }
    return { ...env, ...process.env };
  };

  const refreshContext = (pluginDirs: string[] = []) => {
    const env = environment();
    const dirs = [...pluginDirs, ...(env.TRINITY_PLUGIN_DIRS ?? '').split(':').filter(Boolean)].map((d) =>
      workspaceRoot ? resolve(workspaceRoot, d) : resolve(d),
    );
    service.setContext({
      env,
      detectedRelease,
      host: { exists: existsSync, baseDirs: workspaceRoot ? [workspaceRoot] : [], plugins: scanPluginDirs(dirs) },
    });
  };

  const applySettings = (s: NonNullable<InitOptions['settings']>) => {
    const version = s.trinityVersion && s.trinityVersion !== 'auto' ? parseRelease(s.trinityVersion) : undefined;
    service.configure({
      trinityVersion: version ?? 'auto',
      disabledRules: Array.isArray(s.disabledRules) ? s.disabledRules : DEFAULT_SETTINGS.disabledRules,
      inlayHints: typeof s.inlayHints === 'boolean' ? s.inlayHints : DEFAULT_SETTINGS.inlayHints,
      runsLocally: s.runWith === undefined ? DEFAULT_SETTINGS.runsLocally : s.runWith === 'local',
      runHealth: runHealthSettings(s.runHealth),
    });
    refreshContext(s.pluginDirs ?? []);
  };

  const loadSettings = async () => {
    let s = initSettings ?? {};
    if (pullConfiguration) {
      try {
        const pulled = await connection.workspace.getConfiguration('trinityWorkbench');
        if (pulled && typeof pulled === 'object') s = { ...s, ...pulled };
      } catch {
        // The client could not answer; keep the initialization settings.
      }
    }
    applySettings(s);
    settingsLoaded();
    for (const doc of documents.all()) schedule(doc, 0);
    if (detectPython) {
      void detectTrinityRelease(s.pythonPath || 'python3').then((r) => {
        if (r === detectedRelease) return;
        detectedRelease = r;
        service.setContext({ detectedRelease: r });
        for (const doc of documents.all()) schedule(doc, 0);
      });
    }
  };

  /** A document's last run is read from where it writes: relative to the workspace folder, else the file's folder. */
  const followRun = (doc: TextDocument) => {
    const dirs = service.runDirs(doc);
    const cwd = workspaceRoot ?? documentDirs(doc.uri)[0];
    if (!cwd || !dirs.jobDir) return watcher.untrack(doc.uri);
    watcher.track(
      doc.uri,
      resolve(cwd, dirs.jobDir),
      dirs.stages.map((s) => ({ run: s.run, jobDir: resolve(cwd, s.jobDir) })),
    );
    service.setRunMetrics(doc.uri, watcher.snapshot(doc.uri));
  };
  const watcher = new RunWatcher((uri) => {
    const doc = documents.get(uri);
    if (doc) publish(doc);
  });

  const publish = (doc: TextDocument) => {
    guard('validation', undefined, () => {
      const analysis: Analysis = service.analyze(doc);
      guard('reading the last run', undefined, () => followRun(doc));
      const params: DocumentReleaseParams = { uri: doc.uri, release: analysis.release, source: analysis.releaseSource };
      void connection.sendNotification(DOCUMENT_RELEASE_NOTIFICATION, params);
      const diagnostics = service.validate(doc);
      // Usually done already, in the quiet after the edit; with little or no debounce, done here.
      guard('preparing completion', undefined, () => service.prepare(doc));
      void connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
    });
  };

  // Nothing is published before the user's settings are in (they choose the release and the disabled rules).
  let settingsLoaded: () => void = () => undefined;
  const settingsReady = new Promise<void>((res) => {
    settingsLoaded = res;
  });

  /** Completion's YAML parse is made after this much quiet, well before validation's debounce runs out... */
  const PREPARE_AFTER_MS = 30;
  /** ...unless the file is large enough (16 KiB: ~8 ms) that parsing it between keystrokes would slow typing. */
  const PREPARE_EARLY_MAX_CHARS = 16 * 1024;
  const prepareTimers = new Map<string, NodeJS.Timeout>();

  const schedule = (doc: TextDocument, delay = debounceMs) => {
    clearTimeout(prepareTimers.get(doc.uri));
    if (delay > PREPARE_AFTER_MS && doc.getText().length <= PREPARE_EARLY_MAX_CHARS) {
      prepareTimers.set(
        doc.uri,
        setTimeout(() => {
          prepareTimers.delete(doc.uri);
          const current = documents.get(doc.uri);
          if (current) guard('preparing completion', undefined, () => service.prepare(current));
        }, PREPARE_AFTER_MS),
      );
    }
    clearTimeout(timers.get(doc.uri));
    timers.set(
      doc.uri,
      setTimeout(() => {
        timers.delete(doc.uri);
        void settingsReady.then(() => {
          const current = documents.get(doc.uri);
          if (current) publish(current);
        });
      }, delay),
    );
  };

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    const opts = (params.initializationOptions ?? {}) as InitOptions;
    debounceMs = opts.debounceMs ?? debounceMs;
    initSettings = opts.settings ?? {};
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? undefined;
    workspaceRoot = folder ? URI.parse(folder).fsPath : undefined;
    pullConfiguration = params.capabilities.workspace?.configuration === true;
    applySettings(initSettings);
    detectPython = opts.detectPython !== false;
    return {
      capabilities: {
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
      },
      serverInfo: { name: 'trinity-workbench', version: typeof __VERSION__ === 'string' ? __VERSION__ : 'dev' },
    };
  });

  connection.onInitialized(() => void loadSettings());
  // No more reading job dirs (and publishing) once the client shuts the server down.
  connection.onShutdown(() => watcher.dispose());
  connection.onDidChangeConfiguration((change) => {
    const pushed = (change.settings as { trinityWorkbench?: InitOptions['settings'] } | undefined)?.trinityWorkbench;
    if (pushed && !pullConfiguration) initSettings = { ...initSettings, ...pushed };
    void loadSettings();
  });

  documents.onDidChangeContent((e) => schedule(e.document));
  documents.onDidClose((e) => {
    clearTimeout(timers.get(e.document.uri));
    timers.delete(e.document.uri);
    clearTimeout(prepareTimers.get(e.document.uri));
    prepareTimers.delete(e.document.uri);
    service.forget(e.document.uri);
    watcher.untrack(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  const withDoc = <T>(uri: string, fallback: T, what: string, f: (doc: TextDocument) => T): T => {
    const doc = documents.get(uri);
    return doc ? guard(what, fallback, () => f(doc)) : fallback;
  };

  connection.onCompletion((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? guardAsync('completion', null, () => service.complete(doc, p.position)) : null;
  });
  connection.onHover((p) => withDoc(p.textDocument.uri, null, 'hover', (d) => service.hover(d, p.position)));
  connection.onDefinition((p) =>
    withDoc(p.textDocument.uri, [], 'definition', (d) => service.definition(d, p.position)),
  );
  connection.onReferences((p) =>
    withDoc(p.textDocument.uri, [], 'references', (d) => service.references(d, p.position)),
  );
  connection.onDocumentSymbol((p) => withDoc(p.textDocument.uri, [], 'symbols', (d) => service.symbols(d)));
  connection.onFoldingRanges((p) => withDoc(p.textDocument.uri, [], 'folding', (d) => service.folding(d)));
  connection.onSelectionRanges((p) =>
    withDoc(p.textDocument.uri, [], 'selection ranges', (d) => service.selectionRanges(d, p.positions)),
  );
  connection.onDocumentFormatting((p) => {
    const doc = documents.get(p.textDocument.uri);
    return doc ? guardAsync('formatting', [], () => service.format(doc, p.options)) : [];
  });
  connection.languages.inlayHint.on((p) =>
    withDoc(p.textDocument.uri, [], 'inlay hints', (d) => service.inlayHints(d, p.range)),
  );
  connection.onDocumentLinks((p) => withDoc(p.textDocument.uri, [], 'document links', (d) => service.documentLinks(d)));
  connection.languages.semanticTokens.on((p) =>
    withDoc(p.textDocument.uri, { data: [] }, 'semantic tokens', (d) => service.semanticTokens(d)),
  );
  connection.onCodeAction((p) =>
    withDoc(p.textDocument.uri, [], 'code actions', (d) => service.codeActions(d, p.context.diagnostics)),
  );
  // An open document as it is in the editor; else the file on disk (the dashboard's Config tab asks for the config a
  // run was started with), analysed once and not kept.
  connection.onRequest(RESOLVED_CONFIG_REQUEST, (p: { uri: string }) => {
    if (typeof p?.uri !== 'string') return null;
    if (documents.get(p.uri)) return withDoc(p.uri, null, 'resolved config', (d) => service.resolvedConfig(d));
    return guard('resolved config', null, () => {
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
  connection.onRequest(RUN_PLAN_REQUEST, (p: { uri: string }) =>
    withDoc(p.uri, null, 'run plan', (d) => {
      const plan = service.runPlan(d);
      const model = plan.stages[0]?.modelPath;
      return model
        ? { ...plan, model: findModel(model, [...documentDirs(d.uri), ...(workspaceRoot ? [workspaceRoot] : [])]) }
        : plan;
    }),
  );

  connection.onRequest(METRIC_DRIVERS_REQUEST, (p: MetricDriversParams) =>
    guard('metric drivers', {}, () =>
      service.metricDrivers(
        Array.isArray(p?.tags) ? p.tags.filter((t) => typeof t === 'string') : [],
        p?.uri ? documents.get(p.uri) : undefined,
      ),
    ),
  );
  connection.onRequest(KEY_LOCATION_REQUEST, (p: KeyLocationParams) =>
    withDoc(p.uri, null, 'key location', (d) => (typeof p.key === 'string' ? service.keyLocation(d, p.key) : null)),
  );

  documents.listen(connection);
  connection.listen();
}

/** `trinityWorkbench.runHealth.*` as given (numbers and a boolean; anything else keeps the default). */
function runHealthSettings(given: Record<string, unknown> | undefined): ServiceSettings['runHealth'] {
  const out: ServiceSettings['runHealth'] = { ...DEFAULT_SETTINGS.runHealth };
  if (!given || typeof given !== 'object') return out;
  if (typeof given.enabled === 'boolean') out.enabled = given.enabled;
  for (const k of Object.keys(DEFAULT_HEALTH_THRESHOLDS) as (keyof RunHealthThresholds)[]) {
    const v = given[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return out;
}

/** Whether a model path loads here, looked up as the runtime does (the config's folder, then the working directory). */
function findModel(model: string, baseDirs: string[]): NonNullable<RunPlanResponse['model']> {
  let problem = '';
  for (const baseDir of baseDirs.length ? baseDirs : [process.cwd()]) {
    try {
      resolveModelPath(model, { baseDir });
      return { path: model, found: true, hubId: isHubId(model) };
    } catch (e) {
      problem ||= (e as Error).message;
    }
  }
  return { path: model, found: false, hubId: isHubId(model), problem };
}

/** A file document's own folder, where its relative paths may point. */
function documentDirs(uri: string): string[] {
  const u = URI.parse(uri);
  return u.scheme === 'file' ? [dirname(u.fsPath)] : [];
}
