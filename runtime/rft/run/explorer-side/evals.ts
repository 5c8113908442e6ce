/** The explorer of the `explore` and `bench` modes with its eval tasksets: running them, and the summary's numbers. */
import type { Pretrained } from '../../../engine/pretrained';
import type { Explorer, ExplorerTask } from '../../explorer/explore-step';
import type { StageContext } from '../stage/stage-context';
import { createExplorer, evaluateAll } from '../setup';

export type EvalSet = { name: string; tasks: ExplorerTask[] };

export interface ExplorerSide {
  explorer: Explorer;
  evalSets: EvalSet[];
}

export function makeExplorer(ctx: StageContext, p: Pretrained, evalSets: EvalSet[]): ExplorerSide {
  return { explorer: createExplorer(ctx.cfg, ctx.release, p, ctx.seed, ctx.log, ctx.configDir), evalSets };
}

/** Every eval taskset at `step`, logged under the explorer's role (`bench` for the bench prefix). */
export async function runEvals(
  ctx: StageContext,
  side: ExplorerSide,
  step: number,
  prefix = 'eval',
): Promise<Record<string, number>> {
  const metrics = await evaluateAll(side.explorer, side.evalSets, step, prefix);
  if (side.evalSets.length) ctx.monitor.log(prefix === 'bench' ? 'bench' : 'explorer', step, metrics);
  return metrics;
}

/** Mean accuracy-like numbers of an eval, for the summary: `<prefix>/<set>/<key>/mean` (`…/mean@n` from v0.5.0). */
export function evalSummary(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).filter(([k]) => /\/mean(@\d+)?$/.test(k) && !/\/(best|worst|std)@\d+\/mean$/.test(k)),
  );
}
