/**
 * JobFollower on files laid down by hand in Trinity's layout (the event files by the independent Python writer):
 * when a checkpoint counts as complete, and how a step's scalars become one metrics event.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { JobFollower } from '../../../client/runs/launchers/job-follower';
import { RecordingSink } from '../../helpers/launch-sink';
import { writeEvents } from '../../helpers/tfevents';

const roleOf = (f: string) => (f === 'explorer' || f === 'trainer' ? f : undefined);

function follower(dir: string, sink: RecordingSink): JobFollower {
  const f = new JobFollower({ dirs: [dir], startedAt: Date.now(), roleOf, sink, pollMs: 60_000 });
  f.start();
  return f;
}

describe('JobFollower', () => {
  test('a checkpoint is reported once the tracker file names it, not when its dir appears', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-follow-'));
    mkdirSync(join(job, 'global_step_1'));
    writeFileSync(join(job, 'latest_checkpointed_iteration.txt'), '1');
    const sink = new RecordingSink();
    const f = follower(job, sink);
    mkdirSync(join(job, 'global_step_2', 'actor'), { recursive: true });
    f.poll();
    assert.deepEqual(sink.of('checkpoint'), [], 'global_step_1 was there before; global_step_2 is still being written');
    writeFileSync(join(job, 'latest_checkpointed_iteration.txt'), '2');
    f.poll();
    assert.deepEqual(sink.of('checkpoint'), [{ type: 'checkpoint', step: 2, path: join(job, 'global_step_2') }]);
    f.finish();
    assert.equal(sink.of('checkpoint').length, 1);
  });

  test('without a tracker file: complete when a later one appears, or when the run ends', () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-follow-'));
    const sink = new RecordingSink();
    const f = follower(job, sink);
    mkdirSync(join(job, 'global_step_5'));
    f.poll();
    assert.deepEqual(sink.of('checkpoint'), []);
    mkdirSync(join(job, 'global_step_10'));
    f.poll();
    assert.deepEqual(
      sink.of('checkpoint').map((c) => c.step),
      [5],
    );
    f.finish();
    assert.deepEqual(
      sink.of('checkpoint').map((c) => c.step),
      [5, 10],
    );
  });

  test("a step's scalars, one record each in the file, are one metrics event; unknown folders are named once", () => {
    const job = mkdtempSync(join(tmpdir(), 'twb-follow-'));
    const sink = new RecordingSink();
    const f = follower(job, sink);
    const trainer = join(job, 'monitor', 'tensorboard', 'trainer');
    const other = join(job, 'monitor', 'tensorboard', 'synchronizer');
    mkdirSync(trainer, { recursive: true });
    mkdirSync(other, { recursive: true });
    const file = join(trainer, 'events.out.tfevents.1.h');
    writeEvents(file, [
      { scalar: 'actor/pg_loss', value: 0.5, step: 1 },
      { scalar: 'actor/lr', value: 0.25, step: 1 },
      { scalar: 'actor/pg_loss', value: 0.125, step: 2 },
    ]);
    writeEvents(join(other, 'events.out.tfevents.1.h'), [{ scalar: 'sync/time', value: 1, step: 1 }]);
    f.poll();
    // Step 2 may have more values coming: held until the next poll brings nothing new for the trainer.
    assert.deepEqual(
      sink.of('metrics').map((m) => [m.role, m.step, m.values]),
      [['trainer', 1, { 'actor/pg_loss': 0.5, 'actor/lr': 0.25 }]],
    );
    writeEvents(file, [{ scalar: 'actor/lr', value: 0.25, step: 2 }]);
    f.poll();
    f.poll();
    assert.deepEqual(
      sink.of('metrics').map((m) => [m.step, m.values]),
      [
        [1, { 'actor/pg_loss': 0.5, 'actor/lr': 0.25 }],
        [2, { 'actor/pg_loss': 0.125, 'actor/lr': 0.25 }],
      ],
    );
    f.finish();
    assert.deepEqual(sink.warnings, [
      "metrics in monitor/tensorboard/synchronizer are not shown: it is not the explorer's, trainer's or benchmark's folder",
    ]);
  });
});
