/**
 * When a taskset's selector hears back: Trinity's explorer reads and schedules each step's tasks without waiting, and
 * runs the experience pipeline (whose `pass_rate_calculator` yields the pass rates) and `taskset.feedback` only when
 * it finishes its pending steps, in `need_sync`: after explorer step k when k > sync_offset and
 * (k − sync_offset) % sync_interval == 0 (trinity/explorer/explorer.py). Steps here run whole, so their pass rates
 * are kept until that point and then handed over step by step, before the next batch is read.
 */
import type { BatchReader, SelectorFeedback } from '../../data/reader';
import { isExplorerSyncPoint, type SyncTiming } from '../../synchronizer/sync-points';

/** `afterStep(k, feedback)`, called after each explorer step, delivers the kept feedback at sync points. */
export function feedbackAtSyncPoints(
  reader: Pick<BatchReader<unknown>, 'feedback'>,
  timing: SyncTiming,
): (step: number, feedback: readonly SelectorFeedback[] | undefined) => void {
  const pending: SelectorFeedback[][] = [];
  return (step, feedback) => {
    // One reader stands for taskset 0 (the runtime reads the training tasksets as one).
    if (feedback) pending.push(feedback.filter((f) => f.tasksetId === 0));
    if (!isExplorerSyncPoint(step, timing)) return;
    for (const fs of pending.splice(0)) for (const f of fs) reader.feedback(f.indices, f.values);
  };
}
