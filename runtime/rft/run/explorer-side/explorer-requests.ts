/**
 * The requests one explorer side serves (both mode's driver, in this thread or the worker): one at a time, in the
 * order they came, except that weights go first. Weights that arrive while a step runs are applied when it ends,
 * before the next queued request, so a fully asynchronous explorer with batches queued takes the trainer's newest
 * weights at its next batch (Trinity applies them as soon as they are offered, trinity/explorer/explorer.py
 * `_watch_trainer_sync_signal`, f3c8dec6769c; here between batches). A newer offer replaces one still waiting; both
 * callers hear back when it is applied. `close` drops the requests that have not started.
 */
import type { EvalOutput } from '../../explorer/explore-step';
import type { ExplorerSide, ExplorerStepResult } from './explorer-side';

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (e: Error) => void;
}

interface Job extends Waiter {
  run: () => unknown;
}

interface WeightsOffer {
  weights: Float32Array[];
  version: number;
  waiters: Waiter[];
}

export class ExplorerRequests {
  private readonly queue: Job[] = [];
  private offer?: WeightsOffer;
  private busy = false;
  private closed = false;

  constructor(private readonly side: ExplorerSide) {}

  step(step: number): Promise<ExplorerStepResult | null> {
    return this.enqueue(() => this.side.exploreStep(step));
  }

  evaluate(step: number): Promise<EvalOutput> {
    return this.enqueue(() => this.side.evaluate(step));
  }

  /** Resolves once the weights are the side's (or a newer offer replaced them and was applied). */
  setWeights(weights: Float32Array[], version: number): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the explorer is closed'));
    return new Promise<void>((resolve, reject) => {
      const waiters = [...(this.offer?.waiters ?? []), { resolve: resolve as (v: unknown) => void, reject }];
      this.offer = { weights, version, waiters };
      void this.pump();
    });
  }

  /** Drops the queued requests (they reject), lets the running one end, then frees the side. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const dropped = this.queue.splice(0);
    for (const j of dropped) j.reject(new Error('the explorer closed before this request ran'));
    const close = this.enqueue(() => this.side.dispose());
    this.closed = true;
    return close;
  }

  private enqueue<T>(run: () => T | Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the explorer is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      for (;;) {
        this.applyOffer();
        const job = this.queue.shift();
        if (!job) break;
        try {
          job.resolve(await job.run());
        } catch (e) {
          job.reject(e as Error);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private applyOffer(): void {
    const offer = this.offer;
    if (!offer) return;
    this.offer = undefined;
    try {
      this.side.setWeights(offer.weights, offer.version);
      for (const w of offer.waiters) w.resolve(undefined);
    } catch (e) {
      for (const w of offer.waiters) w.reject(e as Error);
    }
  }
}
