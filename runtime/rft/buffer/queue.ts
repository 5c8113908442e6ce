/**
 * `storage_type: queue`: Trinity's in-memory queue between explorer and trainer (trinity/buffer/storage/queue.py),
 * held in-process instead of in the Ray actor `queue-<name>`: writers and readers that open the same `name` in one
 * {@link QueueRegistry} share one {@link QueueStorage}.
 *
 * - Items are whole batches: one `write(exps)` is one queue item (Trinity's `put_batch`), and `capacity` counts
 *   items, not experiences (`AsyncQueue(maxsize=capacity)`). An empty batch is not queued.
 * - FIFO queue (`AsyncQueue`): a writer waits while the queue holds `capacity` items (capacity <= 0: unbounded).
 * - Priority queue (`replay_buffer.enable`, older `use_priority_queue`; `AsyncPriorityQueue`): items are kept by
 *   the priority `priority_fn` gives them (priority.ts); writers never wait: when `capacity` items are held, the new
 *   item replaces the oldest item of the lowest priority unless that priority is higher than the new item's (then the
 *   new item is dropped). A read takes the highest priority (oldest first among equals), adds 1 to every experience's
 *   use count (returned as `info.use_count`), and, if `reuse_cooldown_time` is set, puts the item back after that
 *   many seconds (re-prioritised, and only if `putIntoQueue` allows).
 * - Reads (`QueueStorage.get_batch`): experiences are taken from popped items through a pool, so one read may end
 *   in the middle of an item and the next read continues with its rest. With `minModelVersion`, items and pooled
 *   experiences of older model versions are dropped. A read waits at most `max_read_timeout` in total; then it
 *   rejects with BufferReadTimeoutError("Read incomplete batch (k/n) …"). Trinity's get_batch loses the k
 *   experiences it had gathered when it times out or stops; here they go back to the front of the pool.
 * - Writers are reference counted (`acquire`/`release`): when the last open writer finishes the queue closes, and
 *   a read that cannot be filled from what is left rejects with BufferStopError (Trinity's StopAsyncIteration).
 *   A priority queue stops scheduling reuse when it closes (items already waiting out their cooldown still return).
 * - `path` (optional): every written batch is also persisted, as QueueStorage does: a `sqlite:///` URL (or other DB
 *   URL) to the `sql` storage, a `.json`/`.jsonl` path to the `file` storage; anything else is warned about and not
 *   persisted.
 */
import type { Experience } from '../experience';
import { modelVersionOf } from './codec';
import type { PriorityFn } from './priority';
import {
  BufferReadTimeoutError,
  BufferStopError,
  type BufferPosition,
  type ExperienceReader,
  type ExperienceWriter,
  type ReadOptions,
} from './types';
import { Notifier, abortReason, checkBatchSize, linkSignals, readTimeoutMs } from './wait';

interface Item {
  exps: Experience[];
  modelVersion: number;
  useCount: number;
}

function makeItem(exps: Experience[]): Item {
  const u = exps[0].info?.use_count;
  return { exps, modelVersion: modelVersionOf(exps[0]), useCount: typeof u === 'number' ? u : 0 };
}

interface QueueBuffer {
  /** Resolves once the item is queued (or dropped by the priority rules). */
  put(item: Item, signal: AbortSignal): Promise<void>;
  /** An item if one is ready (after dropping stale ones), else undefined. */
  tryGet(minModelVersion: number): Item | undefined;
  size(): number;
  /** Every item held, in the order reads would take them, then those waiting out a reuse cooldown. */
  items(): Item[];
  close(): void;
  /** Stops delayed re-insertions (the storage is being discarded). */
  dispose(): void;
  readonly changed: Notifier;
}

class FifoQueue implements QueueBuffer {
  readonly changed = new Notifier();
  private held: Item[] = [];

  constructor(private readonly capacity: number) {}

  async put(item: Item, signal: AbortSignal): Promise<void> {
    while (this.capacity > 0 && this.held.length >= this.capacity) {
      if (signal.aborted) throw abortReason(signal);
      await this.changed.wait(Infinity, signal);
    }
    this.held.push(item);
    this.changed.notifyAll();
  }

  tryGet(minModelVersion: number): Item | undefined {
    while (this.held.length > 0) {
      const item = this.held.shift()!;
      this.changed.notifyAll(); // a writer may be waiting for room
      if (minModelVersion <= 0 || item.modelVersion >= minModelVersion) return item;
    }
    return undefined;
  }

  size(): number {
    return this.held.length;
  }

  items(): Item[] {
    return [...this.held];
  }

  close(): void {
    this.changed.notifyAll();
  }

  dispose(): void {}
}

export class PriorityQueue implements QueueBuffer {
  readonly changed = new Notifier();
  /** Ascending priorities, each with its items oldest first (Trinity's SortedDict of deques). */
  private keys: number[] = [];
  private groups = new Map<number, Item[]>();
  private count = 0;
  private closed = false;
  private timers = new Map<NodeJS.Timeout, Item>();

  constructor(
    private readonly capacity: number,
    private reuseCooldownS: number | null,
    private readonly priorityFn: PriorityFn,
  ) {}

  private insertKey(p: number): void {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.keys[mid] < p) lo = mid + 1;
      else hi = mid;
    }
    this.keys.splice(lo, 0, p);
  }

  /** `_put`: prioritise, maybe drop, evict the lowest when full. */
  private insert(item: Item): void {
    const [priority, putIntoQueue] = this.priorityFn({ modelVersion: item.modelVersion, useCount: item.useCount });
    if (!putIntoQueue) return;
    if (this.count === this.capacity) {
      const lowest = this.keys[0];
      if (lowest > priority) return;
      const g = this.groups.get(lowest)!;
      g.shift();
      this.count--;
      if (g.length === 0) {
        this.groups.delete(lowest);
        this.keys.shift();
      }
    }
    let g = this.groups.get(priority);
    if (!g) {
      g = [];
      this.groups.set(priority, g);
      this.insertKey(priority);
    }
    g.push(item);
    this.count++;
    this.changed.notifyAll();
  }

  async put(item: Item): Promise<void> {
    this.insert(item);
  }

  tryGet(minModelVersion: number): Item | undefined {
    while (this.count > 0) {
      const top = this.keys[this.keys.length - 1];
      const g = this.groups.get(top)!;
      const item = g.shift()!;
      this.count--;
      if (g.length === 0) {
        this.groups.delete(top);
        this.keys.pop();
      }
      if (minModelVersion > 0 && item.modelVersion < minModelVersion) continue;
      const used: Item = {
        exps: item.exps.map((e) => ({ ...e, info: { ...(e.info ?? {}), use_count: item.useCount + 1 } })),
        modelVersion: item.modelVersion,
        useCount: item.useCount + 1,
      };
      if (this.reuseCooldownS !== null) {
        const t = setTimeout(() => {
          this.timers.delete(t);
          this.insert(used);
        }, this.reuseCooldownS * 1000);
        this.timers.set(t, used);
      }
      return used;
    }
    return undefined;
  }

  size(): number {
    return this.count;
  }

  items(): Item[] {
    const out: Item[] = [];
    for (let i = this.keys.length - 1; i >= 0; i--) out.push(...this.groups.get(this.keys[i])!);
    return [...out, ...this.timers.values()];
  }

  /** The priorities held, highest first (for tests and diagnostics). */
  priorities(): number[] {
    const out: number[] = [];
    for (let i = this.keys.length - 1; i >= 0; i--)
      for (let j = 0; j < this.groups.get(this.keys[i])!.length; j++) out.push(this.keys[i]);
    return out;
  }

  close(): void {
    this.closed = true;
    this.reuseCooldownS = null;
    this.changed.notifyAll();
  }

  isClosed(): boolean {
    return this.closed;
  }

  dispose(): void {
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
  }
}

/** Where a queue persists what is written to it (QueueStorage's `writer`). */
export interface PersistWriter {
  write(exps: Experience[]): Promise<void>;
  finish(): Promise<void>;
}

export interface QueueStorageOptions {
  name: string;
  capacity: number;
  maxReadTimeoutS: number;
  priority?: { fn: PriorityFn; reuseCooldownS: number | null };
  persist?: PersistWriter;
}

/** Trinity's QueueStorage: the shared queue, its read pool, its writers' reference count. */
export class QueueStorage {
  readonly queue: QueueBuffer;
  private pool: Experience[] = [];
  private writers = 0;
  private readersOpen = 0;
  private everRead = false;
  private writerAborts = new Set<AbortController>();
  closed = false;
  /** All readers left: writers can no longer make progress. */
  abandoned = false;
  onDisposed?: () => void;

  constructor(readonly opts: QueueStorageOptions) {
    if (opts.priority) {
      if (!Number.isInteger(opts.capacity) || opts.capacity < 1)
        throw new RangeError(`a priority queue needs capacity >= 1, got ${opts.capacity}`);
      this.queue = new PriorityQueue(opts.capacity, opts.priority.reuseCooldownS, opts.priority.fn);
    } else {
      this.queue = new FifoQueue(opts.capacity);
    }
  }

  get name(): string {
    return this.opts.name;
  }

  /** Items in the queue (not counting the read pool). */
  length(): number {
    return this.queue.size();
  }

  /**
   * What is waiting to be read, as batches: the read pool's rest, then the queued items in read order, then items
   * waiting out a reuse cooldown (each experience carries its `info.use_count`). A run keeps this in its checkpoint.
   */
  snapshot(): Experience[][] {
    const items = this.queue.items().map((i) => i.exps);
    return this.pool.length ? [[...this.pool], ...items] : items;
  }

  /** Puts a snapshot back (prioritised again by its use counts), without persisting it to `path` a second time. */
  async restore(batches: readonly Experience[][], signal: AbortSignal): Promise<void> {
    for (const b of batches) if (b.length) await this.queue.put(makeItem(b), signal);
  }

  openWriter(): ExperienceWriter {
    if (this.closed) throw new Error(`queue "${this.name}" is closed: all of its writers finished`);
    this.writers++;
    let finished = false;
    const inFlight = new Set<AbortController>();
    return {
      write: async (exps) => {
        if (finished) throw new Error(`queue "${this.name}": write after finish()`);
        if (this.abandoned) throw new BufferStopError(`queue "${this.name}": every reader closed`, 'closed', 0, 0);
        if (exps.length === 0) return;
        const ctl = new AbortController();
        inFlight.add(ctl);
        this.writerAborts.add(ctl);
        try {
          await this.queue.put(makeItem(exps), ctl.signal);
        } finally {
          inFlight.delete(ctl);
          this.writerAborts.delete(ctl);
        }
        if (this.opts.persist) await this.opts.persist.write(exps);
      },
      finish: async () => {
        if (finished) return;
        finished = true;
        for (const c of inFlight)
          c.abort(new Error(`queue "${this.name}": writer finished while a write was waiting for room`));
        if (--this.writers <= 0) await this.close();
      },
    };
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.close();
    if (this.opts.persist) await this.opts.persist.finish();
    this.maybeDispose();
  }

  /** `stopped()`: closed and nothing left in the queue. */
  private stopped(): boolean {
    return this.closed && this.queue.size() === 0;
  }

  /** Forgets the queue once it is closed and every reader that opened it has closed (unread data waits for a reader). */
  private maybeDispose(): void {
    if (this.closed && this.everRead && this.readersOpen === 0) {
      this.queue.dispose();
      this.onDisposed?.();
    }
  }

  openReader(resumeFrom?: BufferPosition): ExperienceReader {
    if (resumeFrom !== undefined && resumeFrom.storage !== 'queue') {
      throw new Error(`resumeFrom is a ${resumeFrom.storage} position; "${this.name}" is a queue`);
    }
    this.readersOpen++;
    this.everRead = true;
    this.abandoned = false;
    let delivered = resumeFrom?.delivered ?? 0;
    let closed = false;
    let reading = false;
    const closer = new AbortController();
    return {
      read: async (batchSize, opts = {}) => {
        checkBatchSize(batchSize);
        if (closed) throw new BufferStopError(`queue "${this.name}": reader closed`, 'closed', 0, batchSize);
        if (reading) throw new Error(`queue "${this.name}": a read is already in progress`);
        reading = true;
        try {
          const link = linkSignals(opts.signal, closer.signal);
          let batch: Experience[];
          try {
            batch = await this.getBatch(batchSize, opts, closer.signal, link.signal);
          } finally {
            link.dispose();
          }
          delivered += batch.length;
          return batch;
        } finally {
          reading = false;
        }
      },
      state: () => ({ storage: 'queue', name: this.name, delivered }),
      close: () => {
        if (closed) return;
        closed = true;
        closer.abort();
        if (--this.readersOpen === 0 && !this.closed) {
          // Trinity stops the explorer when the trainer is done; here writers waiting for room give up.
          this.abandoned = true;
          const stop = new BufferStopError(`queue "${this.name}": every reader closed`, 'closed', 0, 0);
          for (const c of this.writerAborts) c.abort(stop);
        }
        this.maybeDispose();
      },
    };
  }

  /** `get_batch`. */
  private async getBatch(
    batchSize: number,
    opts: ReadOptions,
    closer: AbortSignal,
    signal: AbortSignal,
  ): Promise<Experience[]> {
    const minVersion = opts.minModelVersion ?? 0;
    const timeout = readTimeoutMs(this.opts.maxReadTimeoutS, opts.timeoutMs);
    const deadline = Date.now() + timeout;
    const result: Experience[] = [];
    const giveBack = (): void => {
      this.pool.unshift(...result);
    };
    for (;;) {
      while (this.pool.length > 0 && result.length < batchSize) {
        const e = this.pool.shift()!;
        if (minVersion > 0 && modelVersionOf(e) < minVersion) continue;
        result.push(e);
      }
      if (result.length >= batchSize) return result;
      const item = this.queue.tryGet(minVersion);
      if (item) {
        this.pool.push(...item.exps);
        continue;
      }
      if (this.stopped()) {
        giveBack();
        throw new BufferStopError(
          `queue "${this.name}" is closed with ${result.length} of ${batchSize} experiences left`,
          'finished',
          result.length,
          batchSize,
        );
      }
      let r: 'changed' | 'timeout';
      try {
        r = await this.queue.changed.wait(deadline, signal);
      } catch (e) {
        giveBack();
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        if (closer.aborted)
          throw new BufferStopError(`queue "${this.name}": reader closed`, 'closed', result.length, batchSize);
        throw e;
      }
      if (r === 'timeout' && Date.now() >= deadline) {
        const k = result.length;
        giveBack();
        throw new BufferReadTimeoutError(k, batchSize);
      }
    }
  }
}

/** The named queues of one process (Trinity's Ray actors `queue-<name>` in one namespace). */
export class QueueRegistry {
  private queues = new Map<string, QueueStorage>();

  get(name: string): QueueStorage | undefined {
    return this.queues.get(name);
  }

  getOrCreate(name: string, create: () => QueueStorage): QueueStorage {
    let q = this.queues.get(name);
    if (!q) {
      q = create();
      const made = q;
      made.onDisposed = () => {
        if (this.queues.get(name) === made) this.queues.delete(name);
      };
      this.queues.set(name, q);
    }
    return q;
  }

  delete(name: string): void {
    const q = this.queues.get(name);
    q?.queue.dispose();
    this.queues.delete(name);
  }
}

export const defaultQueueRegistry = new QueueRegistry();
