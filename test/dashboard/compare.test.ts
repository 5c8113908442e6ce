/**
 * The compare panel, the Config tab and the Rollouts tab (search, step selector, reward histogram) of the dashboard webview, in Debian's Chromium: the real
 * HTML, CSP and bundle (dist/media, from `npm run build`), `acquireVsCodeApi` stubbed, messages posted as the
 * extension posts them, and what is drawn read back from Chart.js and the DOM.
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
import type { HostMessage, RunConfigMessage, Series } from '../../client/dashboard/messages';

declare const window: any;
declare const document: any;

let server: Server;
let browser: Browser;
const problems: string[] = [];

async function open(state?: unknown): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 820 } });
  watchProblems(page, problems);
  await page.addInitScript(`
    window.__posted = [];
    window.__csp = [];
    window.__state = ${JSON.stringify(state ?? null)} ?? undefined;
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => window.__posted.push(m),
      getState: () => window.__state,
      setState: (s) => { window.__state = s; },
    });
  `);
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await page.waitForFunction(() => (window as any).__posted.some((m: any) => m.type === 'ready'));
  return page;
}

async function post(page: Page, m: HostMessage | Record<string, unknown>): Promise<void> {
  await postToPage(page, m);
}

async function frames(page: Page): Promise<void> {
  await drawn(page);
}

async function setTheme(page: Page, name: ThemeName): Promise<void> {
  await applyTheme(page, name);
}

interface Drawn {
  label: string;
  source?: string;
  raw: boolean;
  y: (number | null)[];
  borderColor: string;
  borderDash: number[];
}

async function chart(page: Page, tag: string): Promise<Drawn[]> {
  return page.evaluate((t) => {
    const c = (window as any).__charts.get(t);
    if (!c) throw new Error(`no chart for ${t}`);
    return c.data.datasets.map((d: any) => ({
      label: d.label,
      source: d.source,
      raw: d.raw,
      y: (d.allPoints ?? d.data).map((p: any) => p.y),
      borderColor: d.borderColor,
      borderDash: d.borderDash ?? [],
    }));
  }, tag);
}

const RUNS = [
  { key: '/jobs/grpo-lr1e-6', title: 'grpo-lr1e-6', jobDir: '/jobs/grpo-lr1e-6', status: 'finished' },
  { key: '/jobs/grpo-lr5e-6', title: 'grpo-lr5e-6', jobDir: '/jobs/grpo-lr5e-6', status: 'on disk' },
];
const A_REWARD = [0.1, 0.2, 0.35, 0.4, 0.5];
const B_REWARD = [0.05, 0.3, 0.25, 0.6, 0.7];
const COMPARE_SERIES: Series[] = [
  {
    source: RUNS[0].key,
    run: 'trainer',
    tag: 'critic/score/mean',
    steps: [1, 2, 3, 4, 5],
    times: [1, 2, 3, 4, 5],
    values: A_REWARD,
  },
  {
    source: RUNS[1].key,
    run: 'trainer',
    tag: 'critic/score/mean',
    steps: [1, 2, 3, 4, 5],
    times: [1, 2, 3, 4, 5],
    values: B_REWARD,
  },
  {
    source: RUNS[0].key,
    run: 'trainer',
    tag: 'actor/pg_loss',
    steps: [1, 2, 3],
    times: [1, 2, 3],
    values: [0.9, 0.7, 0.6],
  },
  {
    source: RUNS[1].key,
    run: 'trainer',
    tag: 'actor/pg_loss',
    steps: [1, 2, 3],
    times: [1, 2, 3],
    values: [0.8, 0.75, 0.5],
  },
];
const CONFIGS: RunConfigMessage[] = [
  {
    key: RUNS[0].key,
    source: '/work/grpo.trinity.yaml',
    note: 'Resolved for Trinity-RFT v0.5.2.',
    yaml: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 8\n# <script>alert(3)</script>\n',
    flat: [
      ['algorithm.algorithm_type', 'grpo'],
      ['algorithm.repeat_times', '8'],
      ['algorithm.optimizer.lr', '1e-06'],
      ['name', 'lr1e-6'],
    ],
  },
  {
    key: RUNS[1].key,
    source: '/work/grpo-fast.trinity.yaml',
    note: '',
    yaml: 'algorithm:\n  algorithm_type: grpo\n  repeat_times: 8\n',
    flat: [
      ['algorithm.algorithm_type', 'grpo'],
      ['algorithm.repeat_times', '8'],
      ['algorithm.optimizer.lr', '5e-06'],
      ['name', '<img src=x onerror="alert(4)">'],
      ['explorer.eval_interval', '10'],
    ],
  },
];

before(async () => {
  ({ server } = await serveDashboard());
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => server?.close(ok));
});

describe('the compare panel', () => {
  let page: Page;
  before(async () => {
    page = await open();
    await setTheme(page, 'dark');
    await post(page, {
      type: 'init',
      run: { key: 'compare:x', title: 'Compare: 2 runs', jobDir: RUNS[0].jobDir, status: '2 runs' },
      series: COMPARE_SERIES,
      compare: RUNS,
    });
    await post(page, { type: 'config', runs: CONFIGS });
    await frames(page);
  });

  test('two runs overlay on one card, each in its own theme colour, with a legend; the state keeps both runs', async () => {
    const drawn = await chart(page, 'critic/score/mean');
    const smooth = drawn.filter((d) => !d.raw);
    assert.deepEqual(
      smooth.map((d) => d.source),
      [RUNS[0].key, RUNS[1].key],
    );
    assert.deepEqual(
      drawn.filter((d) => d.raw).map((d) => d.y),
      [A_REWARD, B_REWARD],
    );
    assert.deepEqual(
      smooth.map((d) => d.label),
      ['grpo-lr1e-6/trainer', 'grpo-lr5e-6/trainer'],
    );
    assert.deepEqual(
      smooth.map((d) => d.borderColor),
      [THEMES.dark.vars['charts-blue'], THEMES.dark.vars['charts-orange']],
    );
    // The same run has the same colour on every card.
    assert.deepEqual(
      (await chart(page, 'actor/pg_loss')).filter((d) => !d.raw).map((d) => d.borderColor),
      smooth.map((d) => d.borderColor),
    );
    const legend = await page.$$eval('#run-legend li', (els) =>
      els.map((e: any) => [e.textContent, e.querySelector('.swatch').style.borderColor]),
    );
    assert.deepEqual(legend, [
      ['grpo-lr1e-6', 'rgb(55, 148, 255)'],
      ['grpo-lr5e-6', 'rgb(209, 134, 22)'],
    ]);
    // No Rollouts tab in a compare panel: the strip holds Charts and Config only.
    assert.deepEqual(await page.$$eval('vscode-tab-header', (els) => els.map((e: any) => e.textContent.trim())), [
      'Charts',
      'Config',
    ]);
    const state = await page.evaluate(() => (window as any).__state);
    assert.deepEqual(
      state.compare,
      RUNS.map((r) => ({ key: r.key, jobDir: r.jobDir })),
    );
  });

  test('the run filter (a regex) hides a run’s datasets; an invalid regex is shown as such and hides nothing', async () => {
    await typeInto(page, '#run-filter', 'lr5');
    await frames(page);
    let drawn = await chart(page, 'critic/score/mean');
    assert.deepEqual([...new Set(drawn.map((d) => d.source))], [RUNS[1].key]);
    // The run keeps its colour when the one before it is hidden.
    assert.equal(drawn.find((d) => !d.raw)!.borderColor, THEMES.dark.vars['charts-orange']);
    assert.deepEqual(await page.$$eval('#run-legend li.filtered-out', (els) => els.map((e: any) => e.dataset.title)), [
      'grpo-lr1e-6',
    ]);
    assert.equal((await page.evaluate(() => (window as any).__state)).runFilter, 'lr5');

    await typeInto(page, '#run-filter', 'lr(5');
    await frames(page);
    drawn = await chart(page, 'critic/score/mean');
    assert.equal(drawn.length, 4, 'an invalid regex filters nothing');
    assert.equal(await page.$eval('#run-filter', (el: any) => el.invalid), true);
    assert.match((await page.textContent('#run-filter-error')) ?? '', /^Invalid regex: /);
    assert.equal(await page.isVisible('#run-filter-error'), true);
    await setTheme(page, 'dark');
    await page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-compare-invalid-filter-dark.png') });

    await typeInto(page, '#run-filter', '');
    await frames(page);
    assert.equal((await chart(page, 'critic/score/mean')).length, 4);
    assert.equal(await page.isHidden('#run-filter-error'), true);
  });

  test('the Config tab: the keys that differ, run × value, as text (nothing from a config becomes markup)', async () => {
    await showTab(page, 'config');
    const head = await page.$$eval('#config-diff-table thead th', (els) => els.map((e: any) => e.textContent));
    assert.deepEqual(head, ['Key', 'grpo-lr1e-6', 'grpo-lr5e-6']);
    const rows = await page.$$eval('#config-diff-table tbody tr', (rs) =>
      rs.map((r: any) => [...r.querySelectorAll('td')].map((td: any) => td.textContent)),
    );
    assert.deepEqual(rows, [
      ['algorithm.optimizer.lr', '1e-06', '5e-06'],
      ['name', 'lr1e-6', '<img src=x onerror="alert(4)">'],
      ['explorer.eval_interval', '(not set)', '10'],
    ]);
    assert.equal(await page.textContent('#config-diff-title'), '3 keys differ');
    assert.equal(await page.$$eval('#config img, #config script', (els) => els.length), 0);
    const yaml = await page.$$eval('#config-runs pre.config-yaml', (els) => els.map((e: any) => e.textContent));
    assert.deepEqual(
      yaml,
      CONFIGS.map((c) => c.yaml),
    );
    // The run filter narrows the diff to the runs shown: one run left, nothing to compare.
    await typeInto(page, '#run-filter', 'lr1');
    assert.equal(await page.isHidden('#config-diff'), true);
    assert.equal(await page.$$eval('#config-runs details', (els) => els.length), 1);
    await typeInto(page, '#run-filter', '');
    assert.equal(await page.isVisible('#config-diff'), true);
  });

  test('screenshots of the compare charts and its Config tab in light, dark and high contrast', async () => {
    for (const name of Object.keys(THEMES) as ThemeName[]) {
      await setTheme(page, name);
      await showTab(page, 'charts');
      await frames(page);
      const smooth = (await chart(page, 'critic/score/mean')).filter((d) => !d.raw);
      assert.deepEqual(
        smooth.map((d) => d.borderColor),
        [THEMES[name].vars['charts-blue'], THEMES[name].vars['charts-orange']],
        name,
      );
      await page.screenshot({ path: join(ROOT, 'test-results', `dashboard-compare-${name}.png`) });
      await showTab(page, 'config');
      await page.screenshot({ path: join(ROOT, 'test-results', `dashboard-config-${name}.png`), fullPage: true });
    }
  });

  test('no console errors, no CSP violations', async () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(await page.evaluate(() => (window as any).__csp), []);
    await page.close();
  });
});

describe('a run’s Rollouts and Config tabs', () => {
  let page: Page;
  const run = { key: '/jobs/trinity-gsm8k', title: 'gsm8k', jobDir: '/jobs/trinity-gsm8k', status: 'on disk' };
  const evil = '<script>window.__pwned = 1</script>';
  const img = '<img src=x onerror="window.__pwned = 2"> 42';
  const step3 = [
    { prompt: 'What is 6 × 7?', response: img, reward: 1 },
    { prompt: evil, response: 'The answer is 5', reward: 0 },
    { prompt: 'Natalia sold clips to 48 friends…', response: 'She sold 72 clips', reward: 1 },
    { prompt: 'Weng earns $12 an hour…', response: 'Weng earned $10', reward: 0.5 },
    { prompt: 'Betty is saving money…', response: 'no answer', reward: null },
  ];
  const step2 = [
    { prompt: 'What is 2+3?', response: '5', reward: 1 },
    { prompt: 'What is 2+2?', response: '5', reward: 0 },
  ];

  before(async () => {
    page = await open();
    await setTheme(page, 'dark');
    await post(page, {
      type: 'init',
      run,
      series: [
        { run: 'explorer', tag: 'rollout/accuracy/mean', steps: [1, 2, 3], times: [1, 2, 3], values: [0.3, 0.5, 0.6] },
      ],
    });
    await post(page, {
      type: 'config',
      runs: [
        {
          key: run.key,
          source: '/work/gsm8k.yaml',
          note: 'Resolved for Trinity-RFT main.',
          yaml: 'mode: both\nname: "<b>gsm8k</b>"\n',
          flat: [['mode', 'both']],
        },
      ],
    });
    await post(page, {
      type: 'rollouts',
      step: 2,
      samples: step2,
      origin: 'experience buffer gsm8k.db (table gsm8k_buffer)',
    });
    await post(page, {
      type: 'rollouts',
      step: 3,
      samples: step3,
      origin: 'experience buffer gsm8k.db (table gsm8k_buffer)',
    });
    await showTab(page, 'rollouts');
  });

  const cells = () =>
    page.$$eval('#rollouts-table tbody tr', (rows) =>
      rows.map((r: any) => [...r.querySelectorAll('td')].map((td: any) => td.textContent)),
    );
  const histogram = () =>
    page.evaluate(() => {
      const c = (window as any).__rollouts.chart;
      return {
        labels: c.data.labels,
        counts: c.data.datasets[0].data,
        edges: c.data.datasets[0].edges,
        type: c.config.type,
      };
    });

  test('the latest step is shown, model output as literal text: <script> and <img onerror> neither become markup nor run', async () => {
    assert.equal(await page.textContent('#rollouts-step'), 'Step 3: 5 samples');
    assert.equal(await page.textContent('#rollouts-source'), 'experience buffer gsm8k.db (table gsm8k_buffer)');
    assert.deepEqual(await cells(), [
      ['1', 'What is 6 × 7?', img],
      ['0', evil, 'The answer is 5'],
      ['1', 'Natalia sold clips to 48 friends…', 'She sold 72 clips'],
      ['0.5', 'Weng earns $12 an hour…', 'Weng earned $10'],
      ['n/a', 'Betty is saving money…', 'no answer'],
    ]);
    assert.equal(await page.$$eval('#rollouts script, #rollouts img', (els) => els.length), 0);
    await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
  });

  test('the reward histogram is a Chart.js bar chart of the shown samples’ rewards, binned as rewardHistogram says', async () => {
    // Rewards 1, 0, 1, 0.5 (one null left out): n = 4 -> 3 bins over [0, 1], edges 0, 1/3, 2/3, 1.
    const h = await histogram();
    assert.equal(h.type, 'bar');
    assert.deepEqual(h.edges, [0, 1 / 3, 2 / 3, 1]);
    assert.deepEqual(h.counts, [1, 1, 2]);
    assert.deepEqual(h.labels, ['0 – 0.333', '0.333 – 0.667', '0.667 – 1']);
  });

  test('search narrows to prompts or responses containing the text (case-insensitive), the histogram follows', async () => {
    assert.equal(await page.$eval('#rollouts-search', (el: any) => el.placeholder), 'Search prompts and responses');
    await typeInto(page, '#rollouts-search', 'SOLD');
    assert.equal(await page.textContent('#rollouts-step'), 'Step 3: 1 of 5 samples match');
    assert.deepEqual(
      (await cells()).map((r) => r[1]),
      ['Natalia sold clips to 48 friends…'],
    );
    assert.deepEqual((await histogram()).counts, [1]);
    await typeInto(page, '#rollouts-search', 'onerror');
    assert.deepEqual(
      (await cells()).map((r) => r[2]),
      [img],
    );
    await typeInto(page, '#rollouts-search', '');
    assert.equal((await cells()).length, 5);
  });

  test('the step selector lists the steps newest first; an older step stays picked when a new one arrives', async () => {
    assert.deepEqual(
      await page.$$eval('#rollouts-step-select li[role="option"]', (os) => os.map((o: any) => o.textContent.trim())),
      ['3', '2'],
    );
    await choose(page, '#rollouts-step-select', '2');
    assert.equal(await page.textContent('#rollouts-step'), 'Step 2: 2 samples');
    assert.deepEqual((await histogram()).counts, [1, 1]);
    await post(page, { type: 'rollouts', step: 4, samples: [{ prompt: 'new', response: 'x', reward: 0.25 }] });
    await frames(page);
    assert.equal(await page.textContent('#rollouts-step'), 'Step 2: 2 samples');
    assert.deepEqual(
      await page.$$eval('#rollouts-step-select li[role="option"]', (os) => os.map((o: any) => o.textContent.trim())),
      ['4', '3', '2'],
    );
    assert.equal(await controlValue(page, '#rollouts-step-select'), '2');
    // Picking the latest again follows new steps.
    await choose(page, '#rollouts-step-select', '4');
    await post(page, { type: 'rollouts', step: 5, samples: step3 });
    await frames(page);
    assert.equal(await page.textContent('#rollouts-step'), 'Step 5: 5 samples');
  });

  test('screenshots of the Rollouts tab in light, dark and high contrast; the histogram takes the theme’s colour', async () => {
    for (const name of Object.keys(THEMES) as ThemeName[]) {
      await setTheme(page, name);
      // The bars as drawn (Chart.js resolves and keeps each bar's options), not only the dataset's setting.
      const colours = await page.evaluate(() =>
        (window as any).__rollouts.chart.getDatasetMeta(0).data.map((bar: any) => bar.options.backgroundColor),
      );
      assert.ok(colours.length > 0);
      assert.deepEqual(new Set(colours), new Set([THEMES[name].vars['charts-blue']]), name);
      await page.screenshot({ path: join(ROOT, 'test-results', `dashboard-rollouts-${name}.png`), fullPage: true });
    }
  });

  test('the Config tab of one run: its resolved config as text, no diff table', async () => {
    await showTab(page, 'config');
    assert.equal(await page.isHidden('#config-diff'), true);
    assert.equal(await page.textContent('#config-runs pre.config-yaml'), 'mode: both\nname: "<b>gsm8k</b>"\n');
    assert.equal(await page.$$eval('#config b', (els) => els.length), 0);
    assert.equal(await page.evaluate(() => (window as any).__state.tab), 'config');
    await page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-config-run-high-contrast.png') });
  });

  test('no console errors, no CSP violations', async () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(await page.evaluate(() => (window as any).__csp), []);
    await page.close();
  });
});

describe('a compare panel restored after a reload', () => {
  test('the state the webview kept restores the runs, the run filter and the tab; the host’s init redraws them filtered', async () => {
    const state = {
      key: RUNS[0].key,
      jobDir: RUNS[0].jobDir,
      compare: RUNS.map((r) => ({ key: r.key, jobDir: r.jobDir })),
      runFilter: 'lr1',
      tab: 'config',
      settings: { smoothing: 0.6, xAxis: 'step', logY: false },
    };
    const page = await open(state);
    assert.equal(await controlValue(page, '#run-filter'), 'lr1');
    assert.equal(await page.isVisible('#config'), true);
    await post(page, {
      type: 'init',
      run: { key: 'compare:x', title: 'Compare: 2 runs', jobDir: RUNS[0].jobDir, status: '2 runs' },
      series: COMPARE_SERIES,
      compare: RUNS,
    });
    await post(page, { type: 'config', runs: CONFIGS });
    await frames(page);
    assert.deepEqual([...new Set((await chart(page, 'critic/score/mean')).map((d) => d.source))], [RUNS[0].key]);
    assert.deepEqual(await page.$$eval('#config-runs details', (els) => els.map((e: any) => e.dataset.key)), [
      RUNS[0].key,
    ]);
    const kept = await page.evaluate(() => (window as any).__state);
    assert.deepEqual([kept.compare, kept.runFilter, kept.tab], [state.compare, 'lr1', 'config']);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('a compare panel of more runs than the theme has chart colours', () => {
  test('the seventh run takes the first colour again, dashed, on its lines and in the legend', async () => {
    const page = await open();
    await setTheme(page, 'light');
    const runs = Array.from({ length: 7 }, (_, i) => ({
      key: `/jobs/r${i}`,
      title: `r${i}`,
      jobDir: `/jobs/r${i}`,
      status: 'on disk',
    }));
    const series = runs.map((r, i) => ({
      source: r.key,
      run: 'trainer',
      tag: 'critic/score/mean',
      steps: [1, 2],
      times: [1, 2],
      values: [i / 10, i / 10 + 0.05],
    }));
    await post(page, {
      type: 'init',
      run: { key: 'compare:7', title: 'Compare: 7 runs', jobDir: runs[0].jobDir, status: '7 runs' },
      series,
      compare: runs,
    });
    await frames(page);
    const smooth = (await chart(page, 'critic/score/mean')).filter((d) => !d.raw);
    const v = THEMES.light.vars;
    assert.deepEqual(
      smooth.map((d) => d.borderColor),
      [
        v['charts-blue'],
        v['charts-orange'],
        v['charts-green'],
        v['charts-purple'],
        v['charts-red'],
        v['charts-yellow'],
        v['charts-blue'],
      ],
    );
    assert.deepEqual(
      smooth.map((d) => d.borderDash),
      [[], [], [], [], [], [], [6, 3]],
    );
    assert.deepEqual(
      await page.$$eval('#run-legend .swatch', (els) => els.map((e: any) => e.classList.contains('dashed'))),
      [false, false, false, false, false, false, true],
    );
    await page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-compare-7-runs-light.png') });
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('the compare panel’s header', () => {
  test('names the runs once (titles, else job folder names; alike titles told apart); the count shows once', async () => {
    const page = await open();
    await setTheme(page, 'light');
    // The host's title only counts the runs; two runs have no title, two share one.
    const runs = [
      { key: '/ckpt/p/grpo-lr1e-6', title: 'grpo-lr1e-6', jobDir: '/ckpt/p/grpo-lr1e-6', status: 'on disk' },
      { key: '/ckpt/p/sft-warmup', title: '', jobDir: '/ckpt/p/sft-warmup/', status: 'on disk' },
      { key: '/ckpt/q/run-7', title: '  ', jobDir: '/ckpt/q/run-7', status: 'on disk' },
      { key: '/ckpt/a/grpo', title: 'grpo', jobDir: '/ckpt/a/grpo', status: 'on disk' },
      { key: '/ckpt/b/grpo-b', title: 'grpo', jobDir: '/ckpt/b/grpo-b', status: 'on disk' },
    ];
    await post(page, {
      type: 'init',
      run: { key: 'compare:h', title: 'Compare: 5 runs', jobDir: runs[0].jobDir, status: '5 runs' },
      series: runs.map((r, i) => ({
        source: r.key,
        run: 'trainer',
        tag: 'critic/score/mean',
        steps: [1, 2],
        times: [1, 2],
        values: [i / 10, i / 10 + 0.1],
      })),
      compare: runs,
    });
    await frames(page);
    const names = ['grpo-lr1e-6', 'sft-warmup', 'run-7', 'grpo (a/grpo)', 'grpo (b/grpo-b)'];
    const heading = await page.evaluate(() => ({
      title: document.getElementById('run-title').textContent,
      status: document.getElementById('run-status').textContent,
      doc: document.title,
    }));
    assert.deepEqual(heading, { title: `Compare: ${names.join(', ')}`, status: '5 runs', doc: heading.title });
    assert.equal((`${heading.title} ${heading.status}`.match(/\b5 runs\b/g) ?? []).length, 1);
    assert.deepEqual(await page.$$eval('#run-legend li', (els) => els.map((e: any) => e.textContent)), names);
    assert.deepEqual(
      (await chart(page, 'critic/score/mean')).filter((d) => !d.raw).map((d) => d.label),
      names.map((n) => `${n}/trainer`),
    );
    // A long list ends in an ellipsis inside the header, not past the panel's edge.
    const box = await page.$eval('#run-title', (e: any) => ({
      right: e.getBoundingClientRect().right,
      clipped: e.scrollWidth > e.clientWidth,
    }));
    assert.ok(box.right <= 1200, JSON.stringify(box));
    await page.screenshot({
      path: join(ROOT, 'test-results', 'dashboard-compare-header-light.png'),
      clip: { x: 0, y: 0, width: 1200, height: 420 },
    });
    assert.deepEqual(problems, []);
    await page.close();
  });
});
