/**
 * The language server connection: starts `dist/server.js` over IPC for trinity-yaml documents, and the typed custom
 * requests of server/lsp-messages.ts. In an untrusted workspace the server gets no plugin directories and does not run
 * Python to find the installed trinity-rft release (it still validates).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  LanguageClient,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  DOCUMENT_RELEASE_NOTIFICATION,
  KEY_LOCATION_REQUEST,
  METRIC_DRIVERS_REQUEST,
  RESOLVED_CONFIG_REQUEST,
  RUN_PLAN_REQUEST,
  type DocumentReleaseParams,
  type KeyLocation,
  type KeyLocationParams,
  type MetricDriversParams,
  type ResolvedConfigResponse,
  type RunPlanResponse,
} from '../server/lsp-messages';

export const LANGUAGE_ID = 'trinity-yaml';

export class TrinityLanguageClient {
  private client: LanguageClient;
  private readonly onRelease: (r: DocumentReleaseParams) => void;

  constructor(
    private readonly context: vscode.ExtensionContext,
    onRelease: (r: DocumentReleaseParams) => void,
  ) {
    this.onRelease = onRelease;
    this.client = this.create();
  }

  private create(): LanguageClient {
    const context = this.context;
    const serverModule = context.asAbsolutePath(path.join('dist', 'server.js'));
    const serverOptions: ServerOptions = {
      run: { module: serverModule, transport: TransportKind.ipc },
      debug: {
        module: serverModule,
        transport: TransportKind.ipc,
        options: { execArgv: ['--nolazy', '--inspect=6010'] },
      },
    };
    const trusted = vscode.workspace.isTrusted;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ language: LANGUAGE_ID }],
      synchronize: {
        configurationSection: 'trinityWorkbench',
        // Files coming or going (datasets, model folders, plugins): the server checks open configs against the disk
        // again. Changes of content are left out: they would come with every step a run writes.
        fileEvents: vscode.workspace.createFileSystemWatcher('**/*', false, true, false),
      },
      initializationOptions: trusted ? {} : { detectPython: false, settings: { pluginDirs: [] } },
      middleware: trusted
        ? undefined
        : {
            workspace: {
              // Plugin directories are workspace-chosen paths the server reads: none until the workspace is trusted.
              configuration: async (params, token, next) => {
                const values = (await next(params, token)) as unknown[];
                return Array.isArray(values)
                  ? values.map((v) => (v && typeof v === 'object' ? { ...v, pluginDirs: [] } : v))
                  : values;
              },
            },
          },
    };
    return new LanguageClient('trinityWorkbench', 'Trinity RFT Workbench', serverOptions, clientOptions);
  }

  async start(): Promise<void> {
    await this.client.start();
    this.client.onNotification(DOCUMENT_RELEASE_NOTIFICATION, this.onRelease);
  }

  /** A new server with the workspace's current trust (plugin directories, Python probing). */
  async restart(): Promise<void> {
    await this.client.stop();
    this.client = this.create();
    await this.start();
  }

  stop(): Promise<void> {
    return this.client.stop();
  }

  runPlan(uri: vscode.Uri): Promise<RunPlanResponse | null> {
    return this.client.sendRequest<RunPlanResponse | null>(RUN_PLAN_REQUEST, { uri: uri.toString() });
  }

  metricDrivers(tags: string[], uri?: vscode.Uri): Promise<Record<string, string[]>> {
    return this.client.sendRequest<Record<string, string[]>>(METRIC_DRIVERS_REQUEST, {
      tags,
      uri: uri?.toString(),
    } satisfies MetricDriversParams);
  }

  keyLocation(uri: vscode.Uri, key: string): Promise<KeyLocation | null> {
    return this.client.sendRequest<KeyLocation | null>(KEY_LOCATION_REQUEST, {
      uri: uri.toString(),
      key,
    } satisfies KeyLocationParams);
  }

  resolvedConfig(uri: string): Promise<ResolvedConfigResponse | null> {
    return this.client.sendRequest<ResolvedConfigResponse | null>(RESOLVED_CONFIG_REQUEST, { uri });
  }
}
