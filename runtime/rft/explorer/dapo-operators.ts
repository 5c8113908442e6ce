/**
 * DAPO's two experience operators on Trinity's main (trinity/buffer/operators/filters/reward_filter.py @04052a4;
 * DAPO, arXiv:2503.14476 §3.2 and §3.4):
 * - `dapo_dynamic_sampling` (DAPODynamicSamplingFilter): per task group (in first-seen order), keep it only when
 *   0 < #correct < G, a rollout being correct when its score is above `correct_threshold` (default 0.0); the score is
 *   `metrics[metric_key]` (default `accuracy`) where the experience has it, else its reward, else the operator fails
 *   naming the key. Groups of one are dropped without counting as all-correct or all-wrong. Metrics:
 *   `filtered_count`, `dropped_all_correct`, `dropped_all_wrong` (experiences).
 * - `mask_response_truncated` (MaskResponseTruncatedOperator): the action mask of every `response_truncated`
 *   experience becomes all 0, so it adds nothing to the loss; metric `masked_truncated_count`. Trinity's vLLM wrapper
 *   leaves a single-turn response cut by max_tokens unmarked, so there only multi-turn episodes are ever masked; here
 *   such a response is recorded `response_truncated` (as the buffer writes it) and is masked too, as DAPO intends.
 */
import type { Experience } from '../experience';
import { groupByTask } from '../experience';

export type OperatorResult = { exps: Experience[]; metrics: Record<string, number> };

export class OperatorError extends Error {}

export function dapoDynamicSampling(args: Record<string, unknown>): (exps: Experience[]) => OperatorResult {
  const metricKey = typeof args.metric_key === 'string' ? args.metric_key : 'accuracy';
  const threshold = typeof args.correct_threshold === 'number' ? args.correct_threshold : 0.0;
  const score = (e: Experience): number => {
    if (e.metrics && metricKey in e.metrics) return e.metrics[metricKey];
    if (e.reward !== undefined && e.reward !== null) return e.reward;
    throw new OperatorError(`dapo_dynamic_sampling: an experience has no '${metricKey}' in its metrics and no reward`);
  };
  return (exps) => {
    const groups = groupByTask(exps);
    const kept: Experience[] = [];
    let allCorrect = 0;
    let allWrong = 0;
    for (const g of groups.values()) {
      if (g.length < 2) continue;
      const correct = g.filter((e) => score(e) > threshold).length;
      if (correct === 0) allWrong += g.length;
      else if (correct === g.length) allCorrect += g.length;
      else kept.push(...g);
    }
    return {
      exps: kept,
      metrics: {
        filtered_count: exps.length - kept.length,
        dropped_all_correct: allCorrect,
        dropped_all_wrong: allWrong,
      },
    };
  };
}

export function maskResponseTruncated(): (exps: Experience[]) => OperatorResult {
  return (exps) => {
    let masked = 0;
    const out = exps.map((e) => {
      if (e.truncated !== true) return e;
      masked++;
      return { ...e, actionMask: new Array<number>(e.tokens.length - e.promptLength).fill(0) };
    });
    return { exps: out, metrics: { masked_truncated_count: masked } };
  };
}
