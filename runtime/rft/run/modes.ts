/**
 * The four modes of `trinity run` on one machine (trinity/cli/launcher.py). `both` runs the explorer and trainer
 * in one process, stepping them in the order Trinity's sync style allows. Fixed (and trainer-driven, which differs
 * from it only under NCCL): explorer step k uses the weights of trainer step k − sync_offset rounded down to a sync
 * point, so on-policy, one-step off-policy and interval-sync runs see the same model versions as under Trinity.
 * Explorer-driven: at its sync points the explorer takes the trainer's weights as they are, never waiting for a step. `train` reads SFT/DPO files or an experience
 * buffer; `explore` writes experiences to a buffer and pulls weights from checkpoints; `bench` evaluates every
 * checkpoint of the job.
 */
import type { Config } from '../../config/types.generated';
import type { Pretrained } from '../../engine/pretrained';
import { loadModel } from '../../engine/model/checkpoint';
import { BatchReader } from '../data/reader';
import { readTrainData } from '../data/train-data';
import type { Experience } from '../experience';
import type { Explorer, ExplorerTask } from '../explorer/explorer';
import { needsReference, RftTrainer, type CriticSetup } from '../trainer/trainer';
import { valueModelFiles } from '../../engine/model/value-head';
import { writeDirFiles } from '../../engine/model/checkpoint';
import {
  EXPERIENCE_BUFFER_KEY,
  isStoredBuffer,
  openTrainerReader,
  queueChannel,
  storedChannel,
  type ExperienceChannel,
} from './experience-channel';
import {
  applyNewerCheckpoint,
  copyWeights,
  encodeOptimizer,
  latestCheckpoint,
  listCheckpoints,
  pruneCheckpoints,
  readOptimizerState,
  readTrainerState,
  saveCheckpoint,
} from '../checkpoint/checkpoints';
import { join } from 'node:path';
import { openExperienceWriter, resolveBufferConfig, BufferStopError, type BufferPosition } from '../buffer';
import { sleep } from '../buffer/wait';
import type { StageContext, StageResult } from './context';
import {
  lastWriterCrashed,
  lastWrittenStep,
  readExplorerState,
  readTrainerStatus,
  testKillAfterWrite,
  trainerRunning,
  writeExplorerState,
  writeTrainerStatus,
} from './async';
import {
  exportWeights,
  inThreadExplorer,
  workerExplorer,
  type ExplorerDriver,
  type ExplorerInit,
} from './explorer-driver';
import {
  algorithmSetup,
  createExplorer,
  criticSetup,
  evaluateAll,
  experiencePipeline,
  explorerTotalSteps,
  loadModelFor,
  taskReader,
  tasksOf,
  trainerOptions,
  withAbsolutePath,
} from './setup';
import {
  isExplorerDriven,
  isExplorerSyncPoint,
  isTrainerSyncPoint,
  nextSyncTrainerStep,
} from '../synchronizer/sync-points';

interface ExplorerSide {
  explorer: Explorer;
  evalSets: { name: string; tasks: ExplorerTask[] }[];
}

function makeExplorer(
  ctx: StageContext,
  p: Pretrained,
  evalSets: { name: string; tasks: ExplorerTask[] }[],
): ExplorerSide {
  return { explorer: createExplorer(ctx.cfg, ctx.release, p, ctx.seed, ctx.log, ctx.configDir), evalSets };
}

async function runEvals(
  ctx: StageContext,
  side: ExplorerSide,
  step: number,
  prefix = 'eval',
): Promise<Record<string, number>> {
  const metrics = await evaluateAll(side.explorer, side.evalSets, step, prefix);
  if (side.evalSets.length) ctx.monitor.log(prefix === 'bench' ? 'bench' : 'explorer', step, metrics);
  return metrics;
}

/** Mean accuracy-like numbers of an eval, for the summary: `<prefix>/<set>/<key>/mean` (`…/mean@n` from v0.5.0). */
function evalSummary(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).filter(([k]) => /\/mean(@\d+)?$/.test(k) && !/\/(best|worst|std)@\d+\/mean$/.test(k)),
  );
}

function trainTotalSteps(cfg: Config, explorerSteps: number | undefined): number {
  if (cfg.trainer.total_steps) return cfg.trainer.total_steps;
  if (cfg.buffer.total_steps) return cfg.buffer.total_steps;
  return Math.max(1, explorerSteps ?? 1);
}

/** The checkpoint a run continues from (`continue_from_checkpoint` and one exists), with its trainer state. */
interface ResumePoint {
  dir: string;
  step: number;
  extra: Record<string, unknown>;
}

function resumePoint(ctx: StageContext): ResumePoint | undefined {
  const latest = ctx.cfg.continue_from_checkpoint ? latestCheckpoint(ctx.jobDir) : undefined;
  if (!latest) return undefined;
  const state = readTrainerState(latest.dir);
  return { dir: latest.dir, step: Number(state.step), extra: state.extra };
}

/** The trainer's side of a resume (its weights come with the policy, loaded from the checkpoint directory). */
function restoreTrainer(trainer: RftTrainer, critic: CriticSetup | undefined, at: ResumePoint): void {
  const opt = readOptimizerState(at.dir);
  if (opt) trainer.optimizer.loadState(opt);
  const criticOpt = critic ? readOptimizerState(join(at.dir, 'critic')) : undefined;
  if (criticOpt) trainer.loadCriticState(criticOpt);
  trainer.restoreStep(at.step);
}

export async function runBoth(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const alg = algorithmSetup(cfg, ctx.release);
  const resumed = resumePoint(ctx);
  const policy = loadModelFor(cfg, ctx.configDir, resumed?.dir ?? ctx.modelPath);
  const reference = needsReference(alg) ? loadModelFor(cfg, ctx.configDir, ctx.modelPath) : undefined;
  let driver: ExplorerDriver | undefined;
  let channel: ExperienceChannel | undefined;
  let critic: CriticSetup | undefined;
  let created: RftTrainer | undefined;
  try {
    const { sync_offset: offset } = cfg.synchronizer;
    let explorerStep = Number(resumed?.extra.explorerStep ?? 0);
    let readerOffset = Number(resumed?.extra.readerOffset ?? 0);
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
    const init: ExplorerInit = {
      cfg,
      release: ctx.release,
      configDir: ctx.configDir,
      modelPath: resumed?.dir ?? ctx.modelPath,
      seed: ctx.seed,
      readerOffset,
      skipBatches,
      version: resumed?.step ?? 0,
      backend: 'auto',
    };
    if (cfg.synchronizer.sync_method !== 'memory') {
      ctx.log(
        'info',
        `synchronizer.sync_method ${cfg.synchronizer.sync_method} runs as memory sync locally: the trainer hands its weights to the explorer in this process`,
      );
    }
    const threaded = useExplorerThread(cfg);
    driver = await (threaded ? workerExplorer(init, ctx.log) : inThreadExplorer(init, ctx.log));
    ctx.log(
      'info',
      threaded
        ? 'the explorer runs in a worker thread, overlapping the trainer'
        : 'the explorer and trainer take turns in one thread',
    );
    readerOffset = driver.startOffset;
    const explorerSteps = driver.totalSteps;
    const totalTrain = trainTotalSteps(cfg, explorerSteps);
    critic = alg.useCritic ? criticSetup(cfg, ctx.configDir, totalTrain, ctx.seed, resumed?.dir) : undefined;
    const trainer = new RftTrainer(
      policy.model,
      reference?.model,
      trainerOptions(cfg, alg, totalTrain, policy.tokenizer.padTokenId),
      critic,
    );
    created = trainer;
    // A resumed channel holds what was explored before the checkpoint and not yet trained on.
    const memory = stored ? undefined : await queueChannel(bufferSection, resumed?.dir);
    channel =
      memory ??
      storedChannel(
        stored!,
        resumed?.extra.buffer as BufferPosition | undefined,
        cfg.continue_from_checkpoint,
        ctx.log,
      );
    if (resumed) {
      restoreTrainer(trainer, critic, resumed);
      const waiting = memory ? `, ${memory.waiting} experience(s) not yet trained on` : '';
      ctx.log(
        'info',
        `resumed from ${resumed.dir} (trainer step ${trainer.step}, explorer step ${explorerStep}${waiting})`,
      );
    }
    const expert =
      alg.sampleStrategy === 'mix'
        ? await expertSampler(ctx, alg.sampleStrategyArgs, policy, Number(resumed?.extra.expertOffset ?? 0))
        : undefined;
    let lastCheckpoint = resumed?.dir;
    let lastEval: Record<string, number> = {};
    let lastEvalStep = -1;
    // The mix sample strategy fills ceil(ratio · train_batch_size) of each batch with expert (SFT) samples.
    const trainBatch = cfg.buffer.train_batch_size - (expert?.batchSize ?? 0);
    const save = async (): Promise<void> => {
      const extra = {
        explorerStep,
        readerOffset,
        ...channel!.position(),
        ...(expert ? { expertOffset: expert.offset() } : {}),
      };
      lastCheckpoint = await saveTrainerCheckpoint(ctx, policy, trainer, critic, extra, (dir) =>
        channel!.saveInto(dir),
      );
    };
    // A replay queue can serve experiences again and again: its trainer stops at the steps the taskset implies.
    const replays = channel.replays;
    const stepLimit = cfg.trainer.total_steps ?? (replays ? totalTrain : Number.MAX_SAFE_INTEGER);
    /** Trains on buffered experiences until the trainer reaches `target` steps (or the data runs out). */
    const trainUntil = async (target: number): Promise<void> => {
      while (trainer.step < Math.min(target, stepLimit) && !ctx.signal.aborted) {
        await yieldToEvents();
        if (ctx.signal.aborted) break;
        const batch = await channel!.take(trainBatch);
        if (!batch) break;
        if (expert) batch.push(...expert.next());
        const metrics = await trainer.trainStep(batch);
        ctx.monitor.log('trainer', trainer.step, metrics);
        ctx.progress(
          'trainer',
          trainer.step,
          totalTrain,
          `loss ${fmt(metrics['actor/pg_loss'] ?? metrics['actor/sft_loss'])}`,
        );
        if (cfg.trainer.save_interval > 0 && trainer.step % cfg.trainer.save_interval === 0) await save();
      }
    };
    const evaluate = async (step: number): Promise<void> => {
      lastEval = await driver!.evaluate(step);
      lastEvalStep = step;
      ctx.monitor.log('explorer', step, lastEval);
    };
    let syncedVersion = resumed?.step ?? 0;
    const sync = async (): Promise<void> => {
      await driver!.setWeights(await exportWeights(policy.model), trainer.step);
      syncedVersion = trainer.step;
    };
    const explorerDriven = isExplorerDriven(cfg.synchronizer.sync_style);
    /**
     * The trainer step the explorer syncs to next after step k (k > offset, (k − offset) % interval == 0). Explorer-
     * driven sync waits for no particular step: the trainer trains on whatever is buffered meanwhile.
     */
    const nextSyncTarget = (k: number): number =>
      explorerDriven ? Number.MAX_SAFE_INTEGER : nextSyncTrainerStep(k, cfg.synchronizer);
    /**
     * A sync point: fixed (and trainer-driven, which differs only under NCCL) waits for trainer step k − offset;
     * explorer-driven takes the trainer's weights as they are, if it trained since the last sync
     * (Trainer.need_sync / Synchronizer.notify_no_new_model_state_dict).
     */
    const syncAt = async (k: number): Promise<void> => {
      if (!explorerDriven) {
        await trainUntil(k - offset);
        await sync();
      } else if (trainer.step > syncedVersion) await sync();
      else ctx.log('warning', `No new model weights found, current version: ${syncedVersion}`);
    };

    if (cfg.explorer.eval_on_startup && explorerStep === 0 && driver.hasEvals) await evaluate(0);
    let running = ctx.signal.aborted ? undefined : driver.step(explorerStep + 1);
    while (running && !ctx.signal.aborted) {
      const out = await running;
      running = undefined;
      if (!out) break;
      explorerStep++;
      readerOffset = out.readerOffset;
      ctx.monitor.log('explorer', explorerStep, out.metrics);
      ctx.monitor.rollouts(explorerStep, out.samples);
      ctx.progress('explorer', explorerStep, explorerSteps, `reward ${fmt(meanReward(out.experiences))}`);
      await channel.put(out.experiences);
      // After explorer step k the explorer takes the weights of trainer step k − offset when k is a sync point.
      if (isExplorerSyncPoint(explorerStep, cfg.synchronizer)) await syncAt(explorerStep);
      if (cfg.explorer.eval_interval > 0 && explorerStep % cfg.explorer.eval_interval === 0 && driver.hasEvals)
        await evaluate(explorerStep);
      if (cfg.trainer.total_steps && trainer.step >= cfg.trainer.total_steps) break;
      if (ctx.signal.aborted) break;
      // The explorer's next step runs (in its worker) while the trainer catches up to the next sync point.
      running = driver.step(explorerStep + 1);
      await trainUntil(nextSyncTarget(explorerStep));
    }
    if (running)
      await running.catch((e: Error) => ctx.log('warning', `explorer step after the run stopped: ${e.message}`));
    await trainUntil(Number.MAX_SAFE_INTEGER);
    if (!ctx.signal.aborted) {
      await sync();
      if (driver.hasEvals && lastEvalStep !== explorerStep) await evaluate(explorerStep);
      if (trainer.step > 0 && !lastCheckpoint?.endsWith(`global_step_${trainer.step}`)) await save();
    }
    return { lastCheckpoint, evals: evalSummary(lastEval), stopped: ctx.signal.aborted };
  } finally {
    await driver?.close();
    await channel?.close();
    policy.model.dispose();
    reference?.model.dispose();
    critic?.model.dispose();
    created?.dispose();
  }
}

/**
 * The trainer's checkpoint `global_step_<step>` (weights, tokenizer, optimizer, `extra` to resume from, PPO's critic,
 * whatever `more` writes), then pruning to `max_checkpoints_to_keep` and the `checkpoint` event. Returns its directory.
 */
async function saveTrainerCheckpoint(
  ctx: StageContext,
  policy: Pretrained,
  trainer: RftTrainer,
  critic: CriticSetup | undefined,
  extra: Record<string, unknown>,
  more?: (dir: string) => void,
): Promise<string> {
  // Everything read off the device first (asynchronously); the directory is then written in one synchronous swap.
  const optimizer = await trainer.optimizer.exportState();
  const criticFiles = critic ? await criticFilesOf(critic, trainer) : undefined;
  const dir = await saveCheckpoint(
    ctx.jobDir,
    trainer.step,
    policy.model,
    policy.tokenizer,
    optimizer,
    { step: trainer.step, extra },
    (tmp) => {
      more?.(tmp);
      if (criticFiles) writeDirFiles(join(tmp, 'critic'), criticFiles);
    },
  );
  pruneCheckpoints(ctx.jobDir, ctx.cfg.trainer.max_checkpoints_to_keep);
  ctx.monitor.emit({ type: 'checkpoint', step: trainer.step, path: dir });
  return dir;
}

/** PPO's critic inside a checkpoint: its weights and value head, and its optimizer state, as files. */
async function criticFilesOf(critic: CriticSetup, trainer: RftTrainer): Promise<Record<string, string | Uint8Array>> {
  const state = await trainer.criticState();
  return valueModelFiles(critic.model, { files: state ? { 'optimizer.safetensors': encodeOptimizer(state) } : {} });
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

/** How often a process of the asynchronous pair looks again (new checkpoint, restarted explorer). Trinity polls every 1 s. */
const ASYNC_POLL_MS = 200;

/**
 * `mode: train`. From an SFT/DPO file, or from an experience buffer that a `mode: explore` process of the same job
 * fills (Trinity's fully asynchronous setup, trinity/trainer/trainer.py `Trainer.train`): the trainer waits for
 * `train_batch_size` experiences (a killed explorer is waited for up to `max_read_timeout`, as Trinity's SQL storage
 * does while the explorer still holds it), stops when the explorer has finished and fewer remain, or at
 * `trainer.total_steps`. Reading from a buffer it saves a checkpoint every `sync_interval` steps (Trinity's
 * `sync_weight` for `sync_method: checkpoint`, which the explorer pulls; `memory` cannot cross processes and is treated
 * the same) and every `save_interval` steps, each with its buffer position (`extra.buffer`) to resume from.
 */
export async function runTrain(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const alg = algorithmSetup(cfg, ctx.release);
  const resumed = resumePoint(ctx);
  const policy = loadModelFor(cfg, ctx.configDir, resumed?.dir ?? ctx.modelPath);
  const reference = needsReference(alg) ? loadModelFor(cfg, ctx.configDir, ctx.modelPath) : undefined;
  let cleanup = (): void => {};
  let critic: CriticSetup | undefined;
  let created: RftTrainer | undefined;
  try {
    const source = cfg.buffer.trainer_input.experience_buffer;
    if (!source) throw new Error('mode train needs buffer.trainer_input.experience_buffer');
    const trainBatch = cfg.buffer.train_batch_size;
    let lastCheckpoint = resumed?.dir;
    const fromFile = source.storage_type === 'file' && (source.schema_type === 'sft' || source.schema_type === 'dpo');
    let next: () => Promise<Experience[] | null>;
    let position: () => Record<string, unknown>;
    let totalSteps: number;
    /** Trainer steps between the checkpoints the explorer pulls (0: none besides save_interval's). */
    let syncInterval = 0;
    const explorerDriven = !fromFile && isExplorerDriven(cfg.synchronizer.sync_style);
    // Set once the trainer exists; the reader's waits call them.
    let trainerStep = (): number => 0;
    let syncIfRequested = async (): Promise<void> => {};
    if (fromFile) {
      const data = await readTrainData(source, {
        baseDir: ctx.configDir,
        tokenizer: policy.tokenizer,
        maxLength: cfg.model.max_model_len,
      });
      for (const w of data.warnings) ctx.log('warning', w);
      if (data.truncated)
        ctx.log(
          'warning',
          `${data.truncated} samples of ${source.name} were longer than max_model_len and were truncated`,
        );
      const offset = Number(resumed?.extra.readerOffset ?? 0);
      const reader = new BatchReader(data.experiences, {
        batchSize: trainBatch,
        totalEpochs: source.total_epochs ?? cfg.buffer.total_epochs,
        totalSteps: source.total_steps ?? cfg.buffer.total_steps,
        offset,
        name: source.name,
      });
      totalSteps = cfg.trainer.total_steps ?? Math.floor(reader.totalSamples / trainBatch);
      next = async () => reader.next()?.items ?? null;
      position = () => ({ readerOffset: reader.currentOffset });
    } else {
      const section = withAbsolutePath(source, ctx.configDir);
      const reader = openTrainerReader(
        section,
        resumed?.extra.buffer as BufferPosition | undefined,
        cfg.continue_from_checkpoint,
        ctx.log,
      );
      cleanup = () => reader.close();
      totalSteps = cfg.trainer.total_steps ?? cfg.buffer.total_steps ?? 1;
      const maxWaitMs = resolveBufferConfig(section, { keyPath: EXPERIENCE_BUFFER_KEY }).maxReadTimeoutS * 1000;
      next = async () => {
        let crashedSince: number | undefined;
        let waitingSince: number | undefined;
        try {
          for (;;) {
            try {
              // Explorer-driven, the wait is cut into polls so the trainer answers the explorer's sync requests meanwhile.
              return await reader.read(trainBatch, {
                signal: ctx.signal,
                ...(explorerDriven ? { timeoutMs: ASYNC_POLL_MS } : {}),
              });
            } catch (e) {
              if (ctx.signal.aborted) return null;
              if (!(e instanceof BufferStopError)) throw e;
              if (explorerDriven && e.reason === 'timeout') {
                if (waitingSince === undefined) {
                  waitingSince = Date.now();
                  writeTrainerStatus(ctx.jobDir, 'running', trainerStep(), true);
                }
                if (Date.now() - waitingSince < maxWaitMs) {
                  await syncIfRequested();
                  continue;
                }
              }
              // Every writer is gone; the newest died without finishing (a killed explorer): wait for it to be restarted.
              if (e.reason !== 'finished' || !lastWriterCrashed(section)) {
                ctx.log('info', `no more experiences: ${e.message}`);
                return null;
              }
              if (crashedSince === undefined) {
                crashedSince = Date.now();
                ctx.log(
                  'warning',
                  `the explorer writing ${source.name} stopped without finishing; waiting up to ${maxWaitMs / 1000} s (max_read_timeout) for it to resume`,
                );
              }
              if (Date.now() - crashedSince >= maxWaitMs) return null;
              try {
                await sleep(ASYNC_POLL_MS, ctx.signal);
              } catch {
                return null;
              }
            }
          }
        } finally {
          if (waitingSince !== undefined) writeTrainerStatus(ctx.jobDir, 'running', trainerStep());
        }
      };
      position = () => ({ buffer: reader.state() });
      if (cfg.synchronizer.sync_method !== 'checkpoint') {
        ctx.log(
          'info',
          `synchronizer.sync_method ${cfg.synchronizer.sync_method} cannot reach an explorer in another process; the trainer saves checkpoints every sync_interval steps instead`,
        );
      }
      syncInterval = explorerDriven ? 0 : cfg.synchronizer.sync_interval;
    }
    critic = alg.useCritic ? criticSetup(cfg, ctx.configDir, totalSteps, ctx.seed, resumed?.dir) : undefined;
    const trainer = new RftTrainer(
      policy.model,
      reference?.model,
      trainerOptions(cfg, alg, totalSteps, policy.tokenizer.padTokenId),
      critic,
    );
    created = trainer;
    if (resumed) {
      restoreTrainer(trainer, critic, resumed);
      ctx.log('info', `resumed from ${resumed.dir} (trainer step ${trainer.step})`);
    }
    if (!fromFile) {
      writeTrainerStatus(ctx.jobDir, 'running', trainer.step);
      const stopCleanup = cleanup;
      cleanup = () => {
        stopCleanup();
        writeTrainerStatus(ctx.jobDir, 'stopped', trainer.step);
      };
    }
    const save = async (): Promise<void> => {
      lastCheckpoint = await saveTrainerCheckpoint(ctx, policy, trainer, critic, position());
    };
    trainerStep = () => trainer.step;
    // Explorer-driven Trainer.need_sync: the explorer asked, and there are weights it has not been offered.
    syncIfRequested = async () => {
      if (
        trainer.step > 0 &&
        !lastCheckpoint?.endsWith(`global_step_${trainer.step}`) &&
        readExplorerState(ctx.jobDir)?.requireSync
      )
        await save();
    };
    while (!ctx.signal.aborted) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      if (cfg.trainer.total_steps && trainer.step >= cfg.trainer.total_steps) break;
      const batch = await next();
      if (!batch) break;
      const metrics = await trainer.trainStep(batch);
      ctx.monitor.log('trainer', trainer.step, metrics);
      ctx.progress(
        'trainer',
        trainer.step,
        totalSteps,
        `loss ${fmt(metrics['actor/sft_loss'] ?? metrics['actor/dpo_loss'] ?? metrics['actor/pg_loss'])}`,
      );
      const syncDue = isTrainerSyncPoint(trainer.step, syncInterval);
      const saveDue = cfg.trainer.save_interval > 0 && trainer.step % cfg.trainer.save_interval === 0; // Trainer.need_save
      if (syncDue || saveDue) await save();
      if (explorerDriven) await syncIfRequested();
    }
    if (!ctx.signal.aborted && trainer.step > 0 && !lastCheckpoint?.endsWith(`global_step_${trainer.step}`))
      await save();
    return { lastCheckpoint, evals: {}, stopped: ctx.signal.aborted };
  } finally {
    cleanup();
    policy.model.dispose();
    reference?.model.dispose();
    critic?.model.dispose();
    created?.dispose();
  }
}

/**
 * `mode: explore` (trinity/explorer/explorer.py `Explorer.explore`): runs the taskset and writes each step's
 * experiences (with their model version) to `buffer.trainer_input.experience_buffer` as one batch, then records its
 * position in `state/explorer.json`. Weights come from the job's checkpoints: the newest at start, and after explorer
 * step k when k > sync_offset and (k − sync_offset) % sync_interval == 0, when it waits up to `sync_timeout` for a
 * checkpoint newer than its weights while a trainer of the job is running (Synchronizer.wait_new_model_state_dict),
 * else goes on with what it has. Resuming, it continues after the highest explorer step the buffer already holds, so
 * a step written just before a kill is not written again.
 */
export async function runExplore(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const alg = algorithmSetup(cfg, ctx.release);
  const rollout = loadModelFor(cfg, ctx.configDir, ctx.modelPath);
  let made: ExplorerSide | undefined;
  try {
    const trainSets = await tasksOf(cfg, ctx.configDir, 'train');
    const evalSets = await tasksOf(cfg, ctx.configDir, 'eval');
    for (const s of [...trainSets, ...evalSets]) for (const w of s.warnings) ctx.log('warning', w);
    const tasks = trainSets.flatMap((s) => s.tasks);
    const side = makeExplorer(ctx, rollout, evalSets);
    made = side;
    const pipeline = experiencePipeline(cfg, alg.groupAdvantage, ctx.release);
    const source = cfg.buffer.trainer_input.experience_buffer;
    if (!source) throw new Error('mode explore needs buffer.trainer_input.experience_buffer (where experiences go)');
    const target = withAbsolutePath(source, ctx.configDir);
    const batchSize = cfg.buffer.batch_size;
    const explorerSteps = explorerTotalSteps(cfg, tasks.length);
    const { sync_timeout: syncTimeoutS } = cfg.synchronizer;
    const resumed = cfg.continue_from_checkpoint ? readExplorerState(ctx.jobDir) : undefined;
    let explorerStep = resumed?.explorerStep ?? 0;
    const reader = taskReader(cfg, tasks, resumed?.readerOffset ?? 0);
    const writer = openExperienceWriter(target, { keyPath: EXPERIENCE_BUFFER_KEY });
    let lastEval: Record<string, number> = {};
    try {
      if (cfg.continue_from_checkpoint) {
        // A kill between the committed write and the state file leaves steps in the buffer the state does not record.
        const inBuffer = lastWrittenStep(target);
        if (inBuffer > explorerStep) {
          ctx.log(
            'info',
            `the buffer already holds explorer step ${inBuffer} (state/explorer.json says ${explorerStep}); continuing after it`,
          );
          while (explorerStep < inBuffer && reader.next()) explorerStep++;
          writeExplorerState(ctx.jobDir, { explorerStep, readerOffset: reader.currentOffset });
        }
        if (explorerStep > 0) ctx.log('info', `explorer resumes after step ${explorerStep}`);
      }
      const perStep = batchSize * cfg.algorithm.repeat_times;
      if (perStep < cfg.buffer.train_batch_size) {
        ctx.log(
          'warning',
          `an explorer step writes about ${perStep} experiences but a trainer step takes ${cfg.buffer.train_batch_size}: at sync points the explorer may wait up to sync_timeout (${syncTimeoutS} s) for weights the trainer cannot produce yet`,
        );
      }

      /** Loads the job's newest checkpoint when it is newer than the rollout weights. */
      const loadNewest = (): boolean => {
        const step = applyNewerCheckpoint(
          ctx.jobDir,
          side.explorer.model.version,
          (saved) => copyWeights(saved, rollout.model),
          (m) => ctx.log('warning', m),
        );
        if (step === undefined) return false;
        side.explorer.model.version = step;
        ctx.log('info', `explorer step ${explorerStep}: model weights of trainer step ${step}`);
        return true;
      };
      const explorerDriven = isExplorerDriven(cfg.synchronizer.sync_style);
      /**
       * Explorer._pull_latest_weights: a newer checkpoint, waiting up to sync_timeout while the trainer runs. Explorer-
       * driven, the explorer asks for one (the trainer saves what it has) and stops waiting when the trainer, blocked on
       * data, has nothing newer.
       */
      const pullWeights = async (): Promise<void> => {
        const deadline = Date.now() + syncTimeoutS * 1000;
        if (explorerDriven)
          writeExplorerState(ctx.jobDir, { explorerStep, readerOffset: reader.currentOffset, requireSync: true });
        try {
          for (;;) {
            if (loadNewest() || ctx.signal.aborted || !trainerRunning(ctx.jobDir)) return;
            const trainer = readTrainerStatus(ctx.jobDir);
            if (explorerDriven && trainer?.waiting && trainer.step <= side.explorer.model.version) {
              ctx.log('warning', `No new model weights found, current version: ${side.explorer.model.version}`);
              return;
            }
            if (Date.now() >= deadline) {
              ctx.log(
                'warning',
                `No new model weights found within sync_timeout (${syncTimeoutS} s), current version: ${side.explorer.model.version}`,
              );
              return;
            }
            try {
              await sleep(Math.min(ASYNC_POLL_MS, Math.max(0, deadline - Date.now())), ctx.signal);
            } catch {
              return;
            }
          }
        } finally {
          if (explorerDriven) writeExplorerState(ctx.jobDir, { explorerStep, readerOffset: reader.currentOffset });
        }
      };

      loadNewest(); // the launcher's first sync_weight: the newest checkpoint, no waiting
      if (cfg.explorer.eval_on_startup && explorerStep === 0 && side.evalSets.length)
        lastEval = await runEvals(ctx, side, 0);
      while (!ctx.signal.aborted) {
        await yieldToEvents();
        if (ctx.signal.aborted) break;
        const batch = reader.next();
        if (!batch) {
          writeExplorerState(ctx.jobDir, { explorerStep, readerOffset: reader.currentOffset, finished: true });
          break;
        }
        explorerStep++;
        const out = await side.explorer.explore(explorerStep, batch.items, pipeline);
        reader.afterStep(explorerStep, out.selectorFeedback);
        await writer.write(out.experiences); // one transaction: the step's batch is in the buffer whole or not at all
        testKillAfterWrite(explorerStep);
        writeExplorerState(ctx.jobDir, { explorerStep, readerOffset: reader.currentOffset });
        ctx.monitor.log('explorer', explorerStep, out.metrics);
        ctx.monitor.rollouts(explorerStep, out.samples);
        ctx.progress('explorer', explorerStep, explorerSteps, `reward ${fmt(meanReward(out.experiences))}`);
        if (cfg.explorer.eval_interval > 0 && explorerStep % cfg.explorer.eval_interval === 0 && side.evalSets.length)
          lastEval = await runEvals(ctx, side, explorerStep);
        if (isExplorerSyncPoint(explorerStep, cfg.synchronizer)) await pullWeights();
      }
    } finally {
      // Finished or stopped: readers end once the rest is read (Trinity releases the storage on shutdown). A killed
      // explorer never gets here, and the trainer waits for it.
      await writer.finish();
    }
    return { evals: evalSummary(lastEval), stopped: ctx.signal.aborted };
  } finally {
    made?.explorer.dispose();
    rollout.model.dispose();
  }
}

export async function runBench(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const base = loadModelFor(cfg, ctx.configDir, ctx.modelPath);
  let made: ExplorerSide | undefined;
  try {
    const evalSets = await tasksOf(cfg, ctx.configDir, 'eval');
    if (!evalSets.length) throw new Error('mode bench needs buffer.explorer_input.eval_tasksets');
    const side = makeExplorer(ctx, base, evalSets);
    made = side;
    let evals: Record<string, number> = {};
    const checkpoints = cfg.explorer.bench_on_latest_checkpoint
      ? [latestCheckpoint(ctx.jobDir)].filter((c) => c !== undefined)
      : listCheckpoints(ctx.jobDir);
    if (!cfg.explorer.bench_on_latest_checkpoint && cfg.explorer.eval_on_startup)
      evals = await runEvals(ctx, side, 0, 'bench');
    for (const c of checkpoints) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const saved = loadModel(c!.dir);
      copyWeights(saved, base.model);
      saved.dispose();
      side.explorer.model.version = c!.step;
      evals = await runEvals(ctx, side, c!.step, 'bench');
      ctx.progress(
        'bench',
        c!.step,
        undefined,
        Object.entries(evalSummary(evals))
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', '),
      );
    }
    if (!checkpoints.length && !cfg.explorer.eval_on_startup)
      ctx.log('warning', `no checkpoints in ${ctx.jobDir} to benchmark`);
    return { evals: evalSummary(evals), stopped: ctx.signal.aborted };
  } finally {
    made?.explorer.dispose();
    base.model.dispose();
  }
}

/** Trinity's MixSampleStrategy: expert rows from `trainer_input.auxiliary_buffers[sft_dataset_name]`, cycled. */
async function expertSampler(
  ctx: StageContext,
  args: Record<string, unknown>,
  p: Pretrained,
  offset: number,
): Promise<{ batchSize: number; next(): Experience[]; offset(): number }> {
  const ratio = typeof args.expert_data_ratio === 'number' ? args.expert_data_ratio : 0.5;
  const name = typeof args.sft_dataset_name === 'string' ? args.sft_dataset_name : 'sft_dataset';
  const source = ctx.cfg.buffer.trainer_input.auxiliary_buffers?.[name];
  if (!source)
    throw new Error(`sample_strategy mix needs buffer.trainer_input.auxiliary_buffers.${name} (the expert SFT data)`);
  const data = await readTrainData(
    { ...source, schema_type: 'sft' },
    { baseDir: ctx.configDir, tokenizer: p.tokenizer, maxLength: ctx.cfg.model.max_model_len },
  );
  const batchSize = Math.ceil(ratio * ctx.cfg.buffer.train_batch_size);
  const reader = new BatchReader(data.experiences, { batchSize, totalEpochs: Number.MAX_SAFE_INTEGER, offset, name });
  return {
    batchSize,
    offset: () => reader.currentOffset,
    next: () =>
      (reader.next()?.items ?? []).map((e) => {
        const n = e.tokens.length - e.promptLength;
        return {
          ...e,
          reward: 0,
          logprobs: new Array<number>(n).fill(0),
          advantages: new Array<number>(n).fill(0),
          isExpert: true,
        };
      }),
  };
}

/** Lets signal handlers and I/O callbacks run between steps (the steps themselves are synchronous). */
function yieldToEvents(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

function meanReward(exps: readonly Experience[]): number {
  return exps.length ? exps.reduce((a, e) => a + (e.reward ?? 0), 0) / exps.length : NaN;
}

function fmt(v: number | undefined): string {
  return v === undefined || Number.isNaN(v) ? '–' : v.toFixed(3);
}
