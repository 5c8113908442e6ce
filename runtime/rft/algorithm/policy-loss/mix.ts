/**
 * The SFT + RL mixtures, for batches holding both rollout ("usual") rows and expert (SFT) rows, told apart by
 * `expert_mask`:
 *  - `mix` (MIXPolicyLossFn): loss = (1 − mu)·L_rl + mu·L_sft
 *  - `mix_chord` (MIXCHORDPolicyLossFn, CHORD): the same with mu from a schedule over the global `step` (linear
 *    warm-up to mu_peak over mu_warmup_steps, then cosine decay to mu_valley over mu_decay_steps, mu_valley after),
 *    and the SFT term `sft_phi` (or plain `sft` with enable_phi_function: false).
 * L_rl = ppo over the usual rows (with clip_range, clip_range_low, clip_range_high and grpo_loss_agg_mode or else
 * loss_agg_mode; the other PPO arguments at their constructor defaults: clip_ratio_c 3, no sequence masking)
 * × n_usual × w_usual; L_sft = SFT over the expert rows
 * (sft_loss_agg_mode or loss_agg_mode) × n_expert × w_expert, where (Python integer divisions)
 *   use_dynamic_bsz: w = (ppo_mini_batch_size // ngpus_trainer) / (B · (train_batch_size_x // ngpus_trainer))
 *   otherwise:       w = (ppo_mini_batch_size // ppo_micro_batch_size_per_gpu) / (train_batch_size_x // ngpus_trainer)
 * The sub-losses' metrics are scaled by the same factor and prefixed `usual/` / `expert/`; plus `loss` (and `mu`
 * for mix_chord). `mix` skips a part with no rows (its metrics are then absent); `mix_chord` always computes both.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { selectRows, tidy, type ScalarMetrics } from '../tensor';
import { ppoArgs, ppoPolicyLoss } from './ppo';
import { sftLoss, sftPhiLoss } from './sft';
import { need, type PolicyLossInputs, type PolicyLossResult } from './types';

interface MixBatchArgs {
  clip_range: number | null;
  clip_range_low: number | null;
  clip_range_high: number | null;
  use_dynamic_bsz: boolean | null;
  ppo_mini_batch_size: number;
  ppo_micro_batch_size_per_gpu: number;
  ngpus_trainer: number;
  train_batch_size_usual: number;
  train_batch_size_expert: number;
  loss_agg_mode: string;
  sft_loss_agg_mode: string | null;
  grpo_loss_agg_mode: string | null;
}

export interface MixPolicyLossArgs extends MixBatchArgs {
  mu: number;
}

export interface MixChordPolicyLossArgs extends MixBatchArgs {
  mu_warmup_steps: number;
  mu_decay_steps: number;
  mu_peak: number;
  mu_valley: number;
  enable_phi_function: boolean;
}

/** CHORD's mu schedule (`mu_schedule_function`). */
export function muSchedule(
  step: number,
  warmupSteps: number,
  decaySteps: number,
  peak: number,
  valley: number,
): number {
  if (step < warmupSteps) return (step / warmupSteps) * peak;
  if (step >= warmupSteps + decaySteps) return valley;
  const cosine = 0.5 * (1 + Math.cos((Math.PI * (step - warmupSteps)) / decaySteps));
  return (peak - valley) * cosine + valley;
}

function floorDiv(a: number, b: number, name: string, what: string): number {
  if (b === 0) throw new AlgorithmArgsError('policy_loss_fn', name, `division by zero (${what})`);
  return Math.floor(a / b);
}

function weights(a: MixBatchArgs, rows: number, name: string): { usual: number; expert: number } {
  const perGpu = floorDiv(a.ppo_mini_batch_size, a.ngpus_trainer, name, 'ngpus_trainer');
  const accumulation = floorDiv(
    a.ppo_mini_batch_size,
    a.ppo_micro_batch_size_per_gpu,
    name,
    'ppo_micro_batch_size_per_gpu',
  );
  const usual = floorDiv(a.train_batch_size_usual, a.ngpus_trainer, name, 'ngpus_trainer');
  const expert = floorDiv(a.train_batch_size_expert, a.ngpus_trainer, name, 'ngpus_trainer');
  const div = (x: number, y: number, what: string): number => {
    if (y === 0)
      throw new AlgorithmArgsError('policy_loss_fn', name, `division by zero (${what} // ngpus_trainer is 0)`);
    return x / y;
  };
  return a.use_dynamic_bsz
    ? {
        usual: div(perGpu, rows * usual, 'train_batch_size_usual'),
        expert: div(perGpu, rows * expert, 'train_batch_size_expert'),
      }
    : {
        usual: div(accumulation, usual, 'train_batch_size_usual'),
        expert: div(accumulation, expert, 'train_batch_size_expert'),
      };
}

function mixCore(
  name: 'mix' | 'mix_chord',
  inputs: PolicyLossInputs,
  a: MixBatchArgs,
  mu: number,
  sft: 'sft' | 'sft_phi',
  alwaysBoth: boolean,
): PolicyLossResult {
  const expert = need(inputs.expertMask, name, 'expert_mask');
  const { logprob, actionMask } = inputs;
  const B = logprob.shape[0];
  if (expert.length !== B)
    throw new AlgorithmArgsError('policy_loss_fn', name, `len(expert_mask)=${expert.length} != logprob.shape[0]=${B}`);
  const usualRows = Array.from(expert, (e) => !e);
  const expertRows = Array.from(expert, (e) => !!e);
  const nUsual = usualRows.filter(Boolean).length;
  const nExpert = B - nUsual;
  const w = weights(a, B, name);
  const rlArgs = ppoArgs(
    {
      clip_range: a.clip_range,
      clip_range_low: a.clip_range_low,
      clip_range_high: a.clip_range_high,
      loss_agg_mode: a.grpo_loss_agg_mode || a.loss_agg_mode,
      clip_ratio_c: 3.0,
      enable_sequence_masking: false,
      fallback_to_policy_gradient: false,
    },
    name,
  );
  const sftAgg = a.sft_loss_agg_mode || a.loss_agg_mode;
  return tidy(() => {
    const metrics: ScalarMetrics = {};
    let rl: tf.Scalar = tf.scalar(0);
    if (nUsual > 0 || alwaysBoth) {
      const r = ppoPolicyLoss(
        {
          logprob: selectRows(logprob, usualRows),
          oldLogprob: selectRows(need(inputs.oldLogprob, name, 'old_logprob'), usualRows),
          advantages: selectRows(need(inputs.advantages, name, 'advantages'), usualRows),
          actionMask: selectRows(actionMask, usualRows),
        },
        rlArgs,
      );
      const f = nUsual * w.usual;
      rl = tf.mul(r.loss, f) as tf.Scalar;
      for (const [k, v] of Object.entries(r.metrics)) metrics[`usual/${k}`] = tf.mul(v, f) as tf.Scalar;
    }
    let sl: tf.Scalar = tf.scalar(0);
    if (nExpert > 0 || alwaysBoth) {
      const sub = { logprob: selectRows(logprob, expertRows), actionMask: selectRows(actionMask, expertRows) };
      const r =
        sft === 'sft_phi'
          ? sftPhiLoss(sub, { loss_agg_mode: sftAgg, cutoff_prob: 1.0 })
          : sftLoss(sub, { loss_agg_mode: sftAgg });
      const f = nExpert * w.expert;
      sl = tf.mul(r.loss, f) as tf.Scalar;
      for (const [k, v] of Object.entries(r.metrics)) metrics[`expert/${k}`] = tf.mul(v, f) as tf.Scalar;
    }
    const loss = tf.add(tf.mul(rl, 1 - mu), tf.mul(sl, mu)) as tf.Scalar;
    metrics.loss = loss;
    return { loss, metrics };
  });
}

export function mixPolicyLoss(inputs: PolicyLossInputs, args?: Partial<MixPolicyLossArgs> | null): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'mix') as unknown as MixPolicyLossArgs, args);
  return mixCore('mix', inputs, a, a.mu, 'sft', false);
}

export function mixChordPolicyLoss(
  inputs: PolicyLossInputs,
  args?: Partial<MixChordPolicyLossArgs> | null,
): PolicyLossResult {
  const a = withDefaults(defaultFnArgs('policy_loss_fn', 'mix_chord') as unknown as MixChordPolicyLossArgs, args);
  const stepIn = need(inputs.step, 'mix_chord', 'step');
  let step: number;
  if (typeof stepIn === 'number') step = stepIn;
  else {
    const steps = Array.from(stepIn);
    if (steps.length !== inputs.logprob.shape[0]) {
      throw new AlgorithmArgsError(
        'policy_loss_fn',
        'mix_chord',
        `len(step)=${steps.length} != logprob.shape[0]=${inputs.logprob.shape[0]}`,
      );
    }
    const hi = Math.max(...steps);
    const lo = Math.min(...steps);
    if (hi !== lo)
      throw new AlgorithmArgsError('policy_loss_fn', 'mix_chord', `${hi} != ${lo} (all rows must share one step)`);
    step = hi;
  }
  const mu = muSchedule(step, a.mu_warmup_steps, a.mu_decay_steps, a.mu_peak, a.mu_valley);
  const r = mixCore('mix_chord', inputs, a, mu, a.enable_phi_function ? 'sft_phi' : 'sft', true);
  return { loss: r.loss, metrics: { ...r.metrics, mu: tf.scalar(mu) } };
}
