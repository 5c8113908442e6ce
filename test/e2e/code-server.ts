/**
 * Real VS Code for end-to-end tests: code-server 4.100.3 with the extension installed from the platform VSIX (the
 * file users install), driven through Debian's Chromium with playwright-core.
 *
 *   const vscode = await startCodeServer({ workspace: { 'run.yaml': CONFIG }, settings: { 'trinityWorkbench.inlayHints': false } });
 *   try {
 *     await vscode.page.keyboard.press('Control+P');
 *     …
 *   } finally {
 *     await vscode.close();   // closes Chromium, kills code-server's whole process tree, throws if anything is left
 *   }
 *
 * Each session gets a fresh temp folder (workspace, user data, extensions), a free loopback port, and its own
 * Chromium. Every process it starts (code-server, the extension host, the language server, runs the extension starts,
 * Chromium) carries the session's marker in its environment, so `close()` finds them all, even those that started
 * their own process group or were reparented, and checks that none is left.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildVsix, ROOT } from '../helpers/vsix';

export interface CodeServerOptions {
  /** Files written into the workspace folder before VS Code opens it: path relative to the folder -> contents. */
  workspace?: Record<string, string>;
  /** User settings, over the defaults that keep the window quiet (no startup editor, no trust prompt, no telemetry). */
  settings?: Record<string, unknown>;
  /** The VSIX to install; default: this test run's build of `npm run package` (test/helpers/vsix.ts). */
  vsix?: string;
  /** Extra environment for code-server, hence for the extension host, the language server and runs. */
  env?: Record<string, string>;
  /** Browser viewport; default 1400 x 900. */
  viewport?: { width: number; height: number };
  /** How long to wait for the workbench to load, in ms; default 90 000. */
  startTimeoutMs?: number;
}

export interface CodeServerSession {
  /** The VS Code window, loaded (`.monaco-workbench` is there) with the workspace folder open. */
  readonly page: Page;
  readonly browser: Browser;
  /** Absolute path of the workspace folder. */
  readonly workspace: string;
  /** The session's temp folder (workspace/, user/, extensions/, code-server.log); removed by `close()`. */
  readonly dir: string;
  /** Where the VSIX was installed: `<dir>/extensions/<publisher>.<name>-<version>-linux-x64`. */
  readonly extensionDir: string;
  /** The URL the page opened. */
  readonly url: string;
  /** code-server's pid, the leader of its process group. */
  readonly pid: number;
  /** What code-server printed so far (stdout and stderr). */
  log(): string;
  /** Saves a PNG of the window to test-results/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
  /**
   * Closes Chromium, then ends every process of the session: SIGTERM, SIGKILL after 5 s. Rejects, naming them, if
   * any survives. Idempotent.
   */
  close(): Promise<void>;
}

const MARKER = 'TRINITY_E2E_SESSION';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
};

let binary: string | undefined;

/** The code-server binary, installed by .ci/code-server.sh on first use (minutes; a no-op when cached). */
export function codeServerBinary(): string {
  if (binary) return binary;
  const install = spawnSync('bash', [join(ROOT, '.ci', 'code-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (install.status !== 0) throw new Error('could not install code-server (.ci/code-server.sh)');
  binary = install.stdout.trim().split('\n').pop()!;
  return binary;
}

/** The folder of one of VS Code's built-in extensions (e.g. `yaml`) in the installed code-server. */
export function builtinExtensionDir(name: string): string {
  return join(dirname(dirname(codeServerBinary())), 'code-server', 'lib', 'vscode', 'extensions', name);
}

/** Installs a VSIX into an extensions folder with code-server's own CLI; returns the installed extension's folder. */
export function installVsix(vsix: string, extensionsDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const before = new Set(existsSync(extensionsDir) ? readdirSync(extensionsDir) : []);
  const r = spawnSync(codeServerBinary(), ['--install-extension', vsix, '--extensions-dir', extensionsDir], {
    encoding: 'utf8',
    env,
    timeout: 120_000,
  });
  if (r.status !== 0 || !/was successfully installed/.test(r.stdout))
    throw new Error(
      `code-server --install-extension ${vsix} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`,
    );
  const added = readdirSync(extensionsDir).filter(
    (d) => !before.has(d) && !d.startsWith('.') && d !== 'extensions.json',
  );
  if (added.length !== 1)
    throw new Error(`expected one new extension folder in ${extensionsDir}, found: ${added.join(', ') || 'none'}`);
  return join(extensionsDir, added[0]);
}

/**
 * The VSIX installed into `extensionsDir` as code-server's CLI installs it, the install done once per VSIX (a
 * code-server start of its own, seconds on two cores) and copied for each session after the first: the folder beside
 * the VSIX (test/helpers/vsix.ts's per-run cache) holds that install; the copy's extensions.json names its new place.
 */
function installedCopy(vsix: string, extensionsDir: string, env: NodeJS.ProcessEnv): string {
  const template = `${vsix}.installed`;
  if (!existsSync(template)) {
    // Installed beside, then renamed into place: a test file running at the same time sees all of it or none.
    const fresh = mkdtempSync(`${template}-`);
    installVsix(vsix, fresh, env);
    const manifest = join(fresh, 'extensions.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').split(fresh).join(template));
    try {
      renameSync(fresh, template);
    } catch {
      rmSync(fresh, { recursive: true, force: true }); // another file's install got there first
    }
  }
  const [folder] = readdirSync(template).filter((d) => !d.startsWith('.') && d !== 'extensions.json');
  cpSync(join(template, folder), join(extensionsDir, folder), { recursive: true });
  const manifest = readFileSync(join(template, 'extensions.json'), 'utf8');
  writeFileSync(join(extensionsDir, 'extensions.json'), manifest.split(template).join(extensionsDir));
  return join(extensionsDir, folder);
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Live processes whose environment carries this session's marker: [pid, command line]. */
function sessionProcesses(marker: string): [number, string][] {
  const needle = `${MARKER}=${marker}\0`;
  const out: [number, string][] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').includes(needle)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      if (/^\d+ \(.*\) Z /s.test(stat)) continue; // a zombie: already dead, waiting to be reaped
      out.push([pid, readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ').trim()]);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ends code-server's process group and every marked process; returns those still alive after SIGKILL. */
async function killSession(leader: number, marker: string): Promise<[number, string][]> {
  for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
    signal(-leader, sig);
    for (const [pid] of sessionProcesses(marker)) signal(pid, sig);
    const deadline = Date.now() + (sig === 'SIGTERM' ? 5000 : 2000);
    while (Date.now() < deadline) {
      if (sessionProcesses(marker).length === 0) return [];
      await sleep(100);
    }
  }
  return sessionProcesses(marker);
}

/** Starts code-server with the VSIX installed, opens the workspace in Chromium, and waits for the workbench. */
export async function startCodeServer(opts: CodeServerOptions = {}): Promise<CodeServerSession> {
  const codeServer = codeServerBinary();
  const vsix = opts.vsix ?? buildVsix().path;
  const dir = mkdtempSync(join(tmpdir(), 'tw-e2e-'));
  const workspace = join(dir, 'workspace');
  const userData = join(dir, 'user');
  const extensions = join(dir, 'extensions');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  mkdirSync(extensions, { recursive: true });
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify({ ...QUIET_SETTINGS, ...opts.settings }, null, 2),
  );
  for (const [file, text] of Object.entries(opts.workspace ?? {})) {
    mkdirSync(dirname(join(workspace, file)), { recursive: true });
    writeFileSync(join(workspace, file), text);
  }
  const env = { ...process.env, ...opts.env, [MARKER]: dir };
  const extensionDir = installedCopy(vsix, extensions, env);

  const port = await freePort();
  const logFile = join(dir, 'code-server.log');
  const logFd = openSync(logFile, 'a');
  // Detached: code-server leads its own process group, so the group can be killed whole.
  const server: ChildProcess = spawn(
    codeServer,
    [
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--user-data-dir',
      userData,
      '--extensions-dir',
      extensions,
      workspace,
    ],
    { stdio: ['ignore', logFd, logFd], detached: true, env },
  );
  closeSync(logFd);
  const pid = server.pid!;
  let exited: string | undefined;
  server.on('exit', (code, sig) => (exited = `code-server exited (${code ?? sig})`));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');

  let browser: Browser | undefined;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      await Promise.race([browser?.close().catch(() => undefined), sleep(10_000)]);
      const left = await killSession(pid, dir);
      if (left.length > 0)
        throw new Error(
          `processes of the code-server session survived SIGKILL:\n${left.map(([p, c]) => `${p} ${c}`).join('\n')}`,
        );
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, env });
    const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
    const deadline = Date.now() + (opts.startTimeoutMs ?? 90_000);
    for (;;) {
      if (exited) throw new Error(`${exited} before the page loaded:\n${log()}`);
      try {
        await page.goto(url, { timeout: 5000 });
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await sleep(500);
      }
    }
    await page.waitForSelector('.monaco-workbench', { timeout: Math.max(1000, deadline - Date.now()) });
    return {
      page,
      browser,
      workspace,
      dir,
      extensionDir,
      url,
      pid,
      log,
      async screenshot(name) {
        const path = join(ROOT, 'test-results', `${name}.png`);
        mkdirSync(dirname(path), { recursive: true });
        await page.screenshot({ path });
        return path;
      },
      close,
    };
  } catch (e) {
    const printed = log();
    await close().catch(() => undefined);
    throw new Error(
      `code-server did not open the workspace: ${(e as Error).message}\ncode-server's log:\n${printed.slice(-4000)}`,
      { cause: e },
    );
  }
}
