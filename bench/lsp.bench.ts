/**
 * `npm run bench:lsp`: latency of the language server on the largest corpus configs, next to yaml-language-server
 * alone (same generated schema, same files, same edits), both as real child processes over stdio JSON-RPC.
 *
 * - diagnostics: from sending a one-character `didChange` to receiving `publishDiagnostics` for that version
 *   (our server with no debounce, as yaml-language-server validates on every change);
 * - completion and hover: request round trips at key and value positions;
 * - typing: bursts of 8 characters at 8 a second into the largest config, a completion request after each
 *   keystroke, then a pause: diagnostics from the burst's last keystroke to its publishDiagnostics, completion during
 *   the burst, and validations (publishDiagnostics) per second. Ours with its default wait (sized from the
 *   validation cost), ours with today's fixed 200 ms debounce, and yaml-language-server.
 * Reports p50/p99 per operation and the ratio to yaml-language-server.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { RELEASES } from '../runtime/config/releases';
import { corpusConfigs } from '../test/helpers/corpus';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const TYPING_BURSTS = Number(process.env.BENCH_TYPING_BURSTS ?? 30);
/** 8 characters a second. */
const KEYSTROKE_MS = 125;
/** The pause after a burst: longer than any server's wait, so every burst ends validated. */
const PAUSE_MS = 600;
const root = resolve(__dirname, '..');

interface Server {
  name: string;
  conn: MessageConnection;
  kill(): void;
  waitDiagnostics(uri: string, version: number): Promise<void>;
  /** Major and minor GCs the server process has run so far (from bench/gc-probe.cjs). */
  gcCounts(): Promise<{ major: number; minor: number }>;
  /** The last diagnostics published for a document. */
  last: Map<string, { message: string }[]>;
  /** publishDiagnostics notifications received per document. */
  publishes: Map<string, number>;
}

async function start(
  name: string,
  command: string[],
  init: Record<string, unknown>,
  sections: Record<string, unknown> = {},
): Promise<Server> {
  const child = spawn(process.execPath, ['--require', join(__dirname, 'gc-probe.cjs'), ...command], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const gcWaiters: ((c: { major: number; minor: number }) => void)[] = [];
  let stderrTail = '';
  child.stderr.on('data', (chunk: Buffer) => {
    const lines = (stderrTail + chunk.toString()).split('\n');
    stderrTail = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^GC-PROBE (\d+) (\d+)$/.exec(line);
      if (m) gcWaiters.shift()?.({ major: Number(m[1]), minor: Number(m[2]) });
    }
  });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const waiters = new Map<string, { version: number; resolve: () => void }>();
  const last = new Map<string, { message: string }[]>();
  const publishes = new Map<string, number>();
  conn.onNotification(
    'textDocument/publishDiagnostics',
    (p: { uri: string; version?: number; diagnostics: { message: string }[] }) => {
      last.set(p.uri, p.diagnostics);
      publishes.set(p.uri, (publishes.get(p.uri) ?? 0) + 1);
      const w = waiters.get(p.uri);
      if (w && (p.version === undefined || p.version >= w.version)) {
        waiters.delete(p.uri);
        w.resolve();
      }
    },
  );
  // Settings are pulled (yaml-language-server only reads them this way).
  conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) =>
    p.items.map((i) => sections[i.section ?? ''] ?? null),
  );
  conn.onRequest('client/registerCapability', () => null);
  conn.onNotification(() => undefined);
  conn.listen();
  const capabilities = {
    workspace: { configuration: true },
    textDocument: { completion: { completionItem: { snippetSupport: true } } },
  };
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(root).toString(),
    capabilities,
    ...init,
  });
  await conn.sendNotification('initialized', {});
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: {} });
  return {
    name,
    conn,
    kill: () => child.kill(),
    last,
    publishes,
    waitDiagnostics: (uri, version) => new Promise<void>((res) => waiters.set(uri, { version, resolve: res })),
    gcCounts: () =>
      new Promise((res) => {
        gcWaiters.push(res);
        child.kill('SIGUSR2');
      }),
  };
}

/** A misspelled key must be flagged and keys completed, or the peer is not doing the work we compare against. */
async function assertPeerUsesSchema(peer: Server): Promise<void> {
  const uri = pathToFileURL(join(root, 'bench-sanity.yaml')).toString();
  const published = peer.waitDiagnostics(uri, 1);
  await peer.conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'yaml', version: 1, text: 'algorithm:\n  repeat_time: 8\n  \n' },
  });
  await published;
  const flagged = (peer.last.get(uri) ?? []).some((d) => /repeat_time/.test(d.message));
  const list = (await peer.conn.sendRequest('textDocument/completion', {
    textDocument: { uri },
    position: { line: 2, character: 2 },
  })) as { items: unknown[] } | unknown[];
  const n = Array.isArray(list) ? list.length : list.items.length;
  if (!flagged || n < 5)
    throw new Error(`yaml-language-server is not using the schema (flagged ${flagged}, ${n} completions)`);
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))];
}

/** Latency samples (ms) per operation, and the server's major GCs while they were taken. */
interface Measured {
  diagnostics: number[];
  completion: number[];
  hover: number[];
  majorGCs: number;
}

async function measure(server: Server, files: { uri: string; text: string }[]): Promise<Measured> {
  const out: Measured = { diagnostics: [], completion: [], hover: [], majorGCs: 0 };
  const gcBefore = await server.gcCounts();
  for (const f of files) {
    let version = 1;
    let p = server.waitDiagnostics(f.uri, version);
    await server.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: f.uri, languageId: 'yaml', version, text: f.text },
    });
    await p;
    const lines = f.text.split('\n');
    // A value to edit (a number) and places to ask for completion and hover.
    const numLine = lines.findIndex((l) => /:\s*\d+\s*$/.test(l));
    const keyLine = lines.findIndex((l) => /^\s+\w+:/.test(l));
    for (let i = 0; i < ROUNDS; i++) {
      const digit = String(i % 10);
      const edited = lines.map((l, j) => (j === numLine ? l.replace(/\d(\s*)$/, `${digit}$1`) : l)).join('\n');
      version++;
      p = server.waitDiagnostics(f.uri, version);
      let t = performance.now();
      await server.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri: f.uri, version },
        contentChanges: [{ text: edited }],
      });
      await p;
      out.diagnostics.push(performance.now() - t);
      const keyChar = lines[keyLine].search(/\w/) + 1;
      t = performance.now();
      await server.conn.sendRequest('textDocument/completion', {
        textDocument: { uri: f.uri },
        position: { line: keyLine, character: keyChar },
      });
      out.completion.push(performance.now() - t);
      t = performance.now();
      await server.conn.sendRequest('textDocument/hover', {
        textDocument: { uri: f.uri },
        position: { line: keyLine, character: keyChar },
      });
      out.hover.push(performance.now() - t);
    }
  }
  out.majorGCs = (await server.gcCounts()).major - gcBefore.major;
  return out;
}

/** What a user typing at 8 characters a second sees. */
interface Typed {
  /** From each burst's last keystroke to the diagnostics of that text (ms). */
  diagnostics: number[];
  /** Completion round trips during the bursts (ms). */
  completion: number[];
  /** Validations (publishDiagnostics) per second over the bursts and their pauses, and per burst. */
  perSecond: number;
  perBurst: number;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** Bursts of 8 digits typed into a number value of `text`, 125 ms apart, each followed by a completion request. */
async function typing(server: Server, uri: string, text: string, bursts: number): Promise<Typed> {
  const out: Typed = { diagnostics: [], completion: [], perSecond: 0, perBurst: 0 };
  let version = 1;
  let p = server.waitDiagnostics(uri, version);
  await server.conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'yaml', version, text },
  });
  await p;
  await sleep(PAUSE_MS);
  const lines = text.split('\n');
  const numLine = lines.findIndex((l) => /:\s*\d+\s*$/.test(l));
  const original = lines[numLine];
  const before = server.publishes.get(uri) ?? 0;
  const start = performance.now();
  for (let b = 0; b < bursts; b++) {
    let line = original;
    for (let k = 0; k < 8; k++) {
      line = line.replace(/(\d)(\s*)$/, `$1${(b + k) % 10}$2`);
      lines[numLine] = line;
      version++;
      const last = k === 7;
      if (last) p = server.waitDiagnostics(uri, version);
      const sent = performance.now();
      await server.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ text: lines.join('\n') }],
      });
      const t = performance.now();
      await server.conn.sendRequest('textDocument/completion', {
        textDocument: { uri },
        position: { line: numLine, character: line.length },
      });
      out.completion.push(performance.now() - t);
      if (last) {
        await p;
        out.diagnostics.push(performance.now() - sent);
        await sleep(PAUSE_MS);
      } else await sleep(Math.max(0, KEYSTROKE_MS - (performance.now() - sent)));
    }
  }
  const validations = (server.publishes.get(uri) ?? 0) - before;
  out.perSecond = validations / ((performance.now() - start) / 1000);
  out.perBurst = validations / bursts;
  return out;
}

async function main(): Promise<void> {
  const all = RELEASES.filter((r) => r === 'main').flatMap((r) =>
    corpusConfigs(r).map((f) => ({ text: readFileSync(f.abs, 'utf8'), rel: f.rel })),
  );
  const largest = all.sort((a, b) => b.text.length - a.text.length).slice(0, 5);
  const schemaPath = join(root, 'schemas', 'trinity-main.schema.json');

  // debounceMs undefined: the server's own wait, sized from the document's validation cost.
  const ourServer = (debounceMs?: number) =>
    start('trinity-workbench', [join(root, 'dist', 'server.js'), '--stdio'], {
      initializationOptions: { debounceMs, detectPython: false, settings: { trinityVersion: 'main' } },
    });
  const ours = await ourServer(0);
  // yaml-language-server always waits validationDelayMs = 200 before validating; the same delay makes the
  // diagnostics ratio compare like with like.
  const oursDelayed = await ourServer(200);
  const peer = await start(
    'yaml-language-server',
    [join(root, 'node_modules', 'yaml-language-server', 'bin', 'yaml-language-server'), '--stdio'],
    {},
    {
      yaml: {
        validate: true,
        completion: true,
        hover: true,
        format: { enable: false },
        schemas: { [pathToFileURL(schemaPath).toString()]: '*.yaml' },
      },
    },
  );

  await assertPeerUsesSchema(peer);
  const files = (tag: string) =>
    largest.map((f, i) => ({ uri: pathToFileURL(join(root, `bench-${tag}-${i}.yaml`)).toString(), text: f.text }));
  // Each server is warmed up right before it is measured: one left idle for minutes while the others run has had
  // its heap shrunk by V8's memory reducer, and would pay for growing it back inside the measurement.
  const warmThenMeasure = async (server: Server, tag: string) => {
    await measure(server, files(`warm-${tag}`).slice(0, 1));
    return measure(server, files(tag));
  };
  const a = await warmThenMeasure(ours, 'ours');
  const b = await warmThenMeasure(peer, 'peer');
  const delayed = await warmThenMeasure(oursDelayed, 'ours-200');
  ours.kill();

  // Typing into the largest config: ours as shipped, ours with today's fixed 200 ms, yaml-language-server.
  const oursAdaptive = await ourServer();
  const typed = async (server: Server, tag: string) => {
    await typing(server, files(`typing-warm-${tag}`)[0].uri, largest[0].text, 2);
    return typing(server, files(`typing-${tag}`)[0].uri, largest[0].text, TYPING_BURSTS);
  };
  const typedAdaptive = await typed(oursAdaptive, 'ours');
  const typedDelayed = await typed(oursDelayed, 'ours-200');
  const typedPeer = await typed(peer, 'peer');
  oursAdaptive.kill();
  oursDelayed.kill();
  peer.kill();

  const row = (label: string, ourSamples: number[], peerSamples: number[]) => {
    const [a50, a99, b50, b99] = [
      percentile(ourSamples, 0.5),
      percentile(ourSamples, 0.99),
      percentile(peerSamples, 0.5),
      percentile(peerSamples, 0.99),
    ];
    return `| ${label} | ${a50.toFixed(2)} | ${a99.toFixed(2)} | ${b50.toFixed(2)} | ${b99.toFixed(2)} | ${(a50 / b50).toFixed(2)}x | ${(a99 / b99).toFixed(2)}x |`;
  };
  // The shared 200 ms delay dominates the latency; the work after it is what differs between the servers.
  const afterDelay = (xs: number[]) => xs.map((x) => Math.max(0, x - 200));
  // Like for like: both servers debounce 200 ms, so each answers completion and hover from the same idle state.
  const rows = [
    row('diagnostics after an edit', delayed.diagnostics, b.diagnostics),
    row('  of which after the 200 ms delay', afterDelay(delayed.diagnostics), afterDelay(b.diagnostics)),
    row('completion', delayed.completion, b.completion),
    row('hover', delayed.hover, b.hover),
  ];
  console.log(
    [
      `LSP benchmark: ${largest.length} largest main corpus configs (${largest.map((f) => `${f.rel} ${f.text.length} B`).join(', ')}), ${ROUNDS} edits each`,
      '',
      '| operation | ours p50 ms | ours p99 ms | yaml-language-server p50 ms | p99 ms | ratio p50 | ratio p99 |',
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
      `Major GCs during the measured edits: ours ${delayed.majorGCs}, yaml-language-server ${b.majorGCs} (one that finishes inside a request adds a few ms to it).`,
      "Both servers above wait 200 ms after an edit before validating (yaml-language-server's fixed validationDelayMs).",
      `Ours with no debounce, right after each edit: diagnostics p50 ${percentile(a.diagnostics, 0.5).toFixed(2)} / p99 ${percentile(a.diagnostics, 0.99).toFixed(2)} ms, completion p50 ${percentile(a.completion, 0.5).toFixed(2)} / p99 ${percentile(a.completion, 0.99).toFixed(2)} ms.`,
      'Ours validates schema, interpolation and every Trinity rule; yaml-language-server validates the schema only.',
      `Targets (no debounce): diagnostics p99 < 30 ms: ${percentile(a.diagnostics, 0.99).toFixed(1)}; completion p99 < 20 ms: ${percentile(a.completion, 0.99).toFixed(1)}.`,
      '',
      `Typing into ${largest[0].rel}: ${TYPING_BURSTS} bursts of 8 characters at 8 a second (a completion request after each keystroke), then a ${PAUSE_MS} ms pause`,
      '',
      '| server | diagnostics after the last keystroke p50 ms | p99 ms | completion while typing p50 ms | p99 ms | validations per second | per burst |',
      '|---|---|---|---|---|---|---|',
      typingRow('ours (wait sized from the validation cost)', typedAdaptive),
      typingRow('ours, fixed 200 ms (before)', typedDelayed),
      typingRow('yaml-language-server (fixed 200 ms)', typedPeer),
      '',
      `Target: diagnostics p99 <= 60 ms after the last keystroke: ${percentile(typedAdaptive.diagnostics, 0.99).toFixed(1)}; completion p99 no worse than with the fixed 200 ms: ${percentile(typedAdaptive.completion, 0.99).toFixed(1)} vs ${percentile(typedDelayed.completion, 0.99).toFixed(1)}.`,
    ].join('\n'),
  );
}

function typingRow(label: string, t: Typed): string {
  const f = (xs: number[], q: number) => percentile(xs, q).toFixed(2);
  return `| ${label} | ${f(t.diagnostics, 0.5)} | ${f(t.diagnostics, 0.99)} | ${f(t.completion, 0.5)} | ${f(t.completion, 0.99)} | ${t.perSecond.toFixed(2)} | ${t.perBurst.toFixed(2)} |`;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
