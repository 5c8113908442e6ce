/**
 * The trainer step Trinity runs (veRL's actor update, trinity/trainer/verl/dp_actor.py): for `ppo_epochs`, over
 * micro-batches, loss = policy_loss − entropy_loss + kl_coef·kl_loss, gradients accumulated over the batch, one
 * AdamW step with clipping. Old log-probs are the rollout's (Trinity does not recompute them); reference log-probs
 * come from a frozen copy of the initial weights when the algorithm uses a reference model.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { CausalLM } from '../../engine/model/transformer';
import { scoreSequences } from '../../engine/logprobs';
import { AdamW } from '../../engine/train/adamw';
import { learningRate, type LrSchedule } from '../../engine/train/schedule';
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
}

export interface TrainerOptions {
  algorithm: AlgorithmSetup;
  schedule: LrSchedule;
  betas: [number, number];
  weightDecay: number;
  gradClip: number;
  ppoEpochs: number;
  /** Rows per forward/backward pass; the whole batch when undefined. */
  microBatchSize?: number;
  temperature: number;
  padTokenId: number;
}

export class RftTrainer {
  readonly optimizer: AdamW;
  private readonly policyLoss: PolicyLossFn;
  private readonly klLoss: KlFn;
  private readonly entropyLoss: EntropyLossFn;
  private readonly advantage?: TrainerAdvantageFn;

  constructor(
    readonly model: CausalLM,
    readonly reference: CausalLM | undefined,
    readonly opts: TrainerOptions,
  ) {
    const a = opts.algorithm;
    this.policyLoss = createPolicyLossFn(a.policyLossFn, a.policyLossFnArgs);
    this.klLoss = createKlFn(a.klLossFn, a.klLossFnArgs, 'kl_loss_fn');
    this.entropyLoss = createEntropyLossFn(a.entropyLossFn, a.entropyLossFnArgs);
    if (a.trainerAdvantageFn) {
      const fn = createAdvantageFn(a.trainerAdvantageFn, a.trainerAdvantageFnArgs);
      if (fn.computeInTrainer) this.advantage = fn;
    }
    if (a.useReference && !reference) throw new Error(`algorithm uses a reference model but none was given`);
    this.optimizer = new AdamW(model.trainableVariables(), { betas: opts.betas, weightDecay: opts.weightDecay, clipGradNorm: opts.gradClip });
  }

  /** Optimizer steps taken so far (the trainer's global step). */
  get step(): number {
    return this.optimizer.step;
  }

  /** One training step on `exps`; returns Trinity's trainer metrics for it. */
  trainStep(exps: readonly Experience[]): Record<string, number> {
    const started = Date.now();
    const rows = expandPairs(exps);
    const batch = padBatch(rows, this.opts.padTokenId);
    const ref = this.reference && this.opts.algorithm.useReference ? this.referenceLogprobs(batch) : undefined;
    if (this.advantage) this.applyTrainerAdvantage(batch, rows);
    const B = rows.length;
    const micro = Math.max(1, Math.min(this.opts.microBatchSize ?? B, B));
    // DPO pairs stay together in one micro-batch.
    const step = this.policyLoss.name === 'dpo' && micro % 2 === 1 ? micro + 1 : micro;
    const sums = new Map<string, number>();
    const add = (k: string, v: number, w: number): void => void sums.set(k, (sums.get(k) ?? 0) + v * w);
    let gradNorm = 0;
    let lr = 0;
    for (let epoch = 0; epoch < this.opts.ppoEpochs; epoch++) {
      const losses: (() => tf.Scalar)[] = [];
      for (let from = 0; from < B; from += step) {
        const mb = sliceRows(batch, from, Math.min(B, from + step));
        const mbRef = ref?.slice(from, from + step);
        const weight = mb.tokens.length / B;
        losses.push(() => this.microBatchLoss(mb, mbRef, weight, (k, v) => add(k, v, weight / this.opts.ppoEpochs)));
      }
      lr = learningRate(this.opts.schedule, this.optimizer.step);
      const vars = this.optimizer.variables;
      let grads: tf.Tensor[] | undefined;
      for (const f of losses) {
        const { value, grads: g } = tf.variableGrads(f, vars as tf.Variable[]);
        value.dispose();
        const ordered = vars.map((v) => g[v.name] ?? tf.zerosLike(v));
        if (!grads) grads = ordered;
        else {
          const next = grads.map((s, i) => tf.add(s, ordered[i]));
          for (const t of [...grads, ...ordered]) t.dispose();
          grads = next;
        }
      }
      const r = this.optimizer.apply(grads!, lr);
      gradNorm = r.gradNorm;
    }
    const metrics: Record<string, number> = {};
    for (const [k, v] of sums) metrics[`actor/${k}`] = v;
    metrics['actor/grad_norm'] = gradNorm;
    metrics['actor/lr'] = lr;
    Object.assign(metrics, dataMetrics(batch));
    metrics['time/train_step'] = (Date.now() - started) / 1000;
    return metrics;
  }

  private microBatchLoss(mb: PaddedBatch, ref: number[][] | undefined, weight: number, record: (k: string, v: number) => void): tf.Scalar {
    return tf.tidy(() => {
      const a = this.opts.algorithm;
      const { logprob, entropy } = this.responseScores(this.model, mb, true);
      const mask = tf.tensor2d(mb.responseMask);
      const refT = ref ? tf.tensor2d(ref) : undefined;
      const policy = this.policyLoss({
        logprob,
        oldLogprob: tf.tensor2d(mb.oldLogprobs),
        refLogprob: refT,
        advantages: tf.tensor2d(mb.advantages),
        actionMask: mask,
        expertMask: mb.expert,
        step: this.optimizer.step,
      });
      for (const [k, v] of Object.entries(policy.metrics)) record(k, v);
      let loss: tf.Tensor = policy.loss;
      if (this.entropyLoss.name !== 'none') {
        const ent = this.entropyLoss({ entropy: entropy!, actionMask: mask, expertMask: mb.expert, lossAggMode: a.lossAggMode });
        for (const [k, v] of Object.entries(ent.metrics)) record(k, v);
        loss = tf.sub(loss, ent.loss);
      }
      if (this.klLoss.name !== 'none' && refT) {
        const kl = this.klLoss.klLoss({ logprob, refLogprob: refT, actionMask: mask, lossAggMode: a.lossAggMode, oldLogprob: tf.tensor2d(mb.oldLogprobs) });
        for (const [k, v] of Object.entries(kl.metrics)) record(k, v);
        loss = tf.add(loss, kl.loss);
      }
      return tf.mul(loss, weight) as tf.Scalar;
    });
  }

  /** log π and entropy of each response token, `[B, R]`. */
  private responseScores(model: CausalLM, b: PaddedBatch, withEntropy: boolean): { logprob: tf.Tensor2D; entropy?: tf.Tensor2D } {
    const ids = tf.tensor2d(b.tokens, undefined, 'int32');
    const s = scoreSequences(model, ids, { temperature: this.opts.temperature, entropy: withEntropy, attentionMask: b.attentionMask });
    const B = b.tokens.length;
    // Column t of the scores predicts token t+1; responses start at column P.
    const cut = (t: tf.Tensor2D): tf.Tensor2D => tf.slice(t, [0, b.promptWidth - 1], [B, b.responseWidth]) as tf.Tensor2D;
    return { logprob: cut(s.logprobs), entropy: s.entropy ? cut(s.entropy) : undefined };
  }

  private referenceLogprobs(b: PaddedBatch): number[][] {
    const out: number[][] = [];
    const micro = this.opts.microBatchSize ?? b.tokens.length;
    for (let from = 0; from < b.tokens.length; from += micro) {
      const mb = sliceRows(b, from, Math.min(b.tokens.length, from + micro));
      const lp = tf.tidy(() => this.responseScores(this.reference!, mb, false).logprob.arraySync());
      out.push(...lp);
    }
    return out;
  }

  private applyTrainerAdvantage(b: PaddedBatch, rows: readonly Experience[]): void {
    const scores = b.responseMask.map((m, i) => {
      const row = m.map(() => 0);
      const last = Math.max(0, b.responseLengths[i] - 1);
      row[last] = b.rewards[i];
      return row;
    });
    const uid = rows.map((e) => `${e.eid.batch}/${e.eid.task}`);
    const r = this.advantage!.compute({ tokenLevelRewards: scores, responseMask: b.responseMask, uid, oldLogprobs: b.oldLogprobs });
    b.advantages = r.advantages;
    b.returns = r.returns;
  }

  dispose(): void {
    this.optimizer.dispose();
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

/** veRL's data metrics Trinity logs for every step. */
function dataMetrics(b: PaddedBatch): Record<string, number> {
  const stats = (name: string, vs: number[]): Record<string, number> => ({
    [`${name}/mean`]: vs.reduce((a, x) => a + x, 0) / vs.length,
    [`${name}/max`]: Math.max(...vs),
    [`${name}/min`]: Math.min(...vs),
  });
  const advantages = b.advantages.flatMap((row, i) => row.filter((_, t) => b.responseMask[i][t] > 0));
  return {
    ...stats('response_length', b.responseLengths),
    'response_length/clip_ratio': b.responseLengths.filter((n) => n === b.responseWidth).length / b.responseLengths.length,
    ...stats('prompt_length', b.promptLengths),
    'prompt_length/clip_ratio': b.promptLengths.filter((n) => n === b.promptWidth).length / b.promptLengths.length,
    ...(advantages.length ? stats('critic/advantages', advantages) : {}),
    ...stats('critic/score', b.rewards),
  };
}
