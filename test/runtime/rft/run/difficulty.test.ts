/**
 * A difficulty_based taskset end to end, with `pass_rate_calculator` feeding each step's per-task mean rewards back to
 * the selector: in both mode (explorer in this thread and in its worker) and in explore mode. The features make the
 * second batch certain whatever the tiny model answers: rows 0–3 have anchors (0, 1), rows 4–7 (0.45, 0.45); with
 * target 0.45 (m 16, λ = ρ = 0.2), after step 1 rows 4–7 predict 2.44 / 5.2 ≈ 0.469 while a row run at pass rate v
 * predicts (1 + 16v) / 18, at best 0.5 (v = 1/2) — so step 2 takes rows 4–7, where without feedback it would take
 * rows 0–3 again (every belief still Beta(1, 1), ties to the lower index).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { header, tinyJob } from './helpers';

const QUESTIONS = ['0+1', '0+4', '0+7', '1+1', '1+4', '1+7', '2+1', '2+4'];

function job(
  name: string,
  mode: 'both' | 'explore',
  feedback = true,
  release = 'main',
): { config: string; jobDir: string } {
  const j = tinyJob(4);
  const rows = QUESTIONS.map((q, i) => {
    const [a, b] = q.split('+').map(Number);
    return { question: q, answer: String(a + b), weak: i < 4 ? 0 : 0.45, strong: i < 4 ? 1 : 0.45 };
  });
  writeFileSync(join(j.dir, 'data', 'graded.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const text = `${header(j, name).replace('# trinity-version: main', `# trinity-version: ${release}`)}mode: ${mode}
algorithm:
  algorithm_type: grpo
  repeat_times: 2
  optimizer:
    lr: 1e-3
${feedback ? 'data_processor:\n  experience_pipeline:\n    operators:\n      - name: pass_rate_calculator\n' : ''}buffer:
  batch_size: 4
  total_steps: 2
  explorer_input:
    taskset:
      name: graded
      storage_type: file
      path: data/graded.jsonl
      format: {prompt_key: question, response_key: answer}
      ${release === 'main' ? 'data_selector' : 'task_selector'}:
        selector_type: difficulty_based
        feature_keys: [weak, strong]
        kwargs: {target_reward: 0.45, tau: 0}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
${mode === 'explore' ? '  trainer_input:\n    experience_buffer:\n      name: exps\n      storage_type: sql\n      path: sqlite:///buffer.db\n' : ''}synchronizer:
  sync_method: ${mode === 'explore' ? 'checkpoint' : 'memory'}
  sync_timeout: 1
`;
  return { config: j.write(`${name}.yaml`, text), jobDir: join(j.dir, 'checkpoints', 'tests', name) };
}

/** The questions each explorer step ran (the rollout samples hold one run of each task here). */
function questionsByStep(jobDir: string): string[][] {
  return readFileSync(join(jobDir, 'monitor', 'rollouts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { samples: { prompt: string }[] })
    .map((l) => QUESTIONS.filter((q) => l.samples.some((s) => s.prompt.includes(q))));
}

function explorerLines(jobDir: string): Record<string, number>[] {
  return readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { role: string; values: Record<string, number> })
    .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
    .map((l) => l.values);
}

async function run(
  name: string,
  mode: 'both' | 'explore',
  opts: { worker?: boolean; feedback?: boolean; release?: string } = {},
): Promise<{ config: string; jobDir: string }> {
  const j = job(name, mode, opts.feedback ?? true, opts.release);
  const saved = process.env.TRINITY_WORKBENCH_EXPLORER_THREAD;
  process.env.TRINITY_WORKBENCH_EXPLORER_THREAD = opts.worker ? '1' : '0';
  try {
    const r = await runJob(j.config, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
  } finally {
    if (saved === undefined) delete process.env.TRINITY_WORKBENCH_EXPLORER_THREAD;
    else process.env.TRINITY_WORKBENCH_EXPLORER_THREAD = saved;
  }
  return j;
}

const FIRST = QUESTIONS.slice(0, 4);
const SECOND = QUESTIONS.slice(4);

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('difficulty_based taskset with pass_rate_calculator', () => {
  test('both mode, explorer in this thread: feedback after step 1 moves step 2 to rows 4–7; selection/ metrics logged and predicted', async () => {
    const { config, jobDir } = await run('difficulty-both', 'both');
    assert.deepEqual(questionsByStep(jobDir), [FIRST, SECOND]);
    const lines = explorerLines(jobDir);
    assert.equal(lines.length, 2);
    const checked = await checkConfig(readFileSync(config, 'utf8'));
    const predicted = new Set(metricNames(checked.runs[0].resolved, checked.loaded.release).explorer);
    for (const k of ['valid_ratio', 'strict_valid_ratio', '<1_ratio', '>0_ratio', '<15_16_ratio', '>1_16_ratio'].map(
      (s) => `experience_pipeline/selection/${s}`,
    )) {
      for (const l of lines) assert.ok(l[k] >= 0 && l[k] <= 1, `${k} = ${l[k]}`);
      assert.ok(predicted.has(k), `metric-names.ts predicts ${k}`);
    }
  });

  test('both mode, explorer in its worker thread', async () => {
    const { jobDir } = await run('difficulty-worker', 'both', { worker: true });
    assert.deepEqual(questionsByStep(jobDir), [FIRST, SECOND]);
  });

  test('explore mode', async () => {
    const { jobDir } = await run('difficulty-explore', 'explore');
    assert.deepEqual(questionsByStep(jobDir), [FIRST, SECOND]);
  });

  // Read in order (no selector), step 2 would take rows 4–7 too: these show the selector is the one choosing.
  test('without pass_rate_calculator nothing comes back, and step 2 takes rows 0–3 again', async () => {
    const { jobDir } = await run('difficulty-static', 'both', { feedback: false });
    assert.deepEqual(questionsByStep(jobDir), [FIRST, FIRST]);
  });

  test('v0.5.0: the selector written as task_selector', async () => {
    assert.deepEqual(questionsByStep((await run('difficulty-v050', 'both', { release: 'v0.5.0' })).jobDir), [
      FIRST,
      SECOND,
    ]);
    assert.deepEqual(
      questionsByStep((await run('difficulty-v050-static', 'both', { release: 'v0.5.0', feedback: false })).jobDir),
      [FIRST, FIRST],
    );
  });
});
