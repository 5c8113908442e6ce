/**
 * `mode: both` (trinity/cli/launcher.py `both`): the explorer and trainer in one process, stepped in the order
 * Trinity's sync style allows. Fixed (and trainer-driven, which differs from it only under NCCL): explorer step k uses
 * the weights of trainer step k − sync_offset rounded down to a sync point, so on-policy, one-step off-policy and
 * interval-sync runs see the same model versions as under Trinity. Explorer-driven: at its sync points the explorer
 * takes the trainer's weights as they are, never waiting for a step.
 */
import type { Config, ExperienceBufferConfig } from '../../config/types.generated';
import { BlasThreads } from '../../engine/backend/blas-threads';
import { closeEach } from '../closing';
import type { Pretrained } from '../../engine/pretrained';
import type { BufferPosition } from '../buffer';
import { needsReference, RftTrainer, type CriticSetup } from '../trainer/trainer';
import { isExplorerDriven, isExplorerSyncPoint, nextSyncTrainerStep } from '../synchronizer/sync-points';
import { lastWrittenStep } from './async';
import type { StageContext, StageResult } from './context';
import { evalSummary } from './explorer-evals';
import { isStoredBuffer, queueChannel, storedChannel, type ExperienceChannel } from './experience-channel';
import { expertSampler, type ExpertSampler } from './expert-sampler';
import {
  exportWeights,
  inThreadExplorer,
  workerExplorer,
  type ExplorerDriver,
  type ExplorerInit,
  type ExplorerReference,
  type ExplorerStepResult,
} from './explorer-driver';
import {
  algorithmSetup,
  criticSetup,
  loadModelFor,
  referenceLoader,
  scoringOptions,
  trainerOptions,
  withAbsolutePath,
} from './setup';
import { fmt, meanReward, yieldToEvents } from './step-loop';
import { resumePoint, restoreTrainer, TrainerCheckpoints, type ResumePoint } from './trainer-checkpoint';

/** What both mode has made so far, released in this order whatever step of the set-up failed. */
interface BothParts {
  driver?: ExplorerDriver;
  channel?: ExperienceChannel;
  critic?: CriticSetup;
  trainer?: RftTrainer;
}

export async function runBoth(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const alg = algorithmSetup(cfg, ctx.release);
  const resumed = resumePoint(ctx);
  const policy = loadModelFor(cfg, ctx.configDir, resumed?.dir ?? ctx.modelPath);
  const made: BothParts = {};
  let failed = false;
  try {
    const start = explorerStart(ctx, resumed);
    const threaded = useExplorerThread(cfg);
    // With the explorer on its own core and experiences passed in memory, it also computes their reference
    // log-probs (its core idles while the trainer trains; the trainer's step is the loop's bound). Not for the mix
    // strategy: its expert rows, drawn by the trainer, need the trainer's own reference forward anyway.
    const reference =
      threaded && needsReference(alg) && !start.stored && alg.sampleStrategy !== 'mix'
        ? { modelPath: ctx.modelPath, padTokenId: policy.tokenizer.padTokenId, ...scoringOptions(cfg) }
        : undefined;
    const driver = (made.driver = await startExplorer(ctx, resumed, start, threaded, reference));
    const totalTrain = trainTotalSteps(cfg, driver.totalSteps);
    const critic = (made.critic = alg.useCritic
      ? criticSetup(cfg, ctx.configDir, totalTrain, ctx.seed, resumed?.dir)
      : undefined);
    const trainer = (made.trainer = new RftTrainer(
      policy.model,
      needsReference(alg) ? referenceLoader(cfg, ctx.configDir, ctx.modelPath, ctx.log) : undefined,
      trainerOptions(cfg, alg, totalTrain, policy.tokenizer.padTokenId),
      critic,
    ));
    // A resumed channel holds what was explored before the checkpoint and not yet trained on.
    const memory = start.stored ? undefined : await queueChannel(start.bufferSection, resumed?.dir);
    const channel = (made.channel =
      memory ??
      storedChannel(
        start.stored!,
        resumed?.extra.buffer as BufferPosition | undefined,
        cfg.continue_from_checkpoint,
        ctx.log,
      ));
    if (resumed) {
      restoreTrainer(trainer, critic, resumed);
      const waiting = memory ? `, ${memory.waiting} experience(s) not yet trained on` : '';
      ctx.log(
        'info',
        `resumed from ${resumed.dir} (trainer step ${trainer.step}, explorer step ${start.explorerStep}${waiting})`,
      );
    }
    const expert =
      alg.sampleStrategy === 'mix'
        ? await expertSampler(ctx, alg.sampleStrategyArgs, policy, Number(resumed?.extra.expertOffset ?? 0))
        : undefined;
    const explorerSide = new BothExplorer(ctx, driver, threaded, start.explorerStep, resumed?.step ?? 0);
    const checkpoints = new TrainerCheckpoints(ctx, policy, trainer, critic, resumed?.dir);
    const trainerSide = new BothTrainer(ctx, policy, trainer, channel, expert, checkpoints, totalTrain, explorerSide);
    return await exploreAndTrain(ctx, explorerSide, trainerSide);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await closeEach(ctx.log, failed, [
      () => made.driver?.close(),
      () => made.channel?.close(),
      () => policy.model.dispose(),
      () => made.critic?.model.dispose(),
      () => made.trainer?.dispose(),
    ]);
  }
}

/** Where the explorer starts, and where its experiences go. */
interface ExplorerStart {
  explorerStep: number;
  /** Taskset rows served before the start (the driver skips `skipBatches` more). */
  readerOffset: number;
  /** Batches whose steps the buffer already holds: the explorer passes over them instead of writing them again. */
  skipBatches: number;
  bufferSection: ExperienceBufferConfig | null;
  /** The experience buffer (with an absolute path) when experiences go through sql or file storage. */
  stored: ExperienceBufferConfig | undefined;
}

function explorerStart(ctx: StageContext, resumed: ResumePoint | undefined): ExplorerStart {
  const { cfg } = ctx;
  let explorerStep = Number(resumed?.extra.explorerStep ?? 0);
  const readerOffset = Number(resumed?.extra.readerOffset ?? 0);
  const bufferSection = cfg.buffer.trainer_input.experience_buffer;
  const stored = isStoredBuffer(bufferSection) ? withAbsolutePath(bufferSection, ctx.configDir) : undefined;
  let skipBatches = 0;
  if (stored && cfg.continue_from_checkpoint) {
    // Steps the explorer wrote after the checkpoint are in the buffer (the trainer reads them from its position):
    // the explorer continues after them instead of writing them again.
    const inBuffer = lastWrittenStep(stored);
    if (inBuffer > explorerStep) {
      ctx.log(
        'info',
        `the buffer already holds explorer step ${inBuffer} (the checkpoint says ${explorerStep}); the explorer continues after it`,
      );
      skipBatches = inBuffer - explorerStep;
      explorerStep = inBuffer;
    }
  }
  return { explorerStep, readerOffset, skipBatches, bufferSection, stored };
}

/** The explorer's driver, in this thread or a worker (useExplorerThread), loaded with the resumed weights. */
async function startExplorer(
  ctx: StageContext,
  resumed: ResumePoint | undefined,
  start: ExplorerStart,
  threaded: boolean,
  reference: ExplorerReference | undefined,
): Promise<ExplorerDriver> {
  const { cfg } = ctx;
  const init: ExplorerInit = {
    cfg,
    release: ctx.release,
    configDir: ctx.configDir,
    modelPath: resumed?.dir ?? ctx.modelPath,
    seed: ctx.seed,
    readerOffset: start.readerOffset,
    skipBatches: start.skipBatches,
    version: resumed?.step ?? 0,
    backend: 'auto',
    reference,
  };
  if (cfg.synchronizer.sync_method !== 'memory') {
    ctx.log(
      'info',
      `synchronizer.sync_method ${cfg.synchronizer.sync_method} runs as memory sync locally: the trainer hands its weights to the explorer in this process`,
    );
  }
  const driver = await (threaded ? workerExplorer(init, ctx.log) : inThreadExplorer(init, ctx.log));
  ctx.log(
    'info',
    threaded
      ? 'the explorer runs in a worker thread, overlapping the trainer'
      : 'the explorer and trainer take turns in one thread',
  );
  if (reference) ctx.log('info', 'the explorer worker computes the reference log-probs the trainer reads');
  return driver;
}

/**
 * Whether the explorer gets its own thread: only when its steps can overlap training (one-step off-policy, interval
 * or explorer-driven sync; never in colocate mode); `TRINITY_WORKBENCH_EXPLORER_THREAD=0|1` forces the choice.
 */
function useExplorerThread(cfg: Config): boolean {
  const forced = process.env.TRINITY_WORKBENCH_EXPLORER_THREAD;
  if (forced === '0' || forced === '1') return forced === '1';
  if (cfg.mode === 'colocate') return false; // Trinity's colocate shares one GPU: the two never overlap
  return (
    cfg.synchronizer.sync_offset > 0 ||
    cfg.synchronizer.sync_interval > 1 ||
    isExplorerDriven(cfg.synchronizer.sync_style)
  );
}

function trainTotalSteps(cfg: Config, explorerSteps: number | undefined): number {
  if (cfg.trainer.total_steps) return cfg.trainer.total_steps;
  if (cfg.buffer.total_steps) return cfg.buffer.total_steps;
  return Math.max(1, explorerSteps ?? 1);
}

/** The explorer's side: its driver, the step it has done, its last eval, and the weights version it holds. */
class BothExplorer {
  private lastEval: Record<string, number> = {};
  private lastEvalStep = -1;
  readerOffset: number;

  constructor(
    private readonly ctx: StageContext,
    readonly driver: ExplorerDriver,
    /** The driver is a worker thread: its steps compute while the trainer trains. */
    readonly inWorker: boolean,
    public step: number,
    /** The trainer step whose weights the explorer holds. */
    public syncedVersion: number,
  ) {
    this.readerOffset = driver.startOffset;
  }

  /** What a checkpoint records of the explorer's side. */
  position(): { explorerStep: number; readerOffset: number } {
    return { explorerStep: this.step, readerOffset: this.readerOffset };
  }

  /** Counts a finished explorer step and reports its metrics, rollouts and progress. */
  record(out: ExplorerStepResult): void {
    const { ctx } = this;
    this.step++;
    this.readerOffset = out.readerOffset;
    ctx.monitor.log('explorer', this.step, out.metrics);
    ctx.monitor.rollouts(this.step, out.samples);
    ctx.progress('explorer', this.step, this.driver.totalSteps, `reward ${fmt(meanReward(out.experiences))}`);
  }

  async evaluate(step: number): Promise<void> {
    this.lastEval = await this.driver.evaluate(step);
    this.lastEvalStep = step;
    this.ctx.monitor.log('explorer', step, this.lastEval);
  }

  /** Whether the current step is due an eval (`eval_interval`). */
  evalDue(): boolean {
    const interval = this.ctx.cfg.explorer.eval_interval;
    return interval > 0 && this.step % interval === 0 && this.driver.hasEvals;
  }

  /** Whether the run ends without an eval of its last step (the final eval is then due). */
  lastStepUnevaluated(): boolean {
    return this.driver.hasEvals && this.lastEvalStep !== this.step;
  }

  evalSummary(): Record<string, number> {
    return evalSummary(this.lastEval);
  }

  async takeWeights(policy: Pretrained, version: number): Promise<void> {
    await this.driver.setWeights(await exportWeights(policy.model), version);
    this.syncedVersion = version;
  }
}

/** The trainer's side: trains on the channel's experiences (plus expert rows) and saves both sides' positions. */
class BothTrainer {
  /** Experiences the channel gives each step; the mix sample strategy fills the rest with expert (SFT) samples. */
  private readonly trainBatch: number;
  /** A replay queue can serve experiences again and again: its trainer stops at the steps the taskset implies. */
  private readonly stepLimit: number;
  private readonly blas = new BlasThreads((m) => this.ctx.log('info', m));
  /**
   * What computes beside the training steps, fixed for the run: 1 and 2 BLAS threads can differ in the last bits
   * (blas-threads.ts), and a count that followed the worker's timing would make the run's numbers depend on it.
   */
  private get beside(): 'explorer-thread' | 'nothing' {
    return this.explorer.inWorker ? 'explorer-thread' : 'nothing';
  }

  constructor(
    private readonly ctx: StageContext,
    readonly policy: Pretrained,
    readonly trainer: RftTrainer,
    private readonly channel: ExperienceChannel,
    private readonly expert: ExpertSampler | undefined,
    readonly checkpoints: TrainerCheckpoints,
    private readonly totalTrain: number,
    private readonly explorer: BothExplorer,
  ) {
    const { cfg } = ctx;
    this.trainBatch = cfg.buffer.train_batch_size - (expert?.batchSize ?? 0);
    this.stepLimit = cfg.trainer.total_steps ?? (channel.replays ? totalTrain : Number.MAX_SAFE_INTEGER);
  }

  get step(): number {
    return this.trainer.step;
  }

  async put(out: ExplorerStepResult): Promise<void> {
    await this.channel.put(out.experiences);
  }

  /** Trains on buffered experiences until the trainer reaches `target` steps (or the data runs out). */
  async trainUntil(target: number): Promise<void> {
    const { ctx, trainer, expert } = this;
    while (trainer.step < Math.min(target, this.stepLimit) && !ctx.signal.aborted) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const batch = await this.channel.take(this.trainBatch);
      if (!batch) break;
      if (expert) batch.push(...expert.next());
      const metrics = await this.blas.training(this.beside, () => trainer.trainStep(batch));
      ctx.monitor.log('trainer', trainer.step, metrics);
      ctx.progress(
        'trainer',
        trainer.step,
        this.totalTrain,
        `loss ${fmt(metrics['actor/pg_loss'] ?? metrics['actor/sft_loss'])}`,
      );
      const interval = ctx.cfg.trainer.save_interval;
      if (interval > 0 && trainer.step % interval === 0) await this.save();
    }
  }

  async save(): Promise<void> {
    const { channel, expert } = this;
    const extra = {
      ...this.explorer.position(),
      ...channel.position(),
      ...(expert ? { expertOffset: expert.offset() } : {}),
    };
    await this.checkpoints.save(extra, (dir) => channel.saveInto(dir));
  }
}

/** The loop: an explorer step, its sync point and eval, then the trainer catches up while the next step runs. */
async function exploreAndTrain(ctx: StageContext, ex: BothExplorer, tr: BothTrainer): Promise<StageResult> {
  const { cfg } = ctx;
  if (cfg.explorer.eval_on_startup && ex.step === 0 && ex.driver.hasEvals) await ex.evaluate(0);
  let running = ctx.signal.aborted ? undefined : ex.driver.step(ex.step + 1);
  while (running && !ctx.signal.aborted) {
    const out = await running;
    running = undefined;
    if (!out) break;
    ex.record(out);
    await tr.put(out);
    // After explorer step k the explorer takes the weights of trainer step k − offset when k is a sync point.
    if (isExplorerSyncPoint(ex.step, cfg.synchronizer)) await syncAt(ctx, ex, tr, ex.step);
    if (ex.evalDue()) await ex.evaluate(ex.step);
    if (cfg.trainer.total_steps && tr.step >= cfg.trainer.total_steps) break;
    if (ctx.signal.aborted) break;
    // The explorer's next step runs (in its worker) while the trainer catches up to the next sync point.
    running = ex.driver.step(ex.step + 1);
    await tr.trainUntil(nextSyncTarget(cfg, ex.step));
  }
  if (running)
    await running.catch((e: Error) => ctx.log('warning', `explorer step after the run stopped: ${e.message}`));
  await tr.trainUntil(Number.MAX_SAFE_INTEGER);
  if (!ctx.signal.aborted) {
    await ex.takeWeights(tr.policy, tr.step);
    if (ex.lastStepUnevaluated()) await ex.evaluate(ex.step);
    if (tr.step > 0 && !tr.checkpoints.holdsCurrentStep()) await tr.save();
  }
  return { lastCheckpoint: tr.checkpoints.last, evals: ex.evalSummary(), stopped: ctx.signal.aborted };
}

/**
 * The trainer step the explorer syncs to next after step k (k > offset, (k − offset) % interval == 0). Explorer-driven
 * sync waits for no particular step: the trainer trains on whatever is buffered meanwhile.
 */
function nextSyncTarget(cfg: Config, k: number): number {
  return isExplorerDriven(cfg.synchronizer.sync_style)
    ? Number.MAX_SAFE_INTEGER
    : nextSyncTrainerStep(k, cfg.synchronizer);
}

/**
 * A sync point: fixed (and trainer-driven, which differs only under NCCL) waits for trainer step k − offset;
 * explorer-driven takes the trainer's weights as they are, if it trained since the last sync
 * (Trainer.need_sync / Synchronizer.notify_no_new_model_state_dict).
 */
async function syncAt(ctx: StageContext, ex: BothExplorer, tr: BothTrainer, k: number): Promise<void> {
  const { synchronizer } = ctx.cfg;
  if (!isExplorerDriven(synchronizer.sync_style)) {
    await tr.trainUntil(k - synchronizer.sync_offset);
    await ex.takeWeights(tr.policy, tr.step);
  } else if (tr.step > ex.syncedVersion) await ex.takeWeights(tr.policy, tr.step);
  else ctx.log('warning', `No new model weights found, current version: ${ex.syncedVersion}`);
}
