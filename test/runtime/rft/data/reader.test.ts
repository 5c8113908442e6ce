/**
 * Batches and selectors, bit for bit with Trinity. Expected values come from running Trinity's own
 * trinity/buffer/reader/file_reader.py (`_HFBatchReader`), trinity/buffer/selector/selector.py and
 * trinity/buffer/task_scheduler.py at 10796ed (with NumPy 2.4) on the same inputs; the NumPy values from NumPy 2.4.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultRng, seedSequenceState } from '../../../../runtime/rft/numpy/numpy-random';
import { BatchReader, MultiReaderScheduler, type BatchReaderOptions } from '../../../../runtime/rft/data/reader';

const rows = (n: number) => Array.from({ length: n }, (_, i) => i);
const batches = (n: number, opts: BatchReaderOptions) => [...new BatchReader(rows(n), opts)].map((b) => b.indices);

describe('numpy default_rng', () => {
  it('SeedSequence(42).generate_state(4, uint64)', () => {
    const w = seedSequenceState(42, 8);
    const u64 = (i: number) => ((BigInt(w[2 * i + 1]) << 32n) | BigInt(w[2 * i])).toString(16);
    assert.deepEqual([0, 1, 2, 3].map(u64), [
      '9f1e2e6dcd540ab7',
      'd57873dc79fb94b6',
      '7d282a1b64d420b7',
      '336579714692d5ff',
    ]);
  });

  it('permutation', () => {
    assert.deepEqual(defaultRng(42).permutation(10), [5, 6, 0, 7, 3, 2, 4, 9, 1, 8]);
    assert.deepEqual(defaultRng(43).permutation(17), [12, 10, 14, 2, 15, 16, 8, 7, 11, 1, 5, 13, 9, 4, 6, 0, 3]);
    assert.deepEqual(defaultRng(0).permutation(1), [0]);
    assert.deepEqual(defaultRng(2n ** 40n + 5n).permutation(12), [9, 5, 1, 2, 8, 3, 0, 10, 7, 4, 6, 11]);
    const big = defaultRng(7).permutation(100000);
    assert.deepEqual(big.slice(0, 8), [45070, 71435, 99538, 45453, 95412, 41945, 31028, 51479]);
    assert.deepEqual(big.slice(-5), [87647, 63842, 27285, 16809, 84619]);
  });

  it('shuffle of a list', () => {
    assert.deepEqual(defaultRng(3).shuffle([0, 0, 1, 1, 1]), [1, 1, 0, 1, 0]);
  });

  it('choice without replacement: Floyd, and the tail shuffle for large populations', () => {
    assert.deepEqual(defaultRng(42).choiceWithoutReplacement(17, 4), [7, 1, 10, 11]);
    assert.deepEqual(defaultRng(46).choiceWithoutReplacement(10, 10), [2, 1, 8, 6, 4, 3, 5, 0, 7, 9]);
    const floyd = defaultRng(12).choiceWithoutReplacement(5000, 30);
    assert.deepEqual([...floyd.slice(0, 6), ...floyd.slice(-3)], [2404, 892, 2361, 4470, 573, 1247, 2704, 3341, 2897]);
    const tail = defaultRng(11).choiceWithoutReplacement(20000, 500);
    assert.deepEqual(
      [...tail.slice(0, 6), ...tail.slice(-3)],
      [17843, 1148, 17062, 18974, 8816, 12236, 15940, 2571, 2676],
    );
    assert.throws(() => defaultRng(1).choiceWithoutReplacement(3, 4), /larger sample/);
  });
});

describe('BatchReader (Trinity _HFBatchReader + selectors)', () => {
  it('no selector: in order, cycling epochs, the last incomplete batch dropped', () => {
    assert.deepEqual(batches(5, { batchSize: 2, totalEpochs: 2 }), [
      [0, 1],
      [2, 3],
      [4, 0],
      [1, 2],
      [3, 4],
    ]);
  });

  it('eval (drop_last false): one pass, the last incomplete batch kept', () => {
    assert.deepEqual(batches(5, { batchSize: 2, dropLast: false }), [[0, 1], [2, 3], [4]]);
  });

  it('resuming from an offset (the taskset index)', () => {
    assert.deepEqual(batches(5, { batchSize: 2, totalEpochs: 2, offset: 3 }), [
      [3, 4],
      [0, 1],
      [2, 3],
    ]);
  });

  it('total_steps overrides epochs: batch_size × total_steps rows', () => {
    assert.deepEqual(batches(5, { batchSize: 3, totalSteps: 4 }), [
      [0, 1, 2],
      [3, 4, 0],
      [1, 2, 3],
      [4, 0, 1],
    ]);
  });

  it('sequential selector', () => {
    assert.deepEqual(batches(5, { batchSize: 2, totalEpochs: 2, selector: { selector_type: 'sequential' } }), [
      [0, 1],
      [2, 3],
      [4, 0],
      [1, 2],
      [3, 4],
    ]);
  });

  it("shuffle selector: NumPy permutations; Trinity reshuffles with the ending epoch's seed, so epochs 0 and 1 share an order", () => {
    const shuffle = { selector_type: 'shuffle', seed: 42 };
    assert.deepEqual(batches(7, { batchSize: 3, totalEpochs: 2, selector: shuffle }), [
      [3, 2, 6],
      [4, 1, 5],
      [0, 3, 2],
      [6, 4, 1],
    ]);
    assert.deepEqual(batches(6, { batchSize: 2, totalEpochs: 3, selector: shuffle }), [
      [3, 2],
      [5, 4],
      [1, 0],
      [3, 2],
      [5, 4],
      [1, 0],
      [5, 1],
      [4, 2],
      [0, 3],
    ]);
  });

  it('random selector: NumPy choice without replacement, reseeded each batch', () => {
    assert.deepEqual(batches(10, { batchSize: 4, totalSteps: 3, selector: { selector_type: 'random', seed: 42 } }), [
      [4, 0, 5, 6],
      [7, 0, 3, 1],
      [8, 5, 6, 9],
    ]);
  });

  it('offline_easy2hard: by feature, highest first, ties by higher index', () => {
    const r = batches(5, {
      batchSize: 2,
      selector: { selector_type: 'offline_easy2hard', feature_keys: ['f'] },
      column: () => [0.5, 0.9, 0.1, 0.9, 0.3],
    });
    assert.deepEqual(r, [
      [3, 1],
      [0, 4],
    ]);
  });

  it('state, empty datasets, unsupported selectors', () => {
    const r = new BatchReader(rows(4), { batchSize: 3 });
    r.next();
    assert.deepEqual(r.state(), { current_index: 3 });
    assert.equal(r.next(), null, 'one row left: dropped');
    assert.throws(() => new BatchReader([], { batchSize: 1, name: 'x' }), /Dataset \[x\] is empty/);
    assert.throws(
      () => new BatchReader(rows(3), { batchSize: 1, selector: { selector_type: 'lottery' } }),
      /'lottery' is not supported here/,
    );
  });
});

describe('MultiReaderScheduler (Trinity TasksetScheduler)', () => {
  const run = (specs: [number, string, number][], batchSize: number, totalEpochs: number) => {
    const readers = specs.map(
      ([n, selector_type, seed]) =>
        new BatchReader(rows(n), { batchSize, totalEpochs, selector: { selector_type, seed } }),
    );
    const s = new MultiReaderScheduler(readers, { batchSize, totalEpochs });
    const out: number[][][] = [];
    for (let b = s.next(); b; b = s.next()) out.push(b.indices.map((ix, i) => [b.readerIds[i], ix]));
    return out;
  };

  it('two sequential tasksets interleaved by a per-epoch shuffle', () => {
    assert.deepEqual(
      run(
        [
          [3, 'sequential', 42],
          [4, 'sequential', 42],
        ],
        2,
        2,
      ),
      [
        [
          [0, 0],
          [1, 0],
        ],
        [
          [1, 1],
          [1, 2],
        ],
        [
          [1, 3],
          [0, 1],
        ],
        [
          [0, 2],
          [1, 0],
        ],
        [
          [0, 0],
          [0, 1],
        ],
        [
          [1, 1],
          [0, 2],
        ],
        [
          [1, 2],
          [1, 3],
        ],
      ],
    );
  });

  it('a sequential and a shuffled taskset', () => {
    assert.deepEqual(
      run(
        [
          [3, 'sequential', 42],
          [5, 'shuffle', 7],
        ],
        3,
        1,
      ),
      [
        [
          [0, 0],
          [1, 2],
          [1, 0],
        ],
        [
          [1, 4],
          [1, 1],
          [0, 1],
        ],
      ],
    );
  });
});
