/**
 * Which thread a local run's explorer gets, decided from the config alone, so that the run (run-both.ts) and the
 * checks of what the local runtime can hold (a wasm heap per thread) agree.
 */

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

export interface ExplorerThreadSettings {
  mode: string;
  sync_offset: number;
  sync_interval: number;
  sync_style: string;
}

/**
 * Whether the explorer of a `both` / `colocate` run gets its own worker thread: only when its steps can overlap
 * training (one-step off-policy, interval, explorer-driven or fully asynchronous sync; never in colocate mode, which
 * Trinity runs on one GPU so the two never overlap). `TRINITY_WORKBENCH_EXPLORER_THREAD=0|1` (`forced`) overrides it.
 */
export function explorerInOwnThread(s: ExplorerThreadSettings, forced?: string): boolean {
  if (forced === '0' || forced === '1') return forced === '1';
  if (s.mode === 'colocate') return false;
  return s.sync_offset > 0 || s.sync_interval > 1 || isExplorerDriven(s.sync_style) || isFullyAsync(s.sync_style);
}
