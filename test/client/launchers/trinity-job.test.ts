/** What the launchers read from a Trinity config without running Trinity, and how they read its failure logs. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { configTextForResume, readTrinityJob, stageFailure } from '../../../client/runs/launchers/trinity-job';

describe('readTrinityJob', () => {
  test('one stage in the config mode, or both when the mode is not written or is an interpolation', () => {
    assert.deepEqual(readTrinityJob('name: r\nmode: train\n', '/j').stages, [
      { name: 'r', mode: 'train', jobDir: '/j' },
    ]);
    assert.deepEqual(readTrinityJob('name: r\n', '/j').stages, [{ name: 'r', mode: 'both', jobDir: '/j' }]);
    assert.deepEqual(readTrinityJob('name: r\nmode: ${oc.env:MODE}\n', '/j').stages[0].mode, 'both');
  });

  test('stages run in <job dir>/<stage_name>, each in its mode or the root mode', () => {
    const job = readTrinityJob(
      'name: r\nmode: both\nstages:\n  - stage_name: sft\n    mode: train\n  - stage_name: rl\n',
      '/j',
    );
    assert.deepEqual(job.stages, [
      { name: 'sft', mode: 'train', jobDir: '/j/sft' },
      { name: 'rl', mode: 'both', jobDir: '/j/rl' },
    ]);
  });

  test("monitor folders map to roles, by the explorer's and trainer's configured names; benchmark is bench", () => {
    const job = readTrinityJob('explorer:\n  name: explorer_0\ntrainer:\n  name: learner\n', '/j');
    assert.equal(job.roleOf('explorer_0'), 'explorer');
    assert.equal(job.roleOf('learner'), 'trainer');
    assert.equal(job.roleOf('benchmark'), 'bench');
    assert.equal(job.roleOf('synchronizer'), undefined);
  });
});

describe('configTextForResume', () => {
  test('nothing to change when the config already resumes as asked (Trinity resumes by default)', () => {
    assert.equal(configTextForResume('name: r\n', true), undefined);
    assert.equal(configTextForResume('name: r\ncontinue_from_checkpoint: false\n', false), undefined);
  });

  test('the one key set otherwise, comments kept', () => {
    const fresh = configTextForResume('# my run\nname: r\n', false)!;
    assert.match(fresh, /^# my run\n/);
    assert.deepEqual(parse(fresh), { name: 'r', continue_from_checkpoint: false });
    assert.deepEqual(parse(configTextForResume('name: r\ncontinue_from_checkpoint: false\n', true)!), {
      name: 'r',
      continue_from_checkpoint: true,
    });
  });
});

describe('stageFailure', () => {
  const traceback = [
    'Traceback (most recent call last):',
    '  File "trainer.py", line 3, in train',
    '    raise ValueError("bad")',
    'ValueError: bad',
    'INFO shutting down',
  ];
  test("Trinity's failed-stage log line with the traceback's exception", () => {
    assert.equal(
      stageFailure(['INFO start', 'ERROR 12:00 launcher.py:80] Trainer failed:', ...traceback]),
      'Trainer failed: ValueError: bad',
    );
    assert.equal(
      stageFailure(['Explorer or Trainer failed:', ...traceback]),
      'Explorer or Trainer failed: ValueError: bad',
    );
  });
  test('no failure line, no failure', () => {
    assert.equal(stageFailure(['INFO Step 1: {}', 'Trainer finished.']), undefined);
  });
});
