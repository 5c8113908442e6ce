/**
 * The extension in real VS Code (code-server 4.100.3) driven through Debian's Chromium: a YAML file that is a
 * Trinity config gets the trinity-yaml language, the server's diagnostics appear in the Problems panel, the status
 * bar shows the release, and the resolved config opens. A screenshot of the window is kept in test-results/.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

const root = resolve(__dirname, '..', '..');
const pkg = require(join(root, 'package.json')) as { name: string; publisher: string; version: string };

const CONFIG = `mode: both
project: e2e
algorithm:
  algorithm_type: grpo
  repeat_time: 8
model:
  model_path: Qwen/Qwen2.5-0.5B-Instruct
  max_model_len: 1024
buffer:
  batch_size: 4
  explorer_input:
    taskset:
      path: openai/gsm8k
`;

let server: ChildProcess;
let browser: Browser;
let page: Page;
let workspace: string;

function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

before(async () => {
  // The installer is a no-op when code-server is cached; on a fresh machine it installs it (minutes).
  const install = spawnSync('bash', [join(root, '.ci', 'code-server.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(install.status, 0, 'could not install code-server (.ci/code-server.sh)');
  const codeServer = install.stdout.trim().split('\n').pop()!;

  const base = mkdtempSync(join(tmpdir(), 'tw-e2e-'));
  workspace = join(base, 'workspace');
  const userData = join(base, 'user');
  const extensions = join(base, 'extensions');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({ 'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false, 'telemetry.telemetryLevel': 'off' }));
  // The plain .yaml name matters: only content detection can make it a Trinity config.
  writeFileSync(join(workspace, 'run.yaml'), CONFIG);
  const ext = join(extensions, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
  for (const item of ['package.json', 'dist', 'syntaxes', 'schemas', 'README.md']) cpSync(join(root, item), join(ext, item), { recursive: true });

  const port = await freePort();
  server = spawn(codeServer, ['--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--user-data-dir', userData, '--extensions-dir', extensions, workspace], {
    stdio: 'ignore',
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
  for (let i = 0; ; i++) {
    try {
      await page.goto(url, { timeout: 5000 });
      break;
    } catch (e) {
      if (i > 30) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
});

after(async () => {
  await browser?.close();
  server?.kill();
});

test('a Trinity config in a plain .yaml file is checked in VS Code', { timeout: 180_000 }, async () => {
  try {
    await checkInVsCode();
  } catch (e) {
    mkdirSync(join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: join(root, 'test-results', 'vscode-failure.png') });
    throw e;
  }
});

async function checkInVsCode(): Promise<void> {
  // Open run.yaml through Quick Open, as a user would.
  await page.keyboard.press('Control+P');
  await page.keyboard.type('run.yaml');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("run.yaml")', { timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-lines', { timeout: 30_000 });

  // The status bar names the language and the release the server chose.
  await page.waitForSelector('.statusbar-item:has-text("Trinity RFT config")', { timeout: 60_000 });
  const release = await page.waitForSelector('.statusbar-item:has-text("Trinity main")', { timeout: 60_000 });
  assert.ok(release);

  // The misspelled key is in the Problems panel with its code and did-you-mean.
  await page.keyboard.press('Control+Shift+M');
  const problem = await page.waitForSelector('.markers-panel .monaco-tl-contents:has-text("repeat_times")', { timeout: 60_000 });
  assert.match((await problem.textContent()) ?? '', /Unknown key `repeat_time`/);

  mkdirSync(join(root, 'test-results'), { recursive: true });
  await page.screenshot({ path: join(root, 'test-results', 'vscode-problems.png') });

  // The resolved config opens beside the editor, with what Trinity fills in marked.
  await page.keyboard.press('F1');
  await page.keyboard.type('Trinity: Show Resolved Config');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Show Resolved Config")', { timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-line:has-text("set by Trinity")', { timeout: 60_000 });
  await page.screenshot({ path: join(root, 'test-results', 'vscode-resolved.png') });
}
