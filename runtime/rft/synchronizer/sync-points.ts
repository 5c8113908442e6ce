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

/** `explorer_driven` (`dynamic_by_explorer` before v0.5.0), matched as Trinity's case-insensitive enum does. */
export function isExplorerDriven(syncStyle: string): boolean {
  return ['explorer_driven', 'dynamic_by_explorer'].includes(syncStyle.toLowerCase());
}

/**
 * `fully_async` (main, Trinity-RFT PR #579): the explorer never stops at sync points (explorer.py `need_sync` is
 * false); it takes the trainer's newest weights whenever they are offered, and the trainer offers them every
 * `sync_interval` steps as in the fixed style (trainer.py `need_sync`).
 */
export function isFullyAsync(syncStyle: string): boolean {
  return syncStyle.toLowerCase() === 'fully_async';
}
