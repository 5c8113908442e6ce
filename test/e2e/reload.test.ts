/**
 * A live run and the window that started it, in real VS Code (code-server, the extension from the VSIX): reloading
 * the window ends the extension host, and the run's whole process group goes with it (nothing is left training
 * unseen); the run record says it was stopped, and the reloaded window's Runs view lists it as stopped, ready to
 * resume.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunRecord } from '../../runtime/protocol';
import { startCodeServer, type CodeServerSession } from './code-server';
import { tinyArithmeticModelArgs, until } from './waits';
import { alive } from '../helpers/process';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'arithmetic');

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  const files: Record<string, string> = {
    'arithmetic/arithmetic.trinity.yaml': readFileSync(join(EXAMPLE, 'arithmetic.trinity.yaml'), 'utf8'),
  };
  for (const f of readdirSync(join(EXAMPLE, 'data')))
    files[`arithmetic/data/${f}`] = readFileSync(join(EXAMPLE, 'data', f), 'utf8');
  vscode = await startCodeServer({
    workspace: files,
    settings: { 'trinityWorkbench.backend': 'wasm', 'trinityWorkbench.inlayHints': false },
  });
  page = vscode.page;
  const created = spawnSync(
    process.execPath,
    [
      join(vscode.extensionDir, 'dist', 'cli.js'),
      ...tinyArithmeticModelArgs(join(vscode.workspace, 'arithmetic', 'model')),
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(created.status, 0, created.stderr);
});

after(async () => {
  await vscode?.close();
});

const recordPath = () =>
  join(vscode.workspace, 'arithmetic', 'checkpoints', 'trinity-workbench-demo', 'arithmetic', 'state', 'run.json');
const record = (): RunRecord | undefined =>
  existsSync(recordPath()) ? (JSON.parse(readFileSync(recordPath(), 'utf8')) as RunRecord) : undefined;

test(
  'reloading the window stops its live run: no process is left, and the run can be resumed',
  { timeout: 400_000 },
  async () => {
    try {
      await page.keyboard.press('Control+P');
      await page.keyboard.type('arithmetic.trinity.yaml');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("arithmetic.trinity.yaml")', {
        timeout: 30_000,
      });
      await page.keyboard.press('Enter');
      await page.waitForSelector('.monaco-editor .codelens-decoration a:has-text("Run")', {
        state: 'attached',
        timeout: 90_000,
      });
      await page.locator('.editor-actions .action-label.codicon-play').click();

      const live = await until('the run record', () => (record()?.status === 'running' ? record() : undefined), 90_000);
      assert.ok(alive(live.pid));
      // Let it get into training, so the reload lands mid-work.
      await until(
        'a training step',
        () =>
          existsSync(
            join(
              vscode.workspace,
              'arithmetic',
              'checkpoints',
              'trinity-workbench-demo',
              'arithmetic',
              'sft_warmup',
              'monitor',
              'metrics.jsonl',
            ),
          ),
        120_000,
      );

      await page.keyboard.press('F1');
      await page.keyboard.type('Developer: Reload Window');
      await page
        .locator('.quick-input-list .monaco-list-row.focused', { hasText: 'Reload Window' })
        .waitFor({ timeout: 30_000 });
      await page.keyboard.press('Enter');

      // The default stop grace is 10 s; the extension host's shutdown must not cut it short.
      await until(`process ${live.pid} to exit`, () => !alive(live.pid), 20_000);
      await until('the run record to say stopped', () => record()?.status === 'stopped', 10_000);

      await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
      await page.click('.activitybar .action-item a[aria-label^="Trinity"]', { timeout: 60_000 });
      await page
        .locator('.pane-body .monaco-list-row', { hasText: 'arithmetic' })
        .filter({ hasText: /stopped/ })
        .waitFor({ timeout: 60_000 });
      await vscode.screenshot('vscode-reload-stopped');
    } catch (e) {
      await vscode.screenshot('vscode-reload-failure');
      throw e;
    }
  },
);
