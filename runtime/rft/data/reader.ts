/**
 * Batches over a loaded dataset as Trinity reads them (trinity/buffer/reader/file_reader.py `_HFBatchReader`,
 * trinity/buffer/selector/selector.py, trinity/buffer/task_scheduler.py):
 *  - the reader serves `total_samples` = `batch_size × total_steps` when `total_steps` is set, else
 *    `rows × total_epochs`, cycling over the rows; when they run out, a training reader (`drop_last`) stops without
 *    returning the incomplete batch, an eval reader returns it;
 *  - without a selector (one sequential taskset: Trinity's SimpleTasksetScheduler) rows come in order from `offset`
 *    (the taskset's `index`); with one, the selector picks indices: `sequential`, `shuffle` (a NumPy permutation per
 *    epoch seeded with `seed + epoch`), `random` (NumPy `choice` without replacement per batch, seeded with
 *    `seed + rows served`), `offline_easy2hard` (rows sorted by `feature_keys`, highest first), `difficulty_based`
 *    (difficulty-selector.ts: tasks whose estimated pass rate is nearest a target, updated by `feedback`);
 *  - several tasksets (or any non-sequential selector) go through Trinity's TasksetScheduler: each step draws its
 *    `batch_size` slots from a per-epoch shuffle (seeded with the epoch) of all tasksets' rows, then reads that many
 *    from each taskset.
 */
import type { DataSelectorConfig } from '../../config/types.generated';
import { difficultyBasedSelector } from './difficulty-selector';
import { DataError } from '../../config/datasets/data-error';
import { defaultRng } from '../numpy/numpy-random';

export interface BatchReaderOptions {
  /** Rows per batch (Trinity: `buffer.batch_size` for tasksets, `train_batch_size` for experience buffers). */
  batchSize: number;
  /** Default 1. */
  totalEpochs?: number;
  /** When set, the reader serves `batchSize × totalSteps` rows regardless of epochs. */
  totalSteps?: number | null;
  /** Training readers drop the last incomplete batch (default true); eval readers keep it. */
  dropLast?: boolean;
  /** Rows already served (resume; Trinity's `index` / `current_index`): counts against the total. */
  offset?: number;
  /**
   * Where the selector resumes, when it differs from `offset` (default `offset`). Trinity's TasksetScheduler restores
   * only the selectors' `current_index` from its checkpoint; their readers count served rows from 0 again.
   */
  selectorOffset?: number;
  /** null/undefined: rows in order without a selector. */
  selector?: Partial<DataSelectorConfig> | null;
  /** Column values by key, for the `feature_keys` of `offline_easy2hard` and `difficulty_based`. */
  column?: (key: string) => unknown[];
  /** For messages. */
  name?: string;
}

export interface Batch<T> {
  items: T[];
  /** Dataset index of each item. */
  indices: number[];
}

/** What Trinity's `pass_rate_calculator` hands back to the taskset scheduler: per taskset, each task's mean reward. */
export interface SelectorFeedback {
  tasksetId: number;
  indices: number[];
  values: number[];
}

interface Selector {
  getIndices(batchSize: number): number[];
  currentIndex: number;
  /** Adaptive selectors learn from the rewards of the rows they picked; the others ignore it. */
  feedback?(indices: readonly number[], values: readonly number[]): void;
}

function sequentialSelector(size: number, start: number): Selector {
  return {
    currentIndex: start,
    getIndices(bs) {
      const s = this.currentIndex % size;
      this.currentIndex += bs;
      // Trinity's SequentialSelector wraps once: range(start, size) + range(0, end - size).
      return s + bs <= size ? range(s, s + bs) : [...range(s, size), ...range(0, s + bs - size)];
    },
  };
}

function range(a: number, b: number): number[] {
  const out: number[] = [];
  for (let i = a; i < b; i++) out.push(i);
  return out;
}

function shuffleSelector(size: number, seed: number, start: number): Selector {
  let orders: number[] = [];
  const sel: Selector & { reorder(): void } = {
    currentIndex: start,
    reorder() {
      orders = defaultRng(seed + Math.floor(this.currentIndex / size)).permutation(size);
    },
    getIndices(bs) {
      const s = this.currentIndex % size;
      const end = s + bs;
      let ret: number[];
      if (end <= size) {
        ret = orders.slice(s, end);
        // Trinity reshuffles when an epoch ends, before current_index moves on: the seed is still this epoch's.
        if (end === size) this.reorder();
      } else {
        ret = orders.slice(s);
        this.reorder();
        ret = ret.concat(orders.slice(0, end - size));
      }
      this.currentIndex += bs;
      return ret;
    },
  };
  sel.reorder();
  return sel;
}

function randomSelector(size: number, seed: number, start: number): Selector {
  return {
    currentIndex: start,
    getIndices(bs) {
      const out = defaultRng(seed + this.currentIndex).choiceWithoutReplacement(size, bs);
      this.currentIndex += bs;
      return out;
    },
  };
}

function easyToHardSelector(size: number, features: number[][], start: number): Selector {
  // sorted([feat..., i])[::-1]: descending by features, ties by descending index.
  const keyed = features.map((f, i) => [...f, i]);
  keyed.sort((a, b) => {
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
  });
  const sorted = keyed.reverse().map((k) => k[k.length - 1]);
  return {
    currentIndex: start,
    getIndices(bs) {
      const s = this.currentIndex % size;
      const end = s + bs;
      this.currentIndex += bs;
      return end <= size ? sorted.slice(s, end) : [...sorted.slice(s), ...sorted.slice(0, end - size)];
    },
  };
}

export const SUPPORTED_SELECTORS = [
  'sequential',
  'shuffle',
  'random',
  'offline_easy2hard',
  'difficulty_based',
] as const;

/** The `feature_keys` columns as numbers (booleans as 0/1), one array per key. */
function featureColumns(
  keys: readonly string[],
  type: string,
  name: string,
  column?: (key: string) => unknown[],
): number[][] {
  if (!column) throw new DataError(`${name}: data_selector ${type} needs the dataset's columns`);
  return keys.map((k) => {
    const values = column(k);
    values.forEach((v, i) => {
      if (typeof v !== 'number' && typeof v !== 'boolean') {
        throw new DataError(
          `${name}: feature '${k}' of row ${i} is ${JSON.stringify(v)}, not a number (${type} reads it)`,
          undefined,
          undefined,
          k,
        );
      }
    });
    return values.map(Number);
  });
}

function makeSelector(
  cfg: Partial<DataSelectorConfig>,
  size: number,
  start: number,
  name: string,
  column?: (key: string) => unknown[],
): Selector {
  const type = cfg.selector_type ?? 'sequential';
  const seed = cfg.seed ?? 42;
  switch (type) {
    case 'sequential':
      return sequentialSelector(size, start);
    case 'shuffle':
      return shuffleSelector(size, seed, start);
    case 'random':
      return randomSelector(size, seed, start);
    case 'offline_easy2hard': {
      const keys = cfg.feature_keys ?? [];
      if (keys.length === 0) throw new DataError(`${name}: data_selector offline_easy2hard needs feature_keys`);
      const cols = featureColumns(keys, type, name, column);
      return easyToHardSelector(
        size,
        range(0, size).map((i) => cols.map((c) => c[i])),
        start,
      );
    }
    case 'difficulty_based': {
      const keys = cfg.feature_keys ?? [];
      if (keys.length !== 2)
        throw new DataError(
          `${name}: DifficultyBasedSelector requires exactly 2 feature keys, but got ${keys.length}.`,
        );
      const [f0, f1] = featureColumns(keys, type, name, column);
      return difficultyBasedSelector(
        f0.map((v, i) => [v, f1[i]] as const),
        { seed, kwargs: cfg.kwargs ?? {}, start, name },
      );
    }
    default:
      throw new DataError(
        `${name}: data_selector '${type}' is not supported here (supported: ${SUPPORTED_SELECTORS.join(', ')})`,
      );
  }
}

/** One dataset's reader: Trinity's `_HFBatchReader` with an optional selector. */
export class BatchReader<T> {
  readonly size: number;
  readonly totalSamples: number;
  readonly batchSize: number;
  private readonly dropLast: boolean;
  private readonly selector: Selector | null;
  private readonly name: string;
  /** Rows served so far (Trinity's `current_offset`). */
  currentOffset: number;

  constructor(
    private readonly items: readonly T[],
    opts: BatchReaderOptions,
  ) {
    this.name = opts.name ?? 'dataset';
    this.size = items.length;
    if (this.size === 0) throw new DataError(`Dataset [${this.name}] is empty and cannot be read in batches.`);
    if (!Number.isInteger(opts.batchSize) || opts.batchSize <= 0)
      throw new DataError(`${this.name}: batch size must be a positive integer, got ${opts.batchSize}`);
    this.batchSize = opts.batchSize;
    this.dropLast = opts.dropLast ?? true;
    this.currentOffset = opts.offset ?? 0;
    this.totalSamples =
      opts.totalSteps != null ? opts.batchSize * opts.totalSteps : this.size * (opts.totalEpochs ?? 1);
    this.selector = opts.selector
      ? makeSelector(opts.selector, this.size, opts.selectorOffset ?? opts.offset ?? 0, this.name, opts.column)
      : null;
  }

  /** The next batch, or null where Trinity raises StopIteration (the reader is exhausted). */
  next(batchSize = this.batchSize): Batch<T> | null {
    const items: T[] = [];
    const indices: number[] = [];
    if (this.selector) {
      let picked: number[];
      try {
        picked = this.selector.getIndices(batchSize);
      } catch (e) {
        throw new DataError(`${this.name}: ${(e as Error).message} (batch of ${batchSize} from ${this.size} rows)`);
      }
      for (const i of picked) {
        // Trinity asserts 0 <= i < dataset_size (a batch larger than the dataset breaks the sequential selector).
        if (!(i >= 0 && i < this.size))
          throw new DataError(
            `${this.name}: the selector picked row ${i} of ${this.size}: batch size ${batchSize} is larger than the dataset`,
          );
        if (this.currentOffset >= this.totalSamples) {
          if (!this.dropLast && items.length > 0) break;
          return null;
        }
        items.push(this.items[i]);
        indices.push(i);
        this.currentOffset++;
      }
      return { items, indices };
    }
    while (items.length < batchSize) {
      if (this.currentOffset >= this.totalSamples) {
        if (!this.dropLast && items.length > 0) break;
        return null;
      }
      const i = this.currentOffset % this.size;
      items.push(this.items[i]);
      indices.push(i);
      this.currentOffset++;
    }
    return { items, indices };
  }

  /** Trinity's `FileReader.feedback`: the rewards of rows this reader served, for an adaptive selector. */
  feedback(indices: readonly number[], values: readonly number[]): void {
    this.selector?.feedback?.(indices, values);
  }

  /** What Trinity checkpoints: the selector's `current_index`, or the reader's offset. */
  state(): { current_index: number } {
    return { current_index: this.selector ? this.selector.currentIndex : this.currentOffset };
  }

  *[Symbol.iterator](): Iterator<Batch<T>> {
    for (let b = this.next(); b !== null; b = this.next()) yield b;
  }
}

/** Trinity's TasksetScheduler: several readers interleaved by a per-epoch shuffle of their rows. */
export class MultiReaderScheduler<T> {
  private step: number;
  private epoch: number;
  private orders: number[];
  private readonly baseIds: number[];
  readonly maxSteps: number;

  constructor(
    private readonly readers: readonly BatchReader<T>[],
    private readonly opts: { batchSize: number; totalEpochs?: number; totalSteps?: number | null; step?: number },
  ) {
    this.baseIds = readers.flatMap((r, i) => new Array<number>(r.size).fill(i));
    if (this.baseIds.length === 0) throw new DataError('Empty tasksets provided!');
    this.step = opts.step ?? 0;
    this.epoch = Math.floor((this.step * opts.batchSize) / this.baseIds.length);
    this.orders = this.buildOrders(this.epoch);
    this.maxSteps = opts.totalSteps
      ? opts.totalSteps
      : Math.floor(((opts.totalEpochs ?? 1) * this.baseIds.length) / opts.batchSize);
  }

  private buildOrders(epoch: number): number[] {
    return defaultRng(epoch).shuffle([...this.baseIds]);
  }

  /** The next batch with the taskset (reader) each item came from, or null when the schedule is done. */
  next(): { items: T[]; indices: number[]; readerIds: number[] } | null {
    if (this.step >= this.maxSteps) return null;
    const bs = this.opts.batchSize;
    const n = this.baseIds.length;
    const start = (this.step * bs) % n;
    const end = start + bs;
    let ids: number[];
    if (end <= n) {
      ids = this.orders.slice(start, end);
      if (end === n) this.orders = this.buildOrders(++this.epoch);
    } else {
      ids = this.orders.slice(start);
      this.orders = this.buildOrders(++this.epoch);
      ids = ids.concat(this.orders.slice(0, end - n));
    }
    // Python's Counter: first-seen order.
    const counts = new Map<number, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    const out = { items: [] as T[], indices: [] as number[], readerIds: [] as number[] };
    for (const [id, count] of counts) {
      const b = this.readers[id].next(count);
      if (b === null) return null; // StopAsyncIteration from that taskset
      out.items.push(...b.items);
      out.indices.push(...b.indices);
      out.readerIds.push(...b.items.map(() => id));
    }
    this.step++;
    return out;
  }
}
