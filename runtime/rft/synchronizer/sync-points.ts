/**
 * Trinity's synchronizer timing, in one place: when the explorer takes new weights (trinity/explorer/explorer.py,
 * `need_sync`), which trainer step those weights come from, when the trainer offers them (trinity/trainer/trainer.py,
 * `need_sync`), and which sync styles let the explorer decide instead.
 */

export interface SyncTiming {
  /** Explorer steps between two weight syncs (≥ 1). */
  sync_interval: number;
  /** How many steps the explorer runs ahead of the trainer (0 = on-policy). */
  sync_offset: number;
}

/** After explorer step k the explorer syncs when k > sync_offset and (k − sync_offset) % sync_interval == 0. */
export function isExplorerSyncPoint(step: number, t: SyncTiming): boolean {
  return step > t.sync_offset && (step - t.sync_offset) % t.sync_interval === 0;
}

/** The trainer step whose weights the explorer takes at its next sync point after explorer step k. */
export function nextSyncTrainerStep(step: number, t: SyncTiming): number {
  let next = step + 1;
  while (!isExplorerSyncPoint(next, t)) next++;
  return next - t.sync_offset;
}

/** The trainer offers its weights (fixed style) after every `sync_interval`-th step; 0 = never. */
export function isTrainerSyncPoint(trainerStep: number, syncInterval: number): boolean {
  return syncInterval > 0 && trainerStep % syncInterval === 0;
}

// The sync styles' meaning is shared with the config checks (which thread the explorer gets).
export { isExplorerDriven, isFullyAsync } from '../../config/local-memory/explorer-thread';
