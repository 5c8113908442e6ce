/**
 * The trainer step Trinity runs (veRL's actor update, trinity/trainer/verl/dp_actor.py): for `ppo_epochs`, over
 * micro-batches, loss = policy_loss − entropy_loss + kl_coef·kl_loss, gradients accumulated over the batch, one
 * AdamW step with clipping. Old log-probs are the rollout's (Trinity does not recompute them); reference log-probs
 * come from a frozen copy of the initial weights when the algorithm uses a reference model: carried by the experiences
 * when every row has them, else the trainer's own forward, whose model it may load only when first needed.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../engine/lm/transformer';
import { AdamW, type AdamWState } from '../../engine/train/adamw';
import { learningRate, type LrSchedule } from '../../engine/train/schedule';
import { accumulateGradients } from '../../engine/train/step';
import {
  createAdvantageFn,
  createEntropyLossFn,
  createKlFn,
  createPolicyLossFn,
  type EntropyLossFn,
  type KlFn,
  type PolicyLossFn,
  type TrainerAdvantageFn,
} from '../algorithm';
import type { Experience } from '../experience';
import { padBatch, sliceRows, type PaddedBatch } from './batch';
import { atBaseBlasThreads } from '../../engine/backend';
import { batchReferenceLogprobs, carriedReferenceLogprobs, responseScores } from './reference-logprobs';
import { clippedValueLoss, type ValueLossArgs } from '../algorithm/value-loss';
import type { ValueModel } from '../../engine/lm/value-head';
import { DeviceMetricSums } from './metric-sums';
import { policySignals, type PolicySignals } from './policy-signals';
import { memoryMetrics } from '../../engine/backend/memory';
import { timed } from '../monitor/phase-times';
import type { StopPoint } from '../stop-point';
import { needsReference } from '../../config/model/algorithms';

export interface AlgorithmSetup {
  policyLossFn: string;
  policyLossFnArgs: Record<string, unknown> | null;
  klLossFn: string;
  klLossFnArgs: Record<string, unknown> | null;
  entropyLossFn: string;
  entropyLossFnArgs: Record<string, unknown> | null;
  /** Set only for algorithms that compute advantages in the trainer (ppo-style). */
  trainerAdvantageFn?: string;
  trainerAdvantageFnArgs?: Record<string, unknown> | null;
  lossAggMode: string;
  useReference: boolean;
  /** `algorithm.kl_penalty_fn` (a penalty on rewards needs the reference too). */
  klPenaltyFn?: string;
}

/** How one model (actor or critic) is updated: AdamW, schedule, clipping, epochs and micro-batches. */
export interface UpdateSettings {
  schedule: LrSchedule;
  betas: [number, number];
  weightDecay: number;
  gradClip: number;
  ppoEpochs: number;
  /** Rows per forward/backward pass; the whole batch when undefined. */
  microBatchSize?: number;
}

/** PPO's critic: a value model trained alongside the actor (veRL's critic worker). */
export interface CriticSetup extends UpdateSettings, ValueLossArgs {
  model: ValueModel;
  /** `trainer.critic_warmup`: trainer steps that update only the critic. */
  warmupSteps: number;
  /** `algorithm.kl_penalty_fn` applied to the token-level rewards (needs the reference model). */
  klPenaltyFn: string;
  klPenaltyFnArgs: Record<string, unknown> | null;
}

/**
 * The frozen reference model, or how to load it: the trainer then calls it at the first batch that needs a reference
 * forward (never while every row carries its reference log-probs) and frees what it loaded on dispose.
 */
export type ReferenceSource = CausalLM | (() => CausalLM);

export interface TrainerOptions extends UpdateSettings {
  algorithm: AlgorithmSetup;
  temperature: number;
  padTokenId: number;
}

export class RftTrainer {
  readonly optimizer: AdamW;
  private readonly policyLoss: PolicyLossFn;
  private readonly klLoss: KlFn;
  private readonly entropyLoss: EntropyLossFn;
  private readonly advantage?: TrainerAdvantageFn;
  private readonly criticOptimizer?: AdamW;
  private readonly readsReference: boolean;
  private reference: CausalLM | undefined;
  private readonly loadReference: (() => CausalLM) | undefined;
  private readonly klPenalty?: KlFn;
  /** Trainer steps taken: equals the actor's optimizer steps except during critic warm-up. */
  private skippedActorSteps = 0;

  constructor(
    readonly model: CausalLM,
    reference: ReferenceSource | undefined,
    readonly opts: TrainerOptions,
    readonly critic?: CriticSetup,
  ) {
    const a = opts.algorithm;
    if (typeof reference === 'function') this.loadReference = reference;
    else this.reference = reference;
    this.policyLoss = createPolicyLossFn(a.policyLossFn, a.policyLossFnArgs);
    this.klLoss = createKlFn(a.klLossFn, a.klLossFnArgs, 'kl_loss_fn');
    this.entropyLoss = createEntropyLossFn(a.entropyLossFn, a.entropyLossFnArgs);
    if (a.trainerAdvantageFn) {
      const fn = createAdvantageFn(a.trainerAdvantageFn, a.trainerAdvantageFnArgs);
      if (fn.computeInTrainer) this.advantage = fn;
    }
    this.readsReference = needsReference(a) || (critic?.klPenaltyFn ?? 'none') !== 'none';
    if (this.readsReference && !reference) throw new Error(`algorithm uses a reference model but none was given`);
    this.optimizer = new AdamW(model.trainableVariables(), {
      betas: opts.betas,
      weightDecay: opts.weightDecay,
      clipGradNorm: opts.gradClip,
    });
    if (critic) {
      this.criticOptimizer = new AdamW(critic.model.variables(), {
        betas: critic.betas,
        weightDecay: critic.weightDecay,
        clipGradNorm: critic.gradClip,
      });
      if (critic.klPenaltyFn !== 'none')
        this.klPenalty = createKlFn(critic.klPenaltyFn, critic.klPenaltyFnArgs, 'kl_penalty_fn');
    }
  }

  /** Whether the reference model is in memory: given up front, or loaded for a batch that needed its forward. */
  get referenceLoaded(): boolean {
    return this.reference !== undefined;
  }

  private referenceModel(): CausalLM {
    this.reference ??= this.loadReference!();
    return this.reference;
  }

  /** The trainer's global step. */
  get step(): number {
    return this.optimizer.step + this.skippedActorSteps;
  }

  /** Sets the global step after a resume (the actor optimizer's own count comes with its state). */
  restoreStep(step: number): void {
    this.skippedActorSteps = Math.max(0, step - this.optimizer.step);
  }

  /**
   * One training step on `exps`; returns Trinity's trainer metrics for it. `stop` is awaited before each micro-batch
   * of every pass (reference, signals, critic, actor) and before each optimizer step: what it throws gives the step
   * up (stop-point.ts), with the step's tensors freed; an optimizer step applied by then lives only in memory.
   */
  async trainStep(exps: readonly Experience[], stop?: StopPoint): Promise<Record<string, number>> {
    const started = Date.now();
    const rows = expandPairs(exps);
    const batch = timed('trainer: batching (pad)', () => padBatch(rows, this.opts.padTokenId));
    const ref = this.readsReference
      ? (carriedReferenceLogprobs(rows, batch) ??
        (await timed('trainer: reference forward', () =>
          atBaseBlasThreads(() =>
            batchReferenceLogprobs(this.referenceModel(), batch, this.opts.temperature, this.opts.microBatchSize, stop),
          ),
        )))
      : undefined;
    const metrics: Record<string, number> = {};
    if (this.critic) {
      const values = await this.criticValues(batch, stop);
      Object.assign(metrics, this.applyTrainerAdvantage(batch, rows, values, ref));
      Object.assign(metrics, await this.updateCritic(batch, values, stop));
      if (this.step < this.critic.warmupSteps) {
        // veRL: the actor waits until the critic has warmed up; the step still counts.
        this.skippedActorSteps++;
        Object.assign(metrics, dataMetrics(batch), memoryMetrics());
        metrics['time/train_step'] = (Date.now() - started) / 1000;
        return metrics;
      }
    } else if (this.advantage) {
      // A forward without gradients, like the reference's: at the base BLAS count (score the same, fewer CPU ms).
      const wanted = this.advantage.signals;
      const signals = wanted.length
        ? await atBaseBlasThreads(() =>
            policySignals(this.model, batch, {
              temperature: this.opts.temperature,
              necs: wanted.includes('necs'),
              microBatchSize: this.opts.microBatchSize,
              stop,
            }),
          )
        : undefined;
      this.applyTrainerAdvantage(batch, rows, undefined, undefined, signals);
    }
    // The step a loss reads (mix_chord's μ schedule): this one's number, 1-based and fixed across ppo epochs, as
    // Trinity's mix sample strategy stamps it on every row (`sample(self.train_step_num + 1)`, trainer.py at 10796ed).
    const trainerStep = this.step + 1;
    const B = rows.length;
    const micro = Math.max(1, Math.min(this.opts.microBatchSize ?? B, B));
    // DPO pairs stay together in one micro-batch.
    const step = this.policyLoss.name === 'dpo' && micro % 2 === 1 ? micro + 1 : micro;
    const device = new DeviceMetricSums();
    const add = (k: string, v: tf.Scalar, w: number): void => device.add(k, v, w);
    let gradNorm = 0;
    let lr = 0;
    try {
      for (let epoch = 0; epoch < this.opts.ppoEpochs; epoch++) {
        const losses: (() => tf.Scalar)[] = [];
        for (let from = 0; from < B; from += step) {
          const mb = sliceRows(batch, from, Math.min(B, from + step));
          const mbRef = ref?.slice(from, from + step);
          const weight = mb.tokens.length / B;
          losses.push(() =>
            this.microBatchLoss(mb, mbRef, trainerStep, weight, (k, v) => add(k, v, weight / this.opts.ppoEpochs)),
          );
        }
        lr = learningRate(this.opts.schedule, this.optimizer.step);
        const { grads, loss } = await timed('trainer: forward and backward', () =>
          accumulateGradients(this.optimizer.variables as tf.Variable[], losses, stop),
        );
        loss.dispose();
        await beforeApply(grads, stop);
        const r = await timed('trainer: optimizer (clip, AdamW)', () => this.optimizer.apply(grads, lr));
        gradNorm = r.gradNorm;
      }
    } catch (e) {
      device.dispose();
      throw e;
    }
    for (const [k, v] of await timed('trainer: metrics (read)', () => device.read())) metrics[`actor/${k}`] = v;
    metrics['actor/grad_norm'] = gradNorm;
    metrics['actor/lr'] = lr;
    // veRL's perf/ memory figures, read once the step's tensors are freed (the peaks include them).
    timed('trainer: metrics (data, memory)', () => Object.assign(metrics, dataMetrics(batch), memoryMetrics()));
    metrics['time/train_step'] = (Date.now() - started) / 1000;
    return metrics;
  }

  private microBatchLoss(
    mb: PaddedBatch,
    ref: number[][] | undefined,
    trainerStep: number,
    weight: number,
    record: (k: string, v: tf.Scalar) => void,
  ): tf.Scalar {
    return tf.tidy(() => {
      const a = this.opts.algorithm;
      const { logprob, entropy } = responseScores(this.model, mb, this.opts.temperature, true);
      const mask = tf.tensor2d(mb.responseMask);
      const refT = ref ? tf.tensor2d(ref) : undefined;
      const policy = this.policyLoss({
        logprob,
        oldLogprob: tf.tensor2d(mb.oldLogprobs),
        refLogprob: refT,
        advantages: tf.tensor2d(mb.advantages),
        actionMask: mask,
        expertMask: mb.expert,
        step: trainerStep,
      });
      for (const [k, v] of Object.entries(policy.metrics)) record(k, v);
      let loss: tf.Tensor = policy.loss;
      if (this.entropyLoss.name !== 'none') {
        const ent = this.entropyLoss({
          entropy: entropy!,
          actionMask: mask,
          expertMask: mb.expert,
          lossAggMode: a.lossAggMode,
        });
        for (const [k, v] of Object.entries(ent.metrics)) record(k, v);
        loss = tf.sub(loss, ent.loss);
      }
      if (this.klLoss.name !== 'none' && refT) {
        const kl = this.klLoss.klLoss({
          logprob,
          refLogprob: refT,
          actionMask: mask,
          lossAggMode: a.lossAggMode,
          oldLogprob: tf.tensor2d(mb.oldLogprobs),
        });
        for (const [k, v] of Object.entries(kl.metrics)) record(k, v);
        loss = tf.add(loss, kl.loss);
      }
      return tf.mul(loss, weight) as tf.Scalar;
    });
  }

  /** Token-level rewards (the score on the last response token, minus the KL penalty if any), then the advantage. */
  private applyTrainerAdvantage(
    b: PaddedBatch,
    rows: readonly Experience[],
    values?: number[][],
    ref?: number[][],
    signals?: PolicySignals,
  ): Record<string, number> {
    const scores = b.responseMask.map((m, i) => {
      const row = m.map(() => 0);
      const last = Math.max(0, b.responseLengths[i] - 1);
      row[last] = b.rewards[i];
      return row;
    });
    let tokenLevelRewards = scores;
    const metrics: Record<string, number> = {};
    if (this.klPenalty) {
      const r = this.klPenalty.applyKlPenaltyToReward({
        tokenLevelScores: scores,
        oldLogprob: b.oldLogprobs,
        refLogprob: ref,
        responseMask: b.responseMask,
      });
      tokenLevelRewards = r.tokenLevelRewards;
      for (const [k, v] of Object.entries(r.metrics)) metrics[`critic/${k}`] = v;
    }
    const uid = rows.map((e) => `${e.eid.batch}/${e.eid.task}`);
    const r = this.advantage!.compute({
      tokenLevelRewards,
      responseMask: b.responseMask,
      uid,
      // clipv reads Trinity's recomputed old log-probs (its example needs `bypass_mode: false`); the loss keeps the
      // rollout ones, as the local trainer always does.
      oldLogprobs: signals?.necs ? signals.logprobs : b.oldLogprobs,
      rolloutLogprobs: b.oldLogprobs,
      entropys: signals?.entropys,
      necs: signals?.necs,
      teacherLogprobs: b.teacherLogprobs,
      values,
    });
    b.advantages = r.advantages;
    b.returns = r.returns;
    // clipb and clipv filter tokens: the loss then applies to the kept ones only (their `response_mask`).
    if (r.responseMask) b.responseMask = r.responseMask;
    if (values) {
      const masked = (rows2: number[][]): number[] =>
        rows2.flatMap((row, i) => row.filter((_, t) => b.responseMask[i][t] > 0));
      Object.assign(
        metrics,
        stats(
          'critic/rewards',
          tokenLevelRewards.map((row) => row.reduce((a, x) => a + x, 0)),
        ),
        stats('critic/returns', masked(r.returns)),
        stats('critic/values', masked(values)),
      );
    }
    return metrics;
  }

  /**
   * The critic's values of each response token (the state before it), `[B, R]`, without gradients; 0 where the
   * response mask is (veRL's dp_critic.compute_values: `values * response_mask`, "only action tokens have values").
   * GAE reads the value past a response's end, so with γ·λ < 1 the padding's values would reach the advantages.
   */
  private async criticValues(b: PaddedBatch, stop: StopPoint | undefined): Promise<number[][]> {
    const out: number[][] = [];
    const micro = this.critic!.microBatchSize ?? b.tokens.length;
    for (let from = 0; from < b.tokens.length; from += micro) {
      await stop?.();
      const mb = sliceRows(b, from, Math.min(b.tokens.length, from + micro));
      const v = tf.tidy(() => this.responseValues(mb));
      out.push(...(await v.array()).map((row, i) => row.map((x, t) => x * mb.responseMask[i][t])));
      v.dispose();
    }
    return out;
  }

  private responseValues(b: PaddedBatch): tf.Tensor2D {
    const [B, T] = [b.tokens.length, b.tokens[0].length];
    const ids = tf.tensor2d(b.tokens, undefined, 'int32');
    const inputs = tf.slice(ids, [0, 0], [B, T - 1]) as tf.Tensor2D;
    const positions = b.attentionMask.map((row) => {
      let n = 0;
      return row.slice(0, T - 1).map((m) => (m ? n++ : 0));
    });
    const v = this.critic!.model.values(inputs, {
      positions: tf.tensor2d(positions, [B, T - 1], 'int32'),
      keyMask: tf.tensor2d(
        b.attentionMask.map((r) => r.slice(0, T - 1)),
        [B, T - 1],
      ),
    });
    return tf.slice(v, [0, b.promptWidth - 1], [B, b.responseWidth]) as tf.Tensor2D;
  }

  /** The critic's update: the clipped value loss (algorithm/value-loss.ts), one AdamW step per ppo epoch. */
  private async updateCritic(
    b: PaddedBatch,
    oldValues: number[][],
    stop: StopPoint | undefined,
  ): Promise<Record<string, number>> {
    const c = this.critic!;
    const B = b.tokens.length;
    const micro = Math.max(1, Math.min(c.microBatchSize ?? B, B));
    const device = new DeviceMetricSums();
    let gradNorm = 0;
    let lr = 0;
    for (let epoch = 0; epoch < c.ppoEpochs; epoch++) {
      lr = learningRate(c.schedule, this.criticOptimizer!.step);
      const losses: (() => tf.Scalar)[] = [];
      for (let from = 0; from < B; from += micro) {
        const to = Math.min(B, from + micro);
        const mb = sliceRows(b, from, to);
        const weight = (to - from) / B;
        losses.push(() =>
          tf.tidy(() => {
            const { loss, metrics } = clippedValueLoss(
              {
                vpred: this.responseValues(mb),
                oldValues: tf.tensor2d(oldValues.slice(from, to)),
                returns: tf.tensor2d(mb.returns),
                responseMask: tf.tensor2d(mb.responseMask),
              },
              c,
            );
            for (const [k, v] of Object.entries(metrics)) device.add(k, v, weight / c.ppoEpochs);
            return tf.mul(loss, weight) as tf.Scalar;
          }),
        );
      }
      try {
        const { grads, loss } = await accumulateGradients(
          this.criticOptimizer!.variables as tf.Variable[],
          losses,
          stop,
        );
        loss.dispose();
        await beforeApply(grads, stop);
        gradNorm = (await this.criticOptimizer!.apply(grads, lr)).gradNorm;
      } catch (e) {
        device.dispose();
        throw e;
      }
    }
    const out: Record<string, number> = {};
    for (const [k, v] of await device.read()) out[`critic/${k}`] = v;
    out['critic/grad_norm'] = gradNorm;
    out['critic/lr'] = lr;
    return out;
  }

  dispose(): void {
    if (this.loadReference) this.reference?.dispose();
    this.optimizer.dispose();
    this.criticOptimizer?.dispose();
  }

  /** The critic optimizer's state, for checkpoints. */
  async criticState(): Promise<AdamWState | undefined> {
    return this.criticOptimizer?.exportState();
  }

  loadCriticState(s: AdamWState): void {
    this.criticOptimizer?.loadState(s);
  }
}

/** DPO experiences become two rows each (prompt + chosen, then prompt + rejected), as Trinity gathers them. */
function expandPairs(exps: readonly Experience[]): Experience[] {
  return exps.flatMap((e) => {
    if (!e.chosen || !e.rejected) return [e];
    const prompt = e.tokens.slice(0, e.promptLength);
    return [
      { ...e, tokens: [...prompt, ...e.chosen], actionMask: undefined, logprobs: undefined },
      { ...e, tokens: [...prompt, ...e.rejected], actionMask: undefined, logprobs: undefined },
    ];
  });
}

/** `{mean,max,min}` by a loop (spreading a batch's worth of tokens into Math.max overflows the stack). */
function stats(name: string, vs: readonly number[]): Record<string, number> {
  if (!vs.length) return {};
  let sum = 0;
  let max = -Infinity;
  let min = Infinity;
  for (const v of vs) {
    sum += v;
    if (v > max) max = v;
    if (v < min) min = v;
  }
  return { [`${name}/mean`]: sum / vs.length, [`${name}/max`]: max, [`${name}/min`]: min };
}

/** veRL's data metrics Trinity logs for every step. */
function dataMetrics(b: PaddedBatch): Record<string, number> {
  const advantages = b.advantages.flatMap((row, i) => row.filter((_, t) => b.responseMask[i][t] > 0));
  return {
    ...stats('response_length', b.responseLengths),
    'response_length/clip_ratio':
      b.responseLengths.filter((n) => n === b.responseWidth).length / b.responseLengths.length,
    ...stats('prompt_length', b.promptLengths),
    'prompt_length/clip_ratio': b.promptLengths.filter((n) => n === b.promptWidth).length / b.promptLengths.length,
    ...(advantages.length ? stats('critic/advantages', advantages) : {}),
    ...(b.scored ? stats('critic/score', b.rewards) : {}),
  };
}

/** The last stop point before an optimizer step: the gradients are freed when the step is given up. */
async function beforeApply(grads: tf.Tensor[], stop: StopPoint | undefined): Promise<void> {
  try {
    await stop?.();
  } catch (e) {
    tf.dispose(grads);
    throw e;
  }
}
