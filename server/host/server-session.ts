/**
 * One client's session with the server: its open documents, workspace folder and settings, the language service
 * they configure, the run watcher, and publishing a document's diagnostics. Every handler goes through `guard`: a
 * failure is logged and answered with a fallback, so one bad request never takes the server down.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { TextDocuments, type Connection, type InitializeParams } from 'vscode-languageserver/node';
import { URI } from 'vscode-uri';
import { parseDotEnv } from '../../runtime/config/environment/dotenv';
import { pluginFoldersAt, scanPluginDirs } from '../../runtime/config/environment/plugin-names';
import { forgetMissingModels, readModelConfigJson } from '../../runtime/engine/lm/config-json-cache';
import type { Release } from '../../runtime/config/releases';
import type { DatasetFinding } from '../../runtime/config/check-config';
import type { ConfigDiagnostic } from '../../runtime/config/diagnostics';
import { DOCUMENT_RELEASE_NOTIFICATION, type DocumentReleaseParams } from '../lsp-messages';
import { TrinityLanguageService } from '../service';
import type { Analysis, PluginFolder } from '../service/analyze';
import { serviceSettings, type ClientSettings, type InitOptions } from './client-settings';
import { detectTrinityRelease } from './python';
import { RunWatcher } from './run-watcher';
import { DatasetChecks } from './dataset-checks';
import { ValidationSchedule } from './validation-schedule';

/** File events come in bursts (a model folder is several files): one recheck after this much quiet. */
const FILES_SETTLE_MS = 300;

export class ServerSession {
  readonly documents = new TextDocuments(TextDocument);
  readonly service: TrinityLanguageService;
  readonly watcher: RunWatcher;
  readonly validation: ValidationSchedule;
  readonly datasetChecks: DatasetChecks;
  workspaceRoot: string | undefined;
  private pullConfiguration = false;
  /** Whether the client takes `workspace/inlayHint/refresh`. */
  private hintRefresh = false;
  private initSettings: ClientSettings = {};
  private detectedRelease: Release | undefined;
  private detectPython = true;
  /** The plugin directories of the settings (rescanned when files change). */
  private pluginDirs: string[] = [];
  private filesTimer: NodeJS.Timeout | undefined;
  /** Plugin folders found beside each document folder (TRN307's quick fix), until files come or go. */
  private readonly nearPlugins = new Map<string, PluginFolder[]>();

  constructor(private readonly connection: Connection) {
    this.service = new TrinityLanguageService({
      env: { ...process.env },
      // localRuns: the local runtime's checks run; validate.ts shows them only where runs are local.
      host: { exists: existsSync, env: { ...process.env }, modelConfig: readModelConfigJson, localRuns: true },
      baseDirsFor: documentDirs,
      readFile: (p) => this.readFile(p),
      pluginFoldersNear: (uri) => this.pluginFoldersNear(uri),
    });
    this.watcher = new RunWatcher((uri) => {
      const doc = this.documents.get(uri);
      if (doc) this.publish(doc);
    });
    this.datasetChecks = new DatasetChecks(
      (analysis, findings) => this.datasetsChecked(analysis, findings),
      (e) => this.reportFailure('checking datasets', e),
    );
    this.validation = new ValidationSchedule(
      (uri) => this.documents.get(uri),
      (doc) => this.guard('preparing completion', undefined, () => this.service.prepare(doc)),
      (doc) => this.publish(doc),
    );
  }

  /** The client's `initialize`: its options, workspace folder, and whether it answers `workspace/configuration`. */
  initialize(params: InitializeParams): void {
    const opts = (params.initializationOptions ?? {}) as InitOptions;
    if (typeof opts.debounceMs === 'number') this.validation.fixedDelayMs = opts.debounceMs;
    this.initSettings = opts.settings ?? {};
    const folder = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? undefined;
    this.workspaceRoot = folder ? URI.parse(folder).fsPath : undefined;
    this.pullConfiguration = params.capabilities.workspace?.configuration === true;
    this.hintRefresh = params.capabilities.workspace?.inlayHint?.refreshSupport === true;
    this.applySettings(this.initSettings);
    this.detectPython = opts.detectPython !== false;
  }

  /** `workspace/didChangeConfiguration`'s settings, kept when the client is not asked for them instead. */
  settingsPushed(settings: unknown): void {
    const pushed = (settings as { trinityWorkbench?: ClientSettings } | undefined)?.trinityWorkbench;
    if (pushed && !this.pullConfiguration) this.initSettings = { ...this.initSettings, ...pushed };
  }

  /** The client's settings (pulled when it answers, else the ones it gave), then every open document again. */
  async loadSettings(): Promise<void> {
    let s = this.initSettings;
    if (this.pullConfiguration) {
      try {
        const pulled = await this.connection.workspace.getConfiguration('trinityWorkbench');
        if (pulled && typeof pulled === 'object') s = { ...s, ...pulled };
      } catch {
        // The client could not answer; keep the initialization settings.
      }
    }
    this.applySettings(s);
    this.validation.settingsIn();
    this.revalidateAll();
    this.refreshHints();
    if (this.detectPython) {
      void detectTrinityRelease(s.pythonPath || 'python3').then((r) => {
        if (r === this.detectedRelease) return;
        this.detectedRelease = r;
        this.service.setContext({ detectedRelease: r });
        this.revalidateAll();
        this.refreshHints();
      });
    }
  }

  /**
   * Files came or went in the workspace: every open document is checked again soon (its datasets, model folders
   * and plugin directories), once for a burst of events.
   */
  filesChanged(): void {
    if (this.filesTimer) return;
    this.filesTimer = setTimeout(() => {
      this.filesTimer = undefined;
      forgetMissingModels();
      this.datasetChecks.filesChanged();
      this.nearPlugins.clear();
      this.refreshContext(this.pluginDirs);
      this.service.refresh();
      this.revalidateAll();
    }, FILES_SETTLE_MS);
  }

  /** Analyses and validates a document, follows its last run, and sends its release and diagnostics. */
  publish(doc: TextDocument): void {
    this.guard('validation', undefined, () => {
      const analysis: Analysis = this.service.analyze(doc);
      this.guard('reading the last run', undefined, () => this.followRun(doc));
      const params: DocumentReleaseParams = { uri: doc.uri, release: analysis.release, source: analysis.releaseSource };
      void this.connection.sendNotification(DOCUMENT_RELEASE_NOTIFICATION, params);
      const diagnostics = this.service.validate(doc);
      void this.connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
      const uri = doc.uri;
      this.datasetChecks.request(analysis, () => this.documents.get(uri)?.version === analysis.version);
    });
  }

  /** Files a Run is about to read: looked at again now, whatever the last validation saw. */
  recheckDisk(doc: TextDocument): void {
    this.service.refresh(doc.uri);
    forgetMissingModels();
    this.datasetChecks.filesChanged();
    this.publish(doc);
  }

  /** A pass over a document's datasets is in: published when it changes what the document shows. */
  private datasetsChecked(analysis: Analysis, findings: DatasetFinding[]): void {
    const doc = this.documents.get(analysis.uri);
    if (!doc) return;
    const before = this.service.datasetDiagnostics(doc);
    this.service.setDatasetFindings(doc.uri, { version: analysis.version, findings });
    if (!sameDiagnostics(before, this.service.datasetDiagnostics(doc))) this.publish(doc);
  }

  /** A closed document: no timers, nothing cached, no run followed, and its diagnostics cleared. */
  close(uri: string): void {
    this.validation.cancel(uri);
    this.service.forget(uri);
    this.watcher.untrack(uri);
    this.datasetChecks.forget(uri);
    void this.connection.sendDiagnostics({ uri, diagnostics: [] });
  }

  /** `f`'s answer, or `fallback` (logged) when it throws. */
  guard<T>(what: string, fallback: T, f: () => T): T {
    try {
      return f();
    } catch (e) {
      this.reportFailure(what, e);
      return fallback;
    }
  }

  async guardAsync<T>(what: string, fallback: T, f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      this.reportFailure(what, e);
      return fallback;
    }
  }

  /** `f` on the open document at `uri`, guarded; `fallback` when it is not open. */
  withDoc<T>(uri: string, fallback: T, what: string, f: (doc: TextDocument) => T): T {
    const doc = this.documents.get(uri);
    return doc ? this.guard(what, fallback, () => f(doc)) : fallback;
  }

  private reportFailure(what: string, e: unknown): void {
    this.connection.console.error(`trinity-workbench: ${what} failed: ${(e as Error).stack ?? e}`);
  }

  /**
   * Asks the editor for every inlay hint again: they hang on settings (the GPU of the memory hints, the release) that
   * change without an edit, and VS Code re-asks on its own only after one.
   */
  private refreshHints(): void {
    if (this.hintRefresh) void this.connection.languages.inlayHint.refresh().catch(() => undefined);
  }

  private revalidateAll(): void {
    for (const doc of this.documents.all()) this.validation.schedule(doc, 0);
  }

  private applySettings(s: ClientSettings): void {
    this.service.configure(serviceSettings(s));
    this.pluginDirs = s.pluginDirs ?? [];
    this.refreshContext(this.pluginDirs);
  }

  /** The environment (the workspace's `.env` under the process's own) and the plugin dirs' registered names. */
  private refreshContext(pluginDirs: string[]): void {
    const env = this.environment();
    const root = this.workspaceRoot;
    const dirs = [...pluginDirs, ...(env.TRINITY_PLUGIN_DIRS ?? '').split(':').filter(Boolean)].map((d) =>
      root ? resolve(root, d) : resolve(d),
    );
    const plugins = scanPluginDirs(dirs);
    this.service.setContext({
      env,
      detectedRelease: this.detectedRelease,
      // Relative paths resolve against each document's own folder (baseDirsFor), where Run starts the runtime.
      host: {
        exists: existsSync,
        baseDirs: [],
        plugins: plugins.names,
        localPlugins: plugins.local,
        pluginTaskColumns: plugins.taskColumns,
        pluginWorkflowSpecs: plugins.workflowSpecs,
        env,
        modelConfig: (modelPath, baseDirs) => readModelConfigJson(modelPath, baseDirs, env),
        localRuns: true,
      },
    });
  }

  private environment(): Record<string, string | undefined> {
    const env: Record<string, string | undefined> = {};
    if (this.workspaceRoot) {
      try {
        Object.assign(env, parseDotEnv(readFileSync(join(this.workspaceRoot, '.env'), 'utf8')));
      } catch {
        // No .env: fine.
      }
    }
    return { ...env, ...process.env };
  }

  /** A document's last run is read from where it writes: relative to the file's folder, where Run starts it. */
  private followRun(doc: TextDocument): void {
    const dirs = this.service.runDirs(doc);
    const cwd = documentDirs(doc.uri)[0] ?? this.workspaceRoot;
    if (!cwd || !dirs.jobDir) return this.watcher.untrack(doc.uri);
    this.watcher.track(
      doc.uri,
      resolve(cwd, dirs.jobDir),
      dirs.stages.map((s) => ({ run: s.run, jobDir: resolve(cwd, s.jobDir) })),
    );
    this.service.setRunMetrics(doc.uri, this.watcher.snapshot(doc.uri));
  }

  private pluginFoldersNear(uri: string): PluginFolder[] {
    const dir = documentDirs(uri)[0];
    if (!dir) return [];
    let found = this.nearPlugins.get(dir);
    if (!found) {
      const root = this.workspaceRoot;
      found = pluginFoldersAt(dir).map((f) => {
        const rel = root ? relative(root, f.dir) : '';
        return { ...f, shown: root && !rel.startsWith('..') && !isAbsolute(rel) ? rel || '.' : f.dir };
      });
      this.nearPlugins.set(dir, found);
    }
    return found;
  }

  private readFile(p: string): string | undefined {
    try {
      return readFileSync(this.workspaceRoot && !isAbsolute(p) ? join(this.workspaceRoot, p) : p, 'utf8');
    } catch {
      return undefined;
    }
  }
}

function sameDiagnostics(a: readonly ConfigDiagnostic[], b: readonly ConfigDiagnostic[]): boolean {
  const key = (ds: readonly ConfigDiagnostic[]) => JSON.stringify(ds.map((d) => [d.code, d.message, d.range]));
  return key(a) === key(b);
}

/** A file document's own folder, where its relative paths may point. */
export function documentDirs(uri: string): string[] {
  const u = URI.parse(uri);
  return u.scheme === 'file' ? [dirname(u.fsPath)] : [];
}
