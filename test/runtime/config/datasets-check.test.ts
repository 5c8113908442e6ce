/**
 * Local datasets named by a config: missing paths, and keys the config reads that the data does not have,
 * checked against Trinity's real sample datasets (jsonl and parquet) and our own fixtures.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkConfig } from '../../../runtime/config/check-config';
import { corpusData, corpusDir, TRINITY_ENV } from '../../helpers/corpus';
import { tasksetConfig } from '../../helpers/taskset-config';
import { readFileSync } from 'node:fs';

const host = (baseDirs: string[]) => ({ baseDirs, exists: existsSync });
const line = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

function taskConfig(path: string, promptKey: string, responseKey: string, split = 'train'): string {
  return tasksetConfig(path, { prompt_key: promptKey, response_key: responseKey }, { split });
}

describe('taskset datasets', () => {
  test('keys present in the data: no findings', async () => {
    const text = taskConfig(corpusData('gsm8k'), 'question', 'answer');
    const r = await checkConfig(text, { release: 'main', host: host(['/']) });
    assert.deepEqual(
      r.diagnostics.filter((d) => d.code.startsWith('TRN30')),
      [],
    );
  });

  test('a prompt_key the data lacks is an error at the key, listing the columns', async () => {
    const text = taskConfig(corpusData('gsm8k'), 'prompt', 'answer');
    const r = await checkConfig(text, { release: 'main', host: host(['/']) });
    const d = r.diagnostics.find((x) => x.code === 'TRN305');
    assert.ok(d, JSON.stringify(r.diagnostics));
    assert.equal(d.severity, 'error');
    assert.equal(line(text, d.range[0]), 11);
    assert.match(
      d.message,
      /`buffer\.explorer_input\.taskset\.format\.prompt_key` is `prompt`, but `gsm8k\/train\.jsonl` has no such key.*`question`, `answer`/,
    );
  });

  test("Trinity's FrozenLake example: its rows of seed/size/p need no prompt column (the workflow reads none)", async () => {
    const data = mkdtempSync(join(tmpdir(), 'twb-frozen-lake-data-'));
    // The columns Trinity's get_frozen_lake_data.py writes: a map per row, no prompt or answer.
    const rows = [0, 1, 2].map((i) => JSON.stringify({ seed: 100 + i, size: 4, p: 0.8, index: i, uid: `frozen-${i}` }));
    for (const split of ['train', 'test']) writeFileSync(join(data, `${split}.jsonl`), rows.join('\n') + '\n');
    const text = readFileSync(
      join(corpusDir(), 'trinity-configs', 'main', 'examples', 'grpo_frozen_lake', 'frozen_lake.yaml'),
      'utf8',
    );
    const env = { ...TRINITY_ENV, TRINITY_TASKSET_PATH: data };
    const r = await checkConfig(text, { release: 'main', env, host: host(['/']) });
    assert.deepEqual(
      r.diagnostics.filter((d) => d.code === 'TRN305'),
      [],
    );
    // A workflow that reads the prompt column still gets the error on the same data.
    const simple = text.replace(
      "default_workflow_type: 'frozen_lake_workflow'",
      'default_workflow_type: simple_workflow',
    );
    const s = await checkConfig(simple, { release: 'main', env, host: host(['/']) });
    const errors = s.diagnostics.filter((d) => d.code === 'TRN305' && d.severity === 'error');
    assert.equal(errors.length, 2, 'the train and the eval taskset');
    assert.match(errors[0].message, /prompt_key` is `prompt`.*`seed`, `size`, `p`, `index`, `uid`/);
    // A plugin's workflow may read any columns: the same finding is a warning.
    const plugin = text.replace("default_workflow_type: 'frozen_lake_workflow'", 'default_workflow_type: lake_agent');
    const p = await checkConfig(plugin, {
      release: 'main',
      env,
      host: { ...host(['/']), plugins: { workflow: ['lake_agent'] } },
    });
    const found = p.diagnostics.filter((d) => d.code === 'TRN305' && d.message.includes('prompt_key'));
    assert.deepEqual(
      found.map((d) => d.severity),
      ['warning', 'warning'],
    );
    assert.match(found[0].message, /empty prompt if `lake_agent` reads it/);
  });

  test('tool_call_workflow rows (raw_system/tools/conversations/answer) need no prompt or response column', async () => {
    const data = mkdtempSync(join(tmpdir(), 'twb-toolace-data-'));
    const row = { raw_system: 'sys', tools: '[]', conversations: [{ from: 'user', value: 'hi' }], answer: '[]' };
    writeFileSync(join(data, 'train.jsonl'), JSON.stringify(row) + '\n');
    const text = taskConfig(data, 'prompt', 'response').replace('math_workflow', 'tool_call_workflow');
    const r = await checkConfig(text, { release: 'main', host: host(['/']) });
    assert.deepEqual(
      r.diagnostics.filter((d) => d.code === 'TRN305'),
      [],
    );
    const math = await checkConfig(taskConfig(data, 'prompt', 'response'), { release: 'main', host: host(['/']) });
    assert.ok(math.diagnostics.some((d) => d.code === 'TRN305' && d.severity === 'error'));
  });

  test('a missing response_key is a warning (rewards would see no ground truth)', async () => {
    const r = await checkConfig(taskConfig(corpusData('countdown'), 'question', 'solution'), {
      release: 'main',
      host: host(['/']),
    });
    const d = r.diagnostics.find((x) => x.code === 'TRN305');
    assert.ok(d, JSON.stringify(r.diagnostics.map((x) => x.message)));
    assert.equal(d.severity, 'warning');
  });

  test('parquet columns are read from the file', async () => {
    const r = await checkConfig(taskConfig(corpusData('geometry', 'train.parquet'), 'no_such_column', 'answer'), {
      release: 'main',
      host: host(['/']),
    });
    const d = r.diagnostics.find((x) => x.code === 'TRN305' && x.message.includes('prompt_key'));
    assert.ok(d, JSON.stringify(r.diagnostics.map((x) => x.message)));
    assert.match(d.message, /train\.parquet/);
  });

  test('a local path that does not exist is an error; a hub id is not checked', async () => {
    const missing = await checkConfig(taskConfig('./data/nowhere.jsonl', 'q', 'a'), {
      release: 'main',
      host: host([tmpdir()]),
    });
    const d = missing.diagnostics.find((x) => x.code === 'TRN304');
    assert.ok(d);
    assert.match(d.message, /`\.\/data\/nowhere\.jsonl` does not exist \(looked relative to/);
    const hub = await checkConfig(taskConfig('openai/gsm8k', 'q', 'a'), { release: 'main', host: host([tmpdir()]) });
    assert.ok(!hub.diagnostics.some((x) => x.code === 'TRN304' || x.code === 'TRN305'));
  });

  test('relative paths resolve against each base directory in turn (config dir, then working dir)', async () => {
    const r = await checkConfig(taskConfig('gsm8k', 'question', 'answer'), {
      release: 'main',
      host: host(['/nonexistent', corpusData()]),
    });
    assert.ok(!r.diagnostics.some((x) => x.code.startsWith('TRN30')));
  });

  test('a malformed jsonl line is reported with its line number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-ds-'));
    writeFileSync(join(dir, 'train.jsonl'), '{"q": 1, "a": 2}\n{"q": oops}\n');
    const r = await checkConfig(taskConfig(dir, 'q', 'a'), { release: 'main', host: host(['/']) });
    const d = r.diagnostics.find((x) => x.code === 'TRN306');
    assert.ok(d);
    assert.match(d.message, /line 2/);
  });
});

describe('SFT and DPO datasets in train mode', () => {
  const sft = (path: string, messagesKey: string) =>
    `mode: train\nalgorithm:\n  algorithm_type: sft\nmodel:\n  model_path: m\n  max_model_len: 512\nbuffer:\n  train_batch_size: 4\n  trainer_input:\n    experience_buffer:\n      storage_type: file\n      path: ${path}\n      format:\n        messages_key: ${messagesKey}\ntrainer:\n  save_interval: 5\n`;

  test('SFT messages_key must be in the data (Trinity raises a KeyError on the first batch)', async () => {
    const ok = await checkConfig(sft(corpusData('sft_with_tools'), 'messages'), { release: 'main', host: host(['/']) });
    assert.ok(!ok.diagnostics.some((x) => x.code === 'TRN305'), JSON.stringify(ok.diagnostics.map((x) => x.message)));
    const bad = await checkConfig(sft(corpusData('sft_with_tools'), 'message'), { release: 'main', host: host(['/']) });
    const d = bad.diagnostics.find((x) => x.code === 'TRN305');
    assert.ok(d);
    assert.equal(d.severity, 'error');
    assert.match(d.message, /messages_key` is `message`.*KeyError/);
  });

  test('DPO chosen/rejected keys are checked (plaintext)', async () => {
    const text = `mode: train\nalgorithm:\n  algorithm_type: dpo\nmodel:\n  model_path: m\n  max_model_len: 512\nbuffer:\n  train_batch_size: 4\n  trainer_input:\n    experience_buffer:\n      storage_type: file\n      path: ${corpusData('human_like')}\n      format:\n        prompt_type: plaintext\n        prompt_key: prompt\n        chosen_key: chosen\n        rejected_key: not_there\nsynchronizer:\n  sync_method: checkpoint\ntrainer:\n  save_interval: 5\n`;
    const r = await checkConfig(text, { release: 'main', host: host(['/']) });
    const found = r.diagnostics.filter((x) => x.code === 'TRN305');
    assert.deepEqual(
      found.map((x) => line(text, x.range[0])),
      [17],
      JSON.stringify(r.diagnostics.map((x) => x.message)),
    );
  });
});

test('SFT in train mode reading from a queue (the v0.4.0+ default) is an error', async () => {
  const text =
    'mode: train\nalgorithm:\n  algorithm_type: sft\nmodel:\n  model_path: m\n  max_model_len: 64\nbuffer:\n  train_batch_size: 4\n  trainer_input:\n    experience_buffer:\n      path: data.jsonl\ntrainer:\n  save_interval: 5\n';
  const r = await checkConfig(text, { release: 'main', datasets: false });
  const d = r.diagnostics.find((x) => x.code === 'TRN311');
  assert.ok(d);
  assert.equal(line(text, d.range[0]), 10);
  assert.match(d.message, /queue` \(the default since v0\.4\.0\).*Set `storage_type: file`/);
  const v031 = await checkConfig(text, { release: 'v0.3.1', datasets: false });
  assert.ok(!v031.diagnostics.some((x) => x.code === 'TRN311'), 'before v0.4.0 the default was file');
});

test('an existing job directory with continue_from_checkpoint false is a rename warning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tw-job-'));
  const text = `project: p\nname: run1\ncheckpoint_root_dir: ${dir}\ncontinue_from_checkpoint: false\nmode: explore\nmodel:\n  model_path: m\n  max_model_len: 64\nbuffer:\n  explorer_input:\n    taskset:\n      path: openai/gsm8k\n`;
  const before = await checkConfig(text, { release: 'main', host: host([dir]) });
  assert.ok(!before.diagnostics.some((d) => d.code === 'TRN209'));
  mkdirSync(join(dir, 'p', 'run1'), { recursive: true });
  const after = await checkConfig(text, { release: 'main', host: host([dir]) });
  const d = after.diagnostics.find((x) => x.code === 'TRN209');
  assert.ok(d);
  assert.equal(line(text, d.range[0]), 4);
  assert.match(d.message, /renames this run to `run1_<timestamp>`/);
});
