/**
 * With `data_processor.task_pipeline` set and its `output` unset, Trinity's check step makes the pipeline write into
 * the first taskset (modes other than train) or, in train mode with sft/dpo, into the experience buffer; up to
 * v0.3.1 into the taskset when it has a path, else an SFT/DPO buffer with one. That path is created at launch: it
 * gets no TRN304 "does not exist" — and one that exists is refused (TRN257), as Trinity refuses to overwrite it.
 * The two Trinity examples that rely on it are checked in every release that has them.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { RELEASES, type Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import { corpusConfigs, TRINITY_ENV } from '../../helpers/corpus';

const EXAMPLES = ['examples/grpo_gsm8k_task_pipeline/gsm8k.yaml', 'examples/dpo_human_in_the_loop/dpo.yaml'];

async function check(text: string, release: Release, baseDir: string) {
  const r = await checkConfig(text, {
    release,
    env: TRINITY_ENV,
    datasets: false,
    host: { exists: existsSync, baseDirs: [baseDir] },
  });
  return r.diagnostics.map((d) => ({
    code: d.code,
    severity: d.severity,
    line: lineColumn(r.loaded.source, d.range[0]).line,
    message: d.message,
  }));
}

describe('task pipeline output', () => {
  for (const file of EXAMPLES) {
    const releases = RELEASES.filter((r) => corpusConfigs(r).some((c) => c.rel === file));
    test(`${file}: no TRN304 on the pipeline's output path (${releases.join(', ')})`, async () => {
      assert.ok(releases.length >= 3, `in ${releases.length} releases`);
      for (const release of releases) {
        const abs = corpusConfigs(release).find((c) => c.rel === file)!.abs;
        const ds = await check(readFileSync(abs, 'utf8'), release, dirname(abs));
        assert.deepEqual(
          ds.filter((d) => d.severity === 'error'),
          [],
          `${release}`,
        );
      }
    });
  }

  const GRPO = (path: string) => `mode: both
algorithm: {algorithm_type: grpo, repeat_times: 4}
model: {model_path: Qwen/Qwen2.5-0.5B-Instruct}
cluster: {node_num: 1, gpu_per_node: 2}
buffer:
  batch_size: 4
  total_epochs: 1
  explorer_input:
    taskset:
      name: t
      storage_type: file
      path: ${path}
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: math_workflow
data_processor:
  task_pipeline:
    inputs: [./raw.jsonl]
    operators:
      - name: llm_difficulty_score_filter
`;

  for (const release of ['v0.3.1', 'v0.3.2', 'main'] as const) {
    test(`${release}: the taskset the pipeline writes may not exist; one that exists is refused`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'twb-tp-'));
      const absent = await check(GRPO(join(dir, 'out.jsonl')), release, dir);
      assert.deepEqual(
        absent.filter((d) => d.code === 'TRN304' || d.code === 'TRN257'),
        [],
      );
      writeFileSync(join(dir, 'out.jsonl'), '{}\n');
      const present = await check(GRPO(join(dir, 'out.jsonl')), release, dir);
      const refused = present.filter((d) => d.code === 'TRN257');
      assert.equal(refused.length, 1, JSON.stringify(present));
      assert.equal(refused[0].line, 12);
      assert.match(refused[0].message, /already exists/);
      // Without the pipeline, a missing taskset is still TRN304 at its line.
      const plain = await check(GRPO(join(dir, 'missing.jsonl')).replace(/data_processor:[\s\S]*$/, ''), release, dir);
      assert.deepEqual(
        plain.filter((d) => d.code === 'TRN304').map((d) => d.line),
        [12],
      );
    });
  }

  test('train mode with sft: the experience buffer the pipeline writes may not exist', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twb-tp-'));
    const text = `mode: train
algorithm: {algorithm_type: sft}
model: {model_path: Qwen/Qwen2.5-0.5B-Instruct}
cluster: {node_num: 1, gpu_per_node: 2}
buffer:
  total_epochs: 1
  train_batch_size: 4
  trainer_input:
    experience_buffer:
      name: sft
      storage_type: file
      path: ${join(dir, 'sft.jsonl')}
data_processor:
  task_pipeline:
    inputs: [./raw.jsonl]
    operators:
      - name: llm_quality_filter
`;
    const ds = await check(text, 'main', dir);
    assert.deepEqual(
      ds.filter((d) => d.code === 'TRN304' || d.code === 'TRN257'),
      [],
    );
    const plain = await check(text.replace(/data_processor:[\s\S]*$/, ''), 'main', dir);
    assert.deepEqual(
      plain.filter((d) => d.code === 'TRN304').map((d) => d.line),
      [12],
    );
  });
});
