/**
 * One eval task's metrics from its runs, as Trinity's `calculate_task_level_metrics(metrics, is_eval=True)`
 * (trinity/explorer/scheduler.py) reduces them in each release:
 * - ≤ v0.3.2: the mean over runs;
 * - v0.4.0: `<key>/{mean,best,worst}@k` over the first k runs, k = 2, 4, … < n, then n (Python's sum/max/min);
 * - ≥ v0.5.0: `<key>/mean@n` and `<key>/std@n` (`np.mean`, `np.std`), and when n > 1, for the same ks,
 *   `<key>/best@k` / `<key>/worst@k`: the mean over 1000 bootstrap samples of k runs drawn with replacement of
 *   their max / min (`bootstrap_metric`, legacy `np.random.seed(42)` before each k).
 * Time keys (`time/run_execution`, `time/task_execution`) are plain means in every release from v0.4.0.
 */
import { evalKs, evalStyle } from '../../config/runs/metric-names';
import type { Release } from '../../config/releases';
import { LegacyRandomState } from '../numpy/numpy-legacy-random';
import { npMean, npStd } from '../numpy/numpy-stats';

/** `bootstrap_metric`'s defaults, which `calculate_task_level_metrics` keeps. */
export const BOOTSTRAP_SAMPLES = 1000;
export const BOOTSTRAP_SEED = 42;

/** `bootstrap_metric(data, subset_size, [np.max, np.min])`: the bootstrap means of the subset max and min. */
export function bootstrapBestWorst(
  data: readonly number[],
  subsetSize: number,
  nBootstrap = BOOTSTRAP_SAMPLES,
  seed = BOOTSTRAP_SEED,
): { best: number; worst: number } {
  const rs = new LegacyRandomState(seed);
  const best = new Float64Array(nBootstrap);
  const worst = new Float64Array(nBootstrap);
  for (let b = 0; b < nBootstrap; b++) {
    let hi = -Infinity;
    let lo = Infinity;
    // np.max/np.min propagate NaN; Math.max/Math.min do too.
    for (const i of rs.choiceWithReplacement(data.length, subsetSize)) {
      hi = Math.max(hi, data[i]);
      lo = Math.min(lo, data[i]);
    }
    best[b] = hi;
    worst[b] = lo;
  }
  return { best: npMean(best), worst: npMean(worst) };
}

const isTimeKey = (key: string) => key.includes('time/task_execution') || key.includes('time/run_execution');

export function evalTaskMetrics(release: Release, runs: readonly Record<string, number>[]): Record<string, number> {
  const style = evalStyle(release);
  const cols = new Map<string, number[]>();
  for (const r of runs) {
    for (const [k, v] of Object.entries(r)) {
      if (typeof v !== 'number') continue;
      const c = cols.get(k);
      if (c) c.push(v);
      else cols.set(k, [v]);
    }
  }
  const out: Record<string, number> = {};
  const plainMean = (vs: readonly number[]) => vs.reduce((a, b) => a + b, 0) / vs.length;
  for (const [key, vs] of cols) {
    if (style === 'stats' || isTimeKey(key)) {
      out[key] = plainMean(vs);
    } else if (style === 'at-k') {
      for (const k of evalKs(vs.length)) {
        const head = vs.slice(0, k);
        out[`${key}/mean@${k}`] = plainMean(head);
        out[`${key}/best@${k}`] = Math.max(...head);
        out[`${key}/worst@${k}`] = Math.min(...head);
      }
    } else {
      const n = vs.length;
      out[`${key}/mean@${n}`] = npMean(vs);
      out[`${key}/std@${n}`] = npStd(vs);
      if (n > 1) {
        for (const k of evalKs(n)) {
          const { best, worst } = bootstrapBestWorst(vs, k);
          out[`${key}/best@${k}`] = best;
          out[`${key}/worst@${k}`] = worst;
        }
      }
    }
  }
  return out;
}
