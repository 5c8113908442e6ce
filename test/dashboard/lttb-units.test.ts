/**
 * The cards' decimation (media/dashboard/charts/lttb.ts, decimation.ts): a growing series decimated incrementally gives
 * exactly what the same LTTB gives from scratch, re-reads only the tail, and keeps the extremes. In Chromium, with
 * Chart.js, in webview.test.ts and controls.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { drawnPoints } from '../../media/dashboard/charts/decimation';
import { bucketSizeFor, GrowingLttb, lttbIndices, type XY } from '../../media/dashboard/charts/lttb';

const series = (ys: readonly (number | null)[]): XY[] => ys.map((y, i) => ({ x: i + 1, y }));
const value = fc.oneof(
  { weight: 9, arbitrary: fc.double({ min: -1e3, max: 1e3, noNaN: true }) },
  { weight: 1, arbitrary: fc.constant(null) },
);

describe('incremental LTTB', () => {
  test('growing a series in chunks gives, after each chunk, what LTTB from scratch gives (bucket sizes changing as it grows)', () => {
    fc.assert(
      fc.property(
        fc.array(value, { minLength: 0, maxLength: 400, size: 'max' }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20, size: 'max' }),
        fc.integer({ min: 1, max: 24 }),
        (ys, chunks, maxBuckets) => {
          const all = series(ys);
          const growing: XY[] = [];
          const g = new GrowingLttb();
          let at = 0;
          for (let c = 0; at < all.length; c++) {
            const next = Math.min(all.length, at + chunks[c % chunks.length]);
            for (; at < next; at++) growing.push(all[at]);
            const size = bucketSizeFor(growing.length, maxBuckets);
            // Every point's x is its index + 1: comparing the xs compares which points are drawn.
            const drawn = g.update(growing, size).map((p) => p.x - 1);
            assert.deepEqual(
              drawn,
              lttbIndices(growing, 0, growing.length, size),
              `after ${growing.length} points, buckets of ${size}`,
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a new array, or a shorter one, starts over', () => {
    const g = new GrowingLttb();
    const a = series(Array.from({ length: 500 }, (_, i) => Math.sin(i / 7)));
    g.update(a, 8);
    const b = series(Array.from({ length: 300 }, (_, i) => Math.cos(i / 5)));
    assert.deepEqual(
      g.update(b, 8),
      lttbIndices(b, 0, b.length, 8).map((j) => b[j]),
    );
    const shorter = b.slice(0, 100);
    assert.deepEqual(
      g.update(shorter, 8),
      lttbIndices(shorter, 0, 100, 8).map((j) => shorter[j]),
    );
  });

  test('one appended point to 100 000 re-reads the last buckets only, not the series', () => {
    const points = series(Array.from({ length: 100_000 }, (_, i) => Math.sin(i / 700) + 0.1 * Math.sin(i / 3)));
    let reads = 0;
    const counted = new Proxy(points, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const size = bucketSizeFor(100_001, 660);
    const g = new GrowingLttb();
    g.update(counted, size);
    reads = 0;
    lttbIndices(counted, 0, counted.length, size);
    const scratchReads = reads;
    points.push({ x: 100_001, y: 0.5 });
    reads = 0;
    const drawn = g.update(counted, size);
    const incrementalReads = reads;
    assert.deepEqual(
      drawn,
      lttbIndices(points, 0, points.length, size).map((j) => points[j]),
    );
    assert.ok(scratchReads >= points.length, `from scratch reads every point (${scratchReads})`);
    assert.ok(incrementalReads <= 4 * size + 4, `incremental read ${incrementalReads} points (buckets of ${size})`);
  });

  test('a spike standing above the rest by more than their range is always kept, up or down, at any bucket size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3000, size: 'max' }),
        fc.nat(),
        fc.boolean(),
        fc.integer({ min: 1, max: 512 }),
        (ys, where, up, size) => {
          const at = where % ys.length;
          const spiked = ys.slice();
          spiked[at] = up ? 2.5 : -1.5;
          const pts = series(spiked);
          const kept = lttbIndices(pts, 0, pts.length, size);
          assert.ok(kept.includes(at), `spike at ${at} of ${pts.length} dropped with buckets of ${size}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('the first and last points are kept, at most one point a bucket, in order; few points are all kept', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 2000, size: 'max' }), fc.integer({ min: 1, max: 64 }), (ys, size) => {
        const pts = series(ys);
        const kept = lttbIndices(pts, 0, pts.length, size);
        if (pts.length <= 2) return assert.deepEqual(kept, [...pts.keys()]);
        assert.equal(kept[0], 0);
        assert.equal(kept.at(-1), pts.length - 1);
        for (let i = 1; i < kept.length; i++) assert.ok(kept[i] > kept[i - 1]);
        const buckets = kept.slice(1, -1).map((j) => Math.floor((j - 1) / size));
        assert.equal(new Set(buckets).size, buckets.length, 'two points from one bucket');
        // A bucket keeps nothing only when it has no finite value.
        for (let b = 0; b < Math.ceil((pts.length - 2) / size); b++) {
          const some = ys.slice(1 + b * size, Math.min(1 + (b + 1) * size, pts.length - 1)).some((y) => y !== null);
          assert.equal(buckets.includes(b), some, `bucket ${b}`);
        }
      }),
    );
  });

  test('bucket sizes are the smallest power of two that fits the buckets', () => {
    assert.equal(bucketSizeFor(2, 10), 1);
    assert.equal(bucketSizeFor(12, 10), 1);
    assert.equal(bucketSizeFor(13, 10), 2);
    assert.equal(bucketSizeFor(100_002, 660), 256);
  });
});

describe('what a card draws', () => {
  const big = series(Array.from({ length: 20_000 }, (_, i) => Math.sin(i / 300)));

  test('few points a pixel: all of them, the same array; more: the incremental LTTB at 1–2 points a pixel', () => {
    const owner = {};
    const few = big.slice(0, 1200);
    assert.equal(drawnPoints(owner, few, 300), few);
    const drawn = drawnPoints(owner, big, 300);
    assert.ok(drawn.length > 300 && drawn.length <= 602, `${drawn.length} points drawn`);
    assert.deepEqual(
      drawn,
      lttbIndices(big, 0, big.length, bucketSizeFor(big.length, 600)).map((j) => big[j]),
    );
  });

  test('zoomed to a narrow x range: every point in it and one either side (full detail); a wide range is decimated', () => {
    const owner = {};
    const narrow = drawnPoints(owner, big, 300, 5000.5, 5600);
    assert.deepEqual(narrow, big.slice(4999, 5601));
    assert.equal(narrow[0].x, 5000);
    assert.equal(narrow.at(-1)!.x, 5601);
    const wide = drawnPoints(owner, big, 300, 2000, 18000);
    assert.ok(wide.length <= 602, `${wide.length} points drawn`);
    assert.equal(wide[0].x, 1999);
    assert.equal(wide.at(-1)!.x, 18001);
  });
});
