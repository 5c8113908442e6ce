/**
 * The trainer's one step loop, for every mode that trains: take a batch from the input, train a step (with the
 * OpenBLAS threads that the work beside it allows), log it, and save a checkpoint at `trainer.save_interval`, at the
 * input's sync interval (checkpoints an explorer process pulls) and when an explorer process asks for weights. Both
 * mode calls `trainUntil` up to each sync point; train mode once, to the end.
 */
import { BlasThreads, type BlasWork } from '../../../engine/backend/blas-threads';
import type { Experience } from '../../experience';
import { isTrainerSyncPoint } from '../../synchronizer/sync-points';
import type { RftTrainer } from '../../trainer/train-step';
import type { StageContext } from '../stage/stage-context';
import { fmt } from '../stage/step-pacing';
import { sampleMetrics } from './sample-strategy';
import { timed } from '../../monitor/phase-times';
import type { TrainerCheckpoints } from './trainer-checkpoints';
import { StepAbandoned, stopPoint, yieldToEvents, type StopPoint } from '../../stop-point';

/** Where the trainer's batches come from, and what a checkpoint keeps of it. */
export interface TrainerInput {
  /**
   * What computes beside the training steps (the OpenBLAS thread count: blas-threads.ts). Fixed for the run: 1 and 2
   * threads can differ in the last bits, and a count that followed the other side's timing would make the run's
   * numbers depend on it.
   */
  readonly beside: Exclude<BlasWork, 'not-training'>;
  /** Trainer steps the input allows at most. */
  readonly stepLimit: number;
  /** Trainer steps between the checkpoints an explorer process pulls (0: none besides save_interval's). */
  readonly syncInterval: number;
  /** The next batch; null when there is none (now, or any more). */
  next(trainer: WaitingTrainer): Promise<Experience[] | null>;
  /** What a checkpoint records to resume reading from. */
  position(): Record<string, unknown>;
  /** Writes what a checkpoint being saved into `dir` must hold besides `position()`. */
  saveInto?(dir: string): void;
  /** Explorer-driven sync across processes: whether the explorer process has asked for the trainer's weights. */
  weightsRequested?(): boolean;
}

/** What a read that waits for data needs of the trainer: its step (for its status), and to answer sync requests. */
export interface WaitingTrainer {
  step(): number;
  syncIfRequested(): Promise<void>;
}

export class TrainLoop {
  private readonly blas: BlasThreads;
  private readonly waiting: WaitingTrainer;
  private readonly stop: StopPoint;

  constructor(
    private readonly ctx: StageContext,
    private readonly trainer: RftTrainer,
    private readonly checkpoints: TrainerCheckpoints,
    private readonly input: TrainerInput,
    /** The steps the run expects (the progress lines' total), when it knows them. */
    private readonly totalSteps: number | undefined,
    /** What a checkpoint records besides the input's position (both mode: the explorer's). */
    private readonly extra: () => Record<string, unknown> = () => ({}),
  ) {
    this.blas = new BlasThreads((m) => ctx.log('info', m));
    this.waiting = { step: () => trainer.step, syncIfRequested: () => this.syncIfRequested() };
    this.stop = stopPoint(() => ctx.signal.aborted);
  }

  get step(): number {
    return this.trainer.step;
  }

  /** Trains until the trainer reaches `target` steps, the input's limit, the end of its data, or a stop. */
  async trainUntil(target = Number.MAX_SAFE_INTEGER): Promise<void> {
    const { ctx, trainer, input } = this;
    const limit = Math.min(target, input.stepLimit);
    while (trainer.step < limit && !ctx.signal.aborted) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const batch = await timed('trainer: read batch', () => input.next(this.waiting));
      if (!batch) break;
      const metrics = await this.trainStep(batch);
      // Given up (the run is stopping): no metrics row, no checkpoint; the last checkpoint's position holds the batch.
      if (!metrics) break;
      timed('loop: metrics log and events', () => {
        ctx.monitor.log('trainer', trainer.step, metrics);
        // An estimate the run has outgrown (step-wise workflows make more experiences per explorer step than one
        // batch) is no total: "step 4" rather than "step 4/2".
        const total = this.totalSteps !== undefined && trainer.step <= this.totalSteps ? this.totalSteps : undefined;
        ctx.progress('trainer', trainer.step, total, `loss ${fmt(stepLoss(metrics))}`);
      });
      const syncDue = isTrainerSyncPoint(trainer.step, input.syncInterval);
      const saveDue = ctx.cfg.trainer.save_interval > 0 && trainer.step % ctx.cfg.trainer.save_interval === 0; // Trainer.need_save
      if (syncDue || saveDue) await this.save();
      await this.syncIfRequested();
    }
  }

  /** A step on `batch`: its metrics, or undefined when a stop gave it up between its micro-batches. */
  private async trainStep(batch: Experience[]): Promise<Record<string, number> | undefined> {
    const { ctx, trainer, input } = this;
    try {
      return {
        ...sampleMetrics(batch, ctx.release),
        ...(await timed('trainer: train step (total)', () =>
          this.blas.training(input.beside, () => trainer.trainStep(batch, this.stop)),
        )),
      };
    } catch (e) {
      if (!(e instanceof StepAbandoned)) throw e;
      ctx.log('info', `trainer step ${trainer.step + 1} given up: the run is stopping`);
      return undefined;
    }
  }

  /** The last checkpoint of a run that was not stopped, unless the newest one already holds its step. */
  async finish(): Promise<void> {
    if (!this.ctx.signal.aborted && this.trainer.step > 0 && !this.checkpoints.holdsCurrentStep()) await this.save();
  }

  private save(): Promise<void> {
    const { input } = this;
    return timed('trainer: checkpoint', () =>
      this.checkpoints.save({ ...this.extra(), ...input.position() }, (dir) => input.saveInto?.(dir)),
    );
  }

  /** Explorer-driven Trainer.need_sync: the explorer asked, and there are weights it has not been offered. */
  private async syncIfRequested(): Promise<void> {
    if (this.trainer.step > 0 && !this.checkpoints.holdsCurrentStep() && this.input.weightsRequested?.())
      await this.save();
  }
}

/** A step's loss for the progress line: the policy loss's own (pg, sft or dpo), or mix's combined `actor/loss`. */
function stepLoss(metrics: Record<string, number>): number | undefined {
  return metrics['actor/pg_loss'] ?? metrics['actor/sft_loss'] ?? metrics['actor/dpo_loss'] ?? metrics['actor/loss'];
}
