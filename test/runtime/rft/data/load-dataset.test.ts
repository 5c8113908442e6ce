/**
 * Loading whole datasets as Trinity's `datasets.load_dataset(path, name=subset_name, split=split)` does.
 * Expected rows were checked against Hugging Face `datasets` 5.0 loading the same fixtures (test/fixtures/rft-data).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { parseSplit } from '../../../../runtime/config/datasets/split-expression';
import { describeSource, loadDatasetRows } from '../../../../runtime/rft/data/load-dataset';
import { rejectsDataError, scratchDir } from './helpers';

const FIX = path.resolve(__dirname, '../../../fixtures/rft-data');
const ROWS = [
  { question: 'What is 2 + 3?', answer: '5', level: 1 },
  { question: 'What is 7 * 6?', answer: '42', level: 2 },
  { question: 'What is 10 - 4?', answer: '6', level: 1 },
  { question: 'What is 9 / 3?', answer: '3', level: 3 },
  { question: 'What is 2 ** 5?', answer: '32', level: 2 },
];

const scratch = scratchDir('rft-data-load-');
const write = scratch.write;

const rejects = rejectsDataError;

describe('loadDatasetRows: file formats', () => {
  it('JSON Lines: every row, with its file and line', async () => {
    const d = await loadDatasetRows({ path: 'tasks.jsonl' }, { baseDir: FIX });
    assert.deepEqual(
      d.rows.map((r) => r.row),
      ROWS,
    );
    assert.deepEqual(d.columns, ['question', 'answer', 'level']);
    assert.equal(d.format, 'jsonl');
    assert.deepEqual(d.files, [path.join(FIX, 'tasks.jsonl')]);
    assert.deepEqual(
      d.rows.map((r) => r.source.line),
      [1, 2, 3, 4, 5],
    );
    assert.equal(describeSource(d.rows[3].source), `${path.join(FIX, 'tasks.jsonl')}:4`);
  });

  it('a JSON array document (indented): rows, and the line each record starts on', async () => {
    const d = await loadDatasetRows({ path: 'tasks.json' }, { baseDir: FIX });
    assert.deepEqual(
      d.rows.map((r) => r.row),
      ROWS,
    );
    assert.equal(d.format, 'json');
    assert.deepEqual(
      d.rows.map((r) => r.source.line),
      [2, 7, 12, 17, 22],
    );
  });

  it('CSV as pandas reads it: numbers inferred per column, NA → null, quoted newlines, record lines', async () => {
    const d = await loadDatasetRows({ path: 'tasks.csv' }, { baseDir: FIX });
    // datasets: [{'question': 'What is 2 + 3?', 'answer': 5.0, 'level': 1.0}, {..., 'answer': 42.0, ...}, {'question': 'Say "hi"', 'answer': None, 'level': None}]
    assert.deepEqual(
      d.rows.map((r) => r.row),
      [
        { question: 'What is 2 + 3?', answer: 5, level: 1 },
        { question: 'What is 7 * 6?\nShow your work.', answer: 42, level: 2 },
        { question: 'Say "hi"', answer: null, level: null },
      ],
    );
    assert.deepEqual(
      d.rows.map((r) => r.source.line),
      [2, 3, 5],
    );
  });

  it('CSV booleans and a ragged row', async () => {
    const f = write('b.csv', 'a,flag\nx,True\ny,false\n');
    const d = await loadDatasetRows({ path: f }, { baseDir: scratch.path });
    assert.deepEqual(
      d.rows.map((r) => r.row.flag),
      [true, false],
    );
    write('ragged.csv', 'a,b\n1,2\n3,4,5\n');
    await rejects(
      loadDatasetRows({ path: 'ragged.csv' }, { baseDir: scratch.path }),
      /ragged\.csv:3: expected 2 fields, saw 3/,
    );
  });

  it('parquet: rows with int64 as numbers, sources by row', async () => {
    const d = await loadDatasetRows({ path: 'tasks.parquet' }, { baseDir: FIX });
    assert.deepEqual(
      d.rows.map((r) => r.row),
      ROWS,
    );
    assert.equal(d.format, 'parquet');
    assert.equal(d.rows[2].source.line, undefined);
    assert.equal(describeSource(d.rows[2].source), `${path.join(FIX, 'tasks.parquet')} (row 3)`);
  });

  it('gzip-compressed JSON Lines', async () => {
    write('z/train.jsonl.gz', new Uint8Array(zlib.gzipSync('{"q": 1}\n{"q": 2}\n')));
    const d = await loadDatasetRows({ path: 'z' }, { baseDir: scratch.path });
    assert.deepEqual(
      d.rows.map((r) => r.row),
      [{ q: 1 }, { q: 2 }],
    );
  });

  it('keys missing from some rows are null there (the columns are the union), as in an Arrow table', async () => {
    write('miss.jsonl', '{"q":"a","a":1}\n{"q":"b"}\n\n{"q":"c","a":3,"z":true}\n');
    const d = await loadDatasetRows({ path: 'miss.jsonl' }, { baseDir: scratch.path });
    // datasets: [{'q': 'a', 'a': 1, 'z': None}, {'q': 'b', 'a': None, 'z': None}, {'q': 'c', 'a': 3, 'z': True}]
    assert.deepEqual(
      d.rows.map((r) => r.row),
      [
        { q: 'a', a: 1, z: null },
        { q: 'b', a: null, z: null },
        { q: 'c', a: 3, z: true },
      ],
    );
    assert.deepEqual(
      d.rows.map((r) => r.source.line),
      [1, 2, 4],
      'blank lines are skipped but counted',
    );
  });
});

describe('loadDatasetRows: directories, splits and subsets', () => {
  it('a directory of sharded parquet files per split (data/<split>-NNNNN-of-NNNNN)', async () => {
    const train = await loadDatasetRows({ path: 'hf_parquet', split: 'train' }, { baseDir: FIX });
    assert.deepEqual(
      train.rows.map((r) => r.row),
      ROWS,
      'both shards, in order',
    );
    assert.equal(train.files.length, 2);
    const test = await loadDatasetRows({ path: 'hf_parquet', split: 'test' }, { baseDir: FIX });
    assert.deepEqual(
      test.rows.map((r) => r.row),
      [{ question: 'What is 1 + 1?', answer: '2', level: 1 }],
    );
  });

  it('README.md configs choose the files per subset_name and split (like openai/gsm8k)', async () => {
    const q = async (subset: string, split: string) =>
      (await loadDatasetRows({ path: 'hf_subsets', subset_name: subset, split }, { baseDir: FIX })).rows.map(
        (r) => r.row.question,
      );
    assert.deepEqual(await q('main', 'train'), ['Q0', 'Q1', 'Q2', 'Q3']);
    assert.deepEqual(await q('main', 'test'), ['T0']);
    assert.deepEqual(await q('socratic', 'train'), ['S0', 'S1']);
    // datasets: ValueError: Config name is missing. Please pick one among the available configs: ['main', 'socratic']
    await rejects(
      loadDatasetRows({ path: 'hf_subsets', split: 'train' }, { baseDir: FIX }),
      /subset_name is missing.*main, socratic/,
    );
    await rejects(
      loadDatasetRows({ path: 'hf_subsets', subset_name: 'nope' }, { baseDir: FIX }),
      /subset_name 'nope' is not a config/,
    );
  });

  it('split-named files, slices and concatenation as datasets ReadInstructions', async () => {
    const p = async (split: string) =>
      (await loadDatasetRows({ path: 'split_files', split }, { baseDir: FIX })).rows.map((r) => r.row.prompt);
    assert.deepEqual(await p('validation'), ['v0']);
    assert.deepEqual(await p('train[2:4]'), ['p2', 'p3']);
    assert.deepEqual(await p('train[:50%]+validation'), ['p0', 'p1', 'p2', 'v0']);
    assert.deepEqual(await p('train[-2:]'), ['p4', 'p5']);
    assert.deepEqual(await p('train[25%:]'), ['p2', 'p3', 'p4', 'p5'], '25% of 6 = 1.5 rounds half to even: 2');
    // datasets: ValueError: Unknown split "test". Should be one of ['train', 'validation'].
    await rejects(
      loadDatasetRows({ path: 'split_files', split: 'test' }, { baseDir: FIX }),
      /no files for split 'test'/,
    );
  });

  it('a single file is the train split only; other splits fail as in datasets', async () => {
    await rejects(loadDatasetRows({ path: 'tasks.jsonl', split: 'test' }, { baseDir: FIX }), /Unknown split "test"/);
  });

  it('split expressions: grammar and percent rounding', () => {
    assert.deepEqual(parseSplit('train[:10%]+test'), [
      { split: 'train', unit: '%', to: 10 },
      { split: 'test', unit: 'abs' },
    ]);
    assert.throws(() => parseSplit('train[1:50%]'), /same unit/);
    assert.throws(() => parseSplit('train[:150%]'), /within \[-100, 100\]/);
    assert.throws(() => parseSplit('train[a:b]'), /not a split expression/);
  });
});

describe('loadDatasetRows: errors', () => {
  it('a malformed JSON Lines line: error naming file and line, or skipped and counted', async () => {
    const f = write('bad.jsonl', '{"q":"a"}\n{"q":"b"}\n{"q": "c",\n{"q":"d"}\n');
    const e = await rejects(
      loadDatasetRows({ path: 'bad.jsonl' }, { baseDir: scratch.path }),
      /bad\.jsonl:3: line is not valid JSON/,
    );
    assert.equal(e.file, f);
    assert.equal(e.line, 3);
    const d = await loadDatasetRows({ path: 'bad.jsonl' }, { baseDir: scratch.path, onInvalidRow: 'skip' });
    assert.deepEqual(
      d.rows.map((r) => r.row.q),
      ['a', 'b', 'd'],
    );
    assert.equal(d.skipped.length, 1);
    assert.equal(d.skipped[0].source.line, 3);
  });

  it('a line holding an array is not a record', async () => {
    write('arr.jsonl', '{"q":"a"}\n[1,2]\n');
    await rejects(loadDatasetRows({ path: 'arr.jsonl' }, { baseDir: scratch.path }), /arr\.jsonl:2: line is an array/);
  });

  it('a broken first line that is no JSON document either', async () => {
    write('first.jsonl', '{"q": \n{"q":"b"}\n');
    await rejects(
      loadDatasetRows({ path: 'first.jsonl' }, { baseDir: scratch.path }),
      /first\.jsonl:3: not JSON Lines \(line 1 is not valid JSON/,
    );
    const d = await loadDatasetRows({ path: 'first.jsonl' }, { baseDir: scratch.path, onInvalidRow: 'skip' });
    assert.deepEqual(
      d.rows.map((r) => r.row.q),
      ['b'],
    );
    assert.equal(d.skipped[0].source.line, 1);
  });

  it('a Hugging Face Hub id that is not local: a clear error, no download', async () => {
    const e = await rejects(
      loadDatasetRows(
        { path: 'openai/gsm8k', subset_name: 'main', name: 'gsm8k', kind: 'taskset' },
        { baseDir: scratch.path },
      ),
      /Hugging Face Hub/,
    );
    assert.match(e.message, /^taskset 'gsm8k': 'openai\/gsm8k' is not a local file or directory/);
    assert.match(e.message, /huggingface-cli download --repo-type dataset openai\/gsm8k/);
  });

  it('missing paths, empty paths and non-file storage', async () => {
    await rejects(loadDatasetRows({ path: './nope/data.jsonl' }, { baseDir: scratch.path }), /does not exist/);
    await rejects(loadDatasetRows({ path: '' }, { baseDir: scratch.path }), /path is not configured/);
    await rejects(
      loadDatasetRows({ path: 'sqlite:///x.db', storage_type: 'sql' }, { baseDir: scratch.path }),
      /storage_type 'sql' is not read here/,
    );
  });
});
