/**
 * Trinity's check step, in the order the selected release runs it: `Config.check_and_update` up to v0.4.0, the
 * validator list from v0.5.0. Order matters: each step sees the values earlier steps filled in or changed.
 */
import type { CheckContext } from './check-context';
import { checkAlgorithm } from './rules/algorithm';
import { checkBuffer } from './rules/buffer';
import { checkClusterV05 } from './rules/cluster';
import { checkExplorer } from './rules/explorer';
import { checkJobDir, checkMode, checkNamespace } from './rules/global';
import { checkModel } from './rules/model';
import { checkStage } from './rules/stages';
import { checkMonitor } from './rules/monitor';
import { checkIntervals, checkSynchronizer } from './rules/synchronizer';
import { checkTrainer } from './rules/trainer';
import { checkGpuMemory } from './rules/gpu-memory';
import { checkScaleSettings } from './rules/scale';

type Step = (ctx: CheckContext) => boolean | void;

export function runLaunchChecks(ctx: CheckContext): void {
  // DeprecatedConfigValidator's warnings are reported by the loader (TRN012), where the key is written.
  const steps: Step[] = ctx.since('v0.5.0')
    ? [
        checkStage,
        checkMode,
        checkJobDir,
        checkMonitor,
        checkAlgorithm,
        checkModel,
        checkClusterV05,
        checkSynchronizer,
        checkIntervals,
        checkExplorer,
        checkBuffer,
        checkTrainer,
        checkGpuMemory,
        checkScaleSettings,
      ]
    : [
        checkStage,
        checkNamespace,
        checkAlgorithm,
        checkMode,
        checkJobDir,
        checkModel,
        checkExplorer,
        checkSynchronizer,
        checkIntervals,
        checkMonitor,
        checkBuffer,
        checkTrainer,
        // Not a check of these releases: it records that they have none, for the estimate's hover.
        checkGpuMemory,
        checkScaleSettings,
      ];
  // Up to v0.4.0 the algorithm check runs before the mode check, and both must pass before anything else.
  const gates = new Set<Step>([checkMode, checkAlgorithm]);
  let gateFailed = false;
  for (const step of steps) {
    if (gateFailed && !gates.has(step)) return;
    const ok = guarded(ctx, step);
    if (ok === false) {
      if (ctx.since('v0.5.0')) return;
      gateFailed = true;
    }
  }
}

/** Runs one step; a bug in it becomes a diagnostic instead of taking the whole check (or an editor) down. */
export function guarded(ctx: CheckContext, step: Step): boolean | void {
  try {
    return step(ctx);
  } catch (e) {
    ctx.report(
      'TRN009',
      `Internal error in ${step.name}: ${(e as Error).message}. The remaining checks of this step were skipped; please report this.`,
      [0, 0],
    );
    return undefined;
  }
}
