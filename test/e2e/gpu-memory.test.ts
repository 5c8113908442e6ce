/**
 * Will it fit, in real VS Code (code-server, the extension installed from the VSIX): the status bar names the GPU the
 * memory estimates are for, the inlay hints at `trainer` and `explorer.rollout_model` show them, the hover breaks the
 * trainer's down, Trinity's memory warning is in the Problems panel and its quick fix applies, and picking another GPU
 * (the status bar item's Select GPU: a card, or a GiB number) updates the status bar and the hints without a reload.
 * Screenshots of the status bar, the hints and the hover in the light, dark and high-contrast themes go to
 * test-results/vscode-gpu-memory-{light,dark,hc}.png.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startCodeServer, type CodeServerSession } from './code-server';
import { until } from './waits';
import { PPO_7B_CONFIG as CONFIG } from '../helpers/gpu-memory-config';

// The label in Preferences: Color Theme, and the class the workbench then carries.
const THEMES = [
  ['light', 'Light Modern', 'vs'],
  ['dark', 'Dark Modern', 'vs-dark'],
  ['hc', 'Dark High Contrast', 'hc-black'],
] as const;

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  vscode = await startCodeServer({
    workspace: { 'gpu.yaml': CONFIG, 'data/gsm8k/train.jsonl': '{"question": "1+1", "answer": "2"}\n' },
    settings: { 'workbench.colorTheme': 'Default Light Modern' },
  });
  page = vscode.page;
});

after(async () => {
  await vscode?.close();
});

const gpuItem = (text: string) => page.locator('.statusbar-item', { hasText: text });
// The editor draws a line's spaces, its hints' too, as no-break spaces: the patterns match them with \s.
const line = (start: string) =>
  page.locator('.monaco-editor .view-line', { hasText: new RegExp(`^${start.replace(/ /g, '\\s')}`) });
const hover = () => page.locator('.monaco-editor .monaco-hover:not(.hidden)', { hasText: 'Trainer GPU memory' });

/**
 * Hovers the `trainer` key and waits for the breakdown (moving away first, so the hover is a fresh one); scrolls the
 * hover to it, below the warning and the key's documentation.
 */
async function hoverTrainer(): Promise<string> {
  await page.mouse.move(5, 5);
  await hover().waitFor({ state: 'hidden', timeout: 10_000 });
  await line('trainer:').hover({ position: { x: 20, y: 8 } });
  await hover().waitFor({ timeout: 30_000 });
  await hover()
    .getByText('Trainer GPU memory per GPU')
    .evaluate((e) => e.scrollIntoView({ block: 'start' }));
  return (await hover().textContent()) ?? '';
}

/** In the quick pick, types `label` and accepts the row whose label starts with it (fuzzy matches may come first). */
async function pick(label: string): Promise<void> {
  await page.locator('.quick-input-box input').waitFor({ timeout: 30_000 });
  await page.keyboard.type(label);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 30_000 });
  const focused = page.locator('.quick-input-list .monaco-list-row.focused .label-name');
  for (let i = 0; i < 10 && !((await focused.textContent().catch(() => '')) ?? '').trim().startsWith(label); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

async function command(title: string): Promise<void> {
  await page.keyboard.press('F1');
  await pick(title);
}

test(
  'GPU memory: status bar, hints, hover, the warning and its quick fix, the GPU setting',
  { timeout: 300_000 },
  async () => {
    try {
      await page.keyboard.press('Control+P');
      await page.keyboard.type('gpu.yaml');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'gpu.yaml' }).first().waitFor();
      await page.keyboard.press('Enter');

      // The default card, beside the release.
      await gpuItem('H100-80G').waitFor({ timeout: 60_000 });
      await page.locator('.statusbar-item', { hasText: 'Trinity main' }).waitFor({ timeout: 60_000 });

      // The hints at the end of `trainer:` and `  rollout_model:`.
      await line('trainer:')
        .filter({ hasText: /actor\s≈\s\d+\.\d\sGiB\sof\s79\.1\speak,\s\d+\s%/ })
        .waitFor({ timeout: 60_000 });
      assert.match((await line('trainer:').textContent()) ?? '', /critic\s≈\s\d+\.\d\sGiB\sof\s79\.1\speak,\s\d+\s%$/);
      await line('  rollout_model:')
        .filter({ hasText: /vLLM:\sweights\s14\.2\sGiB\/GPU.*KV\s≤\s\d+\.\d\sGiB.*≤\s\d+\s×\s8192-token\sseqs/ })
        .waitFor({ timeout: 30_000 });

      // Trinity's warning in the Problems panel, at trainer.
      await page.keyboard.press('Control+Shift+M');
      const warning = page.locator('.markers-panel .monaco-tl-contents', { hasText: "above Trinity's limit of 80 %" });
      await warning.first().waitFor({ timeout: 60_000 });
      assert.match(
        (await warning.first().textContent()) ?? '',
        /actor ≈ \d+\.\d GiB of 79\.1 peak, \d+ % \(H100-80G\)/,
      );

      // The hover's term-by-term breakdown, in each theme.
      for (const [name, theme, css] of THEMES) {
        if (name !== 'light') {
          await command('Preferences: Color Theme');
          await pick(theme);
        }
        await page.locator(`.monaco-workbench.${css}`).waitFor({ timeout: 30_000 });
        const md = await hoverTrainer();
        for (const term of [
          'weights',
          'optimizer states',
          'gradients',
          'activations',
          'peak',
          'MEMORY OVERUSE WARNING',
        ])
          assert.ok(md.includes(term), `the hover lacks "${term}": ${md}`);
        await vscode.screenshot(`vscode-gpu-memory-${name}`);
      }
      await page.mouse.move(5, 5);

      // The quick fix from Trinity's suggestions: FSDP2's CPU offload; the warning goes.
      await line('trainer:').click({ position: { x: 20, y: 8 } });
      await page.keyboard.press('Control+.');
      const fix = page.locator('.action-widget .monaco-list-row', { hasText: "Turn on FSDP2's CPU offload policy" });
      await fix.waitFor({ timeout: 30_000 });
      for (let i = 0; i < 10 && !/\bfocused\b/.test((await fix.getAttribute('class')) ?? ''); i++)
        await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await line('  offload_policy: true').waitFor({ timeout: 30_000 });
      await warning.first().waitFor({ state: 'detached', timeout: 60_000 });
      await page.keyboard.press('Control+S');
      await until(
        'the fix saved',
        () => readFileSync(join(vscode.workspace, 'gpu.yaml'), 'utf8').includes('\n  offload_policy: true\n'),
        10_000,
      );

      // Another card from the status bar item, then a GiB number: the status bar and the hint follow, no reload.
      await gpuItem('H100-80G').click();
      await pick('H200-141G');
      await gpuItem('H200-141G').waitFor({ timeout: 30_000 });
      await line('trainer:')
        .filter({ hasText: /of\s139\.8\speak/ })
        .waitFor({ timeout: 30_000 });
      await command('Trinity: Select GPU for Memory Estimates');
      await pick('Other…');
      await page.locator('.quick-input-box input').waitFor({ timeout: 30_000 });
      await page.keyboard.type('40');
      await page.keyboard.press('Enter');
      await gpuItem('40 GiB').waitFor({ timeout: 30_000 });
      await line('trainer:')
        .filter({ hasText: /of\s40\.0\speak/ })
        .waitFor({ timeout: 30_000 });
      const written = JSON.parse(readFileSync(join(vscode.workspace, '.vscode', 'settings.json'), 'utf8')) as object;
      assert.deepEqual(written, { 'trinityWorkbench.gpu': 40 });
    } catch (e) {
      await vscode.screenshot('vscode-gpu-memory-failure');
      throw e;
    }
  },
);
