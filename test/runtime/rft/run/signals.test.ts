/**
 * The runtime as a process (dist/cli.js run --events jsonl): SIGTERM stops within 5 s with a valid last checkpoint
 * and a `done: stopped` event; SIGKILL at a random point, then the same command again, resumes from the last
 * checkpoint and finishes the run with every step done once.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadModel } from '../../../../runtime/engine/lm/checkpoint';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';
import { start } from './cli-process';
import { killPoint } from '../../../helpers/kill-point';

function longGrpo(job: TinyJob, name: string, steps: number): string {
  return job.write(
    `${name}.yaml`,
    header(job, name) +
      topLevel(GRPO_STAGE)
        .replace('total_steps: 4', `total_steps: ${steps}`)
        .replace('eval_interval: 2', 'eval_interval: 100'),
  );
}

const trainerSteps = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === 'trainer' ? [e.step] : []));

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('stopping and resuming', () => {
  test('SIGTERM stops within 5 s, emits done: stopped, and leaves the last checkpoint loadable', async () => {
    const job = tinyJob(6);
    const run = start(longGrpo(job, 'term', 200));
    await run.waitFor((e) => e.type === 'checkpoint');
    const sent = Date.now();
    run.kill('SIGTERM');
    const { code, at } = await run.exit;
    assert.ok(at - sent < 5000, `stopped after ${at - sent} ms`);
    assert.equal(code, 130);
    assert.deepEqual(run.events[run.events.length - 1], { type: 'done', status: 'stopped' });
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'term');
    const step = Number(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));
    assert.ok(step >= 2);
    loadModel(join(jobDir, `global_step_${step}`)).dispose();
  });

  test('SIGKILL at a random point, then the same command, finishes every trainer step exactly once after the last checkpoint', async () => {
    const job = tinyJob(7);
    const config = longGrpo(job, 'kill', 10);
    const first = start(config);
    // Kill somewhere between the first checkpoint (step 2) and the end.
    const killAfter = killPoint('signals: SIGKILL the trainer', 3, 7);
    await first.waitFor((e) => e.type === 'metrics' && e.role === 'trainer' && e.step >= killAfter);
    first.kill('SIGKILL');
    await first.exit;
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'kill');
    const saved = Number(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));
    // The child may finish (and checkpoint) one more step between reporting step killAfter and receiving the kill.
    const lastReported = Math.max(...trainerSteps(first.events));
    assert.ok(
      saved >= 2 && saved <= lastReported + 1,
      `checkpoint ${saved}, last step reported ${lastReported} (kill after ${killAfter})`,
    );

    const second = start(config);
    const { code } = await second.exit;
    assert.equal(code, 0);
    assert.deepEqual(second.events[second.events.length - 1], { type: 'done', status: 'finished' });
    const resumedSteps = trainerSteps(second.events);
    assert.deepEqual(
      resumedSteps,
      Array.from({ length: 10 - saved }, (_, i) => saved + 1 + i),
      'the second run trains from the checkpointed step to the end',
    );
    assert.ok(existsSync(join(jobDir, 'global_step_10', 'model.safetensors')));
    loadModel(join(jobDir, 'global_step_10')).dispose();
  });

  test('both mode on an SQL experience buffer: SIGKILL at a random point, then the same command; every explorer step is in the table once and every row trained on once', async () => {
    const job = tinyJob(11);
    const steps = 8;
    const body = topLevel(GRPO_STAGE)
      .replace('total_steps: 4', `total_steps: ${steps}`)
      .replace('eval_interval: 2', 'eval_interval: 100')
      .replace('save_interval: 2', 'save_interval: 1')
      .replace(
        '    default_reward_fn_type: math_boxed_reward',
        '    default_reward_fn_type: math_boxed_reward\n  trainer_input:\n    experience_buffer:\n      name: exps\n      storage_type: sql\n      path: sqlite:///buffer.db',
      );
    const config = job.write('sql.yaml', header(job, 'sql') + body + 'synchronizer:\n  sync_offset: 1\n');
    const first = start(config);
    const killAfter = killPoint('signals: SIGKILL during the SQL buffer run', 2, 6);
    await first.waitFor((e) => e.type === 'metrics' && e.role === 'trainer' && e.step >= killAfter);
    first.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'sql');
    const saved = Number(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));

    const second = start(config);
    const { code } = await second.exit;
    assert.equal(code, 0, second.stderr().slice(-2000));
    assert.deepEqual(
      trainerSteps(second.events),
      Array.from({ length: steps - saved }, (_, i) => saved + 1 + i),
      'the second run trains from the checkpoint to the end',
    );
    const db = new Database(join(job.dir, 'buffer.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          `SELECT json_extract(experience, '$.eid.batch') AS batch, COUNT(*) AS n, MIN(consumed) AS lo, MAX(consumed) AS hi FROM exps GROUP BY batch ORDER BY batch`,
        )
        .all() as { batch: number; n: number; lo: number; hi: number }[];
      assert.deepEqual(
        rows.map((r) => [r.batch, r.n, r.lo, r.hi]),
        Array.from({ length: steps }, (_, i) => [i + 1, 16, 1, 1]),
        `each explorer step once, each row read once (killed after trainer step ${killAfter}, checkpoint ${saved})`,
      );
    } finally {
      db.close();
    }
    loadModel(join(jobDir, `global_step_${steps}`)).dispose();
  });
});
