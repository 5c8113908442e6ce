import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { looksLikeHubId, peekDataset } from '../../../runtime/config/datasets/peek-dataset';
import type { DatasetPeek, PeekResult } from '../../../runtime/config/datasets/peek-result';
import { bytesReadDuring } from '../../helpers/bytes-read';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CORPUS = path.resolve(REPO_ROOT, process.env.TRINITY_CORPUS_DIR ?? '../shared/corpus');
const DATA = path.join(CORPUS, 'data');

/** The corpus is required: a missing one fails the tests (never skips them). */
function requireCorpus(): string {
  if (!fs.existsSync(path.join(DATA, 'gsm8k'))) {
    const env = process.env.TRINITY_CORPUS_DIR;
    throw new Error(
      `Trinity corpus not found at ${CORPUS}: ` +
        (env === undefined
          ? 'TRINITY_CORPUS_DIR is not set and the default ../shared/corpus (relative to the repository root) does not exist. '
          : `TRINITY_CORPUS_DIR is set to '${env}', which has no data/gsm8k. `) +
        'Set TRINITY_CORPUS_DIR to the corpus directory (the one holding data/ and trinity-configs/).',
    );
  }
  return DATA;
}

function ok(r: PeekResult): DatasetPeek {
  if (!r.ok) assert.fail(`expected ok, got ${r.reason}: ${r.message}`);
  return r.peek;
}

function failure(r: PeekResult, reason: string): string {
  if (r.ok) assert.fail(`expected ${reason}, got ok with files ${r.peek.files.join(', ')}`);
  assert.equal(r.reason, reason, r.message);
  return r.message;
}

function countLines(file: string): number {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '').length;
}

function warningCodes(p: DatasetPeek): string[] {
  return (p.warnings ?? []).map((w) => w.code);
}

let tmp = '';
function write(rel: string, content: string | Uint8Array): string {
  const abs = path.join(tmp, ...rel.split('/'));
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  return abs;
}
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dataset-peek-'));
});
after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('peekDataset on the Trinity corpus', () => {
  it('finds the corpus (set TRINITY_CORPUS_DIR when it lives elsewhere)', () => {
    requireCorpus();
  });

  it('gsm8k directory: train.jsonl and test.jsonl by split', async () => {
    const data = requireCorpus();
    const train = ok(await peekDataset('gsm8k', { baseDir: data, split: 'train' }));
    assert.deepEqual(train.files, [path.join(data, 'gsm8k', 'train.jsonl')]);
    assert.equal(train.format, 'jsonl');
    assert.deepEqual(train.columns, ['question', 'answer']);
    assert.equal(train.rows.length, Math.min(20, countLines(path.join(data, 'gsm8k', 'train.jsonl'))));
    assert.equal(typeof train.rows[0].question, 'string');
    assert.equal(train.warnings, undefined);

    const test = ok(await peekDataset('gsm8k', { baseDir: data, split: 'test' }));
    assert.deepEqual(test.files, [path.join(data, 'gsm8k', 'test.jsonl')]);
    assert.equal(test.rows.length, countLines(path.join(data, 'gsm8k', 'test.jsonl')));
  });

  it('split defaults to train, maxRows caps the rows, split slices are understood', async () => {
    const data = requireCorpus();
    const p = ok(await peekDataset('gsm8k', { baseDir: data, maxRows: 2 }));
    assert.deepEqual(p.files, [path.join(data, 'gsm8k', 'train.jsonl')]);
    assert.equal(p.rows.length, 2);
    const sliced = ok(await peekDataset('gsm8k', { baseDir: data, split: 'test[:50%]' }));
    assert.deepEqual(sliced.files, [path.join(data, 'gsm8k', 'test.jsonl')]);
    const both = ok(await peekDataset('gsm8k', { baseDir: data, split: 'train+test', maxRows: 100 }));
    assert.equal(both.files.length, 2);
    assert.equal(both.rows.length, countLines(both.files[0]) + countLines(both.files[1]));
  });

  it('relative paths resolve against baseDir; absolute paths ignore it', async () => {
    const data = requireCorpus();
    const rel = ok(await peekDataset('data/gsm8k', { baseDir: CORPUS, split: 'test' }));
    const abs = ok(await peekDataset(path.join(data, 'gsm8k'), { baseDir: os.tmpdir(), split: 'test' }));
    assert.deepEqual(rel.files, abs.files);
    assert.ok(path.isAbsolute(rel.files[0]));
  });

  it('a split the directory lacks is no-split-file, naming the splits it has', async () => {
    const data = requireCorpus();
    const msg = failure(await peekDataset('gsm8k', { baseDir: data, split: 'validation' }), 'no-split-file');
    assert.match(msg, /'validation'/);
    assert.match(msg, /train, test/);
    // eval_short holds only test.jsonl: datasets calls it split "test", so there is no train split.
    const msg2 = failure(await peekDataset('eval_short', { baseDir: data, split: 'train' }), 'no-split-file');
    assert.match(msg2, /test/);
    ok(await peekDataset('eval_short', { baseDir: data, split: 'test' }));
  });

  it('human_like DPO file: prompt / chosen / rejected', async () => {
    const data = requireCorpus();
    const file = path.join(data, 'human_like', 'train.jsonl');
    const p = ok(await peekDataset(file, { baseDir: '/', split: 'train' }));
    assert.deepEqual(p.files, [file]);
    for (const key of ['prompt', 'chosen', 'rejected'])
      assert.ok(p.columns.includes(key), `missing ${key} in ${p.columns}`);
    assert.equal(p.rows.length, Math.min(20, countLines(file)));
  });

  it('a directory whose only data file has no split name is the train split', async () => {
    const data = requireCorpus();
    const sft = ok(await peekDataset('sft_for_gsm8k', { baseDir: data, split: 'train' }));
    assert.deepEqual(sft.files, [path.join(data, 'sft_for_gsm8k', 'sft.jsonl')]);
    assert.ok(sft.columns.includes('prompt') && sft.columns.includes('response'));
    const tools = ok(await peekDataset('sft_with_tools', { baseDir: data, subsetName: null }));
    assert.ok(tools.columns.includes('messages'), String(tools.columns));
    failure(await peekDataset('sft_for_gsm8k', { baseDir: data, split: 'test' }), 'no-split-file');
  });

  it('geometry parquet: schema columns and the first rows only', async () => {
    const data = requireCorpus();
    const dir = ok(await peekDataset('geometry', { baseDir: data, split: 'train', maxRows: 3 }));
    assert.deepEqual(dir.files, [path.join(data, 'geometry', 'train.parquet')]);
    assert.equal(dir.format, 'parquet');
    assert.deepEqual(dir.columns, ['images', 'problem', 'answer']);
    assert.equal(dir.rows.length, 3);
    assert.equal(typeof dir.rows[0].problem, 'string');
    const images = dir.rows[0].images as { bytes: unknown; path: unknown }[];
    assert.ok(Array.isArray(images) && images[0].bytes instanceof Uint8Array, 'binary image bytes stay bytes');

    const file = ok(await peekDataset('geometry/train.parquet', { baseDir: data }));
    assert.equal(file.rows.length, 8, 'the file has 8 rows, under the default maxRows');
  });

  it('a single file is only the train split (warning for any other)', async () => {
    const data = requireCorpus();
    const p = ok(await peekDataset('geometry/train.parquet', { baseDir: data, split: 'test', maxRows: 1 }));
    assert.deepEqual(warningCodes(p), ['unknown-split']);
    assert.match(p.warnings![0].message, /Unknown split "test"/);
  });

  it('every corpus data directory peeks for its train or test split', async () => {
    const data = requireCorpus();
    for (const name of fs.readdirSync(data)) {
      const train = await peekDataset(name, { baseDir: data, split: 'train' });
      const r = train.ok ? train : await peekDataset(name, { baseDir: data, split: 'test' });
      const p = ok(r);
      assert.ok(p.columns.length > 0 && p.rows.length > 0, name);
    }
  });
});

describe('peekDataset on JSON and JSON Lines', () => {
  it('a JSON array of records', async () => {
    write(
      'json/array.json',
      JSON.stringify(
        [
          { a: 1, b: 'x' },
          { a: 2, c: true },
        ],
        null,
        2,
      ),
    );
    const p = ok(await peekDataset('json/array.json', { baseDir: tmp }));
    assert.equal(p.format, 'json');
    assert.deepEqual(p.columns, ['a', 'b', 'c']);
    assert.deepEqual(p.rows, [
      { a: 1, b: 'x' },
      { a: 2, c: true },
    ]);
  });

  it('a JSON object of columns, as pandas.read_json reads it', async () => {
    write('json/columns.json', JSON.stringify({ prompt: ['p1', 'p2'], response: ['r1', 'r2'] }, null, 1));
    const p = ok(await peekDataset('json/columns.json', { baseDir: tmp }));
    assert.deepEqual(p.columns, ['prompt', 'response']);
    assert.deepEqual(p.rows, [
      { prompt: 'p1', response: 'r1' },
      { prompt: 'p2', response: 'r2' },
    ]);
  });

  it('records under one key ({"data": [...]}) are one column for datasets, with a warning', async () => {
    write('json/field.json', JSON.stringify({ data: [{ question: 'q', answer: 'a' }] }, null, 2));
    const p = ok(await peekDataset('json/field.json', { baseDir: tmp }));
    assert.deepEqual(p.columns, ['data']);
    assert.deepEqual(warningCodes(p), ['json-field']);
  });

  it('content decides the format: JSON Lines in .json, a JSON document in .jsonl', async () => {
    write('json/lines.json', jsonl([{ q: 1 }, { q: 2 }]));
    const a = ok(await peekDataset('json/lines.json', { baseDir: tmp }));
    assert.equal(a.format, 'jsonl');
    assert.equal(a.rows.length, 2);
    write('json/doc.jsonl', '[\n  {"q": 1},\n  {"q": 2}\n]\n');
    const b = ok(await peekDataset('json/doc.jsonl', { baseDir: tmp }));
    assert.equal(b.format, 'json');
    assert.deepEqual(b.rows, [{ q: 1 }, { q: 2 }]);
  });

  it('a malformed line is unreadable, with its 1-based line number', async () => {
    write('json/bad.jsonl', '{"a": 1}\n{"a": 2}\n{"a": 3,,}\n{"a": 4}\n');
    const msg = failure(await peekDataset('json/bad.jsonl', { baseDir: tmp, maxRows: 10 }), 'unreadable');
    assert.match(msg, /line 3\b/);
    write('json/bad-first.jsonl', '{"a": 1\n{"a": 2}\n');
    assert.match(failure(await peekDataset('json/bad-first.jsonl', { baseDir: tmp }), 'unreadable'), /line 1\b/);
    write('json/not-object.jsonl', '{"a": 1}\n[1, 2]\n');
    assert.match(
      failure(await peekDataset('json/not-object.jsonl', { baseDir: tmp }), 'unreadable'),
      /line 2 is not a JSON object/,
    );
  });

  it('a malformed line after the rows asked for is not read', async () => {
    write('json/bad-late.jsonl', '{"a": 1}\n{"a": 2}\nnot json\n');
    const p = ok(await peekDataset('json/bad-late.jsonl', { baseDir: tmp, maxRows: 2 }));
    assert.equal(p.rows.length, 2);
  });

  it('BOM, CRLF, blank lines and a last line without newline', async () => {
    write('json/crlf.jsonl', '\uFEFF{"a": 1}\r\n\r\n{"a": 2}\r\n{"a": 3}');
    const p = ok(await peekDataset('json/crlf.jsonl', { baseDir: tmp }));
    assert.deepEqual(p.rows, [{ a: 1 }, { a: 2 }, { a: 3 }]);
    write('json/empty.jsonl', '');
    assert.deepEqual(ok(await peekDataset('json/empty.jsonl', { baseDir: tmp })).rows, []);
  });

  it('a JSON document over the size limit is unreadable with a clear message; a broken one too', async () => {
    write('json/big-doc.json', JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ i, text: 'x'.repeat(50) }))));
    const msg = failure(
      await peekDataset('json/big-doc.json', { baseDir: tmp, maxDocumentBytes: 10_000 }),
      'unreadable',
    );
    assert.match(msg, /peek limit/);
    assert.match(msg, /JSON Lines/);
    ok(await peekDataset('json/big-doc.json', { baseDir: tmp }));
    write('json/broken.json', '[\n  {"a": 1},\n  {"a": 2\n]\n');
    assert.match(
      failure(await peekDataset('json/broken.json', { baseDir: tmp }), 'unreadable'),
      /not one JSON document/,
    );
  });

  it('gzip-compressed JSON Lines', async () => {
    write('gz/train.jsonl.gz', new Uint8Array(zlib.gzipSync(jsonl([{ prompt: 'p', response: 'r' }]))));
    const p = ok(await peekDataset('gz', { baseDir: tmp }));
    assert.deepEqual(p.files, [path.join(tmp, 'gz', 'train.jsonl.gz')]);
    assert.deepEqual(p.columns, ['prompt', 'response']);
  });
});

describe('peekDataset on CSV', () => {
  it('header, quoted separators and newlines, TSV', async () => {
    write('csv/train.csv', 'question,answer\n"What, exactly?","line1\nline2"\nplain,"say ""hi"""\n');
    const p = ok(await peekDataset('csv', { baseDir: tmp }));
    assert.equal(p.format, 'csv');
    assert.deepEqual(p.columns, ['question', 'answer']);
    assert.deepEqual(p.rows, [
      { question: 'What, exactly?', answer: 'line1\nline2' },
      { question: 'plain', answer: 'say "hi"' },
    ]);
    write('tsv/data.tsv', 'a\tb\n1\t2\n');
    assert.deepEqual(ok(await peekDataset('tsv/data.tsv', { baseDir: tmp })).rows, [{ a: '1', b: '2' }]);
  });

  it('a header as pandas reads it: blank names are "Unnamed: i", repeated ones "a.1" (as the runtime loads them)', async () => {
    write('csv-header/data.csv', 'a,,a,a\n1,2,3,4\n');
    const p = ok(await peekDataset('csv-header/data.csv', { baseDir: tmp }));
    assert.deepEqual(p.columns, ['a', 'Unnamed: 1', 'a.1', 'a.2']);
    assert.deepEqual(p.rows, [{ a: '1', 'Unnamed: 1': '2', 'a.1': '3', 'a.2': '4' }]);
  });
});

describe('peekDataset: split files in directories (datasets rules)', () => {
  it('split-named directories', async () => {
    write('nested/train/part-0.jsonl', jsonl([{ t: 1 }]));
    write('nested/train/part-1.jsonl', jsonl([{ t: 2 }]));
    write('nested/test/part-0.jsonl', jsonl([{ e: 1 }]));
    const p = ok(await peekDataset('nested', { baseDir: tmp, split: 'train' }));
    assert.deepEqual(p.files, [
      path.join(tmp, 'nested/train/part-0.jsonl'),
      path.join(tmp, 'nested/train/part-1.jsonl'),
    ]);
    assert.deepEqual(p.rows, [{ t: 1 }, { t: 2 }], 'rows continue into the next file');
    assert.deepEqual(ok(await peekDataset('nested', { baseDir: tmp, split: 'test' })).columns, ['e']);
  });

  it('data/<split>-NNNNN-of-NNNNN shards, with custom split names', async () => {
    write('sharded/data/train-00000-of-00002.jsonl', jsonl([{ s: 0 }]));
    write('sharded/data/train-00001-of-00002.jsonl', jsonl([{ s: 1 }]));
    write('sharded/data/extra-00000-of-00001.jsonl', jsonl([{ x: 0 }]));
    write('sharded/notes/test.jsonl', jsonl([{ ignored: true }]));
    const p = ok(await peekDataset('sharded', { baseDir: tmp }));
    assert.equal(p.files.length, 2);
    assert.deepEqual(ok(await peekDataset('sharded', { baseDir: tmp, split: 'extra' })).columns, ['x']);
    // With shards present, datasets ignores other files: it has no "test" split. The file named after the split
    // is peeked all the same, with the warning that Trinity's load would fail.
    const t = ok(await peekDataset('sharded', { baseDir: tmp, split: 'test' }));
    assert.deepEqual(t.files, [path.join(tmp, 'sharded/notes/test.jsonl')]);
    assert.deepEqual(warningCodes(t), ['unknown-split']);
    assert.match(t.warnings![0].message, /train, extra/);
    failure(await peekDataset('sharded', { baseDir: tmp, split: 'validation' }), 'no-split-file');
  });

  it('split keywords inside file names; validation aliases', async () => {
    write('named/gsm_train.jsonl', jsonl([{ q: 'train' }]));
    write('named/dev.jsonl', jsonl([{ q: 'dev' }]));
    write('named/README.md', '# no YAML header\n');
    assert.deepEqual(ok(await peekDataset('named', { baseDir: tmp })).files, [path.join(tmp, 'named/gsm_train.jsonl')]);
    assert.deepEqual(ok(await peekDataset('named', { baseDir: tmp, split: 'validation' })).files, [
      path.join(tmp, 'named/dev.jsonl'),
    ]);
    // `split: dev` names the file, but datasets calls that split "validation": peeked, with a warning.
    const dev = ok(await peekDataset('named', { baseDir: tmp, split: 'dev' }));
    assert.deepEqual(dev.files, [path.join(tmp, 'named/dev.jsonl')]);
    assert.deepEqual(warningCodes(dev), ['unknown-split']);
    assert.match(dev.warnings![0].message, /'validation'/);
  });

  it('eval.jsonl is split "test" for datasets', async () => {
    write('evalnamed/train.jsonl', jsonl([{ q: 1 }]));
    write('evalnamed/eval.jsonl', jsonl([{ q: 2 }]));
    assert.deepEqual(ok(await peekDataset('evalnamed', { baseDir: tmp, split: 'test' })).rows, [{ q: 2 }]);
    const e = ok(await peekDataset('evalnamed', { baseDir: tmp, split: 'eval' }));
    assert.deepEqual(warningCodes(e), ['unknown-split']);
  });

  it('one unnamed data file is train; hidden files, README and other formats are ignored', async () => {
    write('single/tasks.jsonl', jsonl([{ q: 1 }]));
    write('single/.cache/test.jsonl', jsonl([{ hidden: 1 }]));
    write('single/README.md', 'readme');
    const p = ok(await peekDataset('single', { baseDir: tmp }));
    assert.deepEqual(p.files, [path.join(tmp, 'single/tasks.jsonl')]);
    failure(await peekDataset('single', { baseDir: tmp, split: 'test' }), 'no-split-file');
  });

  it('splits in different formats: peeked, with the warning that datasets refuses them', async () => {
    write('mixed/train.jsonl', jsonl([{ q: 1 }]));
    fs.copyFileSync(path.join(requireCorpus(), 'geometry/train.parquet'), write('mixed/test.parquet', ''));
    const p = ok(await peekDataset('mixed', { baseDir: tmp, split: 'test', maxRows: 1 }));
    assert.equal(p.format, 'parquet');
    assert.deepEqual(warningCodes(p), ['mixed-formats']);
  });

  it('a directory without data files', async () => {
    write('nodata/README.md', 'nothing here');
    assert.match(failure(await peekDataset('nodata', { baseDir: tmp }), 'no-split-file'), /no data files/);
  });
});

describe('peekDataset: subsets', () => {
  const readme = [
    '---',
    'configs:',
    '- config_name: main',
    '  data_files:',
    '  - split: train',
    '    path: main/train-*',
    '  - split: test',
    '    path: main/test-*',
    '- config_name: socratic',
    '  data_files:',
    '  - split: train',
    '    path: socratic/train-*',
    '---',
    '# gsm8k-like',
  ].join('\n');

  before(() => {
    const parquet = path.join(requireCorpus(), 'geometry/train.parquet');
    for (const f of [
      'hub/main/train-00000-of-00001.parquet',
      'hub/main/test-00000-of-00001.parquet',
      'hub/socratic/train-00000-of-00001.parquet',
    ]) {
      fs.copyFileSync(parquet, write(f, ''));
    }
    write('hub/README.md', readme);
  });

  it('README configs choose the files of subset and split', async () => {
    const p = ok(await peekDataset('hub', { baseDir: tmp, subsetName: 'main', split: 'test', maxRows: 2 }));
    assert.deepEqual(p.files, [path.join(tmp, 'hub/main/test-00000-of-00001.parquet')]);
    assert.equal(p.rows.length, 2);
    assert.deepEqual(p.columns, ['images', 'problem', 'answer']);
    const s = ok(await peekDataset('hub', { baseDir: tmp, subsetName: 'socratic', maxRows: 1 }));
    assert.deepEqual(s.files, [path.join(tmp, 'hub/socratic/train-00000-of-00001.parquet')]);
  });

  it('an unknown or missing subset_name fails like datasets does', async () => {
    assert.match(
      failure(await peekDataset('hub', { baseDir: tmp, subsetName: 'nope' }), 'no-split-file'),
      /main, socratic/,
    );
    assert.match(
      failure(await peekDataset('hub', { baseDir: tmp, subsetName: null }), 'no-split-file'),
      /subset_name is missing/,
    );
    failure(await peekDataset('hub', { baseDir: tmp, subsetName: 'socratic', split: 'test' }), 'no-split-file');
  });

  it('a single README config with data_dir is the default', async () => {
    write('onecfg/README.md', '---\nconfigs:\n- config_name: default\n  data_dir: files\n---\n');
    write('onecfg/files/train.jsonl', jsonl([{ k: 1 }]));
    write('onecfg/other/train.jsonl', jsonl([{ other: 1 }]));
    const p = ok(await peekDataset('onecfg', { baseDir: tmp }));
    assert.deepEqual(p.files, [path.join(tmp, 'onecfg/files/train.jsonl')]);
  });

  it('without README configs, <path>/<subset_name>/ is used, with a warning', async () => {
    write('subsets/main/train.jsonl', jsonl([{ question: 'q' }]));
    write('subsets/other/train.jsonl', jsonl([{ prompt: 'p' }]));
    const p = ok(await peekDataset('subsets', { baseDir: tmp, subsetName: 'main' }));
    assert.deepEqual(p.files, [path.join(tmp, 'subsets/main/train.jsonl')]);
    assert.deepEqual(p.columns, ['question']);
    assert.deepEqual(warningCodes(p), ['subset-dir']);
    // What datasets itself reads: both train files.
    const all = ok(await peekDataset('subsets', { baseDir: tmp }));
    assert.equal(all.files.length, 2);
    assert.deepEqual(all.columns, ['question', 'prompt']);
  });
});

describe('peekDataset: save_to_disk directories', () => {
  it('a Dataset is reported as arrow, not peeked, with columns from dataset_info.json', async () => {
    write(
      'saved/dataset_info.json',
      JSON.stringify({
        features: { question: { dtype: 'string', _type: 'Value' }, answer: { dtype: 'string', _type: 'Value' } },
      }),
    );
    write('saved/state.json', JSON.stringify({ _data_files: [{ filename: 'data-00000-of-00001.arrow' }] }));
    write('saved/data-00000-of-00001.arrow', 'not really arrow');
    const p = ok(await peekDataset('saved', { baseDir: tmp }));
    assert.equal(p.format, 'arrow');
    assert.deepEqual(p.rows, []);
    assert.deepEqual(p.columns, ['question', 'answer']);
    assert.deepEqual(p.files, [path.join(tmp, 'saved/data-00000-of-00001.arrow')]);
    assert.deepEqual(warningCodes(p), ['saved-to-disk']);
    assert.match(p.warnings![0].message, /arrow, not peeked/);
  });

  it('a DatasetDict: the split subdirectory', async () => {
    write('saveddict/dataset_dict.json', JSON.stringify({ splits: ['train'] }));
    write('saveddict/train/dataset_info.json', JSON.stringify({ features: { prompt: {} } }));
    write('saveddict/train/state.json', '{}');
    write('saveddict/train/data-00000-of-00001.arrow', 'x');
    assert.deepEqual(ok(await peekDataset('saveddict', { baseDir: tmp })).columns, ['prompt']);
    failure(await peekDataset('saveddict', { baseDir: tmp, split: 'test' }), 'no-split-file');
  });
});

describe('peekDataset: paths that are not local data', () => {
  it('Hub ids are remote; missing local paths are not-found', async () => {
    assert.equal((await peekDataset('openai/gsm8k', { baseDir: tmp })).ok, false);
    failure(await peekDataset('openai/gsm8k', { baseDir: tmp, subsetName: 'main' }), 'remote');
    failure(await peekDataset('gsm8k', { baseDir: tmp }), 'remote');
    failure(await peekDataset('./missing/dir', { baseDir: tmp }), 'not-found');
    failure(await peekDataset('missing.jsonl', { baseDir: tmp }), 'not-found');
    failure(await peekDataset('/no/such/data', { baseDir: tmp }), 'not-found');
    // `json/` exists here, so json/typo is a mistyped local path rather than a Hub id.
    failure(await peekDataset('json/typo', { baseDir: tmp }), 'not-found');
    failure(await peekDataset('sqlite:///gsm8k.db', { baseDir: tmp }), 'remote');
    failure(await peekDataset('', { baseDir: tmp }), 'not-found');
    failure(await peekDataset('${oc.env:TRINITY_TASKSET_PATH}', { baseDir: tmp }), 'not-found');
  });

  it('looksLikeHubId', () => {
    for (const id of [
      'openai/gsm8k',
      'gsm8k',
      'open-r1/DAPO-Math-17k-Processed',
      'HuggingFaceH4/aime_2024',
      'math-ai/aime25',
    ]) {
      assert.equal(looksLikeHubId(id), true, id);
    }
    for (const p of [
      './gsm8k',
      '../data/x',
      '/abs/path',
      '~/data',
      'a/b/c',
      'data.jsonl',
      'x/train.parquet',
      'sqlite:///a.db',
      'C:\\data',
      '',
      'a//b',
      'a--b/c',
      '-x/y',
      '${oc.env:X}',
    ]) {
      assert.equal(looksLikeHubId(p), false, p);
    }
  });

  it('unreadable files fail without throwing', async () => {
    write('broken/train.parquet', 'PAR1 this is not parquet at all PAR1');
    assert.match(failure(await peekDataset('broken', { baseDir: tmp }), 'unreadable'), /parquet/);
    write('text/notes.txt', 'hello\n');
    failure(await peekDataset('text/notes.txt', { baseDir: tmp }), 'unreadable');
    write('xz/train.jsonl.xz', 'x');
    failure(await peekDataset('xz', { baseDir: tmp }), 'unreadable');
    const weird = await peekDataset(undefined as unknown as string, { baseDir: undefined as unknown as string });
    assert.equal(weird.ok, false);
  });
});

describe('peekDataset reads big files cheaply', () => {
  let big = '';
  const line = JSON.stringify({ prompt: 'p'.repeat(480), response: 'r'.repeat(480) }) + '\n';
  before(() => {
    // ~50 MB of JSON Lines, written in one go.
    big = write('big/train.jsonl', line.repeat(Math.ceil((50 * 1024 * 1024) / line.length)));
    assert.ok(fs.statSync(big).size >= 50 * 1024 * 1024);
  });

  // What a peek costs is what it reads: bytes counted by the kernel (test/helpers/bytes-read.ts), not a stopwatch.
  // SLACK: the probe's own reads and a directory's small files.
  const CHUNK = 64 * 1024;
  const SLACK = 8 * 1024;

  it('the first rows of a 50 MB JSON Lines file cost one 64 KiB read, not the file', async () => {
    const { result, bytes } = await bytesReadDuring(() => peekDataset(big, { baseDir: tmp }));
    const p = ok(result);
    assert.equal(p.rows.length, 20);
    assert.deepEqual(p.columns, ['prompt', 'response']);
    // 20 rows of ~1 KiB are all in the first chunk
    assert.ok(bytes >= 20 * line.length && bytes <= CHUNK + SLACK, `read ${bytes} bytes`);
  });

  it('maxBytes bounds what is read, whatever maxRows asks for', async () => {
    const { result, bytes } = await bytesReadDuring(() =>
      peekDataset(big, { baseDir: tmp, maxRows: 1_000_000, maxBytes: 256 * 1024 }),
    );
    const p = ok(result);
    // 256 KiB rounded up to the 64 KiB read chunk.
    assert.ok(
      p.rows.length > 0 && p.rows.length <= Math.ceil((256 * 1024 + 64 * 1024) / line.length),
      `${p.rows.length} rows`,
    );
    assert.ok(bytes >= 256 * 1024 && bytes <= 256 * 1024 + CHUNK + SLACK, `read ${bytes} bytes`);
  });

  it('a first line longer than maxBytes is still read', async () => {
    write('longline/train.jsonl', JSON.stringify({ text: 'y'.repeat(300_000) }) + '\n' + '{"text": "short"}\n');
    const p = ok(await peekDataset('longline', { baseDir: tmp, maxBytes: 1024 }));
    assert.ok(p.rows.length >= 1);
    assert.equal((p.rows[0].text as string).length, 300_000);
  });

  it('a 50 MB JSON document is refused after reading its first 20 MiB', async () => {
    const n = Math.ceil((50 * 1024 * 1024) / line.length);
    const doc = write('bigdoc/train.json', '[' + (line.trimEnd() + ',').repeat(n - 1) + line.trimEnd() + ']');
    assert.ok(fs.statSync(doc).size > 50 * 1024 * 1024);
    const { result, bytes } = await bytesReadDuring(() => peekDataset('bigdoc', { baseDir: tmp }));
    assert.match(failure(result, 'unreadable'), /20 MiB peek limit/);
    // a first chunk tells a document from JSON Lines; the whole read stops one chunk past the 20 MiB limit
    assert.ok(bytes > 20 * 1024 * 1024 && bytes <= 20 * 1024 * 1024 + 2 * CHUNK + SLACK, `read ${bytes} bytes`);
  });
});
