/**
 * A run on disk's dashboard follows its rollout files (a run started from a terminal, or in another window): what the
 * runtime's monitor appends after the panel's first read comes once, the latest explorer step and every new
 * evaluation; nothing comes while the files do not change. The writer is the runtime's own Monitor.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RolloutsOnDiskFollower, rolloutsOfJob } from '../../client/dashboard/job-rollouts';
import type { Rollouts } from '../../client/dashboard/series';
import { Monitor } from '../../runtime/rft/monitor/run-monitor';

const sample = (response: string) => [{ prompt: 'p', response, reward: 1 }];
const labels = (rs: readonly Rollouts[]): string[] =>
  rs.map((r) => (r.eval ? `${r.step} ${r.eval.role} ${r.eval.taskset}` : `${r.step}`) + ` ${r.samples[0].response}`);

test('a run on disk: its new explorer steps and evaluations reach the open panel once', () => {
  const job = mkdtempSync(join(tmpdir(), 'twb-follow-'));
  const follower = new RolloutsOnDiskFollower(job, 20);
  assert.deepEqual(follower.read(), [], 'no files yet');

  const monitor = new Monitor(job, () => {}, false);
  monitor.rollouts(1, sample('a'));
  monitor.evalRollouts(0, 'explorer', 'held-out', sample('e0'));
  // The panel's first read (after the follower was made) takes what is there.
  const first = rolloutsOfJob(job, undefined, undefined, 20);
  assert.ok(first && 'steps' in first);
  follower.saw(first.steps);
  assert.deepEqual(labels(follower.read()), [], 'what the first read gave is not given again');

  monitor.rollouts(2, sample('b'));
  monitor.rollouts(3, sample('c'));
  assert.deepEqual(labels(follower.read()), ['3 c'], 'the latest explorer step');
  assert.deepEqual(follower.read(), [], 'nothing while the files do not change');

  monitor.evalRollouts(3, 'explorer', 'held-out', sample('e3'));
  monitor.evalRollouts(3, 'explorer', 'other', sample('o3'));
  assert.deepEqual(labels(follower.read()), ['3 explorer held-out e3', '3 explorer other o3']);

  monitor.rollouts(4, sample('d'));
  monitor.evalRollouts(4, 'explorer', 'held-out', sample('e4'));
  assert.deepEqual(labels(follower.read()), ['4 d', '4 explorer held-out e4']);
});

test('a line written between the follower and the first read comes again rather than never', () => {
  const job = mkdtempSync(join(tmpdir(), 'twb-follow-'));
  const monitor = new Monitor(job, () => {}, false);
  monitor.rollouts(1, sample('a'));
  const follower = new RolloutsOnDiskFollower(job, 20);
  monitor.rollouts(2, sample('b'));
  // The panel read before step 2 was written (its read is asynchronous): step 2 must still come.
  follower.saw([{ step: 1, samples: [] }]);
  assert.deepEqual(labels(follower.read()), ['2 b']);
});
