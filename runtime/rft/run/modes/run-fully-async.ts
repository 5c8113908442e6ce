/**
 * Both mode with `synchronizer.sync_style: fully_async` (Trinity-RFT PR #579; trinity/explorer/explorer.py
 * `explore_step`, `need_sync`, `_watch_trainer_sync_signal` and trinity/trainer/trainer.py `need_sync` at f3c8dec6769c).
 * The explorer never waits for the trainer: it keeps up to `explorer.max_inflight_batches` batches submitted and, when
 * the window is full, waits only for the oldest of them before submitting the next. A finished batch goes through the
 * pipeline into the buffer. The trainer trains whenever a batch is buffered and offers its weights every
 * `sync_interval` steps; the explorer takes the newest offer before its next batch (Trinity polls for it every 0.5 s
 * and applies it mid-batch). Trinity refuses eval tasksets with this style, so there are no evals.
 */
import { isTrainerSyncPoint } from '../../synchronizer/sync-points';
import type { ExplorerDriver } from '../explorer-side/explorer-driver';
import type { ExplorerStepResult } from '../explorer-side/explorer-side';
import type { StageContext, StageResult } from '../stage/stage-context';
import type { BothExplorer, BothRun } from './both-run';
import { unlessAbandoned } from '../../stop-point';

export async function exploreAndTrainFullyAsync(ctx: StageContext, run: BothRun): Promise<StageResult> {
  const { cfg } = ctx;
  const { explorer: ex, loop, trainer, channel } = run;
  const window = new InflightBatches(ex.driver, ex.step, cfg.explorer.max_inflight_batches);
  const offers = new WeightOffers(ex, ctx);
  ctx.log(
    'info',
    `fully_async: the explorer keeps up to ${cfg.explorer.max_inflight_batches} batch(es) in flight and takes the trainer's weights as they come (every ${cfg.synchronizer.sync_interval} trainer step(s)), between batches`,
  );
  const trainerDone = (): boolean => !!cfg.trainer.total_steps && loop.step >= cfg.trainer.total_steps;
  /** One trainer step on a buffered batch, offering the weights at a sync point; false when none is buffered. */
  const trainOne = async (): Promise<boolean> => {
    const before = loop.step;
    await loop.trainUntil(before + 1);
    if (loop.step === before) return false;
    if (isTrainerSyncPoint(loop.step, cfg.synchronizer.sync_interval))
      offers.offer(await trainer.weightsForExplorer(), loop.step);
    return true;
  };
  try {
    // A stop gives up the explorer steps in flight and the trainer step in progress.
    await unlessAbandoned(async () => {
      while (!ctx.signal.aborted && !trainerDone()) {
        window.fill();
        const oldest = window.oldest();
        // A finished batch goes to the buffer first, so the explorer's window refills at once; a full queue waits for
        // the trainer to make room (Trinity's queue blocks the writer).
        if (oldest?.settled && !channel.full()) {
          await collect(ex, channel, await window.take());
          continue;
        }
        if (await trainOne()) continue;
        if (!oldest) break; // the taskset is done, and what is buffered does not fill a batch
        // Full, and the trainer cannot take a batch: the put says why (the queue's capacity).
        if (oldest.settled) await collect(ex, channel, await window.take());
        else await oldest.done;
      }
    });
  } finally {
    window.abandon();
  }
  await loop.finish();
  return { lastCheckpoint: trainer.checkpoints.last, evals: ex.evals.summary(), stopped: ctx.signal.aborted };
}

async function collect(ex: BothExplorer, channel: BothRun['channel'], out: ExplorerStepResult | null): Promise<void> {
  if (!out) return;
  ex.record(out);
  await channel.put(out.experiences);
}

interface Inflight {
  step: number;
  result: Promise<ExplorerStepResult | null>;
  /** Settles (never rejects) when the step does. */
  done: Promise<void>;
  settled: boolean;
}

/** The explorer's submitted batches, oldest first (Trinity's `_inflight_train_steps`). */
class InflightBatches {
  private readonly queue: Inflight[] = [];
  private exhausted = false;

  constructor(
    private readonly driver: ExplorerDriver,
    /** The last step submitted. */
    private submitted: number,
    private readonly max: number,
  ) {}

  /** Submits steps until `max` are in flight or the taskset has no more. */
  fill(): void {
    while (!this.exhausted && this.queue.length < this.max && this.submitted < this.driver.totalSteps) {
      const step = ++this.submitted;
      const result = this.driver.step(step);
      const entry: Inflight = { step, result, done: Promise.resolve(), settled: false };
      entry.done = result.then(
        () => void (entry.settled = true),
        () => void (entry.settled = true),
      );
      this.queue.push(entry);
    }
  }

  oldest(): Inflight | undefined {
    return this.queue[0];
  }

  /** The oldest batch's result (null: the taskset ran out, and no more steps are submitted). */
  async take(): Promise<ExplorerStepResult | null> {
    const entry = this.queue.shift()!;
    const out = await entry.result;
    if (!out) this.exhausted = true;
    return out;
  }

  /** Stops waiting for the batches still in flight: the run ends without them (closing the driver drops them). */
  abandon(): void {
    for (const e of this.queue.splice(0)) e.result.catch(() => undefined);
    this.exhausted = true;
  }
}

/**
 * The trainer's weights on their way to the explorer: offered without waiting, applied before its next batch (a
 * closing explorer applies what is offered before it closes).
 */
class WeightOffers {
  constructor(
    private readonly ex: BothExplorer,
    private readonly ctx: StageContext,
  ) {}

  offer(weights: Float32Array[], version: number): void {
    void this.ex.driver.setWeights(weights, version).then(
      () => void (this.ex.syncedVersion = Math.max(this.ex.syncedVersion, version)),
      (e: Error) => {
        if (!this.ctx.signal.aborted) this.ctx.log('warning', `weights of trainer step ${version}: ${e.message}`);
      },
    );
  }
}
