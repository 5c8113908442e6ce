/**
 * `data_processor.experience_pipeline.save_input` (on by default) keeps every explorer step's experiences as they
 * reach the pipeline, before its operators and the group advantage, where `input_save_path` says: by default
 * Trinity's `sqlite:///<buffer.cache_dir>/explorer_output.db`, table `pipeline_input` (trinity/buffer/pipelines/
 * experience_pipeline.py, f3c8dec). Real runs, the database read back with better-sqlite3.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { checkConfig } from '../../../../runtime/config/check-config';
import { initBackend } from '../../../../runtime/engine/backend';
import { recordToExperience } from '../../../../runtime/rft/buffer';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

/** One GRPO step of 4 tasks × 4 rollouts, no evals; `pipeline` replaces the data_processor section. */
function oneStep(pipeline = ''): string {
  return (
    topLevel(GRPO_STAGE)
      .replace('total_steps: 4', 'total_steps: 1')
      .replace('eval_on_startup: true', 'eval_on_startup: false')
      .replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '') + pipeline
  );
}

describe('the experience pipeline keeps its input (save_input)', () => {
  test("by default: every experience of the step, before the group advantage, in explorer_output.db's pipeline_input", async () => {
    const job = tinyJob(41);
    const file = job.write('default.yaml', header(job, 'keep') + oneStep());
    const checked = await checkConfig(readFileSync(file, 'utf8'), { datasets: false });
    const filled = checked.runs[0].resolved.data_processor.experience_pipeline?.input_save_path;
    const db = join(job.dir, 'checkpoints/tests/keep/buffer/explorer_output.db');
    assert.equal(filled, `sqlite:///${db}`);
    const r = await runJob(file, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const conn = new Database(db, { readonly: true });
    try {
      const rows = conn
        .prepare('SELECT task_id, model_version, reward, experience, advantages FROM pipeline_input')
        .all() as {
        task_id: string;
        model_version: number;
        reward: number;
        experience: string;
        advantages: Buffer | null;
      }[];
      assert.equal(rows.length, 16, '4 tasks × repeat_times 4');
      assert.equal(new Set(rows.map((x) => x.task_id)).size, 4);
      assert.ok(
        rows.every((x) => x.model_version === 0),
        'explored with the initial weights',
      );
      // The group advantage runs after the input is kept: no row carries one.
      assert.ok(rows.every((x) => x.advantages === null));
      for (const x of rows) {
        const e = recordToExperience(JSON.parse(x.experience));
        assert.ok(e.tokens.length > e.promptLength, 'a prompt and its response');
        assert.equal(e.reward, x.reward);
      }
    } finally {
      conn.close();
    }
  });

  test('a .jsonl input_save_path gets JSON lines; save_input: false keeps nothing', async () => {
    const job = tinyJob(42);
    const out = join(job.dir, 'kept/input.jsonl');
    const pipeline = (body: string) => `data_processor:\n  experience_pipeline:\n${body}`;
    const r = await runJob(
      job.write('jsonl.yaml', header(job, 'jsonl') + oneStep(pipeline(`    input_save_path: ${out}\n`))),
      { backend: 'wasm' },
    );
    assert.equal(r.status, 'finished', r.error);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines.length, 16);
    assert.ok(lines.every((l) => recordToExperience(JSON.parse(l)).advantages === undefined));
    assert.ok(!existsSync(join(job.dir, 'checkpoints/tests/jsonl/buffer/explorer_output.db')));

    const off = await runJob(job.write('off.yaml', header(job, 'off') + oneStep(pipeline('    save_input: false\n'))), {
      backend: 'wasm',
    });
    assert.equal(off.status, 'finished', off.error);
    assert.ok(!existsSync(join(job.dir, 'checkpoints/tests/off/buffer/explorer_output.db')));
  });

  test('a path the pipeline cannot open: TRN320 at the key in the check, and the run stopped before any work with the same words', async () => {
    const job = tinyJob(43);
    const yaml =
      header(job, 'txt') + oneStep('data_processor:\n  experience_pipeline:\n    input_save_path: kept/input.txt\n');
    const checked = await checkConfig(yaml, { datasets: false });
    const errors = checked.diagnostics.filter((d) => d.severity === 'error');
    assert.deepEqual(
      errors.map((d) => [d.code, yaml.slice(d.range[0], d.range[1])]),
      [['TRN320', 'input_save_path']],
    );
    const r = await runJob(job.write('txt.yaml', yaml), { backend: 'wasm' });
    assert.equal(r.status, 'failed');
    assert.ok(r.error?.includes(errors[0].message), r.error);
    assert.ok(!existsSync(join(job.dir, 'checkpoints/tests/txt/buffer')), 'nothing written');
  });
});
