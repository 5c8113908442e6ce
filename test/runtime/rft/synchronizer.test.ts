/**
 * The synchronizer's timing against Trinity's own rule (trinity/explorer/explorer.py `need_sync`, trainer.py
 * `need_sync`), enumerated by hand for small intervals and offsets.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  isExplorerDriven,
  isExplorerSyncPoint,
  isTrainerSyncPoint,
  nextSyncTrainerStep,
} from '../../../runtime/rft/synchronizer/sync-points';

const points = (t: { sync_interval: number; sync_offset: number }, upTo = 12) =>
  Array.from({ length: upTo }, (_, i) => i + 1).filter((k) => isExplorerSyncPoint(k, t));

test('explorer sync points: every interval-th step after the offset', () => {
  assert.deepEqual(points({ sync_interval: 1, sync_offset: 0 }), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(points({ sync_interval: 1, sync_offset: 1 }), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(points({ sync_interval: 3, sync_offset: 0 }), [3, 6, 9, 12]);
  assert.deepEqual(points({ sync_interval: 3, sync_offset: 2 }), [5, 8, 11]);
});

test('the trainer step the explorer takes next: its next sync point minus the offset', () => {
  const t = { sync_interval: 3, sync_offset: 2 };
  // sync points 5, 8, 11 take trainer steps 3, 6, 9
  assert.deepEqual(
    [0, 4, 5, 7, 8].map((k) => nextSyncTrainerStep(k, t)),
    [3, 3, 6, 6, 9],
  );
  assert.deepEqual(
    [0, 1, 2].map((k) => nextSyncTrainerStep(k, { sync_interval: 1, sync_offset: 0 })),
    [1, 2, 3],
  );
});

test('the trainer offers weights every sync_interval steps, never for 0', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].filter((s) => isTrainerSyncPoint(s, 2)),
    [2, 4, 6],
  );
  assert.deepEqual(
    [1, 2, 3].filter((s) => isTrainerSyncPoint(s, 0)),
    [],
  );
});

test('explorer-driven styles, in both spellings and any case', () => {
  assert.deepEqual(
    ['explorer_driven', 'DYNAMIC_BY_EXPLORER', 'fixed', 'trainer_driven', 'dynamic_by_trainer'].map(isExplorerDriven),
    [true, true, false, false, false],
  );
});
