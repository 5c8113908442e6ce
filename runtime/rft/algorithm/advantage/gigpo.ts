/**
 * `gigpo` (GiGPOAdvantageFn, trinity/algorithm/advantage_fn/gigpo_advantage.py @0fcd37e; Feng et al.,
 * arXiv:2505.10978), explorer side: A = A^E + ω · A^S per step experience, broadcast over its action mask.
 * - Each run's steps in `eid.step` order give rewards r_t: `info[step_reward_key]` where any step of the run has it
 *   (missing ones 0), else the run's last step's reward and 0 before it (RewardPropagationWorkflow's layout).
 * - A^E: per task, the runs' episode returns Σ r_t normalised: (R − mean) / (denom + ε), denom the Bessel std with
 *   `fnorm: std`, else 1; a task with one run uses mean 0 and denom 1.
 * - A^S: steps of the whole batch grouped by `info[env_state_hash_key]` (steps without one get 0); in a group of two
 *   or more, the steps' discounted returns R_t = Σ_{k≥t} γ^{k−t} r_k normalised the same way; a lone step gets 0.
 * Metrics: `gigpo/episode_reward_{mean,std}/{mean,max,min}` over tasks (std is the denominator used),
 * `gigpo/anchor_groups_total`, `gigpo/anchor_groups_size_gt1`, `gigpo/anchor_group_hit_ratio`,
 * `gigpo/mean_abs_A_E`, `gigpo/mean_abs_A_S`, `experience_count`. Trinity computes in float32; this in float64.
 */
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { gatherMetrics, mean, stdBessel } from './stats';
import {
  groupBy,
  runId,
  taskId,
  withScore,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
} from './types';

export interface GigpoAdvantageArgs {
  omega: number;
  gamma: number;
  fnorm: 'std' | 'none';
  epsilon: number;
  step_reward_key: string;
  env_state_hash_key: string;
}

/** An experience with the per-step info GiGPO reads. */
export interface GigpoExperience extends AdvantageExperience {
  info?: Record<string, unknown>;
}

export function gigpoAdvantage<E extends GigpoExperience>(
  exps: readonly E[],
  args?: Partial<GigpoAdvantageArgs> | null,
): GroupAdvantageResult<E> {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'gigpo') as unknown as GigpoAdvantageArgs, args);
  if (a.fnorm !== 'std' && a.fnorm !== 'none')
    throw new AlgorithmArgsError('advantage_fn', 'gigpo', "fnorm must be 'std' or 'none'");
  if (exps.length === 0) return { exps: [], metrics: {} };

  const normalize = (values: readonly number[]): { scores: number[]; mean: number; denom: number } => {
    const m = values.length === 1 ? 0 : mean(values);
    const denom = values.length === 1 || a.fnorm === 'none' ? 1 : stdBessel(values);
    return { scores: values.map((v) => (v - m) / (denom + a.epsilon)), mean: m, denom };
  };

  const episodeScore = new Map<string, number>();
  const discounted = new Map<E, number>();
  const episodeMetrics: Record<string, number>[] = [];
  for (const task of groupBy(exps, taskId).values()) {
    const runs = [...groupBy(task, runId)];
    const returns = runs.map(([, steps]) => {
      const ordered = [...steps].sort((x, y) => (x.eid.step ?? 0) - (y.eid.step ?? 0));
      const rewards = stepRewards(ordered, a.step_reward_key);
      let running = 0;
      for (let t = ordered.length - 1; t >= 0; t--) {
        running = rewards[t] + a.gamma * running;
        discounted.set(ordered[t], running);
      }
      return rewards.reduce((s, r) => s + r, 0);
    });
    const n = normalize(returns);
    episodeMetrics.push({ episode_reward_mean: n.mean, episode_reward_std: n.denom });
    runs.forEach(([id], i) => episodeScore.set(id, n.scores[i]));
  }

  const anchors = new Map<string, E[]>();
  for (const e of exps) {
    const hash = e.info?.[a.env_state_hash_key];
    if (hash === undefined || hash === null) continue;
    const key = String(hash);
    const g = anchors.get(key);
    if (g) g.push(e);
    else anchors.set(key, [e]);
  }
  const stepScore = new Map<E, number>();
  let shared = 0;
  for (const members of anchors.values()) {
    if (members.length < 2) continue;
    shared++;
    const n = normalize(members.map((e) => discounted.get(e)!));
    members.forEach((e, i) => stepScore.set(e, n.scores[i]));
  }

  const out: WithAdvantages<E>[] = [];
  let absE = 0;
  let absS = 0;
  for (const e of exps) {
    const ae = episodeScore.get(runId(e.eid)) ?? 0;
    const as = stepScore.get(e) ?? 0;
    out.push(withScore(e, ae + a.omega * as));
    absE += Math.abs(ae);
    absS += Math.abs(as);
  }
  return {
    exps: out,
    metrics: {
      ...gatherMetrics(episodeMetrics, 'gigpo'),
      'gigpo/anchor_groups_total': anchors.size,
      'gigpo/anchor_groups_size_gt1': shared,
      'gigpo/anchor_group_hit_ratio': anchors.size > 0 ? shared / anchors.size : 0,
      'gigpo/mean_abs_A_E': absE / exps.length,
      'gigpo/mean_abs_A_S': absS / exps.length,
      experience_count: out.length,
    },
  };
}

/** r_t of a run's steps (in step order): `info[key]` where any step has it, else the last step's reward. */
function stepRewards(steps: readonly GigpoExperience[], key: string): number[] {
  if (steps.some((e) => e.info !== undefined && key in e.info))
    return steps.map((e) => {
      const v = e.info?.[key];
      return v === undefined ? 0 : Number(v);
    });
  return steps.map((e, i) => (i === steps.length - 1 ? e.reward : 0));
}
