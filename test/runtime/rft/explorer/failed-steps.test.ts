/**
 * A run whose every task fails is a failed run, not a finished one: each step in which all tasks failed is logged
 * as a failed step, and after MAX_STEPS_WITHOUT_EXPERIENCE steps without an experience the run stops with the first
 * task's error (the issue's run counted to its last step and said "finished"). Checked with the explorer in this
 * thread and in its worker thread (sync_offset 1), where the error crosses threads.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { MAX_STEPS_WITHOUT_EXPERIENCE } from '../../../../runtime/rft/explorer/explore-step';
import { runJob } from '../../../../runtime/rft/run/job/job';
import type { RunRecord } from '../../../../runtime/protocol';
import { GRPO_STAGE, header, tinyJob, topLevel } from '../run/helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

const CASES = [
  // Longer than the limit: it stops after MAX_STEPS_WITHOUT_EXPERIENCE steps.
  { what: 'in this thread, 20 steps', sync: '', steps: 20, failed: MAX_STEPS_WITHOUT_EXPERIENCE },
  // Shorter than it: it fails at the end of the taskset instead of finishing with nothing trained.
  { what: 'in the worker thread, 2 steps', sync: 'synchronizer:\n  sync_offset: 1\n', steps: 2, failed: 2 },
];

for (const c of CASES)
  test(`every task failing fails the run with the first task's error (explorer ${c.what})`, async () => {
    const job = tinyJob(41);
    const name = `fail-${c.steps}`;
    // Prompts longer than max_prompt_tokens, and no truncation: every task fails, as the issue's did.
    const config = job.write(
      `${name}.yaml`,
      header(job, name).replace('max_prompt_tokens: 48', 'max_prompt_tokens: 2\n  enable_prompt_truncation: false') +
        topLevel(GRPO_STAGE)
          .replace('total_steps: 4', `total_steps: ${c.steps}`)
          .replace('eval_on_startup: true', 'eval_on_startup: false') +
        c.sync,
    );
    const logs: string[] = [];
    const r = await runJob(config, { backend: 'wasm', log: (level, m) => logs.push(`${level}: ${m}`) });
    assert.equal(r.status, 'failed');
    assert.match(
      r.error ?? '',
      c.steps > MAX_STEPS_WITHOUT_EXPERIENCE
        ? new RegExp(`no experience was made in ${MAX_STEPS_WITHOUT_EXPERIENCE} explorer steps in a row`)
        : /no experience was made in any of the 2 explorer steps, so nothing was trained/,
    );
    assert.match(
      r.error ?? '',
      /The first failed task's error: prompt has \d+ tokens, more than model\.max_prompt_tokens \(2\)/,
    );
    const failedSteps = logs.filter((l) => /^error: explorer step \d+ failed: all 4 tasks failed/.test(l));
    assert.equal(failedSteps.length, c.failed, logs.slice(-5).join('\n'));
    const jobDir = join(job.dir, 'checkpoints', 'tests', name);
    const record = JSON.parse(readFileSync(join(jobDir, 'state', 'run.json'), 'utf8')) as RunRecord;
    assert.equal(record.status, 'failed');
    assert.match(record.error ?? '', /prompt has \d+ tokens/);
  });
