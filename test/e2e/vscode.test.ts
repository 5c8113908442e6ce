/**
 * The extension in real VS Code (code-server 4.100.3, the extension installed from the linux-x64 VSIX) driven through
 * Debian's Chromium: a YAML file that is a Trinity config gets the trinity-yaml language, the server's diagnostics
 * appear in the Problems panel, the status bar shows the release, and the resolved config opens. Screenshots of the
 * window are kept in test-results/.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServerSession } from './code-server';

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

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  // The plain .yaml name matters: only content detection can make it a Trinity config.
  vscode = await startCodeServer({ workspace: { 'run.yaml': CONFIG } });
  page = vscode.page;
});

after(async () => {
  await vscode?.close();
});

test('the VSIX installs as a linux-x64 extension: bundles and runtime packages, no sources', () => {
  assert.match(vscode.extensionDir, /\/trinity-workbench\.trinity-workbench-[\d.]+$/);
  assert.match(
    readFileSync(join(vscode.extensionDir, '.vsixmanifest'), 'utf8'),
    /<Identity [^>]*TargetPlatform="linux-x64"/,
  );
  const installed = JSON.parse(readFileSync(join(dirname(vscode.extensionDir), 'extensions.json'), 'utf8')) as {
    identifier: { id: string };
    metadata: { source: string };
  }[];
  assert.deepEqual(
    installed.map((e) => [e.identifier.id, e.metadata.source]),
    [['trinity-workbench.trinity-workbench', 'vsix']],
  );
  for (const f of [
    'dist/extension.js',
    'dist/server.js',
    'dist/cli.js',
    'node_modules/@tensorflow/tfjs-core/package.json',
  ])
    assert.ok(existsSync(join(vscode.extensionDir, f)), f);
  assert.ok(!existsSync(join(vscode.extensionDir, 'client')), 'the TypeScript sources are not installed');
});

test('a Trinity config in a plain .yaml file is checked in VS Code', { timeout: 180_000 }, async () => {
  try {
    await checkInVsCode();
  } catch (e) {
    await vscode.screenshot('vscode-failure');
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
  const problem = await page.waitForSelector('.markers-panel .monaco-tl-contents:has-text("repeat_times")', {
    timeout: 60_000,
  });
  assert.match((await problem.textContent()) ?? '', /Unknown key `repeat_time`/);

  await vscode.screenshot('vscode-problems');

  // The resolved config opens beside the editor, with what Trinity fills in marked.
  await page.keyboard.press('F1');
  await page.keyboard.type('Trinity: Show Resolved Config');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Show Resolved Config")', {
    timeout: 30_000,
  });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-line:has-text("set by Trinity")', { timeout: 60_000 });
  await vscode.screenshot('vscode-resolved');
}
