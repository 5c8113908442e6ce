/**
 * The dashboard webview in Debian's Chromium: exactly the HTML and CSP of client/dashboard/html.ts, the bundle
 * `npm run build` made (dist/media), served from a loopback server standing in for the webview's resource origin,
 * with `acquireVsCodeApi` stubbed. Messages are posted as the extension posts them, and what the charts hold is
 * read back from Chart.js.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  applyTheme,
  CHROMIUM_ARGS,
  choose,
  controlValue,
  drawn,
  postToPage,
  ROOT,
  serveDashboard,
  showTab,
  THEMES,
  typeInto,
  watchProblems,
  type ThemeName,
} from './harness';
import type { HostMessage, Series } from '../../client/dashboard/messages';
import { drawnPoints } from '../../media/dashboard/charts/decimation';

// The functions passed to page.evaluate run in Chromium; this file is compiled without the DOM's types.
declare const window: any;
declare const document: any;
type HTMLElement = any;

/** Float64 reference of TensorBoard's debiased EMA, written out again here (not imported) so the test can fail. */
function reference(values: (number | null)[], w: number): (number | null)[] {
  if (values.every((v) => v === values[0])) return values;
  let last = 0;
  let n = 0;
  return values.map((y) => {
    if (y === null) return null;
    last = last * w + (1 - w) * y;
    n += 1;
    return last / (1 - w ** n);
  });
}

function closeTo(actual: (number | null)[], expected: (number | null)[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (e === null) assert.equal(a, null, `${what}[${i}]`);
    else assert.ok(a !== null && Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `${what}[${i}]: ${a} vs ${e}`);
  }
}

let server: Server;
let browser: Browser;
let page: Page;
const problems: string[] = [];

async function post(m: HostMessage | Record<string, unknown>): Promise<void> {
  await postToPage(page, m);
}

/** Waits two animation frames (the webview redraws once a frame). */
async function frames(): Promise<void> {
  await drawn(page);
}

interface Drawn {
  label: string;
  run: string;
  raw: boolean;
  x: number[];
  y: (number | null)[];
  borderColor: string;
}

/** What a tag's chart holds: every dataset's points (the undecimated ones), the y scale's type. */
async function chart(tag: string): Promise<{ datasets: Drawn[]; yType: string; yBuilt: string }> {
  return page.evaluate((t) => {
    const c = (window as any).__charts.get(t);
    if (!c) throw new Error(`no chart for ${t}`);
    return {
      datasets: c.data.datasets.map((d: any) => {
        const pts = d.allPoints ?? d.data;
        return {
          label: d.label,
          run: d.run,
          raw: d.raw,
          x: pts.map((p: any) => p.x),
          y: pts.map((p: any) => p.y),
          borderColor: d.borderColor,
        };
      }),
      yType: c.options.scales.y.type,
      yBuilt: c.scales.y.type,
    };
  }, tag);
}

async function setTheme(name: ThemeName): Promise<void> {
  await applyTheme(page, name);
}

const REWARD = [0.1, 0.25, null, 0.3, 0.42, 0.38, 0.55];
const INIT: Series[] = [
  {
    run: 'trainer',
    tag: 'critic/score/mean',
    steps: [1, 2, 3, 4, 5, 6, 7],
    times: [2, 4, 6, 8, 10, 12, 14],
    values: REWARD,
  },
  { run: 'trainer', tag: 'actor/pg_loss', steps: [1, 2, 3], times: [2, 4, 6], values: [0.9, 0.5, 0.7] },
  { run: 'trainer', tag: 'actor/entropy', steps: [1, 2, 3], times: [2, 4, 6], values: [2, 2, 2] },
  { run: 'explorer', tag: 'rollout/accuracy/mean', steps: [1, 2, 3], times: [1, 3, 5], values: [0.2, 0.4, 0.3] },
  { run: 'explorer', tag: 'eval/math/accuracy/mean@4', steps: [2], times: [4], values: [0.35] },
  { run: 'trainer', tag: 'response_length/mean', steps: [1, 2, 3], times: [2, 4, 6], values: [120, 150, 140] },
  { run: 'explorer', tag: 'time/step', steps: [1, 2, 3], times: [1, 3, 5], values: [1.1, 0.9, 1.0] },
];

before(async () => {
  ({ server } = await serveDashboard());
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  watchProblems(page, problems);
  // A string, not a function: tsx compiles this file with esbuild's keepNames, whose `__name` the page lacks.
  await page.addInitScript(`
    window.__posted = [];
    window.__csp = [];
    window.__state = undefined;
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => window.__posted.push(m),
      getState: () => window.__state,
      setState: (s) => { window.__state = s; },
    });
  `);
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await setTheme('dark');
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => server?.close(ok));
});

describe('the dashboard webview', () => {
  test('says ready, draws the init series as points, one card per tag, reward, loss and eval accuracy pinned first', async () => {
    await page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'ready'));
    await post({
      type: 'init',
      run: { key: '/jobs/a', title: 'grpo · run a', jobDir: '/jobs/a', status: 'running' },
      series: INIT,
    });
    await frames();
    const reward = await chart('critic/score/mean');
    const raw = reward.datasets.find((d) => d.raw)!;
    assert.deepEqual(raw.x, [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(raw.y, REWARD);
    const groups = await page.$$eval('section.group', (els) =>
      els.map((e) => [
        (e as HTMLElement).dataset.group,
        [...e.querySelectorAll('.card')].map((c) => (c as HTMLElement).dataset.tag),
      ]),
    );
    assert.deepEqual(groups, [
      ['pinned', ['critic/score/mean', 'rollout/accuracy/mean', 'actor/pg_loss', 'eval/math/accuracy/mean@4']],
      ['actor', ['actor/entropy']],
      ['response_length', ['response_length/mean']],
      ['time', ['time/step']],
    ]);
    assert.equal(await page.textContent('#run-title'), 'grpo · run a');
    assert.deepEqual(await page.evaluate(() => (window as any).__state?.key), '/jobs/a');
  });

  test('streamed points are appended; the smoothed line is TensorBoard’s debiased EMA (float64, 1e-9)', async () => {
    // Several messages in one frame: all of them land, in order.
    const more = [0.6, Number.NaN, 0.58, 0.71];
    for (let i = 0; i < more.length; i++) {
      const v = more[i];
      await post({
        type: 'append',
        points: [
          {
            run: 'trainer',
            tag: 'critic/score/mean',
            step: 8 + i,
            time: 16 + 2 * i,
            value: Number.isFinite(v) ? v : null,
          },
        ],
      });
    }
    await post({
      type: 'append',
      points: [{ run: 'explorer', tag: 'critic/score/mean', step: 1, time: 1, value: 0.05 }],
    });
    await frames();
    const all = [...REWARD, 0.6, null, 0.58, 0.71];
    const c = await chart('critic/score/mean');
    const trainerRaw = c.datasets.find((d) => d.run === 'trainer' && d.raw)!;
    const trainerSmooth = c.datasets.find((d) => d.run === 'trainer' && !d.raw)!;
    assert.deepEqual(trainerRaw.x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.deepEqual(trainerRaw.y, all);
    closeTo(trainerSmooth.y, reference(all, 0.6), 'smoothed at 0.6');
    assert.ok(
      c.datasets.some((d) => d.run === 'explorer'),
      'a second run gets its own line',
    );
    // A constant series is drawn unsmoothed.
    const entropy = await chart('actor/entropy');
    assert.deepEqual(entropy.datasets.find((d) => !d.raw)!.y, [2, 2, 2]);
  });

  test('the smoothing slider, the x axis and log y change what is drawn as the formulas say (driven from the keyboard)', async () => {
    // The slider moves by its step (0.01) per arrow key: 0.6 -> 0.9.
    await page.focus('#smoothing');
    for (let i = 0; i < 30; i++) await page.keyboard.press('ArrowRight');
    await frames();
    const all = [...REWARD, 0.6, null, 0.58, 0.71];
    let c = await chart('critic/score/mean');
    closeTo(c.datasets.find((d) => d.run === 'trainer' && !d.raw)!.y, reference(all, 0.9), 'smoothed at 0.9');
    assert.equal(await page.textContent('#smoothing-value'), '0.90');

    // The x axis select: Tab from the slider to it, ArrowDown opens its list on the current option (Step), ArrowDown
    // moves to Relative time, Enter picks it.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'x-axis');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await frames();
    assert.equal(await controlValue(page, '#x-axis'), 'relative');
    c = await chart('critic/score/mean');
    assert.deepEqual(c.datasets.find((d) => d.run === 'trainer' && d.raw)!.x, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22]);
    await choose(page, '#x-axis', 'Step');

    assert.equal(c.yBuilt, 'linear');
    // Log y: Tab to the checkbox, Space checks it.
    await page.focus('#x-axis');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'log-y');
    await page.keyboard.press('Space');
    await frames();
    assert.equal(await controlValue(page, '#log-y'), true);
    c = await chart('critic/score/mean');
    assert.equal(c.yType, 'logarithmic');
    assert.equal(c.yBuilt, 'logarithmic');
    await page.click('#log-y');
    await frames();
    assert.equal((await chart('critic/score/mean')).yBuilt, 'linear');
    const state = await page.evaluate(() => (window as any).__state);
    assert.deepEqual(state.settings, { smoothing: 0.9, xAxis: 'step', logY: false, ignoreOutliers: false });
  });

  test('the filter box hides the cards (and groups) whose tag does not match', async () => {
    await typeInto(page, '#filter', '^actor/');
    const visible = await page.$$eval('.card:not([hidden])', (els) => els.map((e) => (e as HTMLElement).dataset.tag));
    // The policy loss is pinned (first), so its group shows too.
    assert.deepEqual(visible, ['actor/pg_loss', 'actor/entropy']);
    assert.equal(await page.isHidden('section.group[data-group="response_length"]'), true);
    await typeInto(page, '#filter', '');
    assert.equal((await page.$$('.card:not([hidden])')).length, INIT.length);
  });

  test('malformed and unknown messages are dropped', async () => {
    const before = (await chart('actor/pg_loss')).datasets[0].y;
    await post({ type: 'append', points: [{ run: 'trainer', tag: 'actor/pg_loss', step: 'four', time: 8, value: 1 }] });
    await post({
      type: 'append',
      points: [{ run: 'trainer', tag: 'actor/pg_loss', step: 4, time: 8, value: 1 }, { tag: 'x' }],
    });
    await post({ type: 'init', run: { key: 'k' }, series: [] });
    await post({ type: 'explode' });
    await frames();
    assert.deepEqual((await chart('actor/pg_loss')).datasets[0].y, before);
    assert.equal(await page.textContent('#run-title'), 'grpo · run a');
  });

  test('rollout text with <script> and <img onerror> shows as text; nothing of it becomes markup', async () => {
    const evil = '<script>alert(1)</script>';
    await post({
      type: 'rollouts',
      step: 12,
      samples: [
        { prompt: evil, response: '<img src=x onerror="alert(2)"> 42', reward: 1 },
        { prompt: 'What is 2+3?', response: '5', reward: null },
      ],
    });
    await showTab(page, 'rollouts');
    const cells = await page.$$eval('#rollouts-table tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    );
    assert.deepEqual(cells, [
      ['1', evil, '<img src=x onerror="alert(2)"> 42'],
      ['n/a', 'What is 2+3?', '5'],
    ]);
    assert.equal(await page.$$eval('#rollouts-table script, #rollouts-table img', (els) => els.length), 0);
    assert.equal(await page.textContent('#rollouts-step'), 'Step 12: 2 samples');
    await showTab(page, 'charts');
  });

  test('each card says which config keys drive it; a click asks the extension to reveal the key', async () => {
    await post({
      type: 'drivers',
      drivers: {
        'response_length/mean': ['model.max_response_tokens'],
        'actor/entropy': ['algorithm.entropy_loss_fn', 'algorithm.entropy_loss_fn_args.entropy_coef'],
        'later/tag': ['buffer.batch_size'],
      },
    });
    // A key that is not a dotted config path drops the whole message.
    await post({ type: 'drivers', drivers: { 'time/step': ['model.x', '<img src=x onerror=alert(1)>'] } });
    await frames();
    const shown = async () =>
      Object.fromEntries(
        await page.$$eval('.card', (cards) =>
          cards.flatMap((c) => {
            const p = c.querySelector('.drivers');
            return p && !p.hidden
              ? [[(c as HTMLElement).dataset.tag, [...p.querySelectorAll('button')].map((b) => b.textContent)]]
              : [];
          }),
        ),
      );
    assert.deepEqual(await shown(), {
      'actor/entropy': ['algorithm.entropy_loss_fn', 'algorithm.entropy_loss_fn_args.entropy_coef'],
      'response_length/mean': ['model.max_response_tokens'],
    });
    // A card made after its drivers came shows them too.
    await post({ type: 'append', points: [{ run: 'trainer', tag: 'later/tag', step: 1, time: 1, value: 1 }] });
    await frames();
    assert.deepEqual((await shown())['later/tag'], ['buffer.batch_size']);
    await page.click('.card[data-tag="actor/entropy"] .drivers button:nth-child(2)');
    const posted = await page.evaluate(() => (window as any).__posted.filter((m: any) => m.type === 'revealKey'));
    assert.deepEqual(posted, [{ type: 'revealKey', key: 'algorithm.entropy_loss_fn_args.entropy_coef' }]);
  });

  test('colours come from the --vscode-* variables and are re-read when the theme changes; screenshots of each theme', async () => {
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await post({ type: 'status', status: 'running', detail: 'step 11/20 · reward 0.71' });
    for (const name of Object.keys(THEMES) as ThemeName[]) {
      await setTheme(name);
      const c = await chart('critic/score/mean');
      const smooth = c.datasets.find((d) => d.run === 'trainer' && !d.raw)!;
      assert.equal(smooth.borderColor, THEMES[name].vars['charts-blue'], `${name}: the first run is charts-blue`);
      const raw = c.datasets.find((d) => d.run === 'trainer' && d.raw)!;
      assert.match(raw.borderColor, /^rgba\(\d+, \d+, \d+, 0\.3\)$/, `${name}: the raw line is faded`);
      await page.screenshot({ path: join(ROOT, 'test-results', `dashboard-${name}.png`), fullPage: true });
    }
  });

  test('20 000 streamed points: all kept; drawn decimated incrementally, the same points as from scratch, a spike among them; no animation, no parsing', async () => {
    const SPIKE = 12_345;
    const points = Array.from({ length: 20_000 }, (_, i) => ({
      run: 'trainer',
      tag: 'actor/kl_loss',
      step: i + 1,
      time: i,
      value: i === SPIKE ? 9.3 : Math.sin(i / 500) + 2,
    }));
    for (let i = 0; i < points.length; i += 2000) await post({ type: 'append', points: points.slice(i, i + 2000) });
    await frames();
    await page.locator('.card[data-tag="actor/kl_loss"]').scrollIntoViewIfNeeded();
    await frames();
    const got = await page.evaluate(() => {
      const c = (window as any).__charts.get('actor/kl_loss');
      const i = c.data.datasets.findIndex((d: any) => d.raw);
      const raw = c.data.datasets[i];
      const elements = c.getDatasetMeta(i).data;
      const ctx = c.ctx;
      const dpr = c.currentDevicePixelRatio;
      const tip = elements.find((_: any, j: number) => raw.data[j].x === 12_346);
      // One readback: a strip of canvas pixels (RGBA), 65 × 5 CSS pixels, centred on the spike's tip.
      const strip = tip
        ? Array.from(
            ctx.getImageData(Math.round((tip.x - 32) * dpr), Math.round((tip.y - 2) * dpr), 65 * dpr, 5 * dpr)
              .data as number[],
          )
        : undefined;
      return {
        width: c.width,
        all: raw.allPoints.map((p: any) => [p.x, p.y]),
        drawn: raw.data.map((p: any) => p.x),
        // Where Chart.js put each drawn point, against where the scales put its value.
        offPixel: elements.filter(
          (e: any, j: number) =>
            Math.abs(e.x - c.scales.x.getPixelForValue(raw.data[j].x)) > 0.01 ||
            Math.abs(e.y - c.scales.y.getPixelForValue(raw.data[j].y)) > 0.01,
        ).length,
        elements: elements.length,
        yMax: c.scales.y.max,
        strip,
        dpr,
        animation: c.options.animation,
        parsing: c.options.parsing,
        plugins: c.config.plugins.map((p: any) => p.id),
        chartJsDecimation: c.data.datasets.some((d: any) => d._decimated !== undefined),
      };
    });
    assert.equal(got.all.length, 20_000);
    const all = got.all.map(([x, y]: [number, number]) => ({ x, y }));
    // Streamed in ten appends, decimated incrementally: the same points as a decimation from scratch.
    assert.deepEqual(
      got.drawn,
      drawnPoints({}, all, got.width).map((p) => p.x),
    );
    assert.ok(
      got.drawn.length > got.width && got.drawn.length <= 2 * got.width + 2,
      `${got.drawn.length} points drawn`,
    );
    assert.equal(got.elements, got.drawn.length);
    assert.equal(got.offPixel, 0);
    // The spike is drawn: a point of the raw line at its value, the y scale reaching it, the line painted at its tip
    // (the canvas there differs from the same rows 30 px to either side, where the line is far below).
    assert.ok(got.drawn.includes(SPIKE + 1), 'the spike is among the drawn points');
    assert.ok(got.yMax >= 9.3, `y max ${got.yMax}`);
    assert.ok(got.strip, 'no drawn point at the spike');
    const rowLength = 65 * got.dpr * 4;
    // The 5×5 CSS-pixel window `left` pixels into the strip, as RGBA values.
    const window5 = (left: number) =>
      Array.from({ length: 5 * got.dpr }, (_, r) =>
        got.strip!.slice(r * rowLength + left * got.dpr * 4, r * rowLength + (left + 5) * got.dpr * 4),
      ).flat();
    const differs = (a: number[], b: number[]) => a.some((v, k) => Math.abs(v - b[k]) > 24);
    assert.ok(differs(window5(30), window5(0)) && differs(window5(30), window5(60)), 'the spike is painted');
    assert.deepEqual([got.animation, got.parsing, got.chartJsDecimation], [false, false, false]);
    assert.ok(got.plugins.includes('growingLttb'), `plugins: ${got.plugins}`);
  });

  test("Run again in the same panel: the last run's charts, rollouts and picked step go; the new run's come", async () => {
    const samples = (p: string) => [{ prompt: p, response: 'r', reward: 0.5 }];
    await post({ type: 'rollouts', step: 7, samples: samples('seven') });
    await post({ type: 'rollouts', step: 8, samples: samples('eight') });
    await showTab(page, 'rollouts');
    // The user picks step 7 of the run shown.
    await page.evaluate(() => {
      const s = document.getElementById('rollouts-step-select') as any;
      s.value = '7';
      s.dispatchEvent(new Event('change'));
    });
    assert.equal(await page.textContent('#rollouts-step'), 'Step 7: 1 sample');
    assert.ok((await page.$$('.card[data-tag]')).length > 0);
    // The extension re-inits the panel when the same job folder gets a new run.
    await post({
      type: 'init',
      run: { key: '/jobs/a', title: 'grpo · run b', jobDir: '/jobs/a', status: 'running' },
      series: [],
    });
    await frames();
    assert.equal(await page.textContent('#rollouts-step'), 'No rollouts yet.');
    assert.equal(await page.evaluate(() => (document.getElementById('rollouts-step-select') as any).options.length), 0);
    assert.equal(await page.$$eval('#rollouts-table tbody tr', (rows) => rows.length), 1, 'the table is hidden');
    assert.ok(await page.$eval('#rollouts-table', (t) => (t as HTMLElement).hidden));
    assert.equal((await page.$$('.card[data-tag]')).length, 0, "the last run's cards are gone");
    await post({ type: 'rollouts', step: 1, samples: samples('one') });
    assert.equal(await page.textContent('#rollouts-step'), 'Step 1: 1 sample');
    assert.equal(await page.evaluate(() => (document.getElementById('rollouts-step-select') as any).value), '1');
    await showTab(page, 'charts');
  });

  test('no console errors, no CSP violations; the CSP is enforced (an inline script is refused and reported)', async () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(await page.evaluate(() => (window as any).__csp), []);
    const ran = await page.evaluate(async () => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.body.append(s);
      await new Promise((ok) => setTimeout(ok, 50));
      return (window as any).__inlineRan === true;
    });
    assert.equal(ran, false);
    assert.deepEqual(await page.evaluate(() => (window as any).__csp.map((v: string) => v.split(' ')[0])), [
      'script-src-elem',
    ]);
    problems.length = 0;
  });
});
