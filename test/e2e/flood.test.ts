/**
 * A runtime that floods its output, in real VS Code (code-server, the extension installed from the VSIX), issue 30's
 * finding 3 as a user meets it: prompts longer than the model leaves room for (`enable_prompt_truncation: false`),
 * so all but one task of each step fails with a warning, each retried twice: the real runtime prints about 5 000
 * warning lines a second (48 000 in 9 s when run alone). After 60 steps no task fits any more, and the run fails 3
 * steps later with the first task's error. Run is pressed in the editor, with the Output panel open; the run's
 * channel is chosen in the panel's channel list while the flood goes on.
 *
 * The truth is what the runtime writes to its job folder: each explorer step's metrics row with its wall time, and its
 * process (the pid in its run record) exiting. The window's side is sampled in the page itself every 25 ms (the status
 * bar's run item, the notifications, whether the output panel shows the run's last line), each sample stamped with the
 * same clock. Asserted: the status bar shows each step the runtime wrote within 1 s for 9 steps in 10 and within 3 s
 * for every step (see the bound's comment); within 1 s of the process's exit the item is gone and the error
 * notification names the failure; the output channel shows the run's end within 3 s and counts the lines it left out
 * (its filter finds the counts) rather than replaying them. Screenshots (light, dark, high contrast) of the failed run
 * and its output go to test-results/. About 60 s, most of it the workbench's start.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunRecord } from '../../runtime/protocol';
import { startCodeServer, type CodeServerSession } from './code-server';
import { tinyArithmeticModelArgs, until } from './waits';
import { alive } from '../helpers/process';

const CLI = join(resolve(__dirname, '..', '..'), 'dist', 'cli.js');
/** Tasks per step; steps in which one task (the first) fits; steps the run is given. */
const BATCH = 200;
const STEPS_WITH_EXPERIENCE = 60;
const TOTAL_STEPS = 80;
/** The explorer steps without experience after which the runtime fails the run (explore-step.ts). */
const FAILS_AT = STEPS_WITH_EXPERIENCE + 3;

const CONFIG = `# trinity-version: main
project: e2e
name: flood
checkpoint_root_dir: ./checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: 8
  max_model_len: 64
  enable_prompt_truncation: false
cluster:
  node_num: 1
  gpu_per_node: 2
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 2
buffer:
  batch_size: ${BATCH}
  total_steps: ${TOTAL_STEPS}
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
trainer:
  save_interval: 1000
`;

/** A sum per row; each step's first row is a short prompt while steps with experience last, the rest 87 characters. */
function tasks(): string {
  const rows: string[] = [];
  for (let i = 0; i < BATCH * TOTAL_STEPS; i++) {
    const fits = i % BATCH === 0 && i < BATCH * STEPS_WITH_EXPERIENCE;
    const sum = `${i % 10}+${i % 7}`;
    const question = fits ? sum : `${sum} ${'abcdefghij'.repeat(8)}`;
    rows.push(JSON.stringify({ question, answer: String((i % 10) + (i % 7)) }));
  }
  return `${rows.join('\n')}\n`;
}

/** What the page records every 25 ms when it changes: the run's status bar item (or none), the notifications. */
interface Sample {
  at: number;
  item: string | null;
  toasts: string;
  /** Whether the output panel shows the run's last line. */
  outputEnd: boolean;
}

let vscode: CodeServerSession;
let page: Page;

before(async () => {
  vscode = await startCodeServer({
    workspace: { 'flood.trinity.yaml': CONFIG, 'data/train.jsonl': tasks() },
    settings: {
      'workbench.colorTheme': 'Default Light Modern',
      'trinityWorkbench.backend': 'wasm',
      'trinityWorkbench.inlayHints': false,
    },
    startTimeoutMs: 240_000,
  });
  page = vscode.page;
  const made = spawnSync(process.execPath, [CLI, ...tinyArithmeticModelArgs('model'), '--max-positions', '64'], {
    cwd: vscode.workspace,
    encoding: 'utf8',
  });
  assert.equal(made.status, 0, made.stderr);
});

after(async () => {
  await vscode?.close();
});

const jobDir = () => join(vscode.workspace, 'checkpoints', 'e2e', 'flood');
const record = (): RunRecord | undefined => {
  try {
    return JSON.parse(readFileSync(join(jobDir(), 'state', 'run.json'), 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
};

/** Each explorer step's wall time (ms) as the runtime wrote it to monitor/metrics.jsonl. */
function writtenSteps(): Map<number, number> {
  const steps = new Map<number, number>();
  for (const line of readFileSync(join(jobDir(), 'monitor', 'metrics.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as { role: string; step: number; wallTime?: number };
    if (row.role === 'explorer' && row.wallTime !== undefined) steps.set(row.step, row.wallTime * 1000);
  }
  return steps;
}

/**
 * Starts sampling in the page (a timer there, so no round trip stands between a change and its time). A string:
 * tsx's transform would name the functions of a closure with a helper the page does not have.
 */
async function startSampling(): Promise<void> {
  await page.evaluate(`(() => {
    const samples = [];
    window.__floodSamples = samples;
    let last = '';
    const read = () => {
      const item = [...document.querySelectorAll('.statusbar-item')]
        .map((e) => (e.textContent || '').trim())
        .find((t) => /^flood (step|·)|^flood$/.test(t));
      const toasts = [...document.querySelectorAll('.notification-toast')]
        .map((e) => (e.textContent || '').trim())
        .join('\\n');
      const lines = document.querySelector('.part.panel .monaco-editor .view-lines');
      const outputEnd = !!lines && /run\\sfailed:/.test(lines.textContent || '');
      const key = String(item) + '\\u0000' + toasts + outputEnd;
      if (key === last) return;
      last = key;
      samples.push({ at: Date.now(), item: item === undefined ? null : item, toasts, outputEnd });
    };
    read();
    window.__floodTimer = setInterval(read, 25);
    window.__longTasks = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__longTasks.push([Math.round(performance.timeOrigin + e.startTime), Math.round(e.duration)]);
    }).observe({ type: 'longtask', buffered: false });
  })()`);
}

async function stopSampling(): Promise<Sample[]> {
  return (await page.evaluate('clearInterval(window.__floodTimer), window.__floodSamples')) as Sample[];
}

const THEMES = [
  ['light', 'Light Modern', 'vs'],
  ['dark', 'Dark Modern', 'vs-dark'],
  ['hc', 'Dark High Contrast', 'hc-black'],
] as const;

/**
 * Runs a palette command, its text entered as one input (a paste): each typed key would filter every command again,
 * hundreds of ms of the window's thread on a loaded machine, which is the palette's cost, not the flood's.
 */
async function palette(title: string, choice?: string): Promise<void> {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget .quick-input-box input:focus').waitFor({ timeout: 30_000 });
  await page.keyboard.insertText(title);
  await choose(title);
  if (!choice) return;
  await page.keyboard.insertText(choice);
  await choose(choice);
}

/** Accepts the quick pick's row whose text starts with `label` (a fuzzy match may come first). */
async function choose(label: string): Promise<void> {
  await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 30_000 });
  const focused = page.locator('.quick-input-list .monaco-list-row.focused');
  for (let i = 0; i < 10 && !((await focused.textContent().catch(() => '')) ?? '').trim().startsWith(label); i++)
    await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
}

test(
  'a runtime printing thousands of warnings a second: the status bar keeps within 1 s of it, the failure shows within 1 s of the exit, the output channel keeps up',
  { timeout: 300_000 },
  async () => {
    const t0 = Date.now();
    try {
      await page.locator('.activitybar .action-item a[aria-label^="Trinity"]').waitFor({ timeout: 60_000 });
      await page.keyboard.press('Control+P');
      await page.keyboard.type('flood.trinity.yaml');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'flood.trinity.yaml' }).first().waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.tab.active', { hasText: 'flood.trinity.yaml' }).waitFor({ timeout: 30_000 });
      // The server has checked it (its release in the status bar), with the model on disk: Run is not refused.
      await page.locator('.statusbar-item', { hasText: /Trinity main/ }).waitFor({ timeout: 60_000 });

      // The Output panel open before the run, so that its channel is one choice away in the panel's channel list.
      await palette('View: Toggle Output');
      await page
        .locator('.part.panel select.monaco-select-box')
        .first()
        .waitFor({ state: 'attached', timeout: 30_000 });
      await startSampling();
      await page.locator('.editor-actions .action-label.codicon-play').click();
      const run = await until('the run record', () => record()?.status === 'running' && record(), 90_000);
      // The process's exit, seen from here every 20 ms while the page is driven.
      let exitedAt: number | undefined;
      let outputShownAt: number | undefined;
      const watch = setInterval(() => {
        if (exitedAt === undefined && !alive(run.pid)) exitedAt = Date.now();
      }, 20);
      try {
        // The flood's own output channel, opened while it floods.
        await page.locator('.statusbar-item', { hasText: /flood step \d/ }).waitFor({ timeout: 30_000 });
        await page
          .locator('.part.panel select.monaco-select-box')
          .first()
          .selectOption({ label: 'Trinity Run: flood' }, { timeout: 30_000 });
        await until(
          'the run in the output panel',
          async () => /\[warning\]/.test((await page.locator('.part.panel .view-lines').textContent()) ?? ''),
          30_000,
        );
        await page.locator('.part.panel .monaco-editor .view-lines').waitFor({ timeout: 30_000 });
        outputShownAt = Date.now();
        await until('the run to end', () => exitedAt, 120_000);
      } finally {
        clearInterval(watch);
      }
      const ended = await until('the run record to say failed', () => record()?.status === 'failed' && record(), 5000);
      const failure = page.locator('.notification-toast', { hasText: 'Trinity: flood failed' });
      await failure.waitFor({ timeout: 5000 });
      await until(
        "the output panel's last line",
        async () => ((await page.evaluate('window.__floodSamples')) as Sample[]).some((s) => s.outputEnd),
        5000,
      ).catch(async (e: Error) => {
        const text = await page.locator('.part.panel .view-lines').allTextContents();
        throw new Error(`${e.message}; the panel showed: ${text.join(' | ').slice(-600)}`);
      });
      const samples = await stopSampling();

      // The status bar: each step the runtime wrote shows (or the run is over and its item gone) within 1 s.
      const written = writtenSteps();
      // A step without experience is logged too, but the one that fails the run ends it before its row.
      assert.equal(written.size, FAILS_AT - 1, `explorer steps written: ${[...written.keys()].join(', ')}`);
      const stepOf = (s: Sample) => Number(/step (\d+)/.exec(s.item ?? '')?.[1] ?? NaN);
      const lags = [...written].map(([step, at]) => {
        const shown = samples.find((s) => stepOf(s) >= step || (s.item === null && s.at > at));
        return { step, lag: (shown?.at ?? Infinity) - at };
      });
      const during = samples.filter((s) => s.item !== null);
      // Before its first step the item names the run (its stage); then its step of all the steps, with the reward.
      for (const s of during)
        assert.match(s.item!, new RegExp(`^flood( step \\d+/${TOTAL_STEPS}( · reward [\\d.]+)?)?$`));
      const shownSteps = new Set(during.map(stepOf)).size;
      const hiddenAt = samples.find((s, i) => i > 0 && s.item === null && samples[i - 1].item !== null)?.at;
      const toastAt = samples.find((s) =>
        /Trinity: flood failed: no experience was made in 3 explorer steps/.test(s.toasts),
      )?.at;
      const outputEndAt = samples.find((s) => s.outputEnd)?.at;
      const runMs = exitedAt! - Date.parse(run.startedAt);
      const worst = lags.reduce((a, b) => (b.lag > a.lag ? b : a));
      const sorted = lags.map((l) => l.lag).sort((a, b) => a - b);
      const figures =
        `${written.size} steps in ${runMs} ms; status bar: ${samples.length} changes, ${shownSteps} distinct steps shown, ` +
        `lag p50 ${sorted[Math.floor(sorted.length / 2)]} / p90 ${sorted[Math.floor(sorted.length * 0.9)]} / max ${worst.lag} ms (step ${worst.step}); ` +
        `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores; ` +
        `item gone ${hiddenAt! - exitedAt!} ms, failure toast ${toastAt! - exitedAt!} ms, output's last line ` +
        `${outputEndAt! - exitedAt!} ms after the exit; ` +
        `output channel shown ${outputShownAt! - Date.parse(run.startedAt)} ms after the start; lags over 500 ms: ` +
        (lags
          .filter((l) => l.lag > 500)
          .map((l) => `step ${l.step} (${Math.round(written.get(l.step)! - Date.parse(run.startedAt))} ms) ${l.lag} ms`)
          .join(', ') || 'none');
      console.log(figures);
      const long = (await page.evaluate('window.__longTasks')) as [number, number][];
      const t00 = Date.parse(run.startedAt);
      console.log(
        `renderer long tasks during the run: ${long
          .filter(([a]) => a >= t00 && a <= exitedAt!)
          .map(([a, d]) => `${a - t00}+${d}`)
          .join(' ')}`,
      );
      assert.ok(during.length > 0 && shownSteps > 5, figures);
      // Within 1 s: 9 steps in 10, and the final state. A single step 1–2.7 s late was seen on the shared machine at
      // load 12–14 on its 2 cores, with the window's thread free (no long task) and the extension's own path from
      // the runtime's stdout to the status bar's text at 50–150 ms in the same load (the client's modules on the
      // same run, outside VS Code): the delay is the starved extension host and code-server's relay to the window.
      // Even there no step was later than 3 s, and the lateness did not grow: no backlog.
      const p90 = sorted[Math.floor(sorted.length * 0.9)];
      assert.ok(p90 < 1000, `90th percentile ${p90} ms: ${figures}`);
      assert.ok(worst.lag < 3000, figures);
      assert.ok(hiddenAt !== undefined && hiddenAt - exitedAt! < 1000, figures);
      assert.ok(toastAt !== undefined && toastAt - exitedAt! < 1000, figures);
      assert.match(ended.error ?? '', /^no experience was made in 3 explorer steps in a row \(up to step 63\)/);

      // The output channel, following the run: its last line says how the run ended, within 3 s of the exit (the
      // window reads a shown channel's new lines from its file, in its own time); the
      // lines the limit left out are counted in it (its filter finds the counts), not queued behind the end.
      assert.ok(outputEndAt !== undefined && outputEndAt - exitedAt! < 3000, figures);
      const output = page.locator('.part.panel .monaco-editor .view-lines');
      const shown = async () => ((await output.textContent()) ?? '').replace(/\u00a0/g, ' ');
      // The warnings in view are the run's last seconds', not a backlog: the limit leaves lines out of each second
      // (counted below), so the last steps' own may be among them; at CI's pace (5 steps a second) ten steps is 2 s.
      const text = await shown();
      const batches = [
        ...text.matchAll(
          /\[warning\] (?:Task execution attempt \d failed \(task \d+ of batch (\d+)\)|task \d+ of batch (\d+) failed after)/g,
        ),
      ].map((m) => Number(m[1] ?? m[2]));
      assert.ok(
        batches.length > 0 && Math.max(...batches) >= FAILS_AT - 10,
        `warnings in view of batches ${[...new Set(batches)].join(', ')}: ${text.slice(-500)}`,
      );
      const filter = page.locator('.part.panel input[placeholder="Filter"]');
      await filter.fill('in that second not shown');
      const counted = await until(
        'the counts of lines left out',
        async () => /more lines of the runtime's messages in that second not shown/.test(await shown()) && shown(),
        10_000,
      );
      assert.match(
        counted,
        /… \d+ more lines of the runtime's messages in that second not shown \(more than 200 a second\)/,
      );
      await filter.fill('');
      await until('the whole output again', async () => /run failed/.test(await shown()), 10_000);

      await failure.hover();
      for (const [name, label, kind] of THEMES) {
        if (!(await page.locator(`.monaco-workbench.${kind}`).count())) {
          await palette('Preferences: Color Theme', label);
          await page.locator(`.monaco-workbench.${kind}`).waitFor({ state: 'attached', timeout: 30_000 });
        }
        await failure.hover();
        await page.waitForTimeout(300);
        await vscode.screenshot(`vscode-flood-failed-${name}`);
      }
    } catch (e) {
      await vscode.screenshot('vscode-flood-failure');
      const seen = (await page.evaluate('window.__floodSamples').catch(() => [])) as Sample[] | undefined;
      console.log(
        `what the page showed:\n${(seen ?? []).map((s) => `${s.at} ${s.item} | ${s.toasts.slice(0, 120)}`).join('\n')}`,
      );
      throw e;
    }
    console.log(`the flood test took ${Math.round((Date.now() - t0) / 1000)} s`);
  },
);
