/**
 * The draw queue in the dashboard webview, in Debian's Chromium (real HTML, CSP and bundle; stubbed
 * `acquireVsCodeApi`): after a burst of updates to many cards, every card shows its latest data, each frame keeps
 * to the queue's rule (no card started once the budget is spent, so a frame passes it by one card at most), cards
 * in view come first, and the charts' dataset objects are kept and updated in place. What is drawn is read back
 * from Chart.js; the frames' draws from the webview's `__drawFrames` hook.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Series } from '../../client/dashboard/messages';
import { DashboardPage, ROOT } from './harness';

const CARDS = 24;
const POINTS = 4000;
const BURSTS = 15;
const TAGS = Array.from({ length: CARDS }, (_, i) => `actor/metric_${String(i).padStart(2, '0')}`);
/** Exact in binary floating point, so the page and the test compute the same numbers. */
const value = (card: number, step: number, run: number) => ((step * 7) % 101) / 8 + card + run / 2;

const INIT: Series[] = TAGS.flatMap((tag, c) =>
  [0, 1].map((r) => {
    const steps = Array.from({ length: POINTS }, (_, i) => i + 1);
    return {
      run: r === 0 ? 'trainer' : 'explorer',
      tag,
      steps,
      times: steps.map((s) => s * 2),
      values: steps.map((s) => value(c, s, r)),
    };
  }),
);

interface Report {
  start: number;
  budgetMs: number;
  draws: { key: string; start: number; end: number }[];
  left: number;
}

let d: DashboardPage;

before(async () => {
  d = await DashboardPage.open({ width: 1200, height: 900 });
  await d.setTheme('light');
  await d.post({
    type: 'init',
    run: { key: '/jobs/q', title: 'draw queue', jobDir: '/jobs/q', status: 'running', startedAt: 1.7e9 },
    series: INIT,
  });
  await d.frames();
});

after(async () => {
  await d?.close();
});

describe('the draw queue in the webview', () => {
  test('a burst of updates to every card: each ends with its latest data, frames keep to the budget rule, datasets are kept', async () => {
    // The cards in view now, and each chart's dataset objects before the burst.
    const inView: string[] = await d.page.evaluate((tags) => {
      const g = globalThis as any;
      g.__kept = new Map([...g.__charts].map(([t, c]: [string, any]) => [t, [...c.data.datasets]]));
      return tags.filter((t: string) => {
        const r = g.__charts.get(t).canvas.closest('.card').getBoundingClientRect();
        return r.bottom > 0 && r.top < g.innerHeight && r.width > 0;
      });
    }, TAGS);
    assert.ok(inView.length > 0 && inView.length < CARDS, `${inView.length} cards in view`);

    // Bursts posted back to back, each with one new point per run of every card; the last one's values win.
    await d.page.evaluate(
      ({ tags, points, bursts }) => {
        const g = globalThis as any;
        g.__drawFrames = [];
        for (let b = 1; b <= bursts; b++) {
          const step = points + b;
          const pts = tags.flatMap((tag: string, c: number) =>
            [0, 1].map((r) => ({
              run: r === 0 ? 'trainer' : 'explorer',
              tag,
              step,
              time: step * 2,
              value: ((step * 7) % 101) / 8 + c + r / 2,
            })),
          );
          g.postMessage({ type: 'append', points: pts }, '*');
        }
      },
      { tags: TAGS, points: POINTS, bursts: BURSTS },
    );
    await d.frames();

    const last = POINTS + BURSTS;
    for (const [c, tag] of TAGS.entries()) {
      const chart = await d.chart(tag);
      for (const [r, run] of ['trainer', 'explorer'].entries()) {
        const raw = chart.datasets.find((s) => s.run === run && s.raw)!;
        const smoothed = chart.datasets.find((s) => s.run === run && !s.raw)!;
        assert.equal(raw.x.length, last, `${tag} ${run}: every point`);
        assert.deepEqual(
          raw.x.slice(-BURSTS),
          Array.from({ length: BURSTS }, (_, i) => POINTS + 1 + i),
        );
        assert.equal(raw.y.at(-1), value(c, last, r), `${tag} ${run}: the latest value`);
        assert.equal(smoothed.x.length, last, `${tag} ${run}: smoothed to the end`);
      }
    }

    const check = await d.page.evaluate(() => {
      const g = globalThis as any;
      let kept = true;
      for (const [t, before] of g.__kept as Map<string, unknown[]>) {
        const now = g.__charts.get(t).data.datasets;
        if (now.length !== before.length || now.some((x: unknown, i: number) => x !== before[i])) kept = false;
      }
      return { kept, frames: g.__drawFrames as Report[], budget: g.__drawBudgetMs as number };
    });
    assert.ok(check.kept, 'the charts keep their dataset objects');
    assert.equal(check.budget, 3);
    const frames = check.frames.filter((f) => f.draws.length > 0);
    assert.ok(frames.length > 0);
    const drawnTags = new Set<string>();
    for (const f of frames) {
      f.draws.forEach((draw, i) => {
        drawnTags.add(draw.key);
        // Only a frame's first card may start with the budget spent.
        if (i > 0) assert.ok(draw.start - f.start < f.budgetMs, `a card started ${draw.start - f.start} ms in`);
      });
      assert.equal(new Set(f.draws.map((x) => x.key)).size, f.draws.length, 'a card drawn twice in one frame');
    }
    assert.deepEqual([...drawnTags].sort(), TAGS);
    assert.equal(frames.at(-1)!.left, 0);
    // The first card drawn after the burst is one in view (all of them waited well under the 1 s limit).
    assert.ok(inView.includes(frames[0].draws[0].key), `${frames[0].draws[0].key} is not in view`);

    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await d.page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-draw-queue-burst-light.png') });
    assert.deepEqual(d.problems, []);
  });

  test('a card scrolled into view while the queue is busy is drawn before those out of view', async () => {
    // Scrolled to the bottom: the cards in view are now the last ones.
    const inView: string[] = await d.page.evaluate(async (tags) => {
      const g = globalThis as any;
      g.scrollTo(0, g.document.body.scrollHeight);
      // IntersectionObserver reports at the next rendering steps.
      for (let i = 0; i < 3; i++) await new Promise((ok) => g.requestAnimationFrame(ok));
      return tags.filter((t: string) => {
        const r = g.__charts.get(t).canvas.closest('.card').getBoundingClientRect();
        return r.bottom > 0 && r.top < g.innerHeight && r.width > 0;
      });
    }, TAGS);
    assert.ok(inView.length > 0 && !inView.includes(TAGS[0]));
    const step = POINTS + BURSTS + 1;
    await d.page.evaluate(
      ({ tags, step }) => {
        const g = globalThis as any;
        g.__drawFrames = [];
        g.postMessage(
          {
            type: 'append',
            points: tags.map((tag: string) => ({ run: 'trainer', tag, step, time: step * 2, value: 0.5 })),
          },
          '*',
        );
      },
      { tags: TAGS, step },
    );
    await d.frames();
    const order: string[] = await d.page.evaluate(() =>
      ((globalThis as any).__drawFrames as Report[]).flatMap((f) => f.draws.map((x) => x.key)),
    );
    assert.deepEqual([...order].sort(), TAGS);
    // Every card in view is drawn before any card out of view.
    const firstOut = order.findIndex((t) => !inView.includes(t));
    assert.deepEqual(new Set(order.slice(0, firstOut)), new Set(inView));
    for (const tag of TAGS) assert.equal((await d.chart(tag)).datasets.find((s) => s.raw)!.y.at(-1), 0.5);
  });
});
