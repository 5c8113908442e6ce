/**
 * `file` storage: exact round trips of every kind of experience (specials included), the line format (Trinity's
 * to_dict keys plus ours), tailing a file that is still being written, resuming from a byte position, torn last
 * lines, and corrupt lines reported with file and line.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BufferConfigError,
  BufferStopError,
  CorruptRecordError,
  openBuffer,
  type CorruptRecordError as CRE,
} from '../../../../runtime/rft/buffer';
import { bits, exp, oddExperiences, tmp } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('file storage', () => {
  test('round-trips every experience shape exactly, logprobs bit for bit', async () => {
    const dir = tmp('file');
    const buf = openBuffer({ name: 'exp', storage_type: 'file', path: join(dir, 'sub', 'exp.jsonl') });
    const w = buf.writer();
    const xs = oddExperiences();
    await w.write(xs.slice(0, 2));
    await w.write(xs.slice(2));
    await w.finish();
    const r = buf.reader();
    const back = await r.read(4);
    assert.deepEqual(back, xs);
    for (let i = 0; i < xs.length; i++) {
      assert.deepEqual(bits(back[i].logprobs), bits(xs[i].logprobs));
      assert.deepEqual(bits(back[i].advantages), bits(xs[i].advantages));
      assert.deepEqual(bits(back[i].teacherLogprobs), bits(xs[i].teacherLogprobs));
    }
    await assert.rejects(r.read(1), (e: unknown) => e instanceof BufferStopError && e.reason === 'finished');
  });

  test("lines carry Trinity's Experience.to_dict keys, then the token-level fields", async () => {
    const dir = tmp('fmt');
    const w = openBuffer({ storage_type: 'file', path: join(dir, 'e.json') }).writer();
    await w.write(oddExperiences());
    await w.finish();
    const lines = readFileSync(join(dir, 'e.json'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(lines[0]).slice(0, 8), [
      'eid',
      'type',
      'prompt_length',
      'response_length',
      'info',
      'metrics',
      'prompt_text',
      'response_text',
    ]);
    assert.deepEqual(lines[0].eid, { batch: 3, task: 'gsm8k/7', run: 2, step: 1, suffix: 'a1b2c3' });
    assert.equal(lines[0].response_length, 3);
    assert.deepEqual(lines[0].reward, { $f64: 'NaN' });
    assert.equal(lines[0].logprobs[0].$f64, '-Infinity');
    assert.deepEqual(lines[0].teacher_logprobs, [-0.30000000000000004, { $f64: '-Infinity' }, { $f64: '-0' }]);
    assert.ok(!('teacher_logprobs' in lines[1]), 'absent when the experience has none');
    assert.deepEqual(
      [lines[0].type, lines[1].type, lines[2].type, lines[3].type],
      ['single_turn', 'multi_turn', 'multi_turn', 'dpo'],
    );
    assert.equal(lines[1].truncate_status, 'response_truncated');
    assert.deepEqual(lines[3].chosen, [21, 22]);
  });

  test('a reader tails the file while it is written and ends when the writer finishes', async () => {
    const dir = tmp('tail');
    const buf = openBuffer({ storage_type: 'file', path: join(dir, 'e.jsonl') }, { pollIntervalMs: 5 });
    const r = buf.reader(); // before the file exists
    const first = r.read(3);
    await sleep(20);
    const w = buf.writer();
    await w.write([exp(0, 0)]);
    await sleep(20);
    await w.write([exp(0, 1), exp(0, 2), exp(0, 3)]);
    assert.deepEqual(await first, [exp(0, 0), exp(0, 1), exp(0, 2)]);
    const rest = r.read(2);
    await sleep(20);
    await w.finish();
    await assert.rejects(
      rest,
      (e: unknown) => e instanceof BufferStopError && e.reason === 'finished' && e.available === 1,
    );
    assert.deepEqual(await r.read(1), [exp(0, 3)]);
  });

  test('resumes from a persisted position without loss or repeats', async () => {
    const dir = tmp('resume');
    const buf = openBuffer({ storage_type: 'file', path: join(dir, 'e.jsonl') });
    const w = buf.writer();
    const all = Array.from({ length: 5 }, (_, i) => exp(1, i));
    await w.write(all);
    await w.finish();
    const r1 = buf.reader();
    assert.deepEqual(await r1.read(2), all.slice(0, 2));
    const pos = JSON.parse(JSON.stringify(r1.state()));
    r1.close();
    assert.equal(pos.storage, 'file');
    assert.equal(pos.line, 2);
    assert.equal(pos.delivered, 2);
    const r2 = buf.reader({ resumeFrom: pos });
    assert.deepEqual(await r2.read(3), all.slice(2));
    assert.equal(r2.state().delivered, 5);
    assert.throws(() => buf.reader({ resumeFrom: { ...pos, offset: pos.offset - 1 } }), /line boundary/);
  });

  test('a torn last line is never read, and the next writer cuts it', async () => {
    const dir = tmp('torn');
    const path = join(dir, 'e.jsonl');
    const warnings: string[] = [];
    const buf = openBuffer(
      { storage_type: 'file', path, max_read_timeout: 0.05 },
      { pollIntervalMs: 5, logger: { warn: (m) => warnings.push(m) } },
    );
    const w = buf.writer();
    await w.write([exp(0, 0), exp(0, 1)]);
    appendFileSync(path, '{"eid": {"batch": 0, "task": 2'); // a writer killed mid-line
    const r = buf.reader();
    await assert.rejects(
      r.read(3),
      (e: unknown) => e instanceof BufferStopError && e.reason === 'timeout' && e.available === 2,
    );
    await w.finish();
    const w2 = buf.writer();
    assert.match(warnings.join('\n'), /removing 30 bytes of an incomplete last line/);
    await w2.write([exp(0, 2)]);
    await w2.finish();
    assert.deepEqual(await r.read(3), [exp(0, 0), exp(0, 1), exp(0, 2)]);
  });

  test('corrupt lines are reported with file and line; onCorrupt skips them', async () => {
    const dir = tmp('corrupt');
    const path = join(dir, 'e.jsonl');
    const w = openBuffer({ storage_type: 'file', path }).writer();
    await w.write([exp(0, 0)]);
    appendFileSync(path, '{"eid": oops}\n\n');
    appendFileSync(
      path,
      JSON.stringify({
        eid: { batch: 0, task: 1, run: 0, step: 0, suffix: 'x' },
        type: 'single_turn',
        prompt_length: 1,
        response_length: 1,
        info: {},
        metrics: {},
      }) + '\n',
    );
    await w.write([exp(0, 2)]);
    await w.finish();
    const r = openBuffer({ storage_type: 'file', path }).reader();
    assert.deepEqual(await r.read(1), [exp(0, 0)]);
    await assert.rejects(r.read(1), (e: unknown) => {
      assert.ok(e instanceof CorruptRecordError);
      assert.equal(e.file, path);
      assert.equal(e.line, 2);
      assert.match(
        e.message,
        new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: corrupt experience record`),
      );
      return true;
    });
    const seen: CRE[] = [];
    const r2 = openBuffer({ storage_type: 'file', path }).reader({ onCorrupt: (e) => seen.push(e) });
    assert.deepEqual(await r2.read(2), [exp(0, 0), exp(0, 2)]);
    assert.deepEqual(
      seen.map((e) => e.line),
      [2, 4],
    );
    assert.match(seen[1].message, /Trinity's own JSONWriter/);
  });

  test("the path must end in .json or .jsonl (Trinity's FileStorage check)", () => {
    assert.throws(
      () => openBuffer({ storage_type: 'file', path: '/tmp/x.txt' }),
      (e: unknown) =>
        e instanceof BufferConfigError &&
        /File path must end with '.json' or '.jsonl', got \/tmp\/x.txt/.test(e.message),
    );
  });

  test('writes reject invalid experiences before touching the file', async () => {
    const dir = tmp('invalid');
    const path = join(dir, 'e.jsonl');
    writeFileSync(path, '');
    const w = openBuffer({ storage_type: 'file', path }).writer();
    await assert.rejects(
      w.write([exp(0, 0), { ...exp(0, 1), tokens: [1, 2.5] }]),
      /experience 1 of the batch: `tokens\[1\]` is not an integer/,
    );
    await assert.rejects(w.write([{ ...exp(0, 0), info: { when: new Date(0) } }]), /info.when is a Date/);
    assert.equal(readFileSync(path, 'utf8'), '');
    await w.finish();
  });
});
