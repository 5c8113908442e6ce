/**
 * The dashboard's chart controls in Debian's Chromium (real HTML, CSP and bundle; stubbed `acquireVsCodeApi`):
 * the wall-time axis, ignore outliers, tooltips with every run, and what they draw read back from Chart.js.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { exportBytes, pngSize, writeExport } from '../../client/dashboard/export-file';
import { parseWebviewMessage, type Series } from '../../client/dashboard/messages';
import { choose, controlValue, DashboardPage, ROOT, THEMES, typeInto, type ThemeName } from './harness';
import { scalarsCsv } from '../../runtime/metrics/csv';

/** The run started at 2026-12-01 10:00:00 UTC (seconds since the epoch). */
const STARTED_AT = 1_796_119_200;
const TAG = 'critic/score/mean';
const TRAINER = Array.from({ length: 19 }, (_, i) => i + 1).concat([1000]);
const EXPLORER = [-500, 3, 4];
const INIT: Series[] = [
  {
    run: 'trainer',
    tag: TAG,
    steps: TRAINER.map((_, i) => i + 1),
    times: TRAINER.map((_, i) => 10 * (i + 1)),
    values: TRAINER,
  },
  { run: 'explorer', tag: TAG, steps: [2, 4, 7], times: [5, 25, 65], values: EXPLORER },
  { run: 'trainer', tag: 'actor/kl_loss', steps: [1, 2, 3], times: [10, 20, 30], values: [0.9, 0.5, 0.7] },
  { run: 'trainer', tag: 'actor/entropy', steps: [1, 2, 3], times: [10, 20, 30], values: [2.1, 2.0, 1.8] },
];
const INIT_MESSAGE = {
  type: 'init',
  run: { key: '/jobs/c', title: 'controls', jobDir: '/jobs/c', status: 'running', startedAt: STARTED_AT },
  series: INIT,
} as const;

/** Float64 references written out again here (not imported from media/), so that the tests can fail. */
function ema(values: number[], w: number): number[] {
  let last = 0;
  return values.map((y, i) => {
    last = last * w + (1 - w) * y;
    return last / (1 - w ** (i + 1));
  });
}
function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  return s[Math.floor(h)] + (s[Math.ceil(h)] - s[Math.floor(h)]) * (h - Math.floor(h));
}
const clock = (t: number) => {
  const d = new Date(t * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
};

let d: DashboardPage;

before(async () => {
  d = await DashboardPage.open();
  await d.setTheme('dark');
  await d.post(INIT_MESSAGE);
  await d.frames();
});

after(async () => {
  await d?.close();
});

describe('the dashboard chart controls', () => {
  test('x axis: step, relative time, and wall time (the run’s start plus the relative time; clock ticks)', async () => {
    let c = await d.chart(TAG);
    assert.deepEqual(c.datasets.find((s) => s.run === 'trainer' && s.raw)!.x, INIT[0].steps);
    assert.equal(c.x.title, 'step');
    await choose(d.page, '#x-axis', 'Wall time');
    await d.frames();
    c = await d.chart(TAG);
    assert.deepEqual(
      c.datasets.find((s) => s.run === 'trainer' && s.raw)!.x,
      INIT[0].times.map((t) => STARTED_AT + t),
    );
    assert.deepEqual(
      c.datasets.find((s) => s.run === 'explorer' && s.raw)!.x,
      [5, 25, 65].map((t) => STARTED_AT + t),
    );
    assert.equal(c.x.title, 'wall time');
    const ticks: { value: number; label: string }[] = await d.page.evaluate(
      (t) => (globalThis as any).__charts.get(t).scales.x.ticks.map((k: any) => ({ value: k.value, label: k.label })),
      TAG,
    );
    assert.ok(ticks.length >= 2);
    for (const k of ticks) assert.equal(k.label, clock(k.value), `tick at ${k.value}`);
    assert.ok(c.x.min >= STARTED_AT && c.x.max <= STARTED_AT + 200 + 60, `x extent ${c.x.min}..${c.x.max}`);
    await choose(d.page, '#x-axis', 'Relative time');
    await d.frames();
    c = await d.chart(TAG);
    assert.deepEqual(c.datasets.find((s) => s.run === 'trainer' && s.raw)!.x, INIT[0].times);
    assert.equal(c.x.title, 'relative time');
    assert.equal((await d.state()).settings.xAxis, 'relative');
    await choose(d.page, '#x-axis', 'Step');
    await d.frames();
  });

  test('ignore outliers: y runs from the 5th to the 95th percentile of the values in view, and back when off', async () => {
    let c = await d.chart(TAG);
    assert.ok(c.y.max >= 1000 && c.y.min <= -500, `own extent ${c.y.min}..${c.y.max}`);
    await d.page.click('#ignore-outliers');
    await d.frames();
    c = await d.chart(TAG);
    const all = [...TRAINER, ...EXPLORER];
    const lo = quantile(all, 0.05);
    const hi = quantile(all, 0.95);
    assert.ok(
      Math.abs(c.y.min - lo) <= 1e-12 && Math.abs(c.y.max - hi) <= 1e-12,
      `${c.y.min}..${c.y.max} vs ${lo}..${hi}`,
    );
    // Outliers really are left out: the extent is inside both of them.
    assert.ok(c.y.min > -500 && c.y.max < 1000);
    assert.equal((await d.state()).settings.ignoreOutliers, true);
    assert.equal(await controlValue(d.page, '#ignore-outliers'), true);
    await d.page.click('#ignore-outliers');
    await d.frames();
    c = await d.chart(TAG);
    assert.ok(c.y.max >= 1000 && c.y.min <= -500);
  });

  test('the tooltip lists every run at the hovered x with its smoothed and raw value', async () => {
    const at = await d.pixelOf(TAG, 5);
    await d.page.mouse.move(at.x, at.y);
    await d.frames();
    const tip: { title: string[]; lines: string[]; opacity: number } = await d.page.evaluate((t) => {
      const tt = (globalThis as any).__charts.get(t).tooltip;
      return { title: tt.title, lines: tt.body.flatMap((b: any) => b.lines), opacity: tt.opacity };
    }, TAG);
    const trainer = ema(TRAINER, 0.6)[4];
    const explorer = ema(EXPLORER, 0.6)[1];
    const fmt = (v: number) => String(Number(v.toPrecision(5)));
    assert.deepEqual(tip.title, ['step 5']);
    assert.deepEqual(
      tip.lines.sort(),
      [`explorer @ 4: ${fmt(explorer)} (raw 3)`, `trainer: ${fmt(trainer)} (raw 5)`].sort(),
    );
    assert.ok(tip.opacity > 0, 'the tooltip is shown');
    await d.page.screenshot({
      path: join(ROOT, 'test-results', 'dashboard-tooltip.png'),
      clip: { x: at.x - 200, y: at.y - 120, width: 420, height: 260 },
    });
    await d.page.mouse.move(1, 1);
  });

  test('drag-zoom on x: the dragged range is shown (the outlier extent follows it); double-click and Reset show all again', async () => {
    const full = (await d.chart(TAG)).x;
    const from = await d.pixelOf(TAG, 4.5);
    const to = await d.pixelOf(TAG, 12.5);
    await d.page.mouse.move(from.x, from.y);
    await d.page.mouse.down();
    await d.page.mouse.move((from.x + to.x) / 2, from.y, { steps: 3 });
    await d.page.screenshot({
      path: join(ROOT, 'test-results', 'dashboard-drag-zoom.png'),
      clip: { x: from.x - 80, y: from.y - 110, width: 400, height: 230 },
    });
    await d.page.mouse.move(to.x, to.y, { steps: 3 });
    await d.page.mouse.up();
    await d.frames();
    let c = await d.chart(TAG);
    // One CSS pixel of this card is about 0.06 steps.
    const tol = (full.max - full.min) / 200;
    assert.ok(Math.abs(c.x.min - 4.5) < tol && Math.abs(c.x.max - 12.5) < tol, `zoomed to ${c.x.min}..${c.x.max}`);
    assert.equal(await d.page.isVisible(`.card[data-tag="${TAG}"] .reset-zoom`), true);
    // Ignore outliers now counts only the points in view: trainer steps 5..12 and the explorer's step 7.
    await d.page.click('#ignore-outliers');
    await d.frames();
    c = await d.chart(TAG);
    const inView = [5, 6, 7, 8, 9, 10, 11, 12, 4];
    assert.ok(
      Math.abs(c.y.min - quantile(inView, 0.05)) < 1e-12 && Math.abs(c.y.max - quantile(inView, 0.95)) < 1e-12,
      `${c.y.min}..${c.y.max}`,
    );
    // A click (no drag) does not zoom.
    const mid = await d.pixelOf(TAG, 8);
    await d.page.mouse.click(mid.x, mid.y);
    assert.ok(Math.abs((await d.chart(TAG)).x.min - 4.5) < tol);
    await d.page.mouse.dblclick(mid.x, mid.y);
    await d.frames();
    c = await d.chart(TAG);
    assert.deepEqual([c.x.min, c.x.max], [full.min, full.max]);
    assert.equal(await d.page.isHidden(`.card[data-tag="${TAG}"] .reset-zoom`), true);
    // Zoom again, and Reset.
    await d.page.mouse.move(from.x, from.y);
    await d.page.mouse.down();
    await d.page.mouse.move(to.x, to.y, { steps: 4 });
    await d.page.mouse.up();
    assert.ok((await d.chart(TAG)).x.max < full.max);
    await d.page.click(`.card[data-tag="${TAG}"] .reset-zoom`);
    await d.frames();
    c = await d.chart(TAG);
    assert.deepEqual([c.x.min, c.x.max], [full.min, full.max]);
    await d.page.click('#ignore-outliers');
    await d.page.mouse.move(1, 1);
  });

  test('collapsed groups and pinned or unpinned cards are kept in the webview state and restored by a reload', async () => {
    const layout = () =>
      d.page.$$eval('section.group:not([hidden])', (els) =>
        els.map((e: any) => ({
          group: e.dataset.group,
          collapsed: e.querySelector('.cards').hidden,
          expanded: e.querySelector('.group-toggle').getAttribute('aria-expanded'),
          tags: [...e.querySelectorAll('.card')].map((c: any) => c.dataset.tag),
        })),
      );
    assert.deepEqual(await layout(), [
      { group: 'pinned', collapsed: false, expanded: 'true', tags: [TAG] },
      { group: 'actor', collapsed: false, expanded: 'true', tags: ['actor/entropy', 'actor/kl_loss'] },
    ]);
    await d.page.click(`.card[data-tag="actor/kl_loss"] .pin`);
    await d.page.click(`.card[data-tag="${TAG}"] .pin`);
    await d.page.click('section[data-group="actor"] .group-toggle');
    const changed = [
      { group: 'pinned', collapsed: false, expanded: 'true', tags: ['actor/kl_loss'] },
      { group: 'critic', collapsed: false, expanded: 'true', tags: [TAG] },
      { group: 'actor', collapsed: true, expanded: 'false', tags: ['actor/entropy'] },
    ];
    assert.deepEqual(await layout(), changed);
    assert.equal(await d.page.isHidden('.card[data-tag="actor/entropy"]'), true, 'a collapsed group hides its cards');
    assert.deepEqual((await d.state()).layout, { collapsed: ['actor'], pins: { 'actor/kl_loss': true, [TAG]: false } });

    // VS Code reloads the webview with its saved state; the host sends init again on ready.
    await d.reload();
    await d.setTheme('dark');
    await d.post(INIT_MESSAGE);
    await d.frames();
    assert.deepEqual(await layout(), changed);
    assert.equal(await d.page.getAttribute('.card[data-tag="actor/kl_loss"] .pin', 'aria-pressed'), 'true');

    // Back to the defaults (no overrides kept) for the tests after this one.
    await d.page.click('section[data-group="actor"] .group-toggle');
    await d.page.click(`.card[data-tag="actor/kl_loss"] .pin`);
    await d.page.click(`.card[data-tag="${TAG}"] .pin`);
    assert.deepEqual((await d.state()).layout, { collapsed: [], pins: {} });
  });

  test('export CSV and PNG per card: the posted message holds the rows and a PNG of the canvas’ size; the extension’s writer saves them', async () => {
    const before = (await d.posted()).length;
    await d.page.click(`.card[data-tag="${TAG}"] .csv`);
    await d.page.click(`.card[data-tag="${TAG}"] .png`);
    const [csv, png] = (await d.posted()).slice(before);
    assert.equal(csv.type, 'export');
    assert.equal(csv.format, 'csv');
    assert.equal(csv.fileName, 'critic_score_mean.csv');
    const expected = ['run,tag,step,wall_time,value'];
    for (const s of INIT.filter((x) => x.tag === TAG))
      s.steps.forEach((step, i) => expected.push(`${s.run},${TAG},${step},${STARTED_AT + s.times[i]},${s.values[i]}`));
    assert.deepEqual(scalarsCsv(csv.rows).trimEnd().split('\n'), expected);

    assert.equal(png.format, 'png');
    assert.equal(png.fileName, 'critic_score_mean.png');
    const canvas = await d.page.$eval(`.card[data-tag="${TAG}"] canvas`, (c: any) => ({
      width: c.width,
      height: c.height,
      cssWidth: c.getBoundingClientRect().width,
    }));
    assert.ok(canvas.width > 100 && canvas.height > 100);
    // What the extension receives is validated and decoded there.
    const pngMessage = parseWebviewMessage(png);
    assert.ok(pngMessage?.type === 'export');
    const bytes = exportBytes(pngMessage);
    assert.deepEqual(pngSize(bytes), { width: canvas.width, height: canvas.height });
    const dir = mkdtempSync(join(tmpdir(), 'dash-export-'));
    const csvMessage = parseWebviewMessage(csv);
    assert.ok(csvMessage?.type === 'export');
    writeExport(join(dir, csvMessage.fileName), csvMessage);
    writeExport(join(dir, pngMessage.fileName), pngMessage);
    assert.equal(readFileSync(join(dir, 'critic_score_mean.csv'), 'utf8'), `${expected.join('\n')}\n`);
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'critic_score_mean.png'))), bytes);
    // The PNG is the chart, not a blank: Chromium decodes it and it has the card's background and other colours.
    const colours: number = await d.page.evaluate(async (url: string) => {
      const g = globalThis as any;
      const img = new g.Image();
      img.src = url;
      await img.decode();
      const c = g.document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set<number>();
      for (let i = 0; i < px.length; i += 4) seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
      return seen.size;
    }, png.data);
    assert.ok(colours > 10, `${colours} colours`);
  });

  test('timeline marks: weight syncs (model version changes, with their lag) and checkpoints as vertical lines on every card, on each x axis', async () => {
    const versions = [0, 0, 1, 2, 2, 4, 4, 6];
    const exTimes = versions.map((_, i) => 5 + 10 * i);
    await d.post({
      ...INIT_MESSAGE,
      series: [
        ...INIT,
        {
          run: 'explorer',
          tag: 'rollout/model_version',
          steps: [1, 2, 3, 4, 5, 6, 7, 8],
          times: exTimes,
          values: versions,
        },
      ],
    });
    await d.post({
      type: 'checkpoints',
      checkpoints: [
        { step: 4, name: 'global_step_4' },
        { step: 8, name: 'global_step_8' },
      ],
    });
    // Malformed: dropped, the marks stay.
    await d.post({ type: 'checkpoints', checkpoints: [{ step: 'nine', name: 'x' }] });
    await d.frames();
    const drawn = async (tag: string) => {
      const marks: { kind: string; x: number; label: string }[] = await d.page.evaluate(
        (t) => (globalThis as any).__charts.get(t).$timelineMarks,
        tag,
      );
      return marks.map((m) => `${m.kind} ${m.x} ${m.label}`).sort();
    };
    const expected = (x: (kind: string, step: number) => number) =>
      [
        ['sync', 3, 'v1 (lag 2)'],
        ['sync', 4, 'v2 (lag 2)'],
        ['sync', 6, 'v4 (lag 2)'],
        ['sync', 8, 'v6 (lag 2)'],
        ['checkpoint', 4, 'ckpt 4'],
        ['checkpoint', 8, 'ckpt 8'],
      ]
        .map(([k, step, label]) => `${k} ${x(k as string, step as number)} ${label}`)
        .sort();
    assert.deepEqual(
      await drawn(TAG),
      expected((_, step) => step),
    );
    // The syncs at the explorer's times, the checkpoints at the trainer's (trainer step n logged at 10·n s).
    const time = (k: string, step: number) => (k === 'sync' ? exTimes[step - 1] : 10 * step);
    await choose(d.page, '#x-axis', 'Relative time');
    await d.frames();
    assert.deepEqual(await drawn(TAG), expected(time));
    await choose(d.page, '#x-axis', 'Wall time');
    await d.frames();
    assert.deepEqual(
      await drawn(TAG),
      expected((k, step) => STARTED_AT + time(k, step)),
    );
    await choose(d.page, '#x-axis', 'Step');
    await d.frames();
    // A card whose x range ends at step 3 draws only the marks inside it.
    assert.deepEqual(await drawn('actor/kl_loss'), ['sync 3 v1 (lag 2)']);
    // The line is on the canvas: the column at the v4 sync (step 6) is painted in far more rows than its neighbour.
    const painted: number[] = await d.page.evaluate((t) => {
      const c = (globalThis as any).__charts.get(t);
      const ratio = c.canvas.width / c.canvas.getBoundingClientRect().width;
      const ctx = c.canvas.getContext('2d');
      const at = Math.round(c.scales.x.getPixelForValue(6)) + 0.5;
      // One read (several make Chromium warn), then the mark's column and one 4 CSS pixels right of it.
      const x = Math.round(at * ratio);
      const w = Math.round(4 * ratio) + 1;
      const top = Math.round(c.chartArea.top * ratio) + 30;
      const h = Math.round((c.chartArea.bottom - c.chartArea.top) * ratio) - 40;
      const px = ctx.getImageData(x, top, w, h).data;
      const out = [0, 0];
      for (let row = 0; row < h; row++) {
        if (px[row * w * 4 + 3] > 40) out[0]++;
        if (px[(row * w + w - 1) * 4 + 3] > 40) out[1]++;
      }
      return out;
    }, TAG);
    assert.ok(
      painted[0] > 40 && painted[0] > 4 * painted[1],
      `painted rows ${painted[0]} at the mark vs ${painted[1]} beside it`,
    );
  });

  test('screenshots of the controls in light, dark and high-contrast themes; no console errors, no CSP violations', async () => {
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await d.page.mouse.move(1, 1);
    for (const name of Object.keys(THEMES) as ThemeName[]) {
      await d.setTheme(name);
      await d.page.screenshot({
        path: join(ROOT, 'test-results', `dashboard-controls-${name}.png`),
        clip: { x: 0, y: 0, width: 1200, height: 520 },
      });
      // The x axis list open, the pointer on its second option, and the log-y box checked.
      await d.page.click('#log-y');
      await d.page.click('#x-axis');
      await d.page.hover('#x-axis li[role="option"]:nth-child(2)');
      await d.page.screenshot({
        path: join(ROOT, 'test-results', `dashboard-controls-open-${name}.png`),
        clip: { x: 0, y: 0, width: 900, height: 160 },
      });
      await d.page.keyboard.press('Escape');
      await d.page.click('#log-y');
      await d.page.mouse.move(1, 1);
    }
    assert.deepEqual(d.problems, []);
    assert.deepEqual(await d.page.evaluate(() => (globalThis as any).__csp), []);
  });

  test('every control is reached with Tab and shows the theme’s focus colour; the tabs switch from the keyboard', async () => {
    await d.setTheme('light');
    const focusBorder = 'rgb(0, 144, 241)'; // THEMES.light focusBorder #0090f1
    // What a focused control draws its focus in: an outline, or (text field, select) the border.
    const ring = () =>
      d.page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        const part: Record<string, [string, string]> = {
          'vscode-tab-header': ['.wrapper', 'outline'],
          'vscode-textfield': ['.root', 'border'],
          'vscode-single-select': ['.select-face', 'border'],
          'vscode-checkbox': ['.icon', 'outline'],
          'vscode-button': ['.base', 'outline'],
        };
        const [sel, kind] = part[el.localName] ?? ['', 'outline'];
        const target = sel ? el.shadowRoot.querySelector(sel) : el;
        const cs = (globalThis as any).getComputedStyle(target);
        const colour = kind === 'border' ? cs.borderTopColor : cs.outlineStyle === 'none' ? 'none' : cs.outlineColor;
        // vscode-tabs numbers its headers' and panels' ids itself: those are named by their tab.
        const name = el.dataset.tab
          ? `${el.localName}:${el.dataset.tab}`
          : el.id || `${el.localName}${el.classList.contains('pin') ? ':pin' : ''}`;
        return { name, colour };
      });
    // From the tab shown (reached with the keyboard: Shift+Tab back from the filter over the tab panel), onwards.
    await d.page.focus('#filter');
    await d.page.keyboard.press('Shift+Tab');
    await d.page.keyboard.press('Shift+Tab');
    const stops = [await ring()];
    for (let i = 0; i < 12; i++) {
      await d.page.keyboard.press('Tab');
      stops.push(await ring());
    }
    const names = stops.map((s) => s.name);
    const order = ['vscode-tab-header:charts', 'filter', 'smoothing', 'x-axis', 'log-y', 'ignore-outliers'];
    let at = -1;
    for (const name of order) {
      const i = names.indexOf(name);
      assert.ok(i > at, `${name} comes next with Tab: ${names.join(', ')}`);
      at = i;
    }
    assert.ok(names.includes('vscode-button:pin'), `a card's Pin button is reached: ${names.join(', ')}`);
    for (const s of stops.filter((x) => [...order, 'vscode-button:pin'].includes(x.name)))
      assert.equal(s.colour, focusBorder, `${s.name} shows the focus colour`);
    // Not focused, the text field's border is the input border, not the focus colour.
    await d.page.focus('#log-y');
    assert.notEqual(
      await d.page.$eval(
        '#filter',
        (el: any) => (globalThis as any).getComputedStyle(el.shadowRoot.querySelector('.root')).borderTopColor,
      ),
      focusBorder,
    );

    // The tab strip: arrows move between the headers, Enter or Space shows the tab.
    const shown = () =>
      d.page.$$eval('vscode-tab-panel', (els) => els.filter((e: any) => !e.hidden).map((e: any) => e.dataset.tab));
    await d.page.focus('vscode-tab-header[data-tab="charts"]');
    await d.page.keyboard.press('ArrowRight');
    assert.equal((await ring()).name, 'vscode-tab-header:rollouts');
    await d.page.keyboard.press('Enter');
    assert.deepEqual(await shown(), ['rollouts']);
    await d.page.keyboard.press('ArrowRight');
    await d.page.keyboard.press('Space');
    assert.deepEqual(await shown(), ['config']);
    assert.equal((await d.state()).tab, 'config');
    await d.page.keyboard.press('ArrowLeft');
    await d.page.keyboard.press('ArrowLeft');
    assert.equal((await ring()).name, 'vscode-tab-header:charts');
    await d.page.keyboard.press('Enter');
    assert.deepEqual(await shown(), ['charts']);
    assert.equal((await d.state()).tab, 'charts');
    await d.setTheme('dark');
  });

  test('the controls’ settings are kept in the webview state and a reload restores them, controls and charts alike', async () => {
    await d.page.focus('#smoothing');
    for (let i = 0; i < 10; i++) await d.page.keyboard.press('ArrowLeft');
    await choose(d.page, '#x-axis', 'Relative time');
    await d.page.click('#log-y');
    await d.page.click('#ignore-outliers');
    await typeInto(d.page, '#filter', 'actor/');
    await d.frames();
    assert.deepEqual((await d.state()).settings, {
      smoothing: 0.5,
      xAxis: 'relative',
      logY: true,
      ignoreOutliers: true,
    });
    assert.equal((await d.state()).filter, 'actor/');

    await d.reload();
    await d.setTheme('dark');
    await d.post(INIT_MESSAGE);
    await d.frames();
    assert.equal(await d.page.inputValue('#smoothing'), '0.5');
    assert.equal(await d.page.textContent('#smoothing-value'), '0.50');
    assert.equal(await controlValue(d.page, '#x-axis'), 'relative');
    assert.equal(
      await d.page.$eval('#x-axis', (el: any) => el.shadowRoot.querySelector('.select-face').textContent.trim()),
      'Relative time',
    );
    assert.equal(await controlValue(d.page, '#log-y'), true);
    assert.equal(await controlValue(d.page, '#ignore-outliers'), true);
    assert.equal(await controlValue(d.page, '#filter'), 'actor/');
    // The charts are drawn with them: relative time, smoothed at 0.5, log y, only the actor cards shown.
    const c = await d.chart('actor/kl_loss');
    assert.deepEqual(c.datasets.find((s) => s.raw)!.x, [10, 20, 30]);
    assert.deepEqual(c.datasets.find((s) => !s.raw)!.y, ema([0.9, 0.5, 0.7], 0.5));
    assert.equal(c.y.type, 'logarithmic');
    assert.equal(c.x.title, 'relative time');
    assert.deepEqual(await d.page.$$eval('.card:not([hidden])', (els) => els.map((e: any) => e.dataset.tag)), [
      'actor/entropy',
      'actor/kl_loss',
    ]);

    // Back to the defaults for the tests after this one.
    await d.page.focus('#smoothing');
    for (let i = 0; i < 10; i++) await d.page.keyboard.press('ArrowRight');
    await choose(d.page, '#x-axis', 'Step');
    await d.page.click('#log-y');
    await d.page.click('#ignore-outliers');
    await typeInto(d.page, '#filter', '');
    assert.deepEqual((await d.state()).settings, { smoothing: 0.6, xAxis: 'step', logY: false, ignoreOutliers: false });
  });

  test('a sync every step over a long run: the syncs become ticks along the top, the plot stays clear', async () => {
    const steps = Array.from({ length: 300 }, (_, i) => i + 1);
    await d.post({
      type: 'init',
      run: { key: '/jobs/dense', title: 'dense', jobDir: '/jobs/dense', status: 'running', startedAt: STARTED_AT },
      series: [
        { run: 'trainer', tag: TAG, steps, times: steps, values: steps.map((k) => Math.sin(k / 9)) },
        {
          run: 'explorer',
          tag: 'rollout/model_version',
          steps,
          times: steps,
          values: steps.map((k) => Math.max(0, k - 1)),
        },
      ],
    });
    await d.frames();
    const marks: unknown[] = await d.page.evaluate((t) => (globalThis as any).__charts.get(t).$timelineMarks, TAG);
    assert.ok(marks.length > 250, `${marks.length} marks`);
    // The column at a sync in the middle: painted in its top rows (the tick), not down the plot.
    const painted: { tick: number; below: number; rows: number } = await d.page.evaluate((t) => {
      const c = (globalThis as any).__charts.get(t);
      const ratio = c.canvas.width / c.canvas.getBoundingClientRect().width;
      const x = Math.round((Math.round(c.scales.x.getPixelForValue(150)) + 0.5) * ratio);
      const top = Math.round(c.chartArea.top * ratio);
      const h = Math.round((c.chartArea.bottom - c.chartArea.top) * ratio);
      const px = c.canvas.getContext('2d').getImageData(x, top, 1, h).data;
      let tick = 0;
      let below = 0;
      for (let row = 0; row < h; row++) {
        if (px[row * 4 + 3] <= 40) continue;
        if (row < 4 * ratio) tick++;
        else if (row > h * 0.3) below++;
      }
      return { tick, below, rows: h };
    }, TAG);
    assert.ok(painted.tick > 0, `the tick: ${JSON.stringify(painted)}`);
    // Only the data lines may cross the column below the labels (measured: about 17 of 142 rows; a full-height
    // dotted line paints about 80).
    assert.ok(painted.below < painted.rows * 0.25, `the plot: ${JSON.stringify(painted)}`);
    await d.page.screenshot({
      path: join(ROOT, 'test-results', 'dashboard-dense-syncs.png'),
      clip: { x: 0, y: 0, width: 1200, height: 420 },
    });
    assert.deepEqual(d.problems, []);
  });
  test('a 20 000-point series zoomed to a narrow x range is drawn point by point (full detail); reset decimates it again', async () => {
    const steps = Array.from({ length: 20_000 }, (_, i) => i + 1);
    const values = steps.map((k) => Math.sin(k / 300) + 0.3 * Math.sin(k * 1.7));
    await d.post({
      type: 'init',
      run: { key: '/jobs/long', title: 'long', jobDir: '/jobs/long', status: 'running', startedAt: STARTED_AT },
      series: [{ run: 'trainer', tag: TAG, steps, times: steps, values }],
    });
    await d.frames();
    await d.page.locator(`.card[data-tag="${TAG}"]`).scrollIntoViewIfNeeded();
    const drawnOf = () =>
      d.page.evaluate((t) => {
        const c = (globalThis as any).__charts.get(t);
        const raw = c.data.datasets.find((ds: any) => ds.raw);
        return { width: c.width, x: raw.data.map((p: any) => p.x), min: c.scales.x.min, max: c.scales.x.max };
      }, TAG);
    const whole = await drawnOf();
    assert.ok(whole.x.length <= 2 * whole.width + 2, `${whole.x.length} points drawn of 20 000`);
    const from = await d.pixelOf(TAG, 9000);
    const to = await d.pixelOf(TAG, 9400);
    await d.page.mouse.move(from.x, from.y);
    await d.page.mouse.down();
    await d.page.mouse.move(to.x, to.y, { steps: 4 });
    await d.page.mouse.up();
    await d.frames();
    const zoomed = await drawnOf();
    assert.ok(zoomed.max - zoomed.min < 600, `zoomed to ${zoomed.min}..${zoomed.max}`);
    // Every step in view, and the one either side (the line runs to the plot's edges).
    const first = Math.ceil(zoomed.min) - 1;
    const last = Math.floor(zoomed.max) + 1;
    assert.deepEqual(
      zoomed.x,
      steps.filter((k) => k >= first && k <= last),
    );
    await d.page.click(`.card[data-tag="${TAG}"] .reset-zoom`);
    await d.frames();
    assert.deepEqual(await drawnOf(), whole);
    assert.deepEqual(d.problems, []);
  });
});
