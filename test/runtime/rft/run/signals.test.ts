/**
 * The runtime as a process (dist/cli.js run --events jsonl): SIGTERM stops within 5 s with a valid last checkpoint
 * and a `done: stopped` event; SIGTERM inside a long trainer step gives that step up at its next micro-batch and the
 * same command trains its batch once; SIGTERM in mode bench gives the eval in progress up at its next task; SIGKILL
 * at a random point, then the same command again, resumes from the last checkpoint and finishes the run with every
 * step done once.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadModel } from '../../../../runtime/engine/lm/checkpoint';
import type { RunRecord, RuntimeEvent } from '../../../../runtime/protocol';
import { GRPO_STAGE, grpoConfig, header, saveTinyModel, sftStage, tinyJob, topLevel } from './helpers';
import { killAll, start } from './cli-process';
import { killPoint } from '../../../helpers/kill-point';

const trainerSteps = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === 'trainer' ? [e.step] : []));

before(async () => {
  await initBackend({ prefer: 'wasm' });
});
after(killAll);

/**
 * An SFT job of two steps whose second is long: a 2-layer, 128-wide model, 32 rows per step, one row per micro-batch,
 * step 1 on short demonstrations and step 2 on ~100-token prompts and responses (about 0.6 s on an idle machine here).
 */
function longSecondStep(): { config: string; jobDir: string; lengths: [number[], number[]] } {
  const job = tinyJob(12);
  saveTinyModel(job.modelDir, 12, { layers: 2, hidden: 128, maxPositions: 256 });
  const short = Array.from({ length: 32 }, (_, i) => ({ question: `${i % 10}+1`, answer: String((i % 10) + 1) }));
  const long = Array.from({ length: 32 }, (_, i) => ({
    question: `${'1+2+3+4+5+6+7+8+9 '.repeat(5)}${i}`,
    answer: `${'the sum is forty five '.repeat(5)}${i}`,
  }));
  writeFileSync(join(job.dir, 'data', 'long.jsonl'), [...short, ...long].map((r) => JSON.stringify(r) + '\n').join(''));
  const config = job.write(
    'long.yaml',
    header(job, 'long')
      .replace('max_prompt_tokens: 48', 'max_prompt_tokens: 112')
      .replace('max_response_tokens: 8', 'max_response_tokens: 128')
      .replace('max_model_len: 64', 'max_model_len: 240') +
      topLevel(sftStage('long', { steps: 2, batch: 32, saveInterval: 1 }))
        .replace(/^ *- stage_name: long\n/m, '')
        .replace('path: data/sft.jsonl', 'path: data/long.jsonl') +
      // One row per forward/backward (veRL's ppo_micro_batch_size_per_gpu): the boundaries a stop is noticed at.
      '  trainer_config:\n    actor_rollout_ref:\n      actor:\n        ppo_micro_batch_size_per_gpu: 1\n',
  );
  const answers = (rows: { answer: string }[]): number[] => rows.map((r) => r.answer.length);
  return { config, jobDir: join(job.dir, 'checkpoints', 'tests', 'long'), lengths: [answers(short), answers(long)] };
}

/** A train-mode run's record (state/run-<mode>.json). */
const trainRecord = (jobDir: string): RunRecord =>
  JSON.parse(readFileSync(join(jobDir, 'state', 'run-train.json'), 'utf8')) as RunRecord;
/** metrics.jsonl's rows as `<role> <step>`. */
const metricsRows = (jobDir: string): string[] =>
  readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { role: string; step: number })
    .map((r) => `${r.role} ${r.step}`);
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('stopping and resuming', () => {
  test('SIGTERM stops within 5 s, emits done: stopped, and leaves the last checkpoint loadable', async () => {
    const job = tinyJob(6);
    const run = start(grpoConfig(job, 'term', 200));
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

  test('SIGTERM inside a long trainer step gives the step up at once: stopped on the last checkpoint, and the same command trains that batch once', async () => {
    const { config, jobDir, lengths } = longSecondStep();
    const first = start(config);
    // Step 2 starts right after checkpoint 1 is written: 150 ms later the signal lands inside it, on an idle machine
    // too (a signal that came at once could meet the loop's pause between steps, which noticed it before stop points;
    // one half a second later met an idle machine's checkpoint 2).
    await first.waitFor((e) => e.type === 'checkpoint' && e.step === 1);
    await new Promise((r) => setTimeout(r, 150));
    const sent = Date.now();
    first.kill('SIGTERM');
    const { code, at } = await first.exit;
    assert.equal(code, 130, first.stderr().slice(-2000));
    assert.deepEqual(first.events.at(-1), { type: 'done', status: 'stopped' });
    assert.equal(trainRecord(jobDir).status, 'stopped');
    assert.equal(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8').trim(), '1');
    assert.ok(!existsSync(join(jobDir, 'global_step_2')), 'no checkpoint of the step given up');
    assert.deepEqual(metricsRows(jobDir), ['trainer 1'], 'no row of the step given up');

    const second = start(config);
    assert.equal((await second.exit).code, 0, second.stderr().slice(-2000));
    assert.deepEqual(second.events.at(-1), { type: 'done', status: 'finished' });
    assert.deepEqual(trainerSteps(second.events), [2], 'the second run trains step 2 only');
    assert.deepEqual(metricsRows(jobDir), ['trainer 1', 'trainer 2']);
    const step = (n: number): Record<string, number> => {
      const e = [...first.events, ...second.events].find(
        (x) => x.type === 'metrics' && x.role === 'trainer' && x.step === n,
      );
      assert.ok(e?.type === 'metrics', `trainer step ${n}'s metrics`);
      return e.values;
    };
    // Each step trained its own 32 rows: step 1 the short ones, step 2 (resumed) the long ones; each response is its
    // characters plus the same few template tokens.
    const extra = step(1)['response_length/mean'] - mean(lengths[0]);
    assert.ok([0, 1, 2, 3].includes(extra), `step 1 trained the short rows (${step(1)['response_length/mean']})`);
    assert.equal(step(2)['response_length/mean'], mean(lengths[1]) + extra, 'step 2 trained the long rows');
    // Stopping took a micro-batch, not the rest of the step (which before stop points ran to its end and was
    // checkpointed): under 5 s, and under the step's own time (its time/train_step, under the same load).
    const stopMs = at - sent;
    const stepMs = step(2)['time/train_step'] * 1000;
    assert.ok(stopMs < Math.min(5000, stepMs), `stopped ${stopMs} ms after SIGTERM; step 2 takes ${stepMs} ms`);
  });

  test('mode bench: SIGTERM during an eval taskset stops it at its next task, and nothing of that eval is written', async () => {
    // 30,000 eval tasks: several seconds of evaluation on an idle machine even with a step's tasks sampled together
    // (runner_per_model 8), so the signal a second in lands inside it.
    const job = tinyJob(13);
    const rows = Array.from(
      { length: 30000 },
      (_, i) => `{"question": "${i % 10}+${i % 7}", "answer": "${(i % 10) + (i % 7)}"}\n`,
    );
    writeFileSync(join(job.dir, 'data', 'many.jsonl'), rows.join(''));
    const config = job.write(
      'bench.yaml',
      header(job, 'bench') +
        'mode: bench\nalgorithm:\n  algorithm_type: grpo\nbuffer:\n  explorer_input:\n    eval_tasksets:\n' +
        '      - {name: many, storage_type: file, path: data/many.jsonl, format: {prompt_key: question, response_key: answer}}\n' +
        '    default_workflow_type: simple_workflow\n    default_reward_fn_type: math_boxed_reward\n' +
        'explorer:\n  eval_on_startup: true\n',
    );
    const run = start(config);
    // The stage starts, the tiny model loads in milliseconds, then the eval: a second in, the signal lands inside it.
    await run.waitFor((e) => e.type === 'stage');
    await new Promise((r) => setTimeout(r, 1000));
    const sent = Date.now();
    run.kill('SIGTERM');
    const { code, at } = await run.exit;
    assert.equal(code, 130, run.stderr().slice(-2000));
    assert.deepEqual(run.events.at(-1), { type: 'done', status: 'stopped' });
    assert.deepEqual(
      run.events.filter((e) => e.type === 'metrics'),
      [],
      'no bench row for the eval given up',
    );
    // Every task ended with the eval: none ran on into the freed model (a warning or error each).
    assert.deepEqual(
      run.events.filter((e) => e.type === 'log' && e.level !== 'info'),
      [],
    );
    assert.ok(at - sent < 2000, `stopped ${at - sent} ms after SIGTERM`);
  });

  test('SIGKILL at a random point, then the same command, finishes every trainer step exactly once after the last checkpoint', async () => {
    const job = tinyJob(7);
    const config = grpoConfig(job, 'kill', 10);
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
