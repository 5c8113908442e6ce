/**
 * `mode: train`. From an SFT/DPO file, or from an experience buffer that a `mode: explore` process of the same job
 * fills (Trinity's fully asynchronous setup, trinity/trainer/trainer.py `Trainer.train`): the trainer waits for
 * `train_batch_size` experiences (a killed explorer is waited for up to `max_read_timeout`, as Trinity's SQL storage
 * does while the explorer still holds it), stops when the explorer has finished and fewer remain, or at
 * `trainer.total_steps`. Reading from a buffer it saves a checkpoint every `sync_interval` steps (Trinity's
 * `sync_weight` for `sync_method: checkpoint`, which the explorer pulls; `memory` cannot cross processes and is treated
 * the same) and every `save_interval` steps, each with its buffer position (`extra.buffer`) to resume from.
 */
import type { ExperienceBufferConfig } from '../../config/types.generated';
import { BlasThreads, type BlasWork } from '../../engine/backend/blas-threads';
import { closeEach } from '../closing';
import type { Pretrained } from '../../engine/pretrained';
import { BufferStopError, resolveBufferConfig, type BufferPosition, type ExperienceReader } from '../buffer';
import { sleep } from '../buffer/wait';
import { BatchReader } from '../data/reader';
import { readTrainData } from '../data/train-data';
import type { Experience } from '../experience';
import { isExplorerDriven, isTrainerSyncPoint } from '../synchronizer/sync-points';
import { needsReference, RftTrainer, type CriticSetup } from '../trainer/trainer';
import { ASYNC_POLL_MS, lastWriterCrashed, readExplorerState, writeTrainerStatus } from './async';
import type { StageContext, StageResult } from './context';
import { EXPERIENCE_BUFFER_KEY, openTrainerReader } from './experience-channel';
import { algorithmSetup, criticSetup, loadModelFor, referenceLoader, trainerOptions, withAbsolutePath } from './setup';
import { fmt, yieldToEvents } from './step-loop';
import { resumePoint, restoreTrainer, TrainerCheckpoints, type ResumePoint } from './trainer-checkpoint';

export async function runTrain(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const alg = algorithmSetup(cfg, ctx.release);
  const resumed = resumePoint(ctx);
  const policy = loadModelFor(cfg, ctx.configDir, resumed?.dir ?? ctx.modelPath);
  let cleanup = (): void => {};
  let critic: CriticSetup | undefined;
  let created: RftTrainer | undefined;
  let failed = false;
  try {
    const source = cfg.buffer.trainer_input.experience_buffer;
    if (!source) throw new Error('mode train needs buffer.trainer_input.experience_buffer');
    const fromFile = source.storage_type === 'file' && (source.schema_type === 'sft' || source.schema_type === 'dpo');
    const input = fromFile
      ? await fileInput(ctx, source, policy, resumed)
      : new BufferInput(ctx, withAbsolutePath(source, ctx.configDir), resumed);
    cleanup = () => input.close();
    critic = alg.useCritic ? criticSetup(cfg, ctx.configDir, input.totalSteps, ctx.seed, resumed?.dir) : undefined;
    const trainer = new RftTrainer(
      policy.model,
      needsReference(alg) ? referenceLoader(cfg, ctx.configDir, ctx.modelPath, ctx.log) : undefined,
      trainerOptions(cfg, alg, input.totalSteps, policy.tokenizer.padTokenId),
      critic,
    );
    created = trainer;
    if (resumed) {
      restoreTrainer(trainer, critic, resumed);
      ctx.log('info', `resumed from ${resumed.dir} (trainer step ${trainer.step})`);
    }
    if (!fromFile) {
      // What the explorer process of the job reads to decide whether to wait for a newer checkpoint.
      writeTrainerStatus(ctx.jobDir, 'running', trainer.step);
      cleanup = () => {
        input.close();
        writeTrainerStatus(ctx.jobDir, 'stopped', trainer.step);
      };
    }
    const checkpoints = new TrainerCheckpoints(ctx, policy, trainer, critic, resumed?.dir);
    await trainAll(ctx, input, trainer, checkpoints);
    return { lastCheckpoint: checkpoints.last, evals: {}, stopped: ctx.signal.aborted };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await closeEach(ctx.log, failed, [
      cleanup,
      () => policy.model.dispose(),
      () => critic?.model.dispose(),
      () => created?.dispose(),
    ]);
  }
}

/** Where `mode: train` takes its batches from: an SFT/DPO file, or the experience buffer an explorer fills. */
interface TrainInput {
  readonly totalSteps: number;
  /** Trainer steps between the checkpoints the explorer pulls (0: none besides save_interval's). */
  readonly syncInterval: number;
  /** Whether the explorer process asks for weights (explorer-driven sync; a buffer only). */
  readonly explorerDriven: boolean;
  /**
   * What may compute beside the training steps (the OpenBLAS thread count: blas-threads.ts): an explore process
   * still filling the buffer, or nothing. Decided once, at the start: a count that changed mid-run could change the
   * run's last bits at a moment set by the other process's timing.
   */
  readonly beside: Exclude<BlasWork, 'not-training'>;
  /** The next `train_batch_size` experiences; null when there are no more. */
  next(trainer: WaitingTrainer): Promise<Experience[] | null>;
  /** What a checkpoint records to resume reading from. */
  position(): Record<string, unknown>;
  close(): void;
}

/** What a read that waits for data needs of the trainer: its step (for its status), and to answer sync requests. */
interface WaitingTrainer {
  step(): number;
  syncIfRequested(): Promise<void>;
}

async function fileInput(
  ctx: StageContext,
  source: ExperienceBufferConfig,
  policy: Pretrained,
  resumed: ResumePoint | undefined,
): Promise<TrainInput> {
  const { cfg } = ctx;
  const trainBatch = cfg.buffer.train_batch_size;
  const data = await readTrainData(source, {
    baseDir: ctx.configDir,
    tokenizer: policy.tokenizer,
    maxLength: cfg.model.max_model_len,
  });
  for (const w of data.warnings) ctx.log('warning', w);
  if (data.truncated)
    ctx.log('warning', `${data.truncated} samples of ${source.name} were longer than max_model_len and were truncated`);
  const reader = new BatchReader(data.experiences, {
    batchSize: trainBatch,
    totalEpochs: source.total_epochs ?? cfg.buffer.total_epochs,
    totalSteps: source.total_steps ?? cfg.buffer.total_steps,
    offset: Number(resumed?.extra.readerOffset ?? 0),
    name: source.name,
  });
  return {
    totalSteps: cfg.trainer.total_steps ?? Math.floor(reader.totalSamples / trainBatch),
    syncInterval: 0,
    explorerDriven: false,
    beside: 'nothing',
    next: async () => reader.next()?.items ?? null,
    position: () => ({ readerOffset: reader.currentOffset }),
    close: () => {},
  };
}

/** How long one `next` has waited: for data (explorer-driven), or for a killed explorer to be restarted. */
interface ReadWaits {
  waitingSince?: number;
  crashedSince?: number;
}

/** The experience buffer of the job, as the trainer reads it while an explorer process writes it. */
class BufferInput implements TrainInput {
  readonly totalSteps: number;
  readonly syncInterval: number;
  readonly explorerDriven: boolean;
  readonly beside: Exclude<BlasWork, 'not-training'>;
  private readonly reader: ExperienceReader;
  private readonly maxWaitMs: number;

  constructor(
    private readonly ctx: StageContext,
    private readonly section: ExperienceBufferConfig,
    resumed: ResumePoint | undefined,
  ) {
    const { cfg } = ctx;
    this.explorerDriven = isExplorerDriven(cfg.synchronizer.sync_style);
    // The job's explore process generates until it writes `finished` (async.ts); a buffer it already finished is
    // trained on alone.
    this.beside = readExplorerState(ctx.jobDir)?.finished ? 'nothing' : 'explorer-process';
    this.reader = openTrainerReader(
      section,
      resumed?.extra.buffer as BufferPosition | undefined,
      cfg.continue_from_checkpoint,
      ctx.log,
    );
    this.totalSteps = cfg.trainer.total_steps ?? cfg.buffer.total_steps ?? 1;
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
          return await this.reader.read(ctx.cfg.buffer.train_batch_size, {
            signal: ctx.signal,
            ...(this.explorerDriven ? { timeoutMs: ASYNC_POLL_MS } : {}),
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

/** Trains until the input runs out, `trainer.total_steps` or a stop, saving at sync and save intervals and at the end. */
async function trainAll(
  ctx: StageContext,
  input: TrainInput,
  trainer: RftTrainer,
  checkpoints: TrainerCheckpoints,
): Promise<void> {
  const { cfg } = ctx;
  const save = (): Promise<void> => checkpoints.save(input.position());
  const blas = new BlasThreads((m) => ctx.log('info', m));
  const waiting: WaitingTrainer = {
    step: () => trainer.step,
    // Explorer-driven Trainer.need_sync: the explorer asked, and there are weights it has not been offered.
    syncIfRequested: async () => {
      if (trainer.step > 0 && !checkpoints.holdsCurrentStep() && readExplorerState(ctx.jobDir)?.requireSync)
        await save();
    },
  };
  while (!ctx.signal.aborted) {
    await yieldToEvents();
    if (ctx.signal.aborted) break;
    if (cfg.trainer.total_steps && trainer.step >= cfg.trainer.total_steps) break;
    const batch = await input.next(waiting);
    if (!batch) break;
    const metrics = await blas.training(input.beside, () => trainer.trainStep(batch));
    ctx.monitor.log('trainer', trainer.step, metrics);
    ctx.progress(
      'trainer',
      trainer.step,
      input.totalSteps,
      `loss ${fmt(metrics['actor/sft_loss'] ?? metrics['actor/dpo_loss'] ?? metrics['actor/pg_loss'])}`,
    );
    const syncDue = isTrainerSyncPoint(trainer.step, input.syncInterval);
    const saveDue = cfg.trainer.save_interval > 0 && trainer.step % cfg.trainer.save_interval === 0; // Trainer.need_save
    if (syncDue || saveDue) await save();
    if (input.explorerDriven) await waiting.syncIfRequested();
  }
  if (!ctx.signal.aborted && trainer.step > 0 && !checkpoints.holdsCurrentStep()) await save();
}
