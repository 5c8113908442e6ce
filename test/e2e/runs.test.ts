/**
 * Runs from the editor, in real VS Code (code-server, the extension installed from the VSIX) driven through
 * Debian's Chromium, as a new user would: open the arithmetic example, fix its seeded error with the quick fix,
 * press Run in the editor title, create the missing model from the message that offers it, press Run again, watch
 * the status bar count steps and the Runs view list the run, press Stop and check that the runtime's process is
 * gone within 5 s, then Resume it from the Runs view, watch reward points arrive in its dashboard, let it finish,
 * show its output from the palette, and reload the window: the dashboard comes back from disk, and the run's output,
 * which the reloaded window does not have, is said to be elsewhere. Screenshots go to test-results/.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunRecord } from '../../runtime/protocol';
import { startCodeServer, type CodeServerSession } from './code-server';
import { dashboardPoints, until } from './waits';
import { alive } from '../helpers/process';

const ROOT = resolve(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'arithmetic');

/** The example as shipped, made short enough for a test (fewer steps) and with one seeded error (a misspelt key). */
function exampleConfig(): string {
  const text = readFileSync(join(EXAMPLE, 'arithmetic.trinity.yaml'), 'utf8');
  const out = text
    .replace('total_steps: 120', 'total_steps: 30')
    .replace('save_interval: 120', 'save_interval: 30')
    .replace('total_steps: 250', 'total_steps: 90')
    .replace('save_interval: 100', 'save_interval: 5')
    .replace('eval_interval: 50', 'eval_interval: 45')
    .replace('repeat_times: 8', 'repeat_time: 8');
  assert.notEqual(out, text);
  return out;
}

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  const files: Record<string, string> = { 'arithmetic/arithmetic.trinity.yaml': exampleConfig() };
  for (const f of readdirSync(join(EXAMPLE, 'data')))
    files[`arithmetic/data/${f}`] = readFileSync(join(EXAMPLE, 'data', f), 'utf8');
  vscode = await startCodeServer({
    workspace: files,
    settings: { 'trinityWorkbench.backend': 'wasm', 'trinityWorkbench.inlayHints': false },
  });
  page = vscode.page;
});

after(async () => {
  await vscode?.close();
});

// Run starts the runtime in the config's folder: `./checkpoints` is beside the config.
const jobDir = () => join(vscode.workspace, 'arithmetic', 'checkpoints', 'trinity-workbench-demo', 'arithmetic');
const record = (): RunRecord | undefined =>
  existsSync(join(jobDir(), 'state', 'run.json'))
    ? (JSON.parse(readFileSync(join(jobDir(), 'state', 'run.json'), 'utf8')) as RunRecord)
    : undefined;

/** Runs a palette command, moving to the row that is that command (fuzzy matches may come first). */
async function command(title: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  // Keys pressed while a closing menu still holds the focus are lost on a loaded machine: open the palette again.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.keyboard.type(title);
    const shown = await row.waitFor({ timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    if (shown) break;
    if (attempt === 3) assert.fail(`the command palette showed no '${title}' after 3 tries`);
    await page.keyboard.press('Escape');
  }
  const focused = page.locator('.quick-input-list .monaco-list-row.focused');
  for (let i = 0; i < 10 && !((await focused.textContent().catch(() => '')) ?? '').trim().startsWith(title); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

/** The Runs view's row of the run, once its description says `status`. */
const runRow = (status: RegExp) =>
  page.locator('.pane-body .monaco-list-row', { hasText: 'arithmetic' }).filter({ hasText: status });

/** The run's status bar item text (`grpo step 37/90 · reward 0.41`), or '' when none is shown. */
async function runStatus(): Promise<string> {
  const item = page.locator('.statusbar-item', { has: page.locator('.codicon-sync') });
  // One read, no auto-wait: the item may go between a count and a textContent (a finished run's does).
  return (await item.allTextContents())[0] ?? '';
}

test('Run, Stop and Resume the arithmetic example from the editor', { timeout: 600_000 }, async () => {
  try {
    await runFromTheEditor();
  } catch (e) {
    await vscode.screenshot('vscode-runs-failure');
    throw e;
  }
});

async function runFromTheEditor(): Promise<void> {
  await page.keyboard.press('Control+P');
  await page.keyboard.type('arithmetic.trinity.yaml');
  await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("arithmetic.trinity.yaml")', {
    timeout: 30_000,
  });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-lines', { timeout: 30_000 });

  // The seeded error is underlined; its quick fix renames the key.
  await page.keyboard.press('Control+G');
  const line =
    exampleConfig()
      .split('\n')
      .findIndex((l) => l.includes('repeat_time:')) + 1;
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  await page.waitForSelector('.monaco-editor .squiggly-error', { timeout: 60_000 });
  await vscode.screenshot('vscode-runs-1-error');
  await page.keyboard.press('Control+.');
  const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Change to `repeat_times`' });
  await fix.waitFor({ timeout: 30_000 });
  // The action list takes the keyboard (a pointer block covers it): move to the fix, then apply it.
  for (let i = 0; i < 6 && !/\bfocused\b/.test((await fix.getAttribute('class')) ?? ''); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.locator('.monaco-editor .squiggly-error').first().waitFor({ state: 'detached', timeout: 30_000 });

  // The CodeLens (on the first line: scroll back up, as the editor renders lenses only near the lines in view) and
  // the editor title both offer Run.
  await page.keyboard.press('Control+Home');
  await page.waitForSelector('.monaco-editor .codelens-decoration a:has-text("Run")', {
    state: 'attached',
    timeout: 90_000,
  });
  const runButton = page.locator('.editor-actions .action-label.codicon-play');
  // No model yet: the message offers to create one; the quick picks choose architecture, size and tokenizer. A click
  // while the title bar re-renders (the quick fix just changed the document) can be lost: press again, up to three
  // times, until the message shows.
  const toast = page.locator('.notification-toast', { hasText: 'model.model_path' }).first();
  for (let attempt = 1; ; attempt++) {
    await runButton.click();
    try {
      await toast.waitFor({ timeout: 25_000 });
      break;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
  await vscode.screenshot('vscode-runs-2-no-model');
  await toast.locator('.monaco-button', { hasText: 'Create Small Model here' }).click();
  for (const choice of ['qwen2', 'tiny', 'arithmetic characters']) {
    await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${choice}")`, { timeout: 30_000 });
    await page.keyboard.type(choice);
    await page.keyboard.press('Enter');
  }
  await until(
    'the model',
    () => existsSync(join(vscode.workspace, 'arithmetic', 'model', 'model.safetensors')),
    60_000,
  );
  await page.locator('.notification-toast', { hasText: 'Created a qwen2 model' }).waitFor({ timeout: 30_000 });

  // Run: the status bar counts steps while the run is live.
  await runButton.click();
  const first = await until('the run record', () => record(), 90_000);
  assert.equal(first.status, 'running');
  const pid = first.pid;
  assert.ok(alive(pid));
  const progress = async (): Promise<number> => Number(/step (\d+)\/\d+/.exec(await runStatus())?.[1] ?? 0);
  const t0 = Date.now();
  let a = 0;
  while ((a = await progress()) < 3) {
    if (Date.now() - t0 > 120_000) assert.fail(`the status bar shows no steps: "${await runStatus()}"`);
    await page.waitForTimeout(200);
  }
  let b = a;
  while ((b = await progress()) <= a && Date.now() - t0 < 180_000) await page.waitForTimeout(200);
  assert.ok(b > a, `the step count went from ${a} to ${b}`);
  assert.match(await runStatus(), /step \d+\/\d+/);

  // The Runs view lists it as running.
  await page.click('.activitybar .action-item a[aria-label^="Trinity"]');
  const row = page.locator('.pane-body .monaco-list-row', { hasText: 'arithmetic' });
  await row.waitFor({ timeout: 30_000 });
  await runRow(/running/).waitFor({ timeout: 30_000 });
  await vscode.screenshot('vscode-runs-3-running');

  // Stop: the runtime's process is gone within 5 s.
  await page.waitForSelector('.editor-actions .action-label.codicon-debug-stop', { timeout: 10_000 });
  const stopped = Date.now();
  await page.click('.editor-actions .action-label.codicon-debug-stop');
  await until(`process ${pid} to exit`, () => !alive(pid), 5000);
  assert.ok(Date.now() - stopped < 5000);
  await until('the run record to say stopped', () => record()?.status === 'stopped', 5000);
  await runRow(/stopped/).waitFor({ timeout: 30_000 });
  await page.waitForSelector('.editor-actions .action-label.codicon-play', { timeout: 10_000 });
  // The CodeLens says so too (VS Code asks for lenses again a moment after they change).
  await page.locator('.monaco-editor .codelens-decoration a', { hasText: /\bRun\b/ }).waitFor({ timeout: 10_000 });
  await vscode.screenshot('vscode-runs-4-stopped');

  // Resume from the Runs view's context menu; it finishes.
  const resume = page.locator('.monaco-menu .action-label', { hasText: 'Resume' });
  // The Runs view re-renders the row as the stopped status lands, and a re-render can swallow a right-click (seen
  // once in CI: a hover, no menu): right-click again until the menu is up, a few times at most.
  for (let attempt = 1; !(await resume.isVisible()); attempt++) {
    if (attempt > 5) assert.fail("no Resume in the run row's context menu after 5 right-clicks");
    await page.keyboard.press('Escape');
    await row.click({ button: 'right' });
    await resume.waitFor({ timeout: 3000 }).catch(() => undefined);
  }
  // VS Code's menus act on the keyboard's Enter over the item the pointer is on.
  await resume.hover();
  await page.keyboard.press('Enter');
  const resumed = await until(
    'the resumed run',
    () => (record()?.status === 'running' && record()!.pid !== pid ? record() : undefined),
    60_000,
  );
  // The dashboard of the live run: points arrive while it trains (grad norm: both the SFT and the GRPO stage log it).
  await command('Trinity: Open Dashboard');
  const before = await until(
    'trainer points in the dashboard',
    async () => (await dashboardPoints(page, 'actor/grad_norm')) || undefined,
    60_000,
  );
  await until('more trainer points', async () => (await dashboardPoints(page, 'actor/grad_norm')) > before, 120_000);
  await vscode.screenshot('vscode-runs-5-dashboard-live');
  await until('the resumed run to finish', () => record()?.status === 'finished', 300_000);
  await until(`process ${resumed.pid} to exit`, () => !alive(resumed.pid), 10_000);
  await runRow(/finished/).waitFor({ timeout: 30_000 });
  // Nothing is live any more: the status bar's run item goes away.
  await until('the status bar run item to go', async () => (await runStatus()) === '', 5000);
  const grpo = readdirSync(join(jobDir(), 'grpo')).filter((n) => /^global_step_\d+$/.test(n));
  assert.ok(grpo.includes('global_step_90'), `GRPO checkpoints: ${grpo.join(', ')}`);
  await row.click();
  await page.keyboard.press('ArrowRight');
  await vscode.screenshot('vscode-runs-6-finished');
  // Show Run Output from the palette: this window ran it, so its channel comes up, down to the run's last line
  // (Monaco draws spaces as no-break spaces: \s).
  await command('Trinity: Show Run Output');
  await until(
    "the run's output",
    async () => /run\sfinished/.test((await page.locator('.part.panel .view-lines').textContent()) ?? ''),
    30_000,
  ).catch(async (e: Error) => {
    await vscode.screenshot('vscode-runs-output-failed');
    const text = await page.locator('.part.panel .view-lines').allTextContents();
    const channel = await page
      .locator('.part.panel select.monaco-select-box')
      .first()
      .inputValue()
      .catch(() => '?');
    throw new Error(`${e.message}; channel ${channel}; the panel showed: ${text.join(' | ').slice(-600)}`);
  });

  // Reloading the window restores the dashboard from disk, points and all.
  await command('Developer: Reload Window');
  await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
  await until(
    'the restored dashboard',
    async () => (await dashboardPoints(page, 'critic/score/mean')) >= 90 || undefined,
    90_000,
  );
  await vscode.screenshot('vscode-runs-7-dashboard-restored');

  // The reloaded window did not start the run: Show Run Output on its row says where its output went, and offers
  // the dashboard, instead of doing nothing.
  const showOutput = page.locator('.monaco-menu .action-label', { hasText: 'Show Run Output' });
  for (let attempt = 1; !(await showOutput.isVisible()); attempt++) {
    if (attempt > 5) assert.fail("no Show Run Output in the run row's context menu after 5 right-clicks");
    await page.keyboard.press('Escape');
    await runRow(/finished/).click({ button: 'right' });
    await showOutput.waitFor({ timeout: 3000 }).catch(() => undefined);
  }
  await showOutput.hover();
  await page.keyboard.press('Enter');
  const notHere = page.locator('.notification-toast', { hasText: 'was not started in this window' });
  await notHere.waitFor({ timeout: 30_000 });
  assert.match(
    (await notHere.textContent()) ?? '',
    /arithmetic \(pid \d+\) was not started in this window: .*its dashboard/,
  );
  await page.waitForTimeout(500); // the toast's fade-in
  await vscode.screenshot('vscode-runs-8-output-elsewhere');
}
