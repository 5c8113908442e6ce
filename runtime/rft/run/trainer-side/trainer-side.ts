/**
 * The trainer side of a stage, built in one place for the modes that train (both, train): the algorithm's pieces,
 * the resume point and the policy (from that checkpoint when resuming); then, once the mode knows how many steps the
 * run has, PPO's critic, the trainer (its reference model loaded only when a batch first needs its forward), its
 * restored optimizer state and step, its checkpoints, and the one step loop over the mode's input.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../../engine/lm/transformer';
import type { Pretrained } from '../../../engine/pretrained';
import { RftTrainer, type CriticSetup } from '../../trainer/train-step';
import { needsReference } from '../../../config/model/algorithms';
import type { ExplorerReference } from '../explorer-side/explorer-side';
import { algorithmSetup, type AlgorithmParts } from '../stage/algorithm-setup';
import { loadModelFor } from '../stage/load-model';
import { attachTrainerAdapter } from '../stage/lora-adapter';
import type { LoraSpec } from '../../../engine/lm/lora';
import type { StageContext } from '../stage/stage-context';
import { TrainLoop, type TrainerInput } from './train-loop';
import { resumePoint, restoreTrainer, TrainerCheckpoints, type ResumePoint } from './trainer-checkpoints';
import { criticSetup, scoringOptions, trainerOptions } from './trainer-settings';

/** What `start` makes: freed with the side. */
interface Started {
  trainer: RftTrainer;
  critic?: CriticSetup;
  checkpoints: TrainerCheckpoints;
}

export class TrainerSide {
  readonly algorithm: AlgorithmParts;
  /** The checkpoint the run continues from, when it resumes. */
  readonly resumed: ResumePoint | undefined;
  /** The policy's weights (from the resumed checkpoint, else the stage's model) and tokenizer. */
  readonly policy: Pretrained;
  /** The LoRA adapter the trainer trains on the frozen policy weights (`model.lora_configs`), if any. */
  readonly lora: LoraSpec | undefined;
  private started?: Started;

  constructor(private readonly ctx: StageContext) {
    this.algorithm = algorithmSetup(ctx.cfg, ctx.release);
    this.resumed = resumePoint(ctx);
    // With LoRA the base weights never change: a resumed run takes them from the stage's model and its adapter from
    // the checkpoint (whose model files hold the merged weights).
    const lora = Boolean(ctx.cfg.model.lora_configs?.length);
    this.policy = loadModelFor(ctx.cfg, ctx.configDir, lora ? ctx.modelPath : (this.resumed?.dir ?? ctx.modelPath));
    try {
      this.lora = attachTrainerAdapter(this.policy.model, ctx.cfg, ctx.configDir, ctx.seed, this.resumed?.dir);
    } catch (e) {
      this.policy.model.dispose();
      throw e;
    }
    if (this.lora)
      ctx.log(
        'info',
        `LoRA: the trainer trains a rank-${this.lora.rank} adapter (alpha ${this.lora.alpha}) on ${this.policy.model.adapters.size} linear layers; the base weights stay frozen`,
      );
  }

  /** Whether the trainer reads reference log-probs (a KL loss, DPO, or a KL penalty on rewards). */
  get readsReference(): boolean {
    return needsReference(this.algorithm);
  }

  /** How an explorer that computes the reference log-probs for this trainer must score (the initial weights). */
  referenceScoring(): ExplorerReference {
    return {
      modelPath: this.ctx.modelPath,
      padTokenId: this.policy.tokenizer.padTokenId,
      ...scoringOptions(this.ctx.cfg),
    };
  }

  /**
   * The critic (PPO), the trainer over `totalSteps` (its learning-rate schedule's length) and, when resuming, its
   * optimizer states and step; then its checkpoints.
   */
  start(totalSteps: number): RftTrainer {
    const { ctx, algorithm, resumed, policy } = this;
    const critic = algorithm.useCritic
      ? criticSetup(ctx.cfg, algorithm, ctx.configDir, totalSteps, ctx.seed, resumed?.dir)
      : undefined;
    let trainer: RftTrainer;
    try {
      trainer = new RftTrainer(
        policy.model,
        this.readsReference ? () => this.loadReference() : undefined,
        trainerOptions(ctx.cfg, algorithm, totalSteps, policy.tokenizer.padTokenId),
        critic,
      );
    } catch (e) {
      critic?.model.dispose();
      throw e;
    }
    const checkpoints = new TrainerCheckpoints(ctx, policy, trainer, critic, resumed?.dir, this.lora);
    this.started = { trainer, critic, checkpoints };
    if (resumed) restoreTrainer(trainer, critic, resumed);
    return trainer;
  }

  get trainer(): RftTrainer {
    return this.made().trainer;
  }

  get checkpoints(): TrainerCheckpoints {
    return this.made().checkpoints;
  }

  /** The step loop over `input`; `extra` adds to what each checkpoint records (both mode: the explorer's position). */
  loop(input: TrainerInput, totalSteps: number | undefined, extra?: () => Record<string, unknown>): TrainLoop {
    const { trainer, checkpoints } = this.made();
    return new TrainLoop(this.ctx, trainer, checkpoints, input, totalSteps, extra);
  }

  /**
   * A copy of the policy's weights for the explorer (transferable buffers, in `variables()` order; LoRA merged). Each
   * is one synchronous read and one memcpy (`slice`): awaiting `data()` per variable and copying element by element
   * (`Float32Array.from`) took 15–40 ms of every sync at bench:rft's 0.8 M parameters. On webgpu, which cannot read
   * synchronously under Node (tfjs-webgpu's `dataSync` needs an OffscreenCanvas), all are read at once, asynchronously.
   */
  async weightsForExplorer(): Promise<Float32Array[]> {
    const model = this.policy.model;
    const sources = model.variables().map((v) => ({ v, merged: model.mergedWeight(v) }));
    try {
      const read =
        tf.getBackend() === 'webgpu'
          ? await Promise.all(sources.map(({ v, merged }) => (merged ?? v).data()))
          : sources.map(({ v, merged }) => (merged ?? v).dataSync());
      return read.map((d) => (d as Float32Array).slice());
    } finally {
      for (const { merged } of sources) merged?.dispose();
    }
  }

  dispose(): void {
    this.policy.model.dispose();
    this.started?.critic?.model.dispose();
    this.started?.trainer.dispose();
  }

  /**
   * The reference model, loaded when a batch first needs its forward: from the stage's starting weights on disk
   * (`ctx.modelPath`, what an up-front load read), never as a copy of the policy, which by then may have trained or
   * been resumed from a checkpoint.
   */
  private loadReference(): CausalLM {
    this.ctx.log('info', 'the trainer loads the reference model: a batch carries no reference log-probs');
    return loadModelFor(this.ctx.cfg, this.ctx.configDir, this.ctx.modelPath).model;
  }

  private made(): Started {
    if (!this.started) throw new Error('the trainer side is not started');
    return this.started;
  }
}
