/**
 * Both mode's two sides as its loops step them (run-both.ts: the sync styles that meet at sync points;
 * run-fully-async.ts: fully_async): the explorer's driver with the steps it has done, and the trainer's loop.
 */
import type { ExperienceChannel } from '../exchange/experience-channel';
import type { ExplorerDriver } from '../explorer-side/explorer-driver';
import { EvalSchedule, reportExplorerStep } from '../explorer-side/explorer-reports';
import type { ExplorerStepResult } from '../explorer-side/explorer-side';
import type { StageContext } from '../stage/stage-context';
import type { TrainLoop } from '../trainer-side/train-loop';
import type { TrainerSide } from '../trainer-side/trainer-side';
import { timed } from '../../monitor/phase-times';

/** The explorer's side of the loop: its driver, the step it has done, its evals, and the weights version it holds. */
export class BothExplorer {
  readonly evals: EvalSchedule;
  readerOffset: number;
  /** The last weights offered, until the explorer has applied them. */
  private applying: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: StageContext,
    readonly driver: ExplorerDriver,
    public step: number,
    /** The trainer step whose weights the explorer holds. */
    public syncedVersion: number,
  ) {
    this.readerOffset = driver.startOffset;
    this.evals = new EvalSchedule(ctx, driver);
  }

  /** What a checkpoint records of the explorer's side. */
  position(): { explorerStep: number; readerOffset: number } {
    return { explorerStep: this.step, readerOffset: this.readerOffset };
  }

  /** Counts a finished explorer step and reports its metrics, rollouts and progress. */
  record(out: ExplorerStepResult): void {
    this.step++;
    this.readerOffset = out.readerOffset;
    timed('loop: metrics log and events', () => reportExplorerStep(this.ctx, this.step, this.driver.totalSteps, out));
  }

  /**
   * Offers the trainer's weights as of trainer step `version` without waiting for the explorer to apply them: it
   * applies them before its next request (explorer-requests.ts), so the trainer trains on meanwhile instead of idling
   * through the worker's round trip. `weightsApplied` says when they are (and rejects if applying them failed).
   */
  async offerWeights(trainer: TrainerSide, version: number): Promise<void> {
    const weights = await timed('loop: weight sync (copy out)', () => trainer.weightsForExplorer());
    // Timed to the call's return (the message posted, or in this thread the weights assigned), not to the apply.
    const { applied } = timed('loop: weight sync (hand over)', () => ({
      applied: this.driver.setWeights(weights, version),
    }));
    applied.catch(() => undefined); // awaited through weightsApplied
    this.applying = applied;
    this.syncedVersion = version;
  }

  async takeWeights(trainer: TrainerSide, version: number): Promise<void> {
    await this.offerWeights(trainer, version);
    await this.applying;
  }

  /** Resolves once the weights last offered are the explorer's; rejects if applying them failed. */
  weightsApplied(): Promise<void> {
    return this.applying;
  }
}

/** Both mode's sides as its loop steps them. */
export interface BothRun {
  explorer: BothExplorer;
  /** Where the explorer's experiences wait for the trainer. */
  channel: ExperienceChannel;
  loop: TrainLoop;
  trainer: TrainerSide;
}
