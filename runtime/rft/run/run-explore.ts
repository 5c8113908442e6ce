/**
 * `mode: explore` (trinity/explorer/explorer.py `Explorer.explore`): runs the taskset and writes each step's
 * experiences (with their model version) to `buffer.trainer_input.experience_buffer` as one batch, then records its
 * position in `state/explorer.json`. Weights come from the job's checkpoints: the newest at start, and after explorer
 * step k when k > sync_offset and (k − sync_offset) % sync_interval == 0, when it waits up to `sync_timeout` for a
 * checkpoint newer than its weights while a trainer of the job is running (Synchronizer.wait_new_model_state_dict),
 * else goes on with what it has. Resuming, it continues after the highest explorer step the buffer already holds, so
 * a step written just before a kill is not written again.
 */
import type { ExperienceBufferConfig } from '../../config/types.generated';
import type { Pretrained } from '../../engine/pretrained';
import { closeEach } from '../closing';
import { openExperienceWriter, type ExperienceWriter } from '../buffer';
import { sleep } from '../buffer/wait';
import { applyNewerCheckpoint, copyWeights } from '../checkpoint/checkpoints';
import type { ExplorerTask } from '../explorer/explorer';
import type { ExperiencePipeline } from '../explorer/experience-pipeline';
import { isExplorerDriven, isExplorerSyncPoint } from '../synchronizer/sync-points';
import {
  ASYNC_POLL_MS,
  lastWrittenStep,
  readExplorerState,
  readTrainerStatus,
  testKillAfterWrite,
  trainerRunning,
  writeExplorerState,
} from './async';
import type { StageContext, StageResult } from './context';
import { EXPERIENCE_BUFFER_KEY } from './experience-channel';
import { evalSummary, makeExplorer, runEvals, type ExplorerSide } from './explorer-evals';
import {
  algorithmSetup,
  experiencePipeline,
  explorerTotalSteps,
  loadModelFor,
  taskReader,
  tasksOf,
  withAbsolutePath,
  type TaskReader,
} from './setup';
import { fmt, meanReward, yieldToEvents } from './step-loop';

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
    const resumed = cfg.continue_from_checkpoint ? readExplorerState(ctx.jobDir) : undefined;
    const reader = taskReader(cfg, tasks, resumed?.readerOffset ?? 0);
    const writer = openExperienceWriter(target, { keyPath: EXPERIENCE_BUFFER_KEY });
    const run = new ExploreRun(ctx, { side, rollout, pipeline, reader, writer, target }, resumed?.explorerStep ?? 0);
    let failed = false;
    try {
      await run.run(explorerTotalSteps(cfg, tasks.length));
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      // Finished or stopped: readers end once the rest is read (Trinity releases the storage on shutdown). A killed
      // explorer never gets here, and the trainer waits for it.
      await closeEach(ctx.log, failed, [() => writer.finish()]);
    }
    return { evals: evalSummary(run.lastEval), stopped: ctx.signal.aborted };
  } finally {
    made?.explorer.dispose();
    rollout.model.dispose();
  }
}

/** What an explore run works with: its explorer, rollout weights, pipeline, taskset reader and experience buffer. */
interface ExploreParts {
  side: ExplorerSide;
  rollout: Pretrained;
  pipeline: ExperiencePipeline;
  reader: TaskReader;
  writer: ExperienceWriter;
  /** The experience buffer's section, with an absolute path. */
  target: ExperienceBufferConfig;
}

/** One explore run: the explorer step it has written, the weights it holds, its last eval. */
class ExploreRun {
  lastEval: Record<string, number> = {};
  private readonly explorerDriven: boolean;

  constructor(
    private readonly ctx: StageContext,
    private readonly parts: ExploreParts,
    private step: number,
  ) {
    this.explorerDriven = isExplorerDriven(ctx.cfg.synchronizer.sync_style);
  }

  async run(totalSteps: number): Promise<void> {
    const { ctx } = this;
    const { cfg } = ctx;
    const { side, reader } = this.parts;
    if (cfg.continue_from_checkpoint) this.resumeAfterBuffer();
    this.warnIfStepsTooSmall();
    this.loadNewest(); // the launcher's first sync_weight: the newest checkpoint, no waiting
    if (cfg.explorer.eval_on_startup && this.step === 0 && side.evalSets.length)
      this.lastEval = await runEvals(ctx, side, 0);
    while (!ctx.signal.aborted) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const batch = reader.next();
      if (!batch) {
        writeExplorerState(ctx.jobDir, { explorerStep: this.step, readerOffset: reader.currentOffset, finished: true });
        break;
      }
      await this.exploreStep(batch.items, totalSteps);
      const interval = cfg.explorer.eval_interval;
      if (interval > 0 && this.step % interval === 0 && side.evalSets.length)
        this.lastEval = await runEvals(ctx, side, this.step);
      if (isExplorerSyncPoint(this.step, cfg.synchronizer)) await this.pullWeights();
    }
  }

  /** Explores the next step and writes its experiences, then its position. */
  private async exploreStep(tasks: ExplorerTask[], totalSteps: number): Promise<void> {
    const { ctx } = this;
    const { side, reader, writer, pipeline } = this.parts;
    this.step++;
    const step = this.step;
    const out = await side.explorer.explore(step, tasks, pipeline);
    reader.afterStep(step, out.selectorFeedback);
    await writer.write(out.experiences); // one transaction: the step's batch is in the buffer whole or not at all
    testKillAfterWrite(step);
    writeExplorerState(ctx.jobDir, { explorerStep: step, readerOffset: reader.currentOffset });
    ctx.monitor.log('explorer', step, out.metrics);
    ctx.monitor.rollouts(step, out.samples);
    ctx.progress('explorer', step, totalSteps, `reward ${fmt(meanReward(out.experiences))}`);
  }

  /** A kill between the committed write and the state file leaves steps in the buffer the state does not record. */
  private resumeAfterBuffer(): void {
    const { ctx } = this;
    const { reader, target } = this.parts;
    const inBuffer = lastWrittenStep(target);
    if (inBuffer > this.step) {
      ctx.log(
        'info',
        `the buffer already holds explorer step ${inBuffer} (state/explorer.json says ${this.step}); continuing after it`,
      );
      while (this.step < inBuffer && reader.next()) this.step++;
      writeExplorerState(ctx.jobDir, { explorerStep: this.step, readerOffset: reader.currentOffset });
    }
    if (this.step > 0) ctx.log('info', `explorer resumes after step ${this.step}`);
  }

  private warnIfStepsTooSmall(): void {
    const { cfg } = this.ctx;
    const perStep = cfg.buffer.batch_size * cfg.algorithm.repeat_times;
    if (perStep < cfg.buffer.train_batch_size) {
      this.ctx.log(
        'warning',
        `an explorer step writes about ${perStep} experiences but a trainer step takes ${cfg.buffer.train_batch_size}: at sync points the explorer may wait up to sync_timeout (${cfg.synchronizer.sync_timeout} s) for weights the trainer cannot produce yet`,
      );
    }
  }

  /** Loads the job's newest checkpoint when it is newer than the rollout weights. */
  private loadNewest(): boolean {
    const { ctx } = this;
    const { side, rollout } = this.parts;
    const step = applyNewerCheckpoint(
      ctx.jobDir,
      side.explorer.model.version,
      (saved) => copyWeights(saved, rollout.model),
      (m) => ctx.log('warning', m),
    );
    if (step === undefined) return false;
    side.explorer.model.version = step;
    ctx.log('info', `explorer step ${this.step}: model weights of trainer step ${step}`);
    return true;
  }

  /**
   * Explorer._pull_latest_weights: a newer checkpoint, waiting up to sync_timeout while the trainer runs. Explorer-
   * driven, the explorer asks for one (the trainer saves what it has) and stops waiting when the trainer, blocked on
   * data, has nothing newer.
   */
  private async pullWeights(): Promise<void> {
    const { ctx, explorerDriven } = this;
    const { reader } = this.parts;
    const position = { explorerStep: this.step, readerOffset: reader.currentOffset };
    const deadline = Date.now() + ctx.cfg.synchronizer.sync_timeout * 1000;
    if (explorerDriven) writeExplorerState(ctx.jobDir, { ...position, requireSync: true });
    try {
      while (!this.loadNewest() && !ctx.signal.aborted && trainerRunning(ctx.jobDir)) {
        if (this.noNewerWeights(deadline)) return;
        try {
          await sleep(Math.min(ASYNC_POLL_MS, Math.max(0, deadline - Date.now())), ctx.signal);
        } catch {
          return;
        }
      }
    } finally {
      if (explorerDriven) writeExplorerState(ctx.jobDir, position);
    }
  }

  /** Whether to stop waiting: an explorer-driven trainer blocked on data with nothing newer, or sync_timeout is up. */
  private noNewerWeights(deadline: number): boolean {
    const { ctx } = this;
    const version = this.parts.side.explorer.model.version;
    const trainer = readTrainerStatus(ctx.jobDir);
    if (this.explorerDriven && trainer?.waiting && trainer.step <= version) {
      ctx.log('warning', `No new model weights found, current version: ${version}`);
      return true;
    }
    if (Date.now() >= deadline) {
      ctx.log(
        'warning',
        `No new model weights found within sync_timeout (${ctx.cfg.synchronizer.sync_timeout} s), current version: ${version}`,
      );
      return true;
    }
    return false;
  }
}
