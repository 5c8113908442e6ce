/**
 * The explorer side of a stage, built in one place for every mode that explores, evaluates or serves: the rollout
 * weights and the rollout model over them, `explorer.auxiliary_models`, the explorer (workflows, rewards, retries,
 * task timeouts), the experience pipeline, the training taskset's reader and the eval tasksets, and, for both mode's
 * worker, the frozen reference model. What it holds follows from its `work`; when each part runs is the mode's
 * choice. It is built from plain data (`ExplorerSideSpec`), so both mode's worker thread builds the same side.
 */
import type { Config } from '../../../config/types.generated';
import type { Release } from '../../../config/releases';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel } from '../../../engine/lm/checkpoint';
import type { CausalLM } from '../../../engine/lm/transformer';
import { stopTokenIds, type Pretrained } from '../../../engine/pretrained';
import type { RolloutSample } from '../../../protocol';
import type { GroupAdvantageFn } from '../../algorithm';
import { applyNewerCheckpoint, copyWeights } from '../../checkpoint/checkpoints';
import type { Experience } from '../../experience';
import { ExperiencePipeline } from '../../explorer/experience-pipeline';
import { Explorer, type EvalOutput, type OverRollout } from '../../explorer/explore-step';
import { AuxiliaryModel } from '../../models/auxiliary-model';
import { RolloutModel } from '../../models/rollout-model';
import type { RunLog } from '../../monitor/run-log';
import { createReward } from '../../rewards';
import { attachReferenceLogprobs } from '../../trainer/reference-logprobs';
import { algorithmSetup } from '../stage/algorithm-setup';
import { loadModelFor } from '../stage/load-model';
import { isCheckpointDir, mergePretrainedAdapter } from '../stage/lora-adapter';
import { RunSetupError, type StageContext } from '../stage/stage-context';
import { timed } from '../../monitor/phase-times';
import { decodePause, flagSet, flagStopPoint, sharedStopFlag, type StopPoint } from '../../stop-point';
import { openPipelineInputStore, type PipelineInputStore } from './pipeline-input-store';
import { auxiliaryLimits, rolloutLimits } from './rollout-limits';
import { explorerTotalSteps, taskReader, tasksOf, type TaskReader, type TaskSet } from './tasksets';

/**
 * What the side is for, and so what it holds: `explore` (explore and both modes) everything; `bench` the explorer
 * and the eval tasksets; `serve` the rollout model and the experience pipeline (requests come from agents, not
 * tasksets, and auxiliary models are not loaded).
 */
export type ExplorerWork = 'explore' | 'bench' | 'serve';

/** Everything the explorer side is built from, as plain data (it crosses to a worker thread as is). */
export interface ExplorerSideSpec {
  work: ExplorerWork;
  cfg: Config;
  release: Release;
  configDir: string;
  /** The weights to start from (a resumed checkpoint, the previous stage's last); else `model.model_path`. */
  modelPath?: string;
  seed: number;
  /** The trainer step whose weights `modelPath` holds (0: the initial weights). */
  version?: number;
  /** Training taskset rows served before this run. */
  readerOffset?: number;
  /**
   * Set when the explorer also computes the experiences' reference log-probs (both mode, with the explorer in a
   * worker and experiences passed in memory): the reference weights and how the trainer scores.
   */
  reference?: ExplorerReference;
  /**
   * Plugin directories whose workflows and reward functions the config may name. The job loads them in its own
   * thread before the side is built; a worker thread has registries of its own and loads them first.
   */
  pluginDirs?: string[];
  /**
   * The run's stop flag (stop-point.ts sharedStopFlag; shared with a worker thread): once set, the step in progress
   * is given up at its next task, engine call or reference micro-batch.
   */
  stopFlag?: Int32Array;
}

/** The spec of a stage's side in this thread: the stage's config, weights and seed, and the run's stop flag. */
export function stageSideSpec(ctx: StageContext, work: ExplorerWork): ExplorerSideSpec {
  return {
    work,
    cfg: ctx.cfg,
    release: ctx.release,
    configDir: ctx.configDir,
    modelPath: ctx.modelPath,
    seed: ctx.seed,
    stopFlag: sharedStopFlag(ctx.signal),
  };
}

export interface ExplorerReference {
  /** The initial weights (not a resumed checkpoint's). */
  modelPath?: string;
  temperature: number;
  padTokenId: number;
  microBatchSize?: number;
}

export interface ExplorerStepResult {
  experiences: Experience[];
  metrics: Record<string, number>;
  samples: RolloutSample[];
  /** Rows the task reader has served after this step (what a checkpoint records). */
  readerOffset: number;
}

/** The parts a side holds besides its weights and rollout model (each present when its work uses it). */
interface SideParts {
  explorer?: Explorer;
  pipeline?: ExperiencePipeline;
  /** Where the pipeline keeps its input (`save_input`). */
  inputStore?: PipelineInputStore;
  reader?: TaskReader;
  evalSets: TaskSet[];
  reference?: CausalLM;
}

export class ExplorerSide {
  private constructor(
    readonly spec: ExplorerSideSpec,
    /** The explorer's own copy of the policy weights. */
    readonly weights: Pretrained,
    /** The model workflows (and serve mode's requests) sample from, over `weights`. */
    readonly rollout: RolloutModel,
    private readonly parts: SideParts,
  ) {}

  /** Builds the side `spec.work` needs; what is loaded before a failure is freed again. Taskset warnings go to `log`. */
  static async build(spec: ExplorerSideSpec, log: RunLog): Promise<ExplorerSide> {
    const { cfg, work } = spec;
    const alg = work === 'bench' ? undefined : algorithmSetup(cfg, spec.release);
    const weights = loadModelFor(cfg, spec.configDir, spec.modelPath);
    const parts: SideParts = { evalSets: [] };
    try {
      // A checkpoint holds merged weights; the base model gets a pre-trained adapter merged in, as vLLM serves it.
      if (!spec.modelPath || !isCheckpointDir(spec.modelPath))
        mergePretrainedAdapter(weights.model, cfg, spec.configDir);
      const rollout = new RolloutModel(
        weights.model,
        weights.tokenizer,
        rolloutLimits(cfg),
        spec.seed,
        stopTokenIds(weights),
      );
      rollout.version = spec.version ?? 0;
      const flag = spec.stopFlag;
      if (flag) {
        rollout.stopping = () => flagSet(flag);
        // A service yields at every decode step: its SIGTERM then refuses the requests still queued within a step,
        // where a run's explorer yields every 100 ms and lets a loaded machine's short requests finish meanwhile.
        rollout.pause = decodePause(work === 'serve' ? 0 : undefined);
      }
      if (work !== 'serve') {
        const trainSets = work === 'explore' ? await tasksOf(cfg, spec.configDir, 'train') : [];
        const evalSets = await tasksOf(cfg, spec.configDir, 'eval');
        for (const s of [...trainSets, ...evalSets]) for (const w of s.warnings) log('warning', w);
        if (work === 'bench' && !evalSets.length)
          throw new RunSetupError('mode bench needs buffer.explorer_input.eval_tasksets');
        parts.evalSets = evalSets.map(({ name, tasks }) => ({ name, tasks }));
        const trainTasks = trainSets.flatMap((s) => s.tasks);
        if (work === 'explore') parts.reader = taskReader(cfg, trainTasks, spec.readerOffset ?? 0);
        parts.explorer = newExplorer(spec, rollout, log);
      }
      if (spec.reference) parts.reference = loadModelFor(cfg, spec.configDir, spec.reference.modelPath).model;
      if (alg) {
        const store = (parts.inputStore = openPipelineInputStore(cfg));
        parts.pipeline = experiencePipeline(cfg, alg.groupAdvantage, spec.release, store);
      }
      return new ExplorerSide(spec, weights, rollout, parts);
    } catch (e) {
      parts.inputStore?.close();
      parts.explorer?.dispose();
      parts.reference?.dispose();
      weights.model.dispose();
      throw e;
    }
  }

  /** The run's stop point over its stop flag (`spec.stopFlag`), fitted to this thread; none without a flag. */
  get stop(): StopPoint | undefined {
    return sideStopPoint(this.spec);
  }

  /** The trainer step whose weights the rollout model holds. */
  get version(): number {
    return this.rollout.version;
  }

  get hasEvals(): boolean {
    return this.parts.evalSets.length > 0;
  }

  /** The experience pipeline (explore and serve). */
  get pipeline(): ExperiencePipeline {
    return this.need(this.parts.pipeline, 'experience pipeline');
  }

  /** Explorer steps the training taskset allows. */
  get totalSteps(): number {
    return explorerTotalSteps(this.spec.cfg, this.need(this.parts.reader, 'training taskset').size);
  }

  /** Training taskset rows served so far. */
  get readerOffset(): number {
    return this.need(this.parts.reader, 'training taskset').currentOffset;
  }

  /** Passes over up to `batches` batches of the training taskset (steps already explored); returns how many. */
  skip(batches: number): number {
    const reader = this.need(this.parts.reader, 'training taskset');
    let skipped = 0;
    while (skipped < batches && reader.next()) skipped++;
    return skipped;
  }

  /**
   * Explorer step `step` on the next batch of the training taskset: its experiences (through the pipeline, with
   * reference log-probs when the side computes them), metrics and samples; null when the taskset is exhausted (a
   * run whose every step made nothing fails then: `Explorer.finish`).
   */
  async exploreStep(step: number): Promise<ExplorerStepResult | null> {
    const reader = this.need(this.parts.reader, 'training taskset');
    const explorer = this.need(this.parts.explorer, 'explorer');
    const batch = reader.next();
    if (!batch) return explorer.finish();
    const out = await timed('explorer: explore step (total)', () => explorer.explore(step, batch.items, this.pipeline));
    reader.afterStep(step, out.selectorFeedback);
    const { reference } = this.parts;
    if (reference)
      await timed('explorer: reference log-probs', () =>
        attachReferenceLogprobs(reference, out.experiences, {
          ...this.spec.reference!,
          stop: sideStopPoint(this.spec),
        }),
      );
    return { ...out, readerOffset: reader.currentOffset };
  }

  /** Every eval taskset at `step`: one metrics record (`<prefix>/<taskset>/…`) and each taskset's records. */
  async evaluate(step: number, prefix = 'eval'): Promise<EvalOutput> {
    return await this.need(this.parts.explorer, 'explorer').evaluate(this.parts.evalSets, step, prefix);
  }

  /** Takes the trainer's weights (in `variables()` order) as of trainer step `version` (memory sync). */
  setWeights(weights: readonly Float32Array[], version: number): void {
    const vars = this.weights.model.variables();
    if (vars.length !== weights.length)
      throw new Error(`weight sync: ${weights.length} tensors for ${vars.length} variables`);
    timed('explorer: take weights', () =>
      tf.tidy(() => vars.forEach((v, i) => v.assign(tf.tensor(weights[i], v.shape, 'float32')))),
    );
    this.rollout.version = version;
  }

  /** Takes the weights of the checkpoint in `dir`, saved at trainer step `step`. */
  loadCheckpoint(dir: string, step: number): void {
    const saved = loadModel(dir);
    try {
      copyWeights(saved, this.weights.model);
    } finally {
      saved.dispose();
    }
    this.rollout.version = step;
  }

  /** Takes the job's newest checkpoint when it is newer than the weights held; returns its step, if it took one. */
  pullNewerCheckpoint(jobDir: string, warn: (message: string) => void): number | undefined {
    return applyNewerCheckpoint(
      jobDir,
      this.rollout.version,
      (saved, step) => {
        copyWeights(saved, this.weights.model);
        this.rollout.version = step;
      },
      warn,
    );
  }

  /** Frees the weights, the auxiliary models (through the explorer) and the reference model; closes the input store. */
  dispose(): void {
    this.parts.inputStore?.close();
    this.parts.explorer?.dispose();
    this.parts.reference?.dispose();
    this.weights.model.dispose();
  }

  private need<T>(part: T | undefined, what: string): T {
    if (part === undefined) throw new Error(`the explorer side built for ${this.spec.work} has no ${what}`);
    return part;
  }
}

function sideStopPoint(spec: ExplorerSideSpec): StopPoint | undefined {
  const flag = spec.stopFlag;
  return flag ? flagStopPoint(flag) : undefined;
}

/** The explorer over `rollout`: auxiliary models (loaded here, freed by `Explorer.dispose`), retries, timeouts. */
function newExplorer(spec: ExplorerSideSpec, rollout: RolloutModel, log: RunLog): Explorer {
  const { cfg, release } = spec;
  return new Explorer(rollout, {
    auxiliaryModels: loadAuxiliaryModels(spec),
    maxRetryTimes: cfg.explorer.max_retry_times,
    runnersPerModel: cfg.explorer.runner_per_model,
    createReward: (name, args) => createReward(name, args, { release }),
    samplesPerStep: 4,
    release,
    detailedStats: cfg.monitor.detailed_stats === true,
    timeout: {
      maxTimeout: cfg.explorer.max_timeout,
      dynamic: cfg.explorer.dynamic_timeout,
      batchSize: cfg.buffer.batch_size,
    },
    overRollout: overRollout(cfg),
    returnPartialTasks: cfg.explorer.over_rollout?.return_partial_tasks === true,
    stop: sideStopPoint(spec),
    log,
  });
}

/** Over-rollout with a positive ratio (explorer.py `min_wait_num`: `ceil(batch_size × (1 − ratio))` tasks). */
function overRollout(cfg: Config): OverRollout | undefined {
  const o = cfg.explorer.over_rollout;
  if (!o || !(o.ratio > 0)) return undefined;
  return { minWaitNum: Math.ceil(cfg.buffer.batch_size * (1 - o.ratio)), waitAfterMinS: o.wait_after_min };
}

/** `explorer.auxiliary_models`, each loaded whole, in config order. On a failure the ones already loaded are freed. */
function loadAuxiliaryModels(spec: ExplorerSideSpec): AuxiliaryModel[] {
  const { cfg, configDir, seed } = spec;
  const out: AuxiliaryModel[] = [];
  try {
    for (const [i, m] of cfg.explorer.auxiliary_models.entries()) {
      const key = `explorer.auxiliary_models.${i}.model_path`;
      if (!m.model_path) throw new RunSetupError(`${key} is required`);
      const p = loadModelFor(cfg, configDir, m.model_path, key);
      out.push(new AuxiliaryModel(m.name ?? String(i), p, auxiliaryLimits(cfg, m), seed + i + 1, stopTokenIds(p)));
    }
  } catch (e) {
    for (const a of out) a.dispose();
    throw e;
  }
  return out;
}

/** `data_processor.experience_pipeline`'s operators, then the algorithm's group advantage; its input kept in `store`. */
function experiencePipeline(
  cfg: Config,
  groupAdvantage: GroupAdvantageFn | undefined,
  release: Release,
  store: PipelineInputStore | undefined,
): ExperiencePipeline {
  const ops = (cfg.data_processor.experience_pipeline?.operators ?? []) as {
    name: string;
    args: Record<string, unknown>;
  }[];
  return new ExperiencePipeline(ops, groupAdvantage, release, store && ((exps) => store.save(exps)));
}
