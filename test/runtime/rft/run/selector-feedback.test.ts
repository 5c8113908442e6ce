/** When selector feedback is delivered: at the explorer's sync points, as Trinity's Explorer.need_sync finishes steps. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { feedbackAtSyncPoints } from '../../../../runtime/rft/run/explorer-side/tasksets';

function deliveries(timing: { sync_interval: number; sync_offset: number }, steps: number): string[] {
  const got: string[] = [];
  const after = feedbackAtSyncPoints({ feedback: (indices, values) => got.push(`${indices}:${values}`) }, timing);
  for (let k = 1; k <= steps; k++) {
    after(k, [{ tasksetId: 0, indices: [k], values: [k / 10] }]);
    got.push(`after ${k}`);
  }
  return got;
}

describe('feedbackAtSyncPoints', () => {
  test('interval 1, offset 0: each step before the next batch', () => {
    assert.deepEqual(deliveries({ sync_interval: 1, sync_offset: 0 }, 2), ['1:0.1', 'after 1', '2:0.2', 'after 2']);
  });

  test('interval 2, offset 1: kept until steps 3 and 5, then handed over in order', () => {
    assert.deepEqual(deliveries({ sync_interval: 2, sync_offset: 1 }, 5), [
      'after 1',
      'after 2',
      '1:0.1',
      '2:0.2',
      '3:0.3',
      'after 3',
      'after 4',
      '4:0.4',
      '5:0.5',
      'after 5',
    ]);
  });

  test('other tasksets and steps without feedback are skipped', () => {
    const got: number[][] = [];
    const after = feedbackAtSyncPoints(
      { feedback: (indices) => got.push([...indices]) },
      { sync_interval: 1, sync_offset: 0 },
    );
    after(1, undefined);
    after(2, [
      { tasksetId: 1, indices: [9], values: [1] },
      { tasksetId: 0, indices: [4], values: [0] },
    ]);
    assert.deepEqual(got, [[4]]);
  });
});
