/**
 * `mode: both` (trinity/cli/launcher.py `both`): the explorer and trainer in one process, stepped in the order
 * Trinity's sync style allows. Fixed (and trainer-driven, which differs from it only under NCCL): explorer step k uses
 * the weights of trainer step k − sync_offset rounded down to a sync point, so on-policy, one-step off-policy and
 * interval-sync runs see the same model versions as under Trinity. Explorer-driven: at its sync points the explorer
 * takes the trainer's weights as they are, never waiting for a step. Fully asynchronous: run-fully-async.ts.
 */
import type { Config, ExperienceBufferConfig } from '../../../config/types.generated';
import type { BufferPosition } from '../../buffer';
import { closeEach } from '../../closing';
import {
  isExplorerDriven,
  isExplorerSyncPoint,
  isFullyAsync,
  nextSyncTrainerStep,
} from '../../synchronizer/sync-points';
import { lastWrittenStep } from '../exchange/async-state';
import { isStoredBuffer, queueChannel, storedChannel, type ExperienceChannel } from '../exchange/experience-channel';
import {
  inThreadExplorer,
  workerExplorer,
  type ExplorerDriver,
  type ExplorerInit,
} from '../explorer-side/explorer-driver';
import type { ExplorerReference } from '../explorer-side/explorer-side';
import { withAbsoluteBufferPath } from '../stage/config-paths';
import { explorerInOwnThread } from '../../../config/local-memory/explorer-thread';
import type { StageContext, StageResult } from '../stage/stage-context';
import { channelInput } from '../trainer-side/channel-input';
import { expertSampler } from '../trainer-side/expert-sampler';
import { stalenessBound } from '../trainer-side/sample-strategy';
import type { ResumePoint } from '../trainer-side/trainer-checkpoints';
import { TrainerSide } from '../trainer-side/trainer-side';
import { BothExplorer, type BothRun } from './both-run';
import { exploreAndTrainFullyAsync } from './run-fully-async';
import { timed } from '../../monitor/phase-times';
import { sharedStopFlag, StepAbandoned, unlessAbandoned } from '../../stop-point';

export async function runBoth(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const trainerSide = new TrainerSide(ctx);
  const { algorithm, resumed } = trainerSide;
  let driver: ExplorerDriver | undefined;
  let channel: ExperienceChannel | undefined;
  let failed = false;
  try {
    const start = explorerStart(ctx, resumed);
    const threaded = useExplorerThread(cfg);
    // With the explorer on its own core and experiences passed in memory, it also computes their reference
    // log-probs (its core idles while the trainer trains; the trainer's step is the loop's bound). Not for the mix
    // strategy: its expert rows, drawn by the trainer, need the trainer's own reference forward anyway.
    const reference =
      threaded && trainerSide.readsReference && !start.stored && algorithm.sampleStrategy !== 'mix'
        ? trainerSide.referenceScoring()
        : undefined;
    driver = await startExplorer(ctx, resumed, start, threaded, reference);
    const totalTrain = trainTotalSteps(cfg, driver.totalSteps);
    const trainer = trainerSide.start(totalTrain);
    // A resumed channel holds what was explored before the checkpoint and not yet trained on.
    const memory = start.stored
      ? undefined
      : await queueChannel(
          start.bufferSection && withAbsoluteBufferPath(start.bufferSection, ctx.configDir),
          resumed?.dir,
        );
    channel =
      memory ??
      storedChannel(
        start.stored!,
        resumed?.extra.buffer as BufferPosition | undefined,
        cfg.continue_from_checkpoint,
        ctx.log,
      );
    if (resumed) {
      const waiting = memory ? `, ${memory.waiting} experience(s) not yet trained on` : '';
      ctx.log(
        'info',
        `resumed from ${resumed.dir} (trainer step ${trainer.step}, explorer step ${start.explorerStep}${waiting})`,
      );
    }
    const expert =
      algorithm.sampleStrategy === 'mix'
        ? await expertSampler(
            ctx,
            algorithm.sampleStrategyArgs,
            trainerSide.policy.tokenizer,
            Number(resumed?.extra.expertOffset ?? 0),
          )
        : undefined;
    const explorer = new BothExplorer(ctx, driver, start.explorerStep, resumed?.step ?? 0);
    const minVersion = stalenessBound(algorithm, ctx.release, start.bufferSection, ctx.log);
    const input = channelInput(ctx, channel, expert, totalTrain, threaded ? 'explorer-thread' : 'nothing', minVersion);
    const loop = trainerSide.loop(input, totalTrain, () => explorer.position());
    const run: BothRun = { explorer, channel, loop, trainer: trainerSide };
    return await (isFullyAsync(cfg.synchronizer.sync_style) ? exploreAndTrainFullyAsync : exploreAndTrain)(ctx, run);
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await closeEach(ctx.log, failed, [() => driver?.close(), () => channel?.close(), () => trainerSide.dispose()]);
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
  const stored = isStoredBuffer(bufferSection) ? withAbsoluteBufferPath(bufferSection, ctx.configDir) : undefined;
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
    work: 'explore',
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
    pluginDirs: ctx.pluginDirs,
    stopFlag: sharedStopFlag(ctx.signal),
  };
  // NCCL is in the run's start line of settings about scale (config/check/scale-settings.ts).
  if (cfg.synchronizer.sync_method !== 'memory' && cfg.synchronizer.sync_method !== 'nccl') {
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

function useExplorerThread(cfg: Config): boolean {
  return explorerInOwnThread({ mode: cfg.mode, ...cfg.synchronizer }, process.env.TRINITY_WORKBENCH_EXPLORER_THREAD);
}

function trainTotalSteps(cfg: Config, explorerSteps: number): number {
  if (cfg.trainer.total_steps) return cfg.trainer.total_steps;
  if (cfg.buffer.total_steps) return cfg.buffer.total_steps;
  return Math.max(1, explorerSteps);
}

/** The loop: an explorer step, its sync point and eval, then the trainer catches up while the next step runs. */
async function exploreAndTrain(ctx: StageContext, run: BothRun): Promise<StageResult> {
  const { cfg } = ctx;
  const { explorer: ex, loop, trainer } = run;
  let running: Promise<unknown> | undefined;
  // A stop gives up the explorer step or eval in progress (the explorer's stop flag) as the trainer's.
  await unlessAbandoned(async () => {
    if (ex.evals.dueOnStartup(ex.step)) await ex.evals.evaluate(0);
    let next = ctx.signal.aborted ? undefined : ex.driver.step(ex.step + 1);
    while (next && !ctx.signal.aborted) {
      running = next;
      const out = await timed('loop: await the explorer step', () => next!);
      running = next = undefined;
      // The step ran on the weights offered before it (applied first); a failure to apply them ends the run here.
      await ex.weightsApplied();
      if (!out) break;
      ex.record(out);
      await timed('loop: experiences into the buffer', () => run.channel.put(out.experiences));
      // After explorer step k the explorer takes the weights of trainer step k − offset when k is a sync point.
      if (isExplorerSyncPoint(ex.step, cfg.synchronizer)) await syncAt(ctx, run, ex.step);
      if (ex.evals.dueAfter(ex.step)) await ex.evals.evaluate(ex.step);
      if (cfg.trainer.total_steps && loop.step >= cfg.trainer.total_steps) break;
      if (ctx.signal.aborted) break;
      // The explorer's next step runs (in its worker) while the trainer catches up to the next sync point.
      running = next = ex.driver.step(ex.step + 1);
      await loop.trainUntil(nextSyncTarget(cfg, ex.step));
    }
  });
  if (running)
    await running.catch((e: Error) => {
      if (!(e instanceof StepAbandoned)) ctx.log('warning', `explorer step after the run stopped: ${e.message}`);
    });
  await ex.weightsApplied();
  await loop.trainUntil();
  if (!ctx.signal.aborted) {
    await ex.takeWeights(trainer, loop.step);
    if (ex.evals.dueAtEnd(ex.step)) await ex.evals.evaluate(ex.step);
  }
  await loop.finish();
  return { lastCheckpoint: trainer.checkpoints.last, evals: ex.evals.summary(), stopped: ctx.signal.aborted };
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
async function syncAt(ctx: StageContext, run: BothRun, k: number): Promise<void> {
  const { synchronizer } = ctx.cfg;
  const { explorer: ex, loop, trainer } = run;
  if (!isExplorerDriven(synchronizer.sync_style)) {
    await loop.trainUntil(k - synchronizer.sync_offset);
    await ex.offerWeights(trainer, loop.step);
  } else if (loop.step > ex.syncedVersion) await ex.takeWeights(trainer, loop.step);
  else ctx.log('warning', `No new model weights found, current version: ${ex.syncedVersion}`);
}
