/**
 * The dashboard's draw queue (media/dashboard/cards/draw-queue.ts) on a clock and frames of the test's own: what a frame
 * draws, in which order, within which budget; the latest data wins. Its use in the webview is tested in Chromium
 * (draw-queue.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DrawQueue, type DrawQueueOptions, type FrameReport } from '../../media/dashboard/cards/draw-queue';

/** A queue whose draws take `cost(key)` ms of the fake clock and record the data they saw. */
function harness(cost: (key: string) => number, options: DrawQueueOptions<string> = {}) {
  let t = 0;
  const frames: (() => void)[] = [];
  const data = new Map<string, number>();
  const drawn: { key: string; value: number | undefined }[] = [];
  const reports: FrameReport<string>[] = [];
  const queue = new DrawQueue<string>(
    (key) => {
      drawn.push({ key, value: data.get(key) });
      t += cost(key);
    },
    {
      now: () => t,
      requestFrame: (cb) => frames.push(cb),
      afterFrame: (r) => reports.push(r),
      ...options,
    },
  );
  return {
    queue,
    data,
    drawn,
    reports,
    /** Runs the frames asked for so far (one animation frame), `gap` ms after the last. */
    frame(gap = 16) {
      t += gap;
      for (const cb of frames.splice(0)) cb();
    },
    get pendingFrames() {
      return frames.length;
    },
    advance(ms: number) {
      t += ms;
    },
  };
}

describe('draw queue', () => {
  test('a card queued many times is drawn once, with its latest data; no frame is asked for when idle', () => {
    const h = harness(() => 1);
    for (let v = 1; v <= 5; v++) {
      h.data.set('a', v);
      h.queue.add('a');
    }
    assert.equal(h.queue.size, 1);
    assert.equal(h.pendingFrames, 1);
    h.frame();
    assert.deepEqual(h.drawn, [{ key: 'a', value: 5 }]);
    assert.equal(h.queue.size, 0);
    assert.equal(h.pendingFrames, 0);
  });

  test('a frame stops at the budget: it may pass it by one card, and starts none it expects to overrun it', () => {
    const h = harness(() => 2, { budgetMs: 5 });
    for (const k of 'abcdefghij') h.queue.add(k);
    h.frame();
    // 0, 2 and 4 ms spent when a, b and c start (their costs unknown yet); 6 ms when d would start.
    assert.equal(h.reports[0].draws.length, 3);
    assert.equal(h.queue.size, 7);
    while (h.queue.size) h.frame();
    assert.deepEqual(h.drawn.map((d) => d.key).sort(), [...'abcdefghij']);
    // Known costs now: 2 ms each, so a frame starts a card only with 2 ms left (a, b at 0 and 2 ms; not at 4).
    for (const k of 'abcdefghij') h.queue.add(k);
    h.frame();
    assert.equal(h.reports.at(-1)!.draws.length, 2);
  });

  test('a card costlier than the budget is still drawn, alone, as its frame’s first', () => {
    const h = harness((k) => (k === 'big' ? 12 : 1), { budgetMs: 5 });
    h.queue.add('big');
    h.frame();
    h.queue.add('big');
    h.queue.add('small');
    // small (the more recent) first; big (known: 12 ms) does not fit after it, and comes first in the next frame.
    h.frame();
    h.frame();
    assert.deepEqual(
      h.reports.map((r) => r.draws.map((d) => d.key)),
      [['big'], ['small'], ['big']],
    );
  });

  test('order: earliest deadline (queued + an allowance by visibility), then most recently changed', () => {
    const seen = new Map([
      ['hidden', 0],
      ['half', 0.5],
      ['full', 1],
      ['full2', 1],
      ['late', 1],
    ]);
    const h = harness(() => 0, { visibility: (k) => seen.get(k) ?? 0, maxWaitMs: 1000, inViewSpreadMs: 100 });
    h.queue.add('hidden');
    h.advance(10);
    h.queue.add('full2');
    h.queue.add('half');
    h.queue.add('full');
    // Deadlines: full and full2 at 10 ms (full changed last), half at 60, hidden at 1000.
    assert.deepEqual(h.queue.order(), ['full', 'full2', 'half', 'hidden']);
    // full2 changes again: still queued since 10 ms, now the most recent of the two.
    h.queue.add('full2');
    assert.deepEqual(h.queue.order(), ['full2', 'full', 'half', 'hidden']);
    // A card in view queued after the hidden card's deadline comes after it.
    h.advance(2000);
    h.queue.add('late');
    assert.deepEqual(h.queue.order(), ['full2', 'full', 'half', 'hidden', 'late']);
    // A card scrolled into view: no allowance any more.
    seen.set('hidden', 1);
    assert.deepEqual(h.queue.order(), ['hidden', 'full2', 'full', 'half', 'late']);
  });

  test('nothing starves: under a stream the frames cannot keep up with, every card is drawn within about the allowance', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    // Five cards in view; each card costs 3 ms, the budget 5 ms: one card a frame once that is known, while all 30
    // change every 3 frames (the five in view alone would take every frame without the wait limit).
    const h = harness(() => 3, { budgetMs: 5, maxWaitMs: 500, visibility: (k) => (Number(k.slice(1)) < 5 ? 1 : 0) });
    const last = new Map<string, number>();
    let now = 0;
    for (let f = 0; f < 600; f++) {
      if (f % 3 === 0) for (const k of keys) h.queue.add(k);
      h.frame();
      now += 16;
      for (const d of h.reports.at(-1)?.draws ?? []) last.set(d.key, now);
      for (const k of keys) if (f > 100) assert.ok(now - (last.get(k) ?? 0) <= 500 + 16 * 30, `${k} starved`);
    }
  });

  test('a change during a card’s own draw queues it again; a draw that throws leaves the rest queued', () => {
    let again = true;
    const drawn: string[] = [];
    const frames: (() => void)[] = [];
    const q: DrawQueue<string> = new DrawQueue<string>(
      (k) => {
        drawn.push(k);
        if (k === 'a' && again) {
          again = false;
          q.add('a');
        }
        if (k === 'bad') throw new Error('draw failed');
      },
      { requestFrame: (cb) => frames.push(cb), visibility: (k) => (k === 'bad' ? 1 : 0) },
    );
    q.add('a');
    frames.shift()!();
    assert.deepEqual(drawn, ['a']);
    assert.equal(q.size, 1);
    frames.shift()!();
    assert.deepEqual(drawn, ['a', 'a']);
    q.add('bad');
    q.add('b');
    assert.throws(() => frames.shift()!(), /draw failed/);
    assert.equal(q.size, 1);
    frames.shift()!();
    assert.deepEqual(drawn, ['a', 'a', 'bad', 'b']);
  });

  test('beforeFrame runs first and may queue cards for that frame; clear() forgets every card', () => {
    const h = harness(() => 1, { beforeFrame: () => h.queue.add('from-before') });
    h.queue.schedule();
    h.frame();
    assert.deepEqual(
      h.drawn.map((d) => d.key),
      ['from-before'],
    );
    h.queue.add('x');
    h.queue.clear();
    assert.equal(h.queue.size, 0);
  });

  test('any costs, budget and bursts: each frame starts its later cards within the budget; the latest data wins', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { minLength: 1, maxLength: 25 }),
        fc.double({ min: 0.5, max: 16, noNaN: true }),
        fc.array(fc.array(fc.nat(24), { maxLength: 30 }), { minLength: 1, maxLength: 6 }),
        (costs, budget, bursts) => {
          const h = harness((k) => costs[Number(k)], { budgetMs: budget });
          const latest = new Map<string, number>();
          let v = 0;
          for (const burst of bursts) {
            for (const i of burst) {
              const k = String(i % costs.length);
              h.data.set(k, ++v);
              latest.set(k, v);
              h.queue.add(k);
            }
            h.frame();
          }
          for (let n = 0; h.queue.size && n < 1000; n++) h.frame();
          assert.equal(h.queue.size, 0);
          for (const r of h.reports) {
            assert.ok(r.draws.length > 0 || r.left === 0);
            r.draws.forEach((d, i) => {
              if (i > 0) assert.ok(d.start - r.start < budget, `a card started after the budget was spent`);
            });
            assert.equal(new Set(r.draws.map((d) => d.key)).size, r.draws.length, 'a card drawn twice in a frame');
          }
          const final = new Map<string, number | undefined>();
          for (const d of h.drawn) final.set(d.key, d.value);
          assert.deepEqual(final, latest);
        },
      ),
    );
  });
});
