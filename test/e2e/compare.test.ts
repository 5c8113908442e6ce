/**
 * Comparing runs in real VS Code (code-server, the extension from the VSIX), as a user would: two finished runs on
 * disk (two short SFT runs of the arithmetic data that differ only in learning rate, made by the installed CLI),
 * both selected in the Runs view, Compare Runs from its context menu. The compare panel overlays both runs on each
 * card, one colour per run (read back from the webview's charts and legend), and its Config tab lists the keys that
 * differ with each run's value. A screenshot goes to test-results/.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { startCodeServer, type CodeServerSession } from './code-server';
import { tinyArithmeticModelArgs, until } from './waits';

const ROOT = resolve(__dirname, '..', '..');
const DATA = join(ROOT, 'examples', 'arithmetic', 'data');
const RUNS = [
  { name: 'lr-3e-3', lr: '3e-3' },
  { name: 'lr-1e-2', lr: '1e-2' },
] as const;
const STEPS = 12;

/** A one-stage SFT config on the example's data, short enough to finish in seconds. */
function sftConfig(name: string, lr: string): string {
  return `project: compare-e2e
name: ${name}
mode: train
checkpoint_root_dir: ./checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: 12
  max_model_len: 64
cluster:
  node_num: 1
  gpu_per_node: 1
algorithm:
  algorithm_type: sft
  optimizer:
    lr: ${lr}
buffer:
  total_steps: ${STEPS}
  train_batch_size: 8
  trainer_input:
    experience_buffer:
      name: arithmetic-sft
      storage_type: file
      path: data/sft.jsonl
      format:
        prompt_type: plaintext
        prompt_key: question
        response_key: answer
trainer:
  save_interval: ${STEPS}
`;
}

let vscode: CodeServerSession;
let page: Page;

/** Runs the installed extension's CLI in the workspace; rejects with its output when it fails. */
function cli(args: string[]): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [join(vscode.extensionDir, 'dist', 'cli.js'), ...args], {
      cwd: vscode.workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) ok();
      else fail(new Error(`trinity-workbench ${args.join(' ')} exited ${code ?? sig}:\n${out.slice(-3000)}`));
    });
  });
}

before(async () => {
  const files: Record<string, string> = {};
  for (const r of RUNS) files[`${r.name}.trinity.yaml`] = sftConfig(r.name, r.lr);
  for (const f of readdirSync(DATA)) files[`data/${f}`] = readFileSync(join(DATA, f), 'utf8');
  vscode = await startCodeServer({
    workspace: files,
    settings: { 'trinityWorkbench.backend': 'wasm', 'trinityWorkbench.inlayHints': false },
  });
  page = vscode.page;
  await cli(tinyArithmeticModelArgs('model'));
  // Both at once: each takes a few seconds.
  await Promise.all(RUNS.map((r) => cli(['run', '--config', `${r.name}.trinity.yaml`, '--backend', 'wasm'])));
});

after(async () => {
  await vscode?.close();
});

interface DrawnSet {
  source?: string;
  raw: boolean;
  label: string;
  colour: string;
  points: number;
}

/** The datasets a webview frame's chart of `tag` draws, or undefined when the frame has no such chart. */
async function datasets(frame: Frame, tag: string): Promise<DrawnSet[] | undefined> {
  return frame
    .evaluate((t) => {
      const charts = (
        globalThis as unknown as {
          __charts?: Map<
            string,
            {
              data: {
                datasets: {
                  source?: string;
                  raw: boolean;
                  label: string;
                  borderColor: string;
                  data: unknown[];
                  allPoints?: unknown[];
                }[];
              };
            }
          >;
        }
      ).__charts;
      const chart = charts?.get(t);
      return chart?.data.datasets.map((d) => ({
        source: d.source,
        raw: d.raw,
        label: d.label,
        colour: d.borderColor,
        points: (d.allPoints ?? d.data).length,
      }));
    }, tag)
    .catch(() => undefined);
}

test(
  'two finished runs selected in the Runs view open one compare panel that overlays them',
  { timeout: 300_000 },
  async () => {
    try {
      await compareFromTheRunsView();
    } catch (e) {
      await vscode.screenshot('vscode-compare-failure');
      throw e;
    }
  },
);

async function compareFromTheRunsView(): Promise<void> {
  await page.click('.activitybar .action-item a[aria-label^="Trinity"]');
  const row = (name: string) =>
    page.locator('.pane-body .monaco-list-row', { hasText: name }).filter({ hasText: /finished/ });
  for (const r of RUNS) await row(r.name).waitFor({ timeout: 60_000 });

  // Select both (click, then Ctrl+click), and Compare Runs from the selection's context menu.
  await row(RUNS[0].name).click();
  await row(RUNS[1].name).click({ modifiers: ['Control'] });
  await until(
    'both rows selected',
    async () => (await page.locator('.pane-body .monaco-list-row.selected').count()) === 2,
    10_000,
  );
  // The right-clicked run comes first in the panel (then the rest of the selection).
  await row(RUNS[0].name).click({ button: 'right' });
  // VS Code's menus act on the keyboard's Enter over the item the pointer is on.
  await page.locator('.monaco-menu .action-label', { hasText: 'Compare Runs' }).hover();
  await page.keyboard.press('Enter');
  await page.locator('.tab', { hasText: 'Compare: 2 runs' }).waitFor({ timeout: 30_000 });

  // The compare panel's webview: both runs' loss curves, all their points, on one card.
  const tag = 'actor/sft_loss';
  const [frame, drawn] = await until(
    'both runs drawn on the loss card',
    async () => {
      for (const f of page.frames()) {
        const d = await datasets(f, tag);
        if (d && new Set(d.filter((s) => s.points === STEPS).map((s) => s.source)).size === 2) return [f, d] as const;
      }
      return undefined;
    },
    60_000,
  );
  const smooth = drawn.filter((d) => !d.raw);
  assert.deepEqual(
    smooth.map((d) => d.label),
    RUNS.map((r) => `${r.name}/trainer`),
  );
  assert.equal(new Set(smooth.map((d) => d.colour)).size, 2, `one colour per run: ${smooth.map((d) => d.colour)}`);
  // Each series is its run's (a run's key: its job dir, and `#train` for a train-only run's record).
  assert.deepEqual(
    smooth.map((d) => d.source?.replace(/#\w+$/, '')),
    RUNS.map((r) => join(vscode.workspace, 'checkpoints', 'compare-e2e', r.name)),
  );
  // The same run keeps its colour on every card (drawn in its turn: the draw queue spreads cards over frames).
  const grad = await until(
    'both runs drawn on the grad_norm card',
    async () => {
      const d = (await datasets(frame, 'actor/grad_norm'))?.filter((s) => !s.raw);
      return d && d.length === smooth.length ? d : undefined;
    },
    30_000,
  );
  assert.deepEqual(
    grad.map((d) => d.colour),
    smooth.map((d) => d.colour),
  );

  // The legend: one entry per run, its swatch in that run's colour.
  const legend = await frame.$$eval('#run-legend li', (els) =>
    els.map((e) => [
      e.textContent,
      (e.querySelector('.swatch') as unknown as { style: { borderColor: string } }).style.borderColor,
    ]),
  );
  assert.deepEqual(
    legend.map(([t]) => t),
    RUNS.map((r) => r.name),
  );
  assert.deepEqual(
    legend.map(([, c]) => normaliseColour(c!)),
    smooth.map((d) => normaliseColour(d.colour)),
  );
  await vscode.screenshot('vscode-compare-charts');

  // The Config tab: the keys that differ (learning rate, name), each run's value in its column.
  await frame.getByRole('tab', { name: 'Config' }).click();
  const table = frame.locator('#config-diff-table');
  await table.waitFor({ timeout: 30_000 });
  const rows = await until(
    'the differing keys',
    async () => {
      const r = await table
        .locator('tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())),
        );
      return r.length > 1 ? r : undefined;
    },
    30_000,
  );
  assert.deepEqual(rows[0], ['Key', ...RUNS.map((r) => r.name)]);
  const byKey = new Map(rows.slice(1).map(([k, ...v]) => [k, v]));
  assert.deepEqual(
    byKey.get('name'),
    RUNS.map((r) => r.name),
  );
  assert.deepEqual(
    byKey.get('algorithm.optimizer.lr')?.map(Number),
    RUNS.map((r) => Number(r.lr)),
  );
  assert.equal(byKey.has('algorithm.algorithm_type'), false, 'a key both runs share is not listed');
  await vscode.screenshot('vscode-compare-config');
}

/** `#3794ff` and `rgb(55, 148, 255)` alike, as `r,g,b`. */
function normaliseColour(c: string): string {
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(c.trim());
  if (hex)
    return hex
      .slice(1)
      .map((h) => parseInt(h, 16))
      .join(',');
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(c);
  return rgb ? rgb.slice(1).join(',') : c.trim();
}
