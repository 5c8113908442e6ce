/**
 * The float64 reference of the KL numbers: Trinity-RFT's trinity/algorithm/kl_fn/kl_fn.py at 10796ed, from its
 * formulas: the estimators (`calculate_kl`), the loss form (`calculate_kl_loss`, kl-loss-expected.ts, with its
 * gradient through dual.ts), and `apply_kl_penalty_to_reward` with the adaptive controller (kl-expected.ts).
 * Nothing from runtime/.
 */
import { LP, MASK, OLD, REF } from '../helpers';
import { SCORES } from '../kl-expected';
import { KL_LOSS, KL_LOSS_COEF } from '../kl-loss-expected';
import { aggregateLoss } from './aggregate';
import { abs, clamp, Dual, exp, gradientOf, map2, mul, seed, square, sub } from './dual';
import { mean, sum } from './float64';

type Estimator = (l: Dual, ref: number, old?: number) => Dual;

/** `calculate_kl(logprob, ref_logprob, old_logprob)` per token, as each KLFn subclass writes it. */
export const ESTIMATORS: Record<string, Estimator> = {
  none: () => new Dual(0),
  k1: (l, ref) => sub(l, ref),
  k2: (l, ref) => mul(square(sub(l, ref)), 0.5),
  k3: (l, ref) => {
    const logr = sub(ref, l);
    return sub(sub(exp(logr), 1), logr);
  },
  low_var_kl: (l, ref) => {
    const kl = clamp(sub(ref, l), -20, 20);
    return clamp(sub(sub(exp(kl), kl), 1), -10, 10);
  },
  abs: (l, ref) => abs(sub(l, ref)),
  corrected_k3: (l, ref, old) => {
    const logr = sub(ref, l);
    const k3 = sub(sub(exp(logr), 1), logr);
    return old === undefined ? k3 : mul(clamp(exp(sub(l, old)), 0, 2), k3);
  },
};

/** `calculate_kl_loss`: (kl_coef·agg(kl), {kl_loss: agg(kl)}). */
export function klLoss(
  name: string,
  coef: number,
  logprob: Dual[][],
  ref: number[][],
  mask: number[][],
  mode: string,
  old?: number[][],
): { loss: Dual; klLoss: number } {
  const kl = map2(logprob, (l, i, t) => ESTIMATORS[name](l, ref[i][t], old?.[i][t]));
  const agg = aggregateLoss(kl, mask, mode);
  return { loss: mul(agg, coef), klLoss: agg.v };
}

/** kl = estimator(old, ref)·mask; rewards = scores − coef·kl; metric = mean over rows of masked_mean(kl, axis=-1). */
function penalty(name: string, coef: number): { rewards: number[][]; kl: number } {
  const kl = OLD.map((row, i) => row.map((l, t) => ESTIMATORS[name](new Dual(l), REF[i][t]).v * MASK[i][t]));
  const rewards = SCORES.map((row, i) => row.map((s, t) => s - coef * kl[i][t]));
  const rowMeans = kl.map((row, i) => sum(row.map((x, t) => x * MASK[i][t])) / (sum(MASK[i]) + 1e-8));
  return { rewards, kl: mean(rowMeans) };
}

export function klReference() {
  const klMetric = Object.fromEntries(['k2', 'k3', 'low_var_kl', 'abs'].map((name) => [name, penalty(name, 0.1).kl]));
  // AdaptiveKLController.update(current_kl, n_steps = rows): coef·(1 + clip(kl/target − 1, ±0.2)·n/horizon)
  const error = Math.min(0.2, Math.max(-0.2, klMetric.k2 / 0.1 - 1));
  return {
    KL_PENALTY_METRIC: klMetric,
    K3_PENALTY_REWARDS: penalty('k3', 0.1).rewards,
    K2_ADAPTIVE_COEF: 0.1 * (1 + (error * OLD.length) / 100),
  };
}

/** kl-loss-expected.ts: every estimator but `none`, under two aggregation modes, with the gradient w.r.t. LP. */
export function klLossReference(): typeof KL_LOSS {
  const names = Object.keys(ESTIMATORS).filter((n) => n !== 'none');
  return Object.fromEntries(
    names.flatMap((name) =>
      ['token-mean', 'seq-mean-token-mean'].map((mode) => {
        const r = klLoss(name, KL_LOSS_COEF, seed(LP), REF, MASK, mode, OLD);
        return [`${name} ${mode}`, { loss: r.loss.v, kl_loss: r.klLoss, grad: gradientOf(r.loss, LP) }];
      }),
    ),
  );
}
