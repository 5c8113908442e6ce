/**
 * The cards waiting to be redrawn, drawn across animation frames within a per-frame time budget, so that a burst of
 * updates to many big charts never holds one frame for all of them. A card is queued by key, not with its data: it
 * is drawn once, in a coming frame, with whatever its data is then (the latest wins; no stale redraw).
 *
 * Order: the earliest deadline first. A card's deadline is when it was queued plus an allowance: none for a card
 * wholly in view, up to `inViewSpreadMs` for one partly in view (the less of it is seen, the more), `maxWaitMs` for
 * one out of view; cards with the same deadline go most recently changed first. So after a burst the cards in view
 * are drawn first, the most visible first; under a stream the frames cannot keep up with, the cards in view share
 * the frames, and a card out of view still waits no longer than about `maxWaitMs` (nothing starves; one scrolled
 * into view comes first).
 * A frame always draws its first card; it starts no other once `budgetMs` is spent, nor one whose last draw took
 * longer than what is left, so a frame's chart work exceeds the budget by at most one card.
 *
 * Pure apart from the clock and the frame callback it is given (the tests give it their own).
 */

export interface DrawQueueOptions<K> {
  /**
   * Chart work per frame, in ms (default 3). It times only the script: Chromium then rasterises each drawn canvas's
   * recording and hands it to the compositor, about as much time again, so 3 ms keeps whole frames under 16 ms
   * where 5 ms did not (docs/dashboard-performance.md).
   */
  budgetMs?: number;
  /** The allowance of a card out of view (ms, default 1000): it goes first once it has waited this much longer. */
  maxWaitMs?: number;
  /** The allowance of a card barely in view (ms, default 100); one wholly in view has none. */
  inViewSpreadMs?: number;
  /** How much of a key's card is in view: 0 (off screen or hidden) to 1 (all of it). */
  visibility?: (key: K) => number;
  now?: () => number;
  requestFrame?: (callback: () => void) => unknown;
  /** Runs first in each frame the queue takes (it may queue more keys). */
  beforeFrame?: () => void;
  /** Runs last in each frame the queue takes, with what it drew. */
  afterFrame?: (report: FrameReport<K>) => void;
}

/** One frame's draws, by the queue's clock. */
export interface FrameReport<K> {
  start: number;
  budgetMs: number;
  draws: { key: K; start: number; end: number }[];
  /** Keys still waiting after this frame. */
  left: number;
}

interface Waiting {
  /** When it was queued (the first time since it was last drawn). */
  since: number;
  /** The order of its latest change (higher: more recent). */
  changed: number;
}

export class DrawQueue<K> {
  readonly budgetMs: number;
  private readonly maxWaitMs: number;
  private readonly inViewSpreadMs: number;
  private readonly visibility: (key: K) => number;
  private readonly now: () => number;
  private readonly requestFrame: (callback: () => void) => unknown;
  private readonly waiting = new Map<K, Waiting>();
  /** How long each key's last draw took: a frame does not start a draw it expects to overrun the budget. */
  private readonly cost = new Map<K, number>();
  private changes = 0;
  private scheduled = false;

  constructor(
    private readonly draw: (key: K) => void,
    private readonly options: DrawQueueOptions<K> = {},
  ) {
    this.budgetMs = options.budgetMs ?? 3;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
    this.inViewSpreadMs = options.inViewSpreadMs ?? 100;
    this.visibility = options.visibility ?? (() => 0);
    this.now = options.now ?? (() => performance.now());
    this.requestFrame =
      options.requestFrame ??
      // The browser's (this module is also compiled without the DOM's types, for its tests in Node).
      ((cb) => (globalThis as unknown as { requestAnimationFrame(f: () => void): number }).requestAnimationFrame(cb));
  }

  /** Keys waiting to be drawn. */
  get size(): number {
    return this.waiting.size;
  }

  has(key: K): boolean {
    return this.waiting.has(key);
  }

  /** `key`'s card needs drawing: once, in a coming frame, with its data as it is then. */
  add(key: K): void {
    const w = this.waiting.get(key);
    this.changes += 1;
    if (w) w.changed = this.changes;
    else this.waiting.set(key, { since: this.now(), changed: this.changes });
    this.schedule();
  }

  /** Forgets a key (its card is gone). */
  delete(key: K): void {
    this.waiting.delete(key);
    this.cost.delete(key);
  }

  /** Forgets every key (the cards were replaced). */
  clear(): void {
    this.waiting.clear();
    this.cost.clear();
  }

  /** Asks for a frame even with nothing queued (for `beforeFrame`'s work). */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.requestFrame(() => this.frame());
  }

  /** The waiting keys in the order a frame draws them. */
  order(): K[] {
    const entries = [...this.waiting].map(([key, w]) => {
      const seen = Math.min(1, Math.max(0, this.visibility(key)));
      const allowance = seen > 0 ? (1 - seen) * this.inViewSpreadMs : this.maxWaitMs;
      return { key, deadline: w.since + allowance, changed: w.changed };
    });
    entries.sort((a, b) => a.deadline - b.deadline || b.changed - a.changed);
    return entries.map((e) => e.key);
  }

  private frame(): void {
    this.scheduled = false;
    const draws: FrameReport<K>['draws'] = [];
    let start = this.now();
    try {
      this.options.beforeFrame?.();
      start = this.now();
      for (const key of this.order()) {
        if (!this.waiting.has(key)) continue;
        const at = this.now();
        const left = this.budgetMs - (at - start);
        if (draws.length > 0 && (left <= 0 || (this.cost.get(key) ?? 0) > left)) break;
        // Out of the queue before drawing: a change while it draws queues it again.
        this.waiting.delete(key);
        try {
          this.draw(key);
        } finally {
          const end = this.now();
          this.cost.set(key, end - at);
          draws.push({ key, start: at, end });
        }
      }
    } finally {
      if (this.waiting.size) this.schedule();
      this.options.afterFrame?.({ start, budgetMs: this.budgetMs, draws, left: this.waiting.size });
    }
  }
}
