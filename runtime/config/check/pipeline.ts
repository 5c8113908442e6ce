/**
 * Trinity's check step, in the order the selected release runs it: `Config.check_and_update` up to v0.4.0, the
 * validator list from v0.5.0. Order matters: each step sees the values earlier steps filled in or changed.
 */
import type { CheckContext } from './context';
import { checkAlgorithm } from './rules/algorithm';
import { checkBuffer } from './rules/buffer';
import { checkClusterV05 } from './rules/cluster';
import { checkExplorer } from './rules/explorer';
import { checkJobDir, checkMode, checkNamespace } from './rules/global';
import { checkModel } from './rules/model';
import { checkMonitor } from './rules/monitor';
import { checkIntervals, checkSynchronizer } from './rules/synchronizer';
import { checkTrainer } from './rules/trainer';

export function runLaunchChecks(ctx: CheckContext): void {
  if (ctx.since('v0.5.0')) {
    // DeprecatedConfigValidator warnings are reported by the loader (TRN012), where the key is written.
    if (!checkMode(ctx)) return;
    checkJobDir(ctx);
    checkMonitor(ctx);
    if (!checkAlgorithm(ctx)) return;
    checkModel(ctx);
    checkClusterV05(ctx);
    checkSynchronizer(ctx);
    checkIntervals(ctx);
    checkExplorer(ctx);
    checkBuffer(ctx);
    checkTrainer(ctx);
    return;
  }
  checkNamespace(ctx);
  const algorithmOk = checkAlgorithm(ctx);
  if (!checkMode(ctx) || !algorithmOk) return;
  checkJobDir(ctx);
  checkModel(ctx);
  checkExplorer(ctx);
  checkSynchronizer(ctx);
  checkIntervals(ctx);
  checkMonitor(ctx);
  checkBuffer(ctx);
  checkTrainer(ctx);
}
