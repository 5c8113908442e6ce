/**
 * The config commands in real VS Code (code-server, the extension installed from the VSIX): New Config from Example
 * copies an example with its data into the workspace and opens it; Check All Configs fills the Problems panel with
 * the errors of configs that were never opened, as does a `trinity` check task from tasks.json; Select Trinity Release writes the file's `# trinity-version:`;
 * the agents-plugin example's unknown workflow is fixed by its quick fix, which adds the plugin folder to the settings.
 * Screenshots (dark theme) go to test-results/.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServerSession } from './code-server';

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  vscode = await startCodeServer({
    workspace: {
      // Never opened in the test: only Check All Configs can report it.
      'configs/typo.yaml':
        'mode: both\nalgorithm:\n  algorithm_type: grpo\n  repeat_time: 8\nbuffer:\n  batch_size: 4\n',
      'notes/readme.yaml': 'just: some yaml\n',
      '.vscode/tasks.json': JSON.stringify({
        version: '2.0.0',
        tasks: [{ type: 'trinity', config: 'configs/typo.yaml', command: 'check', label: 'check typo' }],
      }),
    },
    // The runs test is in the light theme; this one shows the extension's parts in the dark one.
    settings: { 'workbench.colorTheme': 'Default Dark Modern' },
  });
  page = vscode.page;
});

after(async () => {
  await vscode?.close();
});

/** Runs a command from the palette: moves to the row that is that command (fuzzy matches may come first). */
async function command(title: string): Promise<void> {
  await page.keyboard.press('F1');
  await page.keyboard.type(title);
  await choose(title);
}

/** In the open quick pick, types `label` and accepts the first row whose text starts with it. */
async function pick(label: string): Promise<void> {
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.type(label);
  await choose(label);
}

async function choose(label: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  const focused = page.locator('.quick-input-list .monaco-list-row.focused');
  for (let i = 0; i < 10 && !((await focused.textContent().catch(() => '')) ?? '').trim().startsWith(label); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

test('New Config from Example, Check All Configs and Select Trinity Release', { timeout: 300_000 }, async () => {
  try {
    // The extension's contributions are in once its activity bar icon is.
    await page.locator('.activitybar .action-item a[aria-label^="Trinity"]').waitFor({ timeout: 60_000 });
    // The example list describes each example by its first comment lines.
    await command('Trinity: New Config from Example');
    await page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'single-digit addition' })
      .first()
      .waitFor({ timeout: 30_000 });
    await vscode.screenshot('vscode-tools-1-examples');
    await pick('arithmetic/arithmetic.trinity.yaml');
    const copied = join(vscode.workspace, 'arithmetic', 'arithmetic.trinity.yaml');
    await page.locator('.tab', { hasText: 'arithmetic.trinity.yaml' }).waitFor({ timeout: 30_000 });
    assert.ok(existsSync(copied));
    for (const f of ['train.jsonl', 'eval.jsonl', 'sft.jsonl'])
      assert.ok(existsSync(join(vscode.workspace, 'arithmetic', 'data', f)), f);

    // A `trinity` check task from tasks.json: its output, read by the $trinity problem matcher, fills the Problems
    // panel for a file no editor has opened (so the language server has not checked it).
    const fromTask = page.locator('.markers-panel .monaco-tl-contents', { hasText: 'Unknown key `repeat_time`' });
    // The task's terminal takes the panel while it runs: open Problems once the matcher has counted errors.
    const counted = page
      .locator('[id="status.problems"] [aria-label*="Errors: 3"], [id="status.problems"][aria-label*="Errors: 3"]')
      .first();
    // VS Code's terminal tasks now and then match nothing of a fast task's output (microsoft/vscode#184523, #194501:
    // CI saw the terminal print the 3 errors and the status bar count 0): a second run is what a user would do.
    for (let attempt = 1; ; attempt++) {
      await command('Tasks: Run Task');
      await pick('check typo');
      try {
        await counted.waitFor({ state: 'attached', timeout: attempt === 1 ? 30_000 : 60_000 });
        break;
      } catch (e) {
        if (attempt === 2) throw e;
        console.log('the problem matcher counted no errors on the first run of the task: running it again');
      }
    }
    await page.keyboard.press('Control+Shift+M');
    await fromTask.first().waitFor({ timeout: 60_000 });
    await vscode.screenshot('vscode-tools-2-task');
    await page.keyboard.press('Escape');

    // Check All Configs: the unopened config's error reaches the Problems panel; the plain YAML file is not a config.
    await command('Trinity: Check All Configs in Workspace');
    await page
      .locator('.notification-toast', { hasText: /2 Trinity configs checked: 3 errors/ })
      .waitFor({ timeout: 60_000 });
    const problem = page.locator('.markers-panel .monaco-tl-contents', { hasText: 'Unknown key `repeat_time`' });
    await problem.first().waitFor({ timeout: 30_000 });
    assert.match((await problem.first().textContent()) ?? '', /Unknown key `repeat_time`/);
    await vscode.screenshot('vscode-tools-3-check-all');

    // Select Trinity Release for the open file writes its comment; the status bar follows.
    await page.locator('.tab', { hasText: 'arithmetic.trinity.yaml' }).click();
    await command('Trinity: Select Trinity Release');
    await pick('v0.5.2');
    await pick('This file');
    await page.locator('.statusbar-item', { hasText: 'Trinity v0.5.2' }).waitFor({ timeout: 60_000 });
    await page.keyboard.press('Control+S');
    await until(() => readFileSync(copied, 'utf8').startsWith('# trinity-version: 0.5.2\n'), 10_000);
    await vscode.screenshot('vscode-tools-4-release');

    // The agents-plugin example names its own plugin's workflow: an error until its folder is in the settings, whose
    // quick fix writes it there; the error clears with no reload.
    await command('Trinity: New Config from Example');
    await pick('agents-plugin/step-wise-lake.trinity.yaml');
    const lake = join(vscode.workspace, 'agents-plugin', 'step-wise-lake.trinity.yaml');
    await page.locator('.tab', { hasText: 'step-wise-lake.trinity.yaml' }).waitFor({ timeout: 30_000 });
    await page.keyboard.press('Control+G');
    const line =
      readFileSync(lake, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('default_workflow_type:')) + 1;
    await page.keyboard.type(String(line));
    await page.keyboard.press('Enter');
    await page.keyboard.press('Home');
    await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 60_000 });
    await page.keyboard.press('Control+.');
    const fix = page.locator('.action-widget .monaco-list-row', {
      hasText: 'Add agents-plugin/plugins to trinityWorkbench.pluginDirs',
    });
    await fix.waitFor({ timeout: 30_000 });
    await vscode.screenshot('vscode-tools-5-plugin-fix');
    for (let i = 0; i < 6 && !/\bfocused\b/.test((await fix.getAttribute('class')) ?? ''); i++)
      await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ state: 'detached', timeout: 30_000 });
    const settings = JSON.parse(readFileSync(join(vscode.workspace, '.vscode', 'settings.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(settings['trinityWorkbench.pluginDirs'], ['agents-plugin/plugins']);
  } catch (e) {
    await vscode.screenshot('vscode-tools-failure');
    throw e;
  }
});

async function until(f: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!f()) {
    if (Date.now() - t0 > timeoutMs) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
