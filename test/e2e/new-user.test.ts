/**
 * The path a new user takes (issue 30), in real VS Code (code-server, the extension installed from the VSIX) from an
 * empty workspace: New Config from Example for every shipped example (each opens with no error), then the countdown
 * example as copied: Run, Create Small Model from the message that offers it, Run; the title button turns to Stop
 * while it runs; the run ends with a notification naming how it ended and its reward, whose Open Dashboard shows
 * reward points. Then the user trains longer (an edit), runs again and stops it; and a run started from a terminal
 * in the same folder is live in the Runs view within 2 s, with its own step. Screenshots in the light, dark and
 * high-contrast themes go to test-results/.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunRecord } from '../../runtime/protocol';
import { startCodeServer, type CodeServerSession } from './code-server';
import { dashboardPoints, until } from './waits';
import { listExamples } from '../../client/example-copies';
import { alive } from '../helpers/process';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
/** The configs the extension ships, as New Config from Example lists them. */
const SHIPPED = listExamples(join(ROOT, 'examples')).map((e) => e.label);

let vscode: CodeServerSession;
let page: Page;
let terminal: ChildProcess | undefined;

before(async () => {
  vscode = await startCodeServer({
    settings: {
      'workbench.colorTheme': 'Default Light Modern',
      'trinityWorkbench.backend': 'wasm',
      'trinityWorkbench.inlayHints': false,
    },
    // Started beside other test processes on two cores: the workbench may take minutes to load.
    startTimeoutMs: 240_000,
  });
  page = vscode.page;
});

after(async () => {
  if (terminal?.pid && alive(terminal.pid)) terminal.kill('SIGKILL');
  await vscode?.close();
});

const countdown = () => join(vscode.workspace, 'countdown');
const jobDir = () => join(countdown(), 'checkpoints', 'trinity-workbench-examples', 'countdown');
const record = (): RunRecord | undefined => {
  try {
    return JSON.parse(readFileSync(join(jobDir(), 'state', 'run.json'), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
};

/** Runs a command from the palette, moving to the row that is that command (fuzzy matches may come first). */
async function command(title: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.keyboard.type(title);
    const shown = await row(title)
      .waitFor({ timeout: 10_000 })
      .then(
        () => true,
        () => false,
      );
    if (shown) break;
    if (attempt === 3) assert.fail(`the command palette showed no '${title}' after 3 tries`);
    await page.keyboard.press('Escape');
  }
  await choose(title);
}

const row = (label: string) => page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();

/** In the open quick pick, types `label` and accepts the row whose text starts with it (a long list shows it then). */
async function pick(label: string): Promise<void> {
  await page.locator('.quick-input-widget .quick-input-list').waitFor({ timeout: 30_000 });
  await page.keyboard.type(label);
  await choose(label);
}

async function choose(label: string): Promise<void> {
  await row(label).waitFor({ timeout: 30_000 });
  const focused = page.locator('.quick-input-list .monaco-list-row.focused');
  for (let i = 0; i < 10 && !((await focused.textContent().catch(() => '')) ?? '').trim().startsWith(label); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

/** Opens a config from the Explorer (an example opened before may have been a preview, replaced since). */
async function open(file: string): Promise<void> {
  const name = file.split('/').pop()!;
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().dblclick();
  await page.locator('.tab.active', { hasText: name }).first().waitFor({ timeout: 30_000 });
}

/** Switches the window's theme as a user does, from Preferences: Color Theme; waits until the workbench has it. */
async function theme(name: string, kind: string): Promise<void> {
  if (await page.locator(`.monaco-workbench.${kind}`).count()) return;
  await command('Preferences: Color Theme');
  await pick(name);
  await page.locator(`.monaco-workbench.${kind}`).waitFor({ state: 'attached', timeout: 30_000 });
  await page.waitForTimeout(500);
}

async function screenshots(name: string): Promise<void> {
  for (const [label, t, kind] of [
    ['light', 'Light Modern', 'vs'],
    ['dark', 'Dark Modern', 'vs-dark'],
    ['hc', 'Dark High Contrast', 'hc-black'],
  ]) {
    await theme(t, kind);
    await vscode.screenshot(`vscode-new-user-${name}-${label}`);
  }
  await theme('Light Modern', 'vs');
}

const runButton = () => page.locator('.editor-actions .action-label.codicon-play');
const stopButton = () => page.locator('.editor-actions .action-label.codicon-debug-stop');
const runsRow = (status: RegExp) =>
  page.locator('.pane-body .monaco-list-row', { hasText: 'countdown' }).filter({ hasText: status });

test(
  'a new user: every example from New Config from Example, the countdown example run, stopped, run from a terminal',
  { timeout: 600_000 },
  async () => {
    const t0 = Date.now();
    try {
      await newUserPath();
    } catch (e) {
      await vscode.screenshot('vscode-new-user-failure');
      throw e;
    }
    console.log(`the new user's path took ${Math.round((Date.now() - t0) / 1000)} s`);
  },
);

async function newUserPath(): Promise<void> {
  await page.locator('.activitybar .action-item a[aria-label^="Trinity"]').waitFor({ timeout: 60_000 });

  // Every shipped example copies into the empty workspace and opens with no error (only its model is missing).
  assert.ok(SHIPPED.length >= 6, SHIPPED.join(', '));
  for (const example of SHIPPED) {
    await command('Trinity: New Config from Example');
    await pick(example);
    await page.locator('.tab', { hasText: example.split('/').pop()! }).waitFor({ timeout: 30_000 });
  }
  // The server checks each config as it opens (its release in the status bar is its answer): no error in any.
  await page.locator('.statusbar-item', { hasText: /Trinity (main|v\d)/ }).waitFor({ timeout: 60_000 });
  const problems = page.locator('[id="status.problems"], [id="status.problems"] [aria-label]');
  for (const t = Date.now(); Date.now() - t < 5000; await page.waitForTimeout(250)) {
    const label = (await problems.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')).join(' '))) ?? '';
    // VS Code names only the kinds there are ("Infos: 45"): no "Errors: n".
    assert.ok(label && !/Errors: [1-9]/.test(label), `an example opens with an error: ${label}`);
  }
  assert.match(readFileSync(join(countdown(), 'data', 'train.jsonl'), 'utf8'), /"question"/);

  // The countdown example: Run offers to create the missing model; the quick picks choose it.
  await open('countdown/countdown.trinity.yaml');
  await runButton().click();
  const toast = page.locator('.notification-toast', { hasText: 'model.model_path' });
  await toast.waitFor({ timeout: 60_000 });
  await toast.locator('.monaco-button', { hasText: 'Create Small Model here' }).click();
  for (const choice of ['qwen2', 'tiny', 'byte']) await pick(choice);
  await until('the model', () => existsSync(join(countdown(), 'model', 'model.safetensors')), 60_000);
  await page.locator('.notification-toast', { hasText: 'Created a qwen2 model' }).waitFor({ timeout: 30_000 });
  // Sized to the config it was made for: vLLM's length check (TRN318) passes.
  const made = JSON.parse(readFileSync(join(countdown(), 'model', 'config.json'), 'utf8')) as Record<string, number>;
  assert.ok(made.max_position_embeddings >= 192, `max_position_embeddings ${made.max_position_embeddings}`);
  await page.keyboard.press('Escape');

  // Run: it ends with a notification saying so, with its reward, whose Open Dashboard shows the reward's points.
  await runButton().click();
  const first = await until('the run record', () => record(), 90_000);
  const finished = page.locator('.notification-toast', { hasText: /Trinity: countdown finished/ });
  await finished.waitFor({ timeout: 240_000 });
  assert.match((await finished.textContent()) ?? '', /reward/);
  await until(`process ${first.pid} to exit`, () => !alive(first.pid), 10_000);
  await screenshots('1-finished');
  await finished.locator('.monaco-button', { hasText: 'Open Dashboard' }).click();
  await until(
    'reward points',
    async () => (await dashboardPoints(page, 'rollout/score/mean')) >= 2 || undefined,
    60_000,
  );
  await screenshots('2-dashboard');

  // Train longer and run again: the title button and the Runs view follow the run; Stop ends its process.
  await open('countdown/countdown.trinity.yaml');
  const config = join(countdown(), 'countdown.trinity.yaml');
  writeFileSync(config, readFileSync(config, 'utf8').replace('total_epochs: 1', 'total_epochs: 60'));
  await page.waitForTimeout(1000);
  await runButton().click();
  const second = await until(
    'the second run',
    () => (record()?.status === 'running' && record()!.pid !== first.pid ? record() : undefined),
    90_000,
  );
  await stopButton().waitFor({ timeout: 1000 + 5000 });
  await page.click('.activitybar .action-item a[aria-label^="Trinity"]');
  await runsRow(/running/).waitFor({ timeout: 10_000 });
  await screenshots('3-running');
  await stopButton().click();
  await until(`process ${second.pid} to exit`, () => !alive(second.pid), 5000);
  await runsRow(/stopped/).waitFor({ timeout: 10_000 });
  await runButton().waitFor({ timeout: 5000 });
  await page.locator('.notification-toast', { hasText: /Trinity: countdown stopped/ }).waitFor({ timeout: 10_000 });

  // A run started from a terminal in the config's folder: live in the Runs view within 2 s, with its own step.
  terminal = spawn(process.execPath, [CLI, 'run', '--config', 'countdown.trinity.yaml', '--backend', 'wasm'], {
    cwd: countdown(),
    stdio: 'ignore',
  });
  const third = await until(
    'the terminal run',
    () => (record()?.pid === terminal!.pid && record()!.status === 'running' ? record() : undefined),
    60_000,
  );
  const seen = Date.now();
  await runsRow(/running/).waitFor({ timeout: 2000 });
  assert.ok(Date.now() - seen <= 2000);
  await until(
    'its own step',
    async () =>
      /step [1-9]/.test(
        (await runsRow(/running/)
          .textContent()
          .catch(() => '')) ?? '',
      ),
    60_000,
  );
  await screenshots('4-terminal-run');
  terminal.kill('SIGTERM');
  await until(`process ${third.pid} to exit`, () => !alive(third.pid), 10_000);
  await runsRow(/stopped|failed/).waitFor({ timeout: 10_000 });
  assert.ok(readdirSync(jobDir()).length > 0);
}
