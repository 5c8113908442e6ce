/**
 * `grpo` (GRPOGroupedAdvantage, explorer side). Per task group:
 *   A_i = (r_i − mean_g r) / (std_g r + epsilon),   std_g = Bessel-corrected (torch.std)
 * broadcast over the experience's action mask (returns = advantages).
 *  - a group of one: mean 0, std 1 (so A = r / (1 + ε)); with `std_threshold` set it is dropped instead;
 *  - `std_threshold`: groups whose std ≤ threshold are dropped (metric `filtered_count` = experiences dropped);
 *    with `duplicate_experiences`, dropped groups are replaced by randomly chosen kept groups (copies);
 *  - `std_cal_level: batch`: the std is the Bessel std over ALL rewards of the batch (1.0 with ≤ 1 reward), the
 *    mean stays per group; it applies to groups of one too (A = r / (std_batch + ε));
 *  - `rank_penalty`: the rewards used for the group's mean/std are scaled by (1 − rank/n · rank_penalty), rank
 *    = ascending rank of the experience's mean rollout log-prob; the numerator still uses the raw reward.
 * Metrics: `group_advantages/reward_mean/{mean,max,min}`, `group_advantages/reward_std/{…}` over groups (dropped
 * groups included) and `filtered_count`.
 */
import { AlgorithmArgsError, defaultFnArgs, withDefaults } from '../args';
import { ascendingRanks, gatherMetrics, mean, randomInt, stdBessel } from './stats';
import {
  groupBy,
  taskId,
  withScore,
  type AdvantageExperience,
  type GroupAdvantageResult,
  type WithAdvantages,
} from './types';

export interface GrpoAdvantageArgs {
  epsilon: number;
  std_threshold: number | null;
  duplicate_experiences: boolean;
  rank_penalty: number | null;
  std_cal_level: 'group' | 'batch';
}

export interface GroupAdvantageOptions {
  /** uniform [0, 1) source for the random choices (duplication, balanced dropping); default Math.random */
  random?: () => number;
}

export function grpoArgs(args?: Partial<GrpoAdvantageArgs> | null): GrpoAdvantageArgs {
  const a = withDefaults(defaultFnArgs('advantage_fn', 'grpo') as unknown as GrpoAdvantageArgs, args);
  if (a.std_cal_level !== 'group' && a.std_cal_level !== 'batch') {
    throw new AlgorithmArgsError('advantage_fn', 'grpo', "std_cal_level must be either 'group' or 'batch'");
  }
  return a;
}

export function grpoAdvantage<E extends AdvantageExperience>(
  exps: readonly E[],
  args?: Partial<GrpoAdvantageArgs> | null,
  options: GroupAdvantageOptions = {},
): GroupAdvantageResult<E> {
  const a = grpoArgs(args);
  const random = options.random ?? Math.random;
  const groups = groupBy(exps, taskId);
  let batchStd: number | undefined;
  if (a.std_cal_level === 'batch') {
    const all = exps.map((e) => e.reward);
    batchStd = all.length <= 1 ? 1 : stdBessel(all);
  }
  const metricList: Record<string, number>[] = [];
  const results: WithAdvantages<E>[][] = [];
  let filteredCount = 0;
  for (const group of groups.values()) {
    let groupMean: number;
    let groupStd: number;
    let keep = true;
    if (group.length === 1) {
      groupMean = 0;
      groupStd = 1;
      if (a.std_threshold != null) {
        filteredCount += 1;
        keep = false;
      }
    } else {
      let rewards = group.map((e) => e.reward);
      if (a.rank_penalty != null) {
        const penalty = a.rank_penalty;
        const meanLogprobs = group.map((e) => {
          if (!e.logprobs) throw new Error("advantage_fn 'grpo': rank_penalty needs each experience's logprobs");
          return mean(Array.from(e.logprobs));
        });
        const ranks = ascendingRanks(meanLogprobs);
        rewards = rewards.map((r, i) => r * (1 - (ranks[i] / group.length) * penalty));
      }
      groupMean = mean(rewards);
      groupStd = stdBessel(rewards);
      if (a.std_threshold != null && groupStd <= a.std_threshold) {
        filteredCount += group.length;
        keep = false;
      }
    }
    const denom = (a.std_cal_level === 'batch' && batchStd !== undefined ? batchStd : groupStd) + a.epsilon;
    results.push(keep ? group.map((e) => withScore(e, (e.reward - groupMean) / denom)) : []);
    metricList.push({ reward_mean: groupMean, reward_std: groupStd });
  }
  const metrics = { ...gatherMetrics(metricList, 'group_advantages'), filtered_count: filteredCount };
  let out: WithAdvantages<E>[];
  if (a.duplicate_experiences && a.std_threshold != null) {
    const valid = results.filter((g) => g.length > 0);
    const skipped = results.length - valid.length;
    out = valid.flat();
    if (skipped > 0 && valid.length > 0) {
      for (let k = 0; k < skipped; k++) {
        const src = valid[randomInt(valid.length, random)];
        out.push(...src.map((e) => ({ ...e, advantages: [...e.advantages], returns: [...e.returns] })));
      }
    } else if (valid.length === 0) {
      out = [];
    }
  } else {
    out = results.flat();
  }
  return { exps: out, metrics };
}
