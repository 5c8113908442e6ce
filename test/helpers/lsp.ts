/**
 * A language client for tests: real JSON-RPC to the server, either in this process over streams or to the bundled
 * `dist/server.js --stdio` child process. Nothing is mocked: the server cannot tell it from an editor.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { resolve } from 'node:path';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { createConnection } from 'vscode-languageserver/node';
import type { Diagnostic, Position } from 'vscode-languageserver-types';
import { startServer } from '../../server/host/server';
import { DOCUMENT_RELEASE_NOTIFICATION, type DocumentReleaseParams } from '../../server/lsp-messages';

export interface TestClient {
  conn: MessageConnection;
  open(uri: string, text: string): Promise<Diagnostic[]>;
  change(uri: string, text: string): Promise<Diagnostic[]>;
  /** Sends a full-text change without waiting for diagnostics (for fuzzing). */
  changeNoWait(uri: string, text: string): void;
  /**
   * Sends full-text changes as one write, as an editor's burst of changes reaches the server together; resolves
   * with the diagnostics of the last.
   */
  changeBurst(uri: string, texts: string[]): Promise<Diagnostic[]>;
  /** The document versions the server published diagnostics for, in order (one per validation). */
  published(uri: string): number[];
  request<T>(method: string, params: unknown): Promise<T>;
  releaseOf(uri: string): DocumentReleaseParams | undefined;
  /** The next diagnostics published for `uri` that `accept` takes (pushed by the server on its own, e.g. a live run). */
  nextDiagnostics(uri: string, accept: (d: Diagnostic[]) => boolean, timeoutMs?: number): Promise<Diagnostic[]>;
  /** Messages the server logged (a handler that failed logs here instead of crashing). */
  logs: string[];
  close(): Promise<void>;
}

interface Options {
  settings?: Record<string, unknown>;
  rootUri?: string;
  /** Answer `workspace/configuration` with these settings (else the client advertises no configuration support). */
  configuration?: Record<string, unknown>;
  /** Advertise `workspace/inlayHint/refresh` support, as VS Code does (the requests are the test's to answer). */
  inlayHintRefresh?: boolean;
  /**
   * The server's validation debounce (default 0: diagnostics right after each change); `adaptive` sends none, so
   * the server sizes the wait from the document's validation cost as it does for the editor.
   */
  debounceMs?: number | 'adaptive';
}

export async function startInProcess(opts: Options = {}): Promise<TestClient> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  startServer(createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient)));
  const conn = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  return connect(
    conn,
    opts,
    (b) => toServer.write(b),
    async () => {
      toServer.end();
      toClient.end();
    },
  );
}

export async function startChildProcess(opts: Options = {}): Promise<TestClient & { child: ChildProcess }> {
  const child = spawn(process.execPath, [resolve(__dirname, '..', '..', 'dist', 'server.js'), '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const client = await connect(
    conn,
    opts,
    (b) => child.stdin!.write(b),
    async () => {
      child.kill();
    },
  );
  return { ...client, child };
}

async function connect(
  conn: MessageConnection,
  opts: Options,
  writeRaw: (bytes: Buffer) => void,
  shutdown: () => Promise<void>,
): Promise<TestClient> {
  const published = new Map<string, number[]>();
  const waiting = new Map<string, { version: number; resolve: (d: Diagnostic[]) => void }[]>();
  const watchers = new Set<(uri: string, d: Diagnostic[]) => void>();
  const releases = new Map<string, DocumentReleaseParams>();
  const versions = new Map<string, number>();
  conn.onNotification(
    'textDocument/publishDiagnostics',
    (p: { uri: string; version?: number; diagnostics: Diagnostic[] }) => {
      if (p.version !== undefined) published.set(p.uri, [...(published.get(p.uri) ?? []), p.version]);
      const list = waiting.get(p.uri) ?? [];
      const keep = list.filter((w) => {
        if (p.version !== undefined && p.version < w.version) return true;
        w.resolve(p.diagnostics);
        return false;
      });
      waiting.set(p.uri, keep);
      for (const w of watchers) w(p.uri, p.diagnostics);
    },
  );
  conn.onNotification(DOCUMENT_RELEASE_NOTIFICATION, (p: DocumentReleaseParams) => releases.set(p.uri, p));
  const logs: string[] = [];
  conn.onNotification('window/logMessage', (p: { message: string }) => logs.push(p.message));
  if (opts.configuration)
    conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => opts.configuration));
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: null,
    rootUri: opts.rootUri ?? null,
    capabilities: {
      workspace: {
        configuration: opts.configuration !== undefined,
        ...(opts.inlayHintRefresh ? { inlayHint: { refreshSupport: true } } : {}),
      },
    },
    initializationOptions: {
      ...(opts.debounceMs === 'adaptive' ? {} : { debounceMs: opts.debounceMs ?? 0 }),
      detectPython: false,
      settings: opts.settings ?? {},
    },
  });
  await conn.sendNotification('initialized', {});

  const diagnosticsFor = (uri: string, version: number) =>
    new Promise<Diagnostic[]>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`no diagnostics for ${uri} v${version} within 20 s`)), 20_000);
      const list = waiting.get(uri) ?? [];
      list.push({ version, resolve: (d) => (clearTimeout(t), res(d)) });
      waiting.set(uri, list);
    });

  return {
    conn,
    async open(uri, text) {
      versions.set(uri, 1);
      const p = diagnosticsFor(uri, 1);
      await conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'trinity-yaml', version: 1, text },
      });
      return p;
    },
    async change(uri, text) {
      const v = (versions.get(uri) ?? 1) + 1;
      versions.set(uri, v);
      const p = diagnosticsFor(uri, v);
      await conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: v },
        contentChanges: [{ text }],
      });
      return p;
    },
    changeNoWait(uri, text) {
      const v = (versions.get(uri) ?? 1) + 1;
      versions.set(uri, v);
      void conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: v },
        contentChanges: [{ text }],
      });
    },
    changeBurst(uri, texts) {
      let v = versions.get(uri) ?? 1;
      const frames = texts.map((text) => {
        v++;
        const body = JSON.stringify({
          jsonrpc: '2.0',
          method: 'textDocument/didChange',
          params: { textDocument: { uri, version: v }, contentChanges: [{ text }] },
        });
        return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      });
      versions.set(uri, v);
      const p = diagnosticsFor(uri, v);
      writeRaw(Buffer.from(frames.join('')));
      return p;
    },
    published: (uri) => [...(published.get(uri) ?? [])],
    request: (method, params) => conn.sendRequest(method, params),
    releaseOf: (uri) => releases.get(uri),
    nextDiagnostics: (uri, accept, timeoutMs = 10_000) =>
      new Promise<Diagnostic[]>((res, rej) => {
        const w = (u: string, d: Diagnostic[]) => {
          if (u !== uri || !accept(d)) return;
          watchers.delete(w);
          clearTimeout(t);
          res(d);
        };
        const t = setTimeout(() => {
          watchers.delete(w);
          rej(new Error(`no matching diagnostics for ${uri} within ${timeoutMs} ms`));
        }, timeoutMs);
        watchers.add(w);
      }),
    logs,
    async close() {
      try {
        await conn.sendRequest('shutdown');
      } catch {
        // Already gone.
      }
      conn.dispose();
      await shutdown();
    },
  };
}

/** Splits a document written with a `|` cursor marker into its text and the cursor position. */
export function withCursor(marked: string): { text: string; position: Position } {
  const i = marked.indexOf('|');
  if (i < 0) throw new Error('no | cursor marker');
  const text = marked.slice(0, i) + marked.slice(i + 1);
  const before = text.slice(0, i).split('\n');
  return { text, position: { line: before.length - 1, character: before[before.length - 1].length } };
}
