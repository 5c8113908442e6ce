/** Tasksets → Tasks as Trinity's TaskFileReader / TaskFormatter, on our fixtures and on Trinity's own test data. */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  readTasks,
  taskBatchReader,
  taskScheduler,
  type ReadTasksResult,
  type TasksetInput,
} from '../../../../runtime/rft/data/tasks';
import type { ExperienceBufferConfig, TasksetConfig } from '../../../../runtime/config/types.generated';
import type { TrainDatasetInput } from '../../../../runtime/rft/data/train-data';
import { corpusData } from '../../../helpers/corpus';
import { rejectsDataError, scratchDir } from './helpers';

const FIX = path.resolve(__dirname, '../../../fixtures/rft-data');
const MATH: TasksetInput = {
  format: { prompt_key: 'question', response_key: 'answer' },
  default_workflow_type: 'math_workflow',
};

const scratch = scratchDir('rft-data-tasks-');
const write = scratch.write;

const rejects = rejectsDataError;

describe('readTasks: Task fields', () => {
  it("every row becomes a Task with the taskset settings, main's defaults filled in", async () => {
    const r = await readTasks(
      {
        ...MATH,
        path: 'tasks.jsonl',
        default_reward_fn_type: 'math_reward',
        workflow_args: { k: 1 },
        reward_fn_args: { r: 2 },
        rollout_args: { temperature: 0.7 },
      },
      { baseDir: FIX },
    );
    assert.equal(r.tasks.length, 5);
    assert.deepEqual(r.skipped, []);
    const t = r.tasks[1];
    assert.equal(t.tasksetName, 'taskset_0', 'unnamed tasksets are named as Trinity names them');
    assert.equal(t.index, 1);
    assert.deepEqual(t.raw, { question: 'What is 7 * 6?', answer: '42', level: 2 });
    assert.equal(t.taskDesc, 'What is 7 * 6?');
    assert.equal(t.truth, '42');
    assert.equal(t.workflow, 'math_workflow');
    assert.equal(t.rewardFn, 'math_reward');
    assert.deepEqual(t.workflowArgs, { k: 1 });
    assert.deepEqual(t.rewardFnArgs, { r: 2 });
    assert.deepEqual(t.rolloutArgs, {
      temperature: 0.7,
      top_p: null,
      top_k: -1,
      logprobs: null,
      max_tokens: null,
      n: 1,
    });
    assert.equal(t.repeatTimes, 1);
    assert.equal(t.isEval, false);
    assert.equal(t.format.prompt_key, 'question');
    assert.equal(t.format.messages_key, 'message', 'FormatConfig defaults at main');
    assert.equal(t.format.reply_prefix, null);
    assert.equal(t.source.line, 2);
    assert.equal(r.taskset.dataSelector.selector_type, 'sequential');
  });

  it('the same tasks from JSON, CSV, parquet and an HF directory (split train, 2 shards)', async () => {
    const q = async (p: string) =>
      (await readTasks({ ...MATH, path: p }, { baseDir: FIX })).tasks.map((t) => t.taskDesc);
    const expected = ['What is 2 + 3?', 'What is 7 * 6?', 'What is 10 - 4?', 'What is 9 / 3?', 'What is 2 ** 5?'];
    assert.deepEqual(await q('tasks.json'), expected);
    assert.deepEqual(await q('tasks.parquet'), expected);
    assert.deepEqual(await q('hf_parquet'), expected);
    const csv = await readTasks(
      { ...MATH, path: 'tasks.csv', format: { prompt_key: 'question', response_key: 'level' } },
      { baseDir: FIX, onInvalidRow: 'skip' },
    );
    assert.deepEqual(
      csv.tasks.map((t) => t.truth),
      [1, 2],
      'CSV numbers are numbers; the row with an NA level is skipped',
    );
    assert.equal(csv.skipped[0].source.line, 5);
  });

  it('split and subset_name of a local HF dataset directory', async () => {
    const r = await readTasks(
      { ...MATH, path: 'hf_subsets', subset_name: 'main', split: 'test', is_eval: true },
      { baseDir: FIX },
    );
    assert.deepEqual(
      r.tasks.map((t) => [t.taskDesc, t.truth]),
      [['T0', '#### 0']],
    );
    assert.equal(r.tasks[0].tasksetName, 'eval_taskset_0');
  });

  it('per-row workflow_key / reward_fn_key, falling back to the defaults for unregistered names', async () => {
    write(
      'wf.jsonl',
      [
        { question: 'a', answer: '1', wf: 'math_boxed_workflow', rf: 'countdown_reward' },
        { question: 'b', answer: '2', wf: 'no_such_workflow', rf: 'no_such_reward' },
        { question: 'c', answer: '3', wf: '', rf: null },
        { question: 'd', answer: '4', wf: 'my.plugin.Workflow' },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n'),
    );
    const r = await readTasks(
      {
        ...MATH,
        path: 'wf.jsonl',
        default_reward_fn_type: 'math_reward',
        format: { ...MATH.format, workflow_key: 'wf', reward_fn_key: 'rf' },
      },
      { baseDir: scratch.path },
    );
    assert.deepEqual(
      r.tasks.map((t) => [t.workflow, t.rewardFn]),
      [
        ['math_boxed_workflow', 'countdown_reward'],
        ['math_workflow', 'math_reward'],
        ['math_workflow', 'math_reward'],
        ['my.plugin.Workflow', 'math_reward'],
      ],
    );
    assert.equal(r.warnings.length, 2);
    assert.match(r.warnings[0], /1 row\(s\) name an unregistered workflow in 'wf'/);
  });

  it('no workflow anywhere: Trinity\'s "`default_workflow_type` or `workflow_key` is required"', async () => {
    await rejects(
      readTasks({ path: 'tasks.jsonl' }, { baseDir: FIX }),
      /`default_workflow_type` or `workflow_key` is required/,
    );
    await rejects(
      readTasks({ path: 'tasks.jsonl', default_workflow_type: 'nope_workflow' }, { baseDir: FIX }),
      /'nope_workflow' is not a registered workflow/,
    );
    await rejects(
      readTasks({ ...MATH, path: null }, { baseDir: FIX }),
      /Train taskset \[taskset_0\]'s path is not configured\./,
    );
  });

  it('explorer_input and model fallbacks, algorithm.repeat_times, eval tasksets, task_selector', async () => {
    const opts = {
      baseDir: FIX,
      position: 2,
      explorerInput: {
        default_workflow_type: 'math_workflow',
        default_eval_workflow_type: 'math_eval_workflow',
        default_reward_fn_type: 'math_reward',
      },
      model: { temperature: 0.9, max_response_tokens: 512, custom_chat_template: '{{ x }}' },
      algorithmRepeatTimes: 8,
      buffer: { batch_size: 2, total_epochs: 3 },
    };
    const base: TasksetInput = { path: 'tasks.jsonl', format: MATH.format, repeat_times: 4 };
    const train = await readTasks(base, opts);
    const t = train.tasks[0];
    assert.equal(t.tasksetName, 'taskset_2');
    assert.equal(t.workflow, 'math_workflow');
    assert.equal(t.rewardFn, 'math_reward');
    assert.equal(t.repeatTimes, 8, 'training tasksets take algorithm.repeat_times');
    assert.equal(t.rolloutArgs.temperature, 0.9);
    assert.equal(t.rolloutArgs.max_tokens, 512);
    assert.equal(t.format.chat_template, '{{ x }}');
    assert.equal(train.taskset.totalEpochs, 3);
    const ev = await readTasks({ ...base, is_eval: true, name: 'gsm8k-eval' }, opts);
    assert.equal(ev.tasks[0].tasksetName, 'gsm8k-eval');
    assert.equal(ev.tasks[0].workflow, 'math_eval_workflow', 'eval tasksets prefer default_eval_workflow_type');
    assert.equal(ev.tasks[0].repeatTimes, 4, 'eval tasksets keep their own repeat_times');
    assert.equal(ev.tasks[0].isEval, true);
    assert.equal(ev.taskset.totalEpochs, 1);
    const sel = await readTasks({ ...base, task_selector: { selector_type: 'shuffle', seed: 1 } }, opts);
    assert.equal(sel.taskset.dataSelector.selector_type, 'shuffle');
    assert.match(sel.warnings[0], /DEPRECATED.*data_selector/);
  });
});

describe('config types', () => {
  it('the generated TasksetConfig / ExperienceBufferConfig are accepted as they are', () => {
    const accepts = (t: TasksetConfig, e: ExperienceBufferConfig): [TasksetInput, TrainDatasetInput] => [t, e];
    assert.equal(typeof accepts, 'function');
  });
});

describe('readTasks: bad rows', () => {
  it('a row without its prompt/answer key: an error naming file, line and key — or skipped and counted', async () => {
    const f = write(
      'missing.jsonl',
      '{"question":"a","answer":"1"}\n{"question":"b"}\n{"question":"c","answer":null}\n{"question":"d","answer":"4"}\n',
    );
    const e = await rejects(
      readTasks({ ...MATH, path: 'missing.jsonl' }, { baseDir: scratch.path }),
      /missing\.jsonl:2: row has no 'answer' \(format\.response_key\)/,
    );
    assert.equal(e.file, f);
    assert.equal(e.line, 2);
    assert.equal(e.key, 'answer');
    const r = await readTasks({ ...MATH, path: 'missing.jsonl' }, { baseDir: scratch.path, onInvalidRow: 'skip' });
    assert.deepEqual(
      r.tasks.map((t) => [t.index, t.taskDesc]),
      [
        [0, 'a'],
        [3, 'd'],
      ],
      'tasks keep their dataset index',
    );
    assert.deepEqual(
      r.skipped.map((s) => [s.source.line, s.key]),
      [
        [2, 'answer'],
        [3, 'answer'],
      ],
    );
  });

  it('a key no row has is a config mistake: an error listing the columns, even when skipping', async () => {
    for (const mode of ['error', 'skip'] as const) {
      await rejects(
        readTasks(
          { path: 'tasks.jsonl', default_workflow_type: 'math_workflow' },
          { baseDir: FIX, onInvalidRow: mode },
        ),
        /has no column 'prompt' \(format\.prompt_key\); columns: question, answer, level/,
      );
    }
  });

  it('required keys follow the workflow; requiredKeys overrides', async () => {
    const r = await readTasks({ path: 'tasks.jsonl', default_workflow_type: 'frozen_lake_workflow' }, { baseDir: FIX });
    assert.equal(r.tasks.length, 5, 'workflows that do not read prompt/answer need no keys');
    assert.equal(r.tasks[0].taskDesc, null, 'task_desc is None when prompt_key is absent');
    await rejects(
      readTasks({ ...MATH, path: 'tasks.jsonl' }, { baseDir: FIX, requiredKeys: ['question', 'seed'] }),
      /has no column 'seed'/,
    );
  });

  it('a malformed line: error with file:line, or skipped', async () => {
    write(
      'broken.jsonl',
      '{"question":"a","answer":"1"}\n{"question": "b" "answer": "2"}\n{"question":"c","answer":"3"}\n',
    );
    await rejects(
      readTasks({ ...MATH, path: 'broken.jsonl' }, { baseDir: scratch.path }),
      /broken\.jsonl:2: line is not valid JSON/,
    );
    const r = await readTasks({ ...MATH, path: 'broken.jsonl' }, { baseDir: scratch.path, onInvalidRow: 'skip' });
    assert.deepEqual(
      r.tasks.map((t) => t.taskDesc),
      ['a', 'c'],
    );
    assert.equal(r.skipped.length, 1);
  });

  it('a Hugging Face Hub id: a clear error', async () => {
    await rejects(
      readTasks({ ...MATH, name: 'gsm8k', path: 'openai/gsm8k', subset_name: 'main' }, { baseDir: scratch.path }),
      /taskset 'gsm8k': 'openai\/gsm8k' is not a local file.*Hugging Face Hub/,
    );
  });
});

describe("readTasks on Trinity's test data (tests/template/data)", () => {
  // As tests/tools.py get_unittest_dataset_config configures them.
  it('gsm8k (16 train, 2 test), countdown (17/4), eval_short (2) and eval_long (8)', async () => {
    const base = corpusData();
    const n = async (name: string, split: string, extra: TasksetInput = {}) =>
      (await readTasks({ ...MATH, name, path: name, split, ...extra }, { baseDir: base })).tasks;
    const gsm = await n('gsm8k', 'train', { default_reward_fn_type: 'math_reward' });
    assert.equal(gsm.length, 16);
    assert.match(String(gsm[0].taskDesc), /^Natalia sold clips to 48 of her friends/);
    assert.match(String(gsm[0].truth), /#### 72$/);
    assert.equal(gsm[0].source.file, corpusData('gsm8k', 'train.jsonl'));
    assert.equal((await n('gsm8k', 'test')).length, 2);
    const cd = await n('countdown', 'train', { default_reward_fn_type: 'countdown_reward' });
    assert.equal(cd.length, 17);
    assert.deepEqual(JSON.parse(String(cd[0].truth)), { numbers: [44, 19, 35], target: 98 });
    assert.equal(cd[0].rewardFn, 'countdown_reward');
    assert.equal((await n('countdown', 'test', { is_eval: true })).length, 4);
    assert.equal((await n('eval_short', 'test', { is_eval: true })).length, 2);
    assert.equal((await n('eval_long', 'test', { is_eval: true })).length, 8);
    await rejects(n('eval_short', 'train'), /no files for split 'train'/);
  });

  it('geometry (parquet, multi-modal): images stay as {bytes, path} structs', async () => {
    const r = await readTasks(
      {
        name: 'geometry',
        path: 'geometry',
        format: { prompt_type: 'plaintext', prompt_key: 'problem', response_key: 'answer', image_key: 'images' },
        default_workflow_type: 'simple_mm_workflow',
        default_reward_fn_type: 'math_boxed_reward',
      },
      { baseDir: corpusData() },
    );
    assert.equal(r.tasks.length, 8);
    assert.deepEqual(r.columns, ['images', 'problem', 'answer']);
    const images = r.tasks[0].raw.images as { bytes: unknown }[];
    assert.ok(Array.isArray(images) && images[0].bytes instanceof Uint8Array);
  });
});

describe('taskBatchReader and taskScheduler', () => {
  let gsm: ReadTasksResult;
  let countdown: ReadTasksResult;
  before(async () => {
    gsm = await readTasks({ ...MATH, name: 'gsm8k', path: 'gsm8k' }, { baseDir: corpusData() });
    countdown = await readTasks({ ...MATH, name: 'countdown', path: 'countdown' }, { baseDir: corpusData() });
  });
  const indices = (r: ReturnType<typeof taskBatchReader>) => [...r].map((b) => b.items.map((t) => t.index));

  it('a sequential training taskset: in order from its index, epochs, last incomplete batch dropped', () => {
    const all = indices(taskBatchReader(gsm, { batchSize: 5, totalEpochs: 2 }));
    assert.equal(all.length, 6, '32 tasks in batches of 5');
    assert.deepEqual(all[3], [15, 0, 1, 2, 3]);
    // Resuming: the offset counts the rows already served against batch_size × total_steps.
    assert.deepEqual(indices(taskBatchReader(gsm, { batchSize: 4, totalSteps: 4, offset: 6 })), [
      [6, 7, 8, 9],
      [10, 11, 12, 13],
    ]);
    assert.deepEqual(indices(taskBatchReader(gsm, { batchSize: 4, totalSteps: 2, offset: 14 })), []);
  });

  it('an eval taskset: one pass, last batch kept, epochs and steps ignored', async () => {
    const ev = await readTasks({ ...MATH, path: 'countdown', split: 'test', is_eval: true }, { baseDir: corpusData() });
    assert.deepEqual(indices(taskBatchReader(ev, { batchSize: 3, totalEpochs: 5, totalSteps: 9 })), [[0, 1, 2], [3]]);
  });

  it('a shuffled taskset: NumPy permutation(16) seeded 42, reused for the second epoch as Trinity does', async () => {
    const r = await readTasks(
      { ...MATH, path: 'gsm8k', data_selector: { selector_type: 'shuffle', seed: 42 } },
      { baseDir: corpusData() },
    );
    // np.random.default_rng(42).permutation(16) = [6, 15, 11, 10, 9, 3, 0, 7, 12, 5, 2, 4, 14, 1, 13, 8]
    assert.deepEqual(indices(taskBatchReader(r, { batchSize: 5, totalEpochs: 2 })), [
      [6, 15, 11, 10, 9],
      [3, 0, 7, 12, 5],
      [2, 4, 14, 1, 13],
      [8, 6, 15, 11, 10],
      [9, 3, 0, 7, 12],
      [5, 2, 4, 14, 1],
    ]);
  });

  it('two tasksets: batches drawn across both, each task tagged with its taskset', () => {
    const s = taskScheduler([gsm, countdown], { batchSize: 4, totalEpochs: 1 });
    const steps: { id: number | undefined; name: string }[][] = [];
    for (let b = s.next(); b; b = s.next()) steps.push(b.map((t) => ({ id: t.tasksetId, name: t.tasksetName })));
    assert.equal(steps.length, 8, '(16 + 17) // 4');
    assert.ok(steps.every((b) => b.length === 4));
    const flat = steps.flat();
    assert.ok(flat.every((x) => (x.id === 0 ? x.name === 'gsm8k' : x.id === 1 && x.name === 'countdown')));
    assert.ok(flat.some((x) => x.id === 0) && flat.some((x) => x.id === 1));
  });

  it('resuming the scheduler from checkpointed states', () => {
    const s = taskScheduler([gsm], { batchSize: 4, states: [{ current_index: 12 }] });
    assert.deepEqual(
      s.next()?.map((t) => t.index),
      [12, 13, 14, 15],
    );
    assert.equal(s.next(), null);
  });

  it('one sequential taskset through the scheduler is the plain reader', () => {
    const s = taskScheduler([gsm], { batchSize: 8 });
    assert.deepEqual(
      s.next()?.map((t) => t.index),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal(s.next()?.[0].tasksetId, undefined);
    assert.equal(s.next(), null);
  });
});
