/** `mode: bench`: the eval tasksets on every checkpoint of the job (or its latest only), in step order. */
import { checkpointProblem } from '../../checkpoint/checkpoint-choice';
import { latestCheckpoint, listCheckpoints } from '../../checkpoint/checkpoints';
import { evalSummary } from '../explorer-side/explorer-reports';
import { ExplorerSide, stageSideSpec } from '../explorer-side/explorer-side';
import type { StageContext, StageResult } from '../stage/stage-context';
import { fmt } from '../stage/step-pacing';
import { unlessAbandoned, yieldToEvents } from '../../stop-point';

export async function runBench(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const side = await ExplorerSide.build(stageSideSpec(ctx, 'bench'), ctx.log);
  try {
    /** Every eval taskset at `step`, logged under the bench role with its records. */
    const bench = async (step: number): Promise<Record<string, number>> => {
      const { metrics, samples } = await side.evaluate(step, 'bench');
      ctx.monitor.log('bench', step, metrics);
      for (const s of samples) ctx.monitor.evalRollouts(step, 'bench', s.taskset, s.samples);
      return metrics;
    };
    let evals: Record<string, number> = {};
    const checkpoints = intactOnly(
      ctx,
      cfg.explorer.bench_on_latest_checkpoint
        ? [latestCheckpoint(ctx.jobDir)].filter((c) => c !== undefined)
        : listCheckpoints(ctx.jobDir),
    );
    // A stop gives up the checkpoint being benchmarked (its eval tasks stop at the next one): no row for it.
    await unlessAbandoned(async () => {
      if (!cfg.explorer.bench_on_latest_checkpoint && cfg.explorer.eval_on_startup) evals = await bench(0);
      for (const c of checkpoints) {
        await yieldToEvents();
        if (ctx.signal.aborted) break;
        side.loadCheckpoint(c.dir, c.step);
        evals = await bench(c.step);
        ctx.progress(
          'bench',
          c.step,
          undefined,
          Object.entries(evalSummary(evals))
            .map(([k, v]) => `${k} ${fmt(v)}`)
            .join(', '),
        );
      }
    });
    if (!checkpoints.length && !cfg.explorer.eval_on_startup)
      ctx.log('warning', `no checkpoints in ${ctx.jobDir} to benchmark`);
    return { evals: evalSummary(evals), stopped: ctx.signal.aborted };
  } finally {
    side.dispose();
  }
}

/** The checkpoints that verify; each damaged one is named with why, and not benchmarked. */
function intactOnly<C extends { dir: string }>(ctx: StageContext, checkpoints: C[]): C[] {
  return checkpoints.filter((c) => {
    const problem = checkpointProblem(c.dir);
    if (problem !== undefined) ctx.log('warning', `${c.dir} is damaged and not benchmarked: ${problem}`);
    return problem === undefined;
  });
}
