/**
 * What the explorer reports in the explore and both modes: each step's metrics, rollout samples and progress line,
 * and its evals as those modes schedule them (`eval_on_startup`, every `eval_interval` explorer steps, the last
 * step), logged under the explorer's role with their records, and the summary's numbers.
 */
import type { EvalOutput } from '../../explorer/explore-step';
import type { StageContext } from '../stage/stage-context';
import { fmt, meanReward } from '../stage/step-pacing';
import type { ExplorerStepResult } from './explorer-side';

/** Explorer step `step`'s metrics and rollout samples, and its progress line (of `totalSteps`). */
export function reportExplorerStep(
  ctx: StageContext,
  step: number,
  totalSteps: number,
  out: Omit<ExplorerStepResult, 'readerOffset'>,
): void {
  ctx.monitor.log('explorer', step, out.metrics);
  ctx.monitor.rollouts(step, out.samples);
  ctx.progress('explorer', step, totalSteps, `reward ${fmt(meanReward(out.experiences))}`);
}

/** Mean accuracy-like numbers of an eval, for the summary: `<prefix>/<set>/<key>/mean` (`…/mean@n` from v0.5.0). */
export function evalSummary(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(metrics).filter(([k]) => /\/mean(@\d+)?$/.test(k) && !/\/(best|worst|std)@\d+\/mean$/.test(k)),
  );
}

/** The evals of an explorer with eval tasksets: when they are due, and the last one's metrics. */
export class EvalSchedule {
  private lastEval: Record<string, number> = {};
  private lastEvalStep = -1;

  constructor(
    private readonly ctx: StageContext,
    private readonly explorer: { readonly hasEvals: boolean; evaluate(step: number): Promise<EvalOutput> },
  ) {}

  /** Whether to evaluate before the first explorer step (`eval_on_startup`, a run that starts at step 0). */
  dueOnStartup(step: number): boolean {
    return this.ctx.cfg.explorer.eval_on_startup && step === 0 && this.explorer.hasEvals;
  }

  /** Whether explorer step `step` is due an eval (`eval_interval`). */
  dueAfter(step: number): boolean {
    const interval = this.ctx.cfg.explorer.eval_interval;
    return interval > 0 && step % interval === 0 && this.explorer.hasEvals;
  }

  /** Whether the run ends without an eval of its last step (the final eval is then due). */
  dueAtEnd(step: number): boolean {
    return this.explorer.hasEvals && this.lastEvalStep !== step;
  }

  /** Evaluates every eval taskset at `step` and logs the metrics and records under the explorer's role. */
  async evaluate(step: number): Promise<void> {
    const out = await this.explorer.evaluate(step);
    this.lastEval = out.metrics;
    this.lastEvalStep = step;
    this.ctx.monitor.log('explorer', step, this.lastEval);
    for (const s of out.samples) this.ctx.monitor.evalRollouts(step, 'explorer', s.taskset, s.samples);
  }

  /** The last eval's summary numbers. */
  summary(): Record<string, number> {
    return evalSummary(this.lastEval);
  }
}
