/**
 * The float64 reference of the KL penalty numbers (kl-expected.ts): Trinity-RFT's trinity/algorithm/kl_fn/kl_fn.py
 * at 10796ed, `apply_kl_penalty_to_reward` and the adaptive controller, from their formulas; nothing from runtime/.
 */
import { MASK, OLD, REF } from '../helpers';
import { SCORES } from '../kl-expected';
import { mean, sum } from './float64';

/** Per-token estimators of KL(π‖π_ref) from ℓ = log π and ℓ_ref (kl_fn.py's calc_kl). */
const ESTIMATORS: Record<string, (l: number, ref: number) => number> = {
  k2: (l, ref) => 0.5 * (l - ref) ** 2,
  k3: (l, ref) => Math.exp(ref - l) - (ref - l) - 1,
  low_var_kl: (l, ref) => {
    const k = Math.min(20, Math.max(-20, ref - l));
    return Math.min(10, Math.max(-10, Math.exp(k) - k - 1));
  },
  abs: (l, ref) => Math.abs(l - ref),
};

/** kl = estimator(old, ref)·mask; rewards = scores − coef·kl; metric = mean over rows of masked_mean(kl, axis=-1). */
function penalty(name: string, coef: number): { rewards: number[][]; kl: number } {
  const kl = OLD.map((row, i) => row.map((l, t) => ESTIMATORS[name](l, REF[i][t]) * MASK[i][t]));
  const rewards = SCORES.map((row, i) => row.map((s, t) => s - coef * kl[i][t]));
  const rowMeans = kl.map((row, i) => sum(row.map((x, t) => x * MASK[i][t])) / (sum(MASK[i]) + 1e-8));
  return { rewards, kl: mean(rowMeans) };
}

export function klReference() {
  const klMetric = Object.fromEntries(Object.keys(ESTIMATORS).map((name) => [name, penalty(name, 0.1).kl]));
  // AdaptiveKLController.update(current_kl, n_steps = rows): coef·(1 + clip(kl/target − 1, ±0.2)·n/horizon)
  const error = Math.min(0.2, Math.max(-0.2, klMetric.k2 / 0.1 - 1));
  return {
    KL_PENALTY_METRIC: klMetric,
    K3_PENALTY_REWARDS: penalty('k3', 0.1).rewards,
    K2_ADAPTIVE_COEF: 0.1 * (1 + (error * OLD.length) / 100),
  };
}
