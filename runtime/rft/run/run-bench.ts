/** `mode: bench`: the eval tasksets on every checkpoint of the job (or its latest only), in step order. */
import { loadModel } from '../../engine/lm/checkpoint';
import { checkpointProblem } from '../checkpoint/checkpoint-choice';
import { copyWeights, latestCheckpoint, listCheckpoints } from '../checkpoint/checkpoints';
import type { StageContext, StageResult } from './context';
import { evalSummary, makeExplorer, runEvals, type ExplorerSide } from './explorer-evals';
import { loadModelFor, tasksOf } from './setup';
import { fmt, yieldToEvents } from './step-loop';

export async function runBench(ctx: StageContext): Promise<StageResult> {
  const { cfg } = ctx;
  const base = loadModelFor(cfg, ctx.configDir, ctx.modelPath);
  let made: ExplorerSide | undefined;
  try {
    const evalSets = await tasksOf(cfg, ctx.configDir, 'eval');
    if (!evalSets.length) throw new Error('mode bench needs buffer.explorer_input.eval_tasksets');
    const side = makeExplorer(ctx, base, evalSets);
    made = side;
    let evals: Record<string, number> = {};
    const checkpoints = intactOnly(
      ctx,
      cfg.explorer.bench_on_latest_checkpoint
        ? [latestCheckpoint(ctx.jobDir)].filter((c) => c !== undefined)
        : listCheckpoints(ctx.jobDir),
    );
    if (!cfg.explorer.bench_on_latest_checkpoint && cfg.explorer.eval_on_startup)
      evals = await runEvals(ctx, side, 0, 'bench');
    for (const c of checkpoints) {
      await yieldToEvents();
      if (ctx.signal.aborted) break;
      const saved = loadModel(c.dir);
      copyWeights(saved, base.model);
      saved.dispose();
      side.explorer.model.version = c.step;
      evals = await runEvals(ctx, side, c.step, 'bench');
      ctx.progress(
        'bench',
        c.step,
        undefined,
        Object.entries(evalSummary(evals))
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(', '),
      );
    }
    if (!checkpoints.length && !cfg.explorer.eval_on_startup)
      ctx.log('warning', `no checkpoints in ${ctx.jobDir} to benchmark`);
    return { evals: evalSummary(evals), stopped: ctx.signal.aborted };
  } finally {
    made?.explorer.dispose();
    base.model.dispose();
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
