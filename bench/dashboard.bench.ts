/**
 * `npm run bench:dashboard`: the dashboard webview streaming 30 series × 100 000 points at 20 updates/s in
 * Debian's Chromium (the real HTML, CSP and bundle, as test/dashboard/controls.test.ts loads them), side by side in
 * the same run with a plain Chart.js page (bench/dashboard/plain.js: defaults, no decimation). Measured in the page:
 * frame time (the gap between animation frames, p50/p95/max) and time-to-update (from an `append` being posted to
 * the end of the frame that drew it, p50/p95). Results: bench/results/dashboard.json, with the ratios plain/ours.
 *
 * BENCH_SERIES (default 30), BENCH_POINTS (100000), BENCH_SECONDS (streaming time per page, 8).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { DashboardPage } from '../test/dashboard/harness';

const SERIES = Number(process.env.BENCH_SERIES ?? 30);
const POINTS = Number(process.env.BENCH_POINTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RATE_HZ = 20;

interface Measured {
  frameMs: { p50: number; p95: number; max: number; frames: number };
  updateMs: { p50: number; p95: number; updates: number };
  loadMs: number;
}

/** Runs in the page: builds the series there (3M points do not go through the DevTools protocol), loads them,
 * streams one point per series at RATE_HZ, and measures. `wait` tells when a streamed step has been drawn. */
const STREAM = `async ({ series, points, seconds, rate, dashboard }) => {
  const tags = Array.from({ length: series }, (_, s) => 'bench/s' + String(s).padStart(2, '0'));
  const value = (s, i) => Math.sin(i / 700 + s) + 0.1 * Math.sin(i / 3) + s * 0.01;
  const t0 = performance.now();
  const init = tags.map((tag, s) => {
    const steps = new Array(points), times = new Array(points), values = new Array(points);
    for (let i = 0; i < points; i++) { steps[i] = i + 1; times[i] = i * 0.5; values[i] = value(s, i); }
    return { run: 'trainer', tag, steps, times, values };
  });
  window.postMessage(dashboard ? { type: 'init', run: { key: 'b', title: 'bench', jobDir: '/b', status: 'running', startedAt: 1.7e9 }, series: init } : { type: 'init', series: init }, '*');
  const chartOf = (tag) => window.__charts.get(tag);
  const lastX = (tag) => { const c = chartOf(tag); if (!c) return -1; const d = c.data.datasets[dashboard ? 1 : 0]; if (!d) return -1; const a = d._data ?? d.data; return a.length ? a[a.length - 1].x : -1; };
  await new Promise((ok) => { const check = () => (lastX(tags[series - 1]) === points ? ok() : requestAnimationFrame(check)); check(); });
  await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const loadMs = performance.now() - t0;
  const frames = [];
  const updates = [];
  const pending = [];
  let last = performance.now();
  let running = true;
  const onFrame = () => {
    const now = performance.now();
    frames.push(now - last);
    last = now;
    while (pending.length && lastX(tags[0]) >= pending[0].step && lastX(tags[series - 1]) >= pending[0].step) updates.push(now - pending.shift().at);
    if (running) requestAnimationFrame(onFrame);
  };
  requestAnimationFrame(onFrame);
  let step = points;
  const total = Math.round(seconds * rate);
  for (let k = 0; k < total; k++) {
    step++;
    const pts = tags.map((tag, s) => ({ run: 'trainer', tag, step, time: step * 0.5, value: value(s, step) }));
    pending.push({ step, at: performance.now() });
    window.postMessage({ type: 'append', points: pts }, '*');
    await new Promise((ok) => setTimeout(ok, 1000 / rate));
  }
  const deadline = performance.now() + 5000;
  while (pending.length && performance.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
  running = false;
  return { frames, updates, loadMs, unfinished: pending.length };
}`;

function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number(s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(2)) : Number.NaN;
}

function summarise(r: { frames: number[]; updates: number[]; loadMs: number; unfinished: number }): Measured {
  // The first frames include the load's tail: skip a second's worth.
  const f = r.frames.slice(Math.min(60, Math.floor(r.frames.length / 4)));
  if (r.unfinished) console.warn(`  ${r.unfinished} updates were not drawn within 5 s of the end`);
  return {
    frameMs: { p50: pct(f, 0.5), p95: pct(f, 0.95), max: pct(f, 1), frames: f.length },
    updateMs: { p50: pct(r.updates, 0.5), p95: pct(r.updates, 0.95), updates: r.updates.length },
    loadMs: Math.round(r.loadMs),
  };
}

async function runDashboard(points: number): Promise<Measured> {
  const d = await DashboardPage.open({ width: 1400, height: 1000 });
  try {
    const r = await d.page.evaluate(
      `(${STREAM})(${JSON.stringify({ series: SERIES, points, seconds: SECONDS, rate: RATE_HZ, dashboard: true })})`,
    );
    if (d.problems.length) console.warn(d.problems.join('\n'));
    return summarise(r as never);
  } finally {
    await d.close();
  }
}

async function runPlain(points: number): Promise<Measured> {
  const out = await build({
    entryPoints: [join(__dirname, 'dashboard', 'plain.js')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome114',
    minify: true,
    logLevel: 'warning',
  });
  const js = out.outputFiles[0].contents;
  const server = createServer((req, res) => {
    if (req.url === '/plain.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      return res.end(js);
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      '<!DOCTYPE html><html><body><div id="grid" style="display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:10px"></div><script src="/plain.js"></script></body></html>',
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const r = await page.evaluate(
      `(${STREAM})(${JSON.stringify({ series: SERIES, points, seconds: SECONDS, rate: RATE_HZ, dashboard: false })})`,
    );
    return summarise(r as never);
  } finally {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  }
}

type Side = Measured | { crashed: string };
const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

/** Both pages at one load, in this run; ratios plain / dashboard (how many times slower the plain setup is). */
async function compareAt(points: number) {
  console.log(`dashboard bench: ${SERIES} series × ${points} points, ${RATE_HZ} updates/s for ${SECONDS} s per page`);
  const ours = await runDashboard(points);
  console.log('  dashboard  ', JSON.stringify(ours));
  let plain: Side;
  try {
    plain = await runPlain(points);
  } catch (e) {
    // The plain page's renderer can die under this load (no decimation, default animation): that is a result too.
    plain = { crashed: String(e instanceof Error ? e.message : e).split('\n')[0] };
  }
  console.log('  plain      ', JSON.stringify(plain));
  const ratios =
    'crashed' in plain
      ? null
      : {
          frameP95: ratio(plain.frameMs.p95, ours.frameMs.p95),
          frameP50: ratio(plain.frameMs.p50, ours.frameMs.p50),
          updateP95: ratio(plain.updateMs.p95, ours.updateMs.p95),
          updateP50: ratio(plain.updateMs.p50, ours.updateMs.p50),
        };
  console.log('  ratios (plain/dashboard)', JSON.stringify(ratios));
  return { points, dashboard: ours, plain, ratios };
}

async function main(): Promise<void> {
  readFileSync(join(__dirname, '..', 'dist', 'media', 'dashboard.js'));
  const full = await compareAt(POINTS);
  // When the plain setup cannot hold the full load, a tenth of it gives ratios where both pages survive.
  const reduced = full.ratios === null ? await compareAt(Math.round(POINTS / 10)) : undefined;
  const result = {
    date: new Date().toISOString(),
    params: {
      series: SERIES,
      points: POINTS,
      rateHz: RATE_HZ,
      seconds: SECONDS,
      viewport: '1400x1000',
      chromium: '/usr/bin/chromium --headless --disable-gpu',
    },
    full,
    ...(reduced ? { reduced } : {}),
    targetFrameP95Ms: 16,
    meetsTarget: full.dashboard.frameMs.p95 < 16,
  };
  console.log(
    `  p95 frame at ${POINTS} points: ${full.dashboard.frameMs.p95} ms: ${result.meetsTarget ? 'under' : 'over'} 16 ms`,
  );
  mkdirSync(join(__dirname, 'results'), { recursive: true });
  writeFileSync(join(__dirname, 'results', 'dashboard.json'), `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
