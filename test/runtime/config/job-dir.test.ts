/** Where a run writes, as Trinity names it, for the runtime and for the editor's run plan. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { jobDirPath, jobNamingOf, runJobDirPath } from '../../../runtime/config/runs/job-dir';

const naming = { checkpoint_root_dir: 'ckpt', project: 'p', group: 'g', name: 'run', checkpoint_job_dir: '' };

test('the job directory is checkpoint_job_dir when set, else root/project/group/name', () => {
  assert.equal(jobDirPath(naming), join('ckpt', 'p', 'g', 'run'));
  assert.equal(jobDirPath({ ...naming, checkpoint_job_dir: '/abs/job' }), '/abs/job');
});

test("a staged run keeps its shared state under the top level's written name", () => {
  const stages = [
    { ...naming, name: 'run/sft' },
    { ...naming, name: 'run/grpo' },
  ];
  assert.equal(runJobDirPath(stages, 'run'), join('ckpt', 'p', 'g', 'run'));
  assert.equal(runJobDirPath([naming], 'ignored'), join('ckpt', 'p', 'g', 'run'));
});

test('jobNamingOf reads a config with errors without throwing: null is empty, a number is its text', () => {
  const got = jobNamingOf({ checkpoint_root_dir: 5, project: null, name: 'x' });
  assert.deepEqual(got, { checkpoint_job_dir: '', checkpoint_root_dir: '5', project: '', group: '', name: 'x' });
  assert.equal(jobDirPath(got), join('5', 'x'));
});
