/**
 * Train mode's input from the experience buffer that a `mode: explore` process of the same job fills (Trinity's fully
 * asynchronous setup, trinity/trainer/trainer.py `Trainer.train`): the trainer waits for `train_batch_size`
 * experiences (a killed explorer is waited for up to `max_read_timeout`, as Trinity's SQL storage does while the
 * explorer still holds it) and stops when the explorer has finished and fewer remain. It saves a checkpoint every
 * `sync_interval` steps (Trinity's `sync_weight` for `sync_method: checkpoint`, which the explorer pulls; `memory`
 * cannot cross processes and is treated the same), each with its buffer position (`extra.buffer`) to resume from.
 */
import type { ExperienceBufferConfig } from '../../../config/types.generated';
import type { BlasWork } from '../../../engine/backend/blas-threads';
import { BufferStopError, resolveBufferConfig, type BufferPosition, type ExperienceReader } from '../../buffer';
import { sleep } from '../../buffer/wait';
import type { Experience } from '../../experience';
import { isExplorerDriven } from '../../synchronizer/sync-points';
import { ASYNC_POLL_MS, lastWriterCrashed, readExplorerState, writeTrainerStatus } from '../exchange/async-state';
import { EXPERIENCE_BUFFER_KEY, openTrainerReader, sharedBuffer } from '../exchange/experience-channel';
import type { StageContext } from '../stage/stage-context';
import type { TrainerInput, WaitingTrainer } from './train-loop';

/** How long one `next` has waited: for data (explorer-driven), or for a killed explorer to be restarted. */
interface ReadWaits {
  waitingSince?: number;
  crashedSince?: number;
}

export class BufferInput implements TrainerInput {
  /** The learning-rate schedule's length: the configured total, else 1. */
  readonly totalSteps: number;
  /** The configured total, if any: without one, how many steps another process's explorer feeds is not known. */
  readonly knownTotal: number | undefined;
  readonly stepLimit: number;
  readonly syncInterval: number;
  readonly beside: Exclude<BlasWork, 'not-training'>;
  /** Whether the explorer process asks for weights (explorer-driven sync). */
  private readonly explorerDriven: boolean;
  private readonly reader: ExperienceReader;
  /** How long a read waits for rows (max_read_timeout). */
  readonly maxWaitMs: number;
  /** The storage the explore process writes (a queue's is the storage of its path: sharedBuffer). */
  private readonly section: ExperienceBufferConfig;

  constructor(
    private readonly ctx: StageContext,
    /** The experience buffer's section, with an absolute path. */
    configured: ExperienceBufferConfig,
    resumeFrom: BufferPosition | undefined,
    /** Staleness control: the lowest model version a trainer step (1-based) reads (sample-strategy.ts). */
    private readonly minVersion?: (step: number) => number,
  ) {
    const { cfg } = ctx;
    const shared = sharedBuffer(configured);
    this.section = shared.section as ExperienceBufferConfig;
    const section = this.section;
    this.explorerDriven = isExplorerDriven(cfg.synchronizer.sync_style);
    // The job's explore process generates until it writes `finished` (async-state.ts); a buffer it already finished
    // is trained on alone. Decided once: see TrainerInput.beside.
    this.beside = readExplorerState(ctx.jobDir)?.finished ? 'nothing' : 'explorer-process';
    this.reader = openTrainerReader(section, resumeFrom, cfg.continue_from_checkpoint, ctx.log, shared.sqlReadPolicy);
    this.knownTotal = cfg.trainer.total_steps ?? cfg.buffer.total_steps ?? undefined;
    this.totalSteps = this.knownTotal ?? 1;
    this.stepLimit = cfg.trainer.total_steps || Number.MAX_SAFE_INTEGER;
    this.maxWaitMs = resolveBufferConfig(section, { keyPath: EXPERIENCE_BUFFER_KEY }).maxReadTimeoutS * 1000;
    if (cfg.synchronizer.sync_method !== 'checkpoint') {
      ctx.log(
        'info',
        `synchronizer.sync_method ${cfg.synchronizer.sync_method} cannot reach an explorer in another process; the trainer saves checkpoints every sync_interval steps instead`,
      );
    }
    this.syncInterval = this.explorerDriven ? 0 : cfg.synchronizer.sync_interval;
  }

  async next(trainer: WaitingTrainer): Promise<Experience[] | null> {
    const { ctx } = this;
    const waits: ReadWaits = {};
    try {
      for (;;) {
        try {
          // Explorer-driven, the wait is cut into polls so the trainer answers the explorer's sync requests meanwhile.
          const min = this.minVersion?.(trainer.step() + 1);
          return await this.reader.read(ctx.cfg.buffer.train_batch_size, {
            signal: ctx.signal,
            ...(this.explorerDriven ? { timeoutMs: ASYNC_POLL_MS } : {}),
            ...(min ? { minModelVersion: min } : {}),
          });
        } catch (e) {
          if (ctx.signal.aborted) return null;
          if (!(e instanceof BufferStopError)) throw e;
          if (!(await this.readAgain(e, waits, trainer))) return null;
        }
      }
    } finally {
      if (waits.waitingSince !== undefined) writeTrainerStatus(ctx.jobDir, 'running', trainer.step());
    }
  }

  position(): Record<string, unknown> {
    return { buffer: this.reader.state() };
  }

  weightsRequested(): boolean {
    return this.explorerDriven && readExplorerState(this.ctx.jobDir)?.requireSync === true;
  }

  close(): void {
    this.reader.close();
  }

  /** After a read stopped: whether to read again (still waiting for data, or for a killed explorer's restart). */
  private async readAgain(e: BufferStopError, waits: ReadWaits, trainer: WaitingTrainer): Promise<boolean> {
    const { ctx } = this;
    if (this.explorerDriven && e.reason === 'timeout') {
      if (waits.waitingSince === undefined) {
        waits.waitingSince = Date.now();
        writeTrainerStatus(ctx.jobDir, 'running', trainer.step(), true);
      }
      if (Date.now() - waits.waitingSince < this.maxWaitMs) {
        await trainer.syncIfRequested();
        return true;
      }
    }
    // Every writer is gone; the newest died without finishing (a killed explorer): wait for it to be restarted.
    if (e.reason !== 'finished' || !lastWriterCrashed(this.section)) {
      ctx.log('info', `no more experiences: ${e.message}`);
      return false;
    }
    if (waits.crashedSince === undefined) {
      waits.crashedSince = Date.now();
      ctx.log(
        'warning',
        `the explorer writing ${this.section.name} stopped without finishing; waiting up to ${this.maxWaitMs / 1000} s (max_read_timeout) for it to resume`,
      );
    }
    if (Date.now() - waits.crashedSince >= this.maxWaitMs) return false;
    try {
      await sleep(ASYNC_POLL_MS, ctx.signal);
    } catch {
      return false;
    }
    return true;
  }
}
