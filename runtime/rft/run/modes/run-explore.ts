/**
 * `mode: explore` (trinity/explorer/explorer.py `Explorer.explore`): runs the taskset and writes each step's
 * experiences (with their model version) to `buffer.trainer_input.experience_buffer` as one batch, then records its
 * position in `state/explorer.json`. Weights come from the job's checkpoints: the newest at start, and after explorer
 * step k when k > sync_offset and (k − sync_offset) % sync_interval == 0, when it waits up to `sync_timeout` for a
 * checkpoint newer than its weights while a trainer of the job is running (Synchronizer.wait_new_model_state_dict),
 * else goes on with what it has. With `sync_style: fully_async` it never waits: after every step it takes the newest
 * checkpoint if there is one newer than its weights (Trinity's explorer polls the synchronizer for it). Resuming, it
 * continues after the highest explorer step the buffer already holds, so a step written just before a kill is not
 * written again.
 */
import type { ExperienceBufferConfig } from '../../../config/types.generated';
import { closeEach } from '../../closing';
import { openExperienceWriter, type ExperienceWriter } from '../../buffer';
import { sleep } from '../../buffer/wait';
import { isExplorerDriven, isExplorerSyncPoint, isFullyAsync } from '../../synchronizer/sync-points';
import {
  ASYNC_POLL_MS,
  lastWrittenStep,
  readExplorerState,
  readTrainerStatus,
  testKillAfterWrite,
  trainerRunning,
  writeExplorerState,
} from '../exchange/async-state';
import { EXPERIENCE_BUFFER_KEY, sharedBuffer } from '../exchange/experience-channel';
import { EvalSchedule, reportExplorerStep } from '../explorer-side/explorer-reports';
import { ExplorerSide, stageSideSpec } from '../explorer-side/explorer-side';
import { withAbsoluteBufferPath } from '../stage/config-paths';
import { RunSetupError, type StageContext, type StageResult } from '../stage/stage-context';
import { unlessAbandoned, yieldToEvents } from '../../stop-point';

export async function runExplore(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const resumed = cfg.continue_from_checkpoint ? readExplorerState(ctx.jobDir) : undefined;
  const side = await ExplorerSide.build(
    { ...stageSideSpec(ctx, 'explore'), readerOffset: resumed?.readerOffset ?? 0 },
    ctx.log,
  );
  try {
    const source = cfg.buffer.trainer_input.experience_buffer;
    if (!source)
      throw new RunSetupError('mode explore needs buffer.trainer_input.experience_buffer (where experiences go)');
    // The train process of the job reads what this one writes: a queue is the storage of its path (sharedBuffer).
    const target = sharedBuffer(withAbsoluteBufferPath(source, ctx.configDir)).section as ExperienceBufferConfig;
    const writer = openExperienceWriter(target, { keyPath: EXPERIENCE_BUFFER_KEY });
    const run = new ExploreRun(ctx, { side, writer, target }, resumed?.explorerStep ?? 0);
    let failed = false;
    try {
      // A stop gives up the step in progress: its batch is not written, the explorer's position stays the last.
      await unlessAbandoned(() => run.run());
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      // Finished or stopped: readers end once the rest is read (Trinity releases the storage on shutdown). A killed
      // explorer never gets here, and the trainer waits for it.
      await closeEach(ctx.log, failed, [() => writer.finish()]);
    }
    return { evals: run.evals.summary(), stopped: ctx.signal.aborted };
  } finally {
    side.dispose();
  }
}

/** What an explore run works with: its explorer side and the experience buffer it writes. */
interface ExploreParts {
  side: ExplorerSide;
  writer: ExperienceWriter;
  /** The experience buffer's section, with an absolute path. */
  target: ExperienceBufferConfig;
}

/** One explore run: the explorer step it has written, the weights it holds, its evals. */
class ExploreRun {
  readonly evals: EvalSchedule;
  private readonly explorerDriven: boolean;

  constructor(
    private readonly ctx: StageContext,
    private readonly parts: ExploreParts,
    private step: number,
  ) {
    this.explorerDriven = isExplorerDriven(ctx.cfg.synchronizer.sync_style);
    this.evals = new EvalSchedule(ctx, parts.side);
  }

  async run(): Promise<void> {
    const { ctx, evals } = this;
    const { cfg } = ctx;
    const { side } = this.parts;
    if (cfg.continue_from_checkpoint) this.resumeAfterBuffer();
    this.warnIfStepsTooSmall();
    this.loadNewest(); // the launcher's first sync_weight: the newest checkpoint, no waiting
    if (evals.dueOnStartup(this.step)) await evals.evaluate(0);
    while (!ctx.signal.aborted) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const out = await side.exploreStep(this.step + 1);
      if (!out) {
        writeExplorerState(ctx.jobDir, { explorerStep: this.step, readerOffset: side.readerOffset, finished: true });
        break;
      }
      const step = ++this.step;
      await this.parts.writer.write(out.experiences); // one transaction: the step's batch is in the buffer whole or not at all
      testKillAfterWrite(step);
      writeExplorerState(ctx.jobDir, { explorerStep: step, readerOffset: out.readerOffset });
      reportExplorerStep(ctx, step, side.totalSteps, out);
      if (evals.dueAfter(step)) await evals.evaluate(step);
      if (isFullyAsync(cfg.synchronizer.sync_style)) this.loadNewest();
      else if (isExplorerSyncPoint(step, cfg.synchronizer)) await this.pullWeights();
    }
  }

  /** A kill between the committed write and the state file leaves steps in the buffer the state does not record. */
  private resumeAfterBuffer(): void {
    const { ctx } = this;
    const { side, target } = this.parts;
    const inBuffer = lastWrittenStep(target);
    if (inBuffer > this.step) {
      ctx.log(
        'info',
        `the buffer already holds explorer step ${inBuffer} (state/explorer.json says ${this.step}); continuing after it`,
      );
      this.step += side.skip(inBuffer - this.step);
      writeExplorerState(ctx.jobDir, { explorerStep: this.step, readerOffset: side.readerOffset });
    }
    if (this.step > 0) ctx.log('info', `explorer resumes after step ${this.step}`);
  }

  private warnIfStepsTooSmall(): void {
    const { cfg } = this.ctx;
    if (isFullyAsync(cfg.synchronizer.sync_style)) return; // it never waits at a sync point
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
    const step = this.parts.side.pullNewerCheckpoint(ctx.jobDir, (m) => ctx.log('warning', m));
    if (step === undefined) return false;
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
    const position = { explorerStep: this.step, readerOffset: this.parts.side.readerOffset };
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
    const version = this.parts.side.version;
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
