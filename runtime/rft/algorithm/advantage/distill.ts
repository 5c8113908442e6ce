/**
 * On-policy distillation advantages (trainer side), from the student's rollout log-probs ℓ_s (`old_log_probs`)
 * and the teacher's ℓ_t (`teacher_logprobs`, recorded by the workflow):
 *  - `on_policy_distill`: A = kl_coef·(ℓ_t − ℓ_s)·mask. Metrics `kl/mean`, `kl/std` (Bessel std over rows of the
 *    masked row sums of ℓ_s − ℓ_t; 0 for one row), `advantages/mean` (mean over rows of the row sums of A).
 *  - `jsd`: per-token generalised Jensen-Shannon in log space with β = lambda_coef, after dividing both log-probs
 *    by `temperature`: β = 0 → ℓ_s − ℓ_t; β = 1 → ℓ_t − ℓ_s; else log m = logsumexp(ℓ_s + log(1−β), ℓ_t + log β)
 *    and JSD = β(ℓ_t − log m) + (1−β)(ℓ_s − log m). A = −kl_coef·JSD·mask. Metrics `jsd/mean`, `jsd/std`,
 *    `advantages/mean`. `chunk_size` only bounds memory in Trinity; the values do not depend on it.
 * returns = advantages. (Trinity's trainer drops trainer-side advantage metrics; they are returned anyway.)
 */
import { defaultFnArgs, withDefaults } from '../args';
import { mean, stdBessel } from './stats';
import { requireField, type AdvantageBatch, type TrainerAdvantageResult } from './types';

export interface OnPolicyDistillAdvantageArgs {
  kl_coef: number;
}

export interface JsdAdvantageArgs {
  lambda_coef: number;
  kl_coef: number;
  temperature: number;
  chunk_size: number | null;
}

function rowStats(perToken: number[][], mask: number[][]): { mean: number; std: number } {
  const sums = perToken.map((row, i) => row.reduce((s, v, t) => s + v * mask[i][t], 0));
  return { mean: mean(sums), std: sums.length > 1 ? stdBessel(sums) : 0 };
}

function advantageMean(adv: number[][]): number {
  return mean(adv.map((row) => row.reduce((s, v) => s + v, 0)));
}

export function onPolicyDistillAdvantage(
  batch: AdvantageBatch,
  args?: Partial<OnPolicyDistillAdvantageArgs> | null,
): TrainerAdvantageResult {
  const a = withDefaults(
    defaultFnArgs('advantage_fn', 'on_policy_distill') as unknown as OnPolicyDistillAdvantageArgs,
    args,
  );
  const student = requireField(batch.oldLogprobs, 'on_policy_distill', 'oldLogprobs');
  const teacher = requireField(batch.teacherLogprobs, 'on_policy_distill', 'teacherLogprobs');
  const mask = batch.responseMask;
  const adv = student.map((row, i) => row.map((s, t) => a.kl_coef * (teacher[i][t] - s) * mask[i][t]));
  const kl = rowStats(
    student.map((row, i) => row.map((s, t) => s - teacher[i][t])),
    mask,
  );
  return {
    advantages: adv,
    returns: adv.map((r) => [...r]),
    metrics: { 'kl/mean': kl.mean, 'kl/std': kl.std, 'advantages/mean': advantageMean(adv) },
  };
}

/** Per-token JSD (unmasked) of student and teacher log-probs. */
export function jsdPerToken(student: number, teacher: number, beta: number): number {
  if (beta === 0) return student - teacher;
  if (beta === 1) return teacher - student;
  const x = student + Math.log1p(-beta);
  const y = teacher + Math.log(beta);
  const mx = Math.max(x, y);
  const logM = mx + Math.log(Math.exp(x - mx) + Math.exp(y - mx));
  return beta * (teacher - logM) + (1 - beta) * (student - logM);
}

export function jsdAdvantage(batch: AdvantageBatch, args?: Partial<JsdAdvantageArgs> | null): TrainerAdvantageResult {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'jsd') as unknown as JsdAdvantageArgs, args);
  const student = requireField(batch.oldLogprobs, 'jsd', 'oldLogprobs');
  const teacher = requireField(batch.teacherLogprobs, 'jsd', 'teacherLogprobs');
  const mask = batch.responseMask;
  const T = a.temperature;
  const jsd = student.map((row, i) =>
    row.map((s, t) => {
      if (mask[i][t] === 0) return 0;
      const st = T !== 1 ? s / T : s;
      const tt = T !== 1 ? teacher[i][t] / T : teacher[i][t];
      return jsdPerToken(st, tt, a.lambda_coef) * mask[i][t];
    }),
  );
  const adv = jsd.map((row, i) => row.map((j, t) => -a.kl_coef * j * mask[i][t]));
  const stats = rowStats(jsd, mask);
  return {
    advantages: adv,
    returns: adv.map((r) => [...r]),
    metrics: { 'jsd/mean': stats.mean, 'jsd/std': stats.std, 'advantages/mean': advantageMean(adv) },
  };
}
