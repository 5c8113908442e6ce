/**
 * Restricted Mode, in real VS Code (code-server, the extension from the VSIX), with workspace trust on and the
 * folder not trusted: the config is still checked (its seeded error is underlined), but nothing runs — the editor
 * title's Run is disabled, and the CodeLens' Run says why and starts no process. Trusting the folder enables Run, and the restarted language server reports the file's problems again.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServerSession } from './code-server';

const ROOT = resolve(__dirname, '..', '..');
const CONFIG = readFileSync(join(ROOT, 'examples', 'arithmetic', 'arithmetic.trinity.yaml'), 'utf8').replace(
  'repeat_times: 8',
  'repeat_time: 8',
);

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  vscode = await startCodeServer({
    workspace: { 'arithmetic.trinity.yaml': CONFIG },
    settings: {
      'security.workspace.trust.enabled': true,
      'security.workspace.trust.startupPrompt': 'never',
      'security.workspace.trust.banner': 'always',
      'trinityWorkbench.inlayHints': false,
    },
  });
  page = vscode.page;
});

after(async () => {
  await vscode?.close();
});

test(
  'Restricted Mode checks the config but runs nothing; trusting the folder enables Run and keeps the diagnostics',
  { timeout: 300_000 },
  async () => {
    try {
      await page.keyboard.press('Control+P');
      await page.keyboard.type('arithmetic.trinity.yaml');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("arithmetic.trinity.yaml")', {
        timeout: 30_000,
      });
      await page.keyboard.press('Enter');

      // Checking goes on: the misspelt key is underlined.
      await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 90_000 });
      // Run is offered but disabled in the editor title.
      const titleRun = page.locator('.editor-actions .action-label.codicon-play');
      await titleRun.waitFor({ timeout: 30_000 });
      assert.match(
        (await titleRun.getAttribute('class')) ?? '',
        /\bdisabled\b/,
        "the editor title's Run is enabled in Restricted Mode",
      );

      // The CodeLens' Run explains and starts nothing.
      const lens = page.locator('.monaco-editor .codelens-decoration a', { hasText: /\bRun\b/ });
      await lens.waitFor({ state: 'attached', timeout: 90_000 });
      await lens.click();
      await page
        .locator('.notification-toast', { hasText: 'Runs are off in Restricted Mode' })
        .waitFor({ timeout: 30_000 });
      await vscode.screenshot('vscode-restricted-mode');
      await page.waitForTimeout(2000);
      assert.ok(!existsSync(join(vscode.workspace, 'checkpoints')), 'a run wrote its job dir in Restricted Mode');

      // Trust the folder from the notification's button: Run appears in the editor title.
      await page.locator('.notification-toast .monaco-button', { hasText: 'Manage Workspace Trust' }).click();
      const trust = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
      await trust.waitFor({ timeout: 30_000 });
      await trust.click();
      await page.locator('.workspace-trust-editor', { hasText: 'You trust this folder' }).waitFor({ timeout: 30_000 });
      await page.locator('.tabs-container .tab', { hasText: 'arithmetic.trinity.yaml' }).click();
      await page.locator('.editor-actions .action-label.codicon-play:not(.disabled)').waitFor({ timeout: 30_000 });
      // The language server restarted with the trusted settings: the file's diagnostics come back.
      await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 60_000 });
      await vscode.screenshot('vscode-restricted-mode-trusted');
    } catch (e) {
      await vscode.screenshot('vscode-restricted-failure');
      throw e;
    }
  },
);
