/**
 * `queue` storage: FIFO order and capacity blocking, Trinity's stop/timeout semantics, the priority queue's ordering,
 * eviction and reuse rules (hand-worked from trinity/buffer/storage/queue.py at main), persistence to `path`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BufferReadTimeoutError,
  BufferStopError,
  QueueRegistry,
  openBuffer,
  type BufferSectionConfig,
  type OpenBufferOptions,
} from '../../../../runtime/rft/buffer';
import type { PriorityQueue } from '../../../../runtime/rft/buffer/queue';
import type { Experience } from '../../../../runtime/rft/experience';
import { exp, tmp, uid } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function queue(cfg: BufferSectionConfig, opts: OpenBufferOptions = {}) {
  const registry = new QueueRegistry();
  const buf = openBuffer(
    { name: 'q', storage_type: 'queue', max_read_timeout: 5, ...cfg },
    { queueRegistry: registry, ...opts },
  );
  return { buf, registry, prios: () => (registry.get(buf.config.name)!.queue as PriorityQueue).priorities() };
}

const ids = (xs: Experience[]) => xs.map(uid);

describe('FIFO queue', () => {
  test('keeps write order across items and blocks writers at capacity (capacity counts items)', async () => {
    const { buf } = queue({ capacity: 2 });
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0), exp(0, 1)]);
    await w.write([exp(1, 0)]);
    let third = false;
    const p = w.write([exp(2, 0), exp(2, 1), exp(2, 2)]).then(() => (third = true));
    await sleep(20);
    assert.equal(third, false, 'the third item waits: the queue holds 2 items');
    assert.deepEqual(ids(await r.read(1)), ['0/0/0']); // pops item 0; its rest stays in the read pool
    await p;
    assert.equal(third, true);
    assert.deepEqual(ids(await r.read(3)), ['0/1/0', '1/0/0', '2/0/0']);
    assert.deepEqual(ids(await r.read(2)), ['2/1/0', '2/2/0']);
    assert.deepEqual(r.state(), { storage: 'queue', name: 'q', delivered: 6 });
    await w.write([]); // an empty batch is not an item
    await w.finish();
    await assert.rejects(
      r.read(1),
      (e: unknown) => e instanceof BufferStopError && e.reason === 'finished' && e.available === 0,
    );
  });

  test('a closed queue stops a read it cannot fill, and keeps what it had', async () => {
    const { buf } = queue({});
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0), exp(0, 1), exp(0, 2)]);
    await w.finish();
    assert.deepEqual(ids(await r.read(2)), ['0/0/0', '0/1/0']);
    await assert.rejects(
      r.read(2),
      (e: unknown) => e instanceof BufferStopError && e.available === 1 && e.requested === 2,
    );
    assert.deepEqual(ids(await r.read(1)), ['0/2/0']);
  });

  test('the queue closes when the last of its writers finishes', async () => {
    const { buf } = queue({});
    const w1 = buf.writer();
    const w2 = buf.writer();
    const r = buf.reader();
    await w1.write([exp(0, 0)]);
    await w1.finish();
    const pending = r.read(2);
    await w2.write([exp(1, 0)]);
    assert.deepEqual(ids(await pending), ['0/0/0', '1/0/0']);
    const last = r.read(1);
    await w2.finish();
    await assert.rejects(last, BufferStopError);
    assert.throws(() => buf.writer(), /closed/);
  });

  test('max_read_timeout: "Read incomplete batch (k/n)", and the k experiences are not lost', async () => {
    const { buf } = queue({ max_read_timeout: 0.05 });
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0), exp(0, 1)]);
    const t0 = Date.now();
    await assert.rejects(r.read(5), (e: unknown) => {
      assert.ok(e instanceof BufferReadTimeoutError);
      assert.equal(e.message, 'Read incomplete batch (2/5), please check your workflow.');
      return true;
    });
    assert.ok(Date.now() - t0 >= 45);
    await assert.rejects(r.read(3, { timeoutMs: 10 }), /\(2\/3\)/);
    assert.deepEqual(ids(await r.read(2)), ['0/0/0', '0/1/0']);
  });

  test('abort and close end a waiting read', async () => {
    const { buf } = queue({});
    const r = buf.reader();
    const ctl = new AbortController();
    const p = r.read(1, { signal: ctl.signal });
    ctl.abort(new Error('stop now'));
    await assert.rejects(p, /stop now/);
    const p2 = r.read(1);
    r.close();
    await assert.rejects(p2, (e: unknown) => e instanceof BufferStopError && e.reason === 'closed');
  });

  test('minModelVersion drops older items (Trinity staleness control)', async () => {
    const { buf } = queue({});
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0, 0, { modelVersion: 1 })]);
    await w.write([exp(1, 0, 0, { modelVersion: 2 }), exp(1, 1, 0, { modelVersion: 2 })]);
    await w.write([exp(2, 0, 0, { modelVersion: 3 })]);
    assert.deepEqual(ids(await r.read(1, { minModelVersion: 2 })), ['1/0/0']);
    assert.deepEqual(ids(await r.read(1, { minModelVersion: 3 })), ['2/0/0'], 'the pooled rest of item 1 is stale too');
  });

  test('writers waiting for room give up when every reader closed', async () => {
    const { buf } = queue({ capacity: 1 });
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0)]);
    const blocked = w.write([exp(1, 0)]);
    r.close();
    await assert.rejects(blocked, (e: unknown) => e instanceof BufferStopError && e.reason === 'closed');
  });

  test('a queue is shared by name and forgotten once closed and read to the end', async () => {
    const { buf, registry } = queue({});
    const other = openBuffer({ name: 'q', storage_type: 'queue' }, { queueRegistry: registry });
    const w = other.writer();
    const r = buf.reader();
    await w.write([exp(0, 0)]);
    assert.deepEqual(ids(await r.read(1)), ['0/0/0']);
    await w.finish();
    assert.ok(registry.get('q'));
    r.close();
    assert.equal(registry.get('q'), undefined);
  });

  test('`path` persists every written batch (jsonl and sqlite)', async () => {
    const dir = tmp('qpersist');
    const { buf } = queue({ path: join(dir, 'q.jsonl') });
    const w = buf.writer();
    await w.write([exp(0, 0), exp(0, 1)]);
    await w.finish();
    assert.equal(readFileSync(join(dir, 'q.jsonl'), 'utf8').trim().split('\n').length, 2);
    const f = openBuffer({ name: 'q', storage_type: 'file', path: join(dir, 'q.jsonl') }).reader();
    assert.deepEqual(await f.read(2), [exp(0, 0), exp(0, 1)]);

    const { buf: b2 } = queue({ name: 'qs', path: `sqlite:///${join(dir, 'q.db')}` });
    const w2 = b2.writer();
    await w2.write([exp(1, 0)]);
    await w2.finish();
    const s = openBuffer({
      name: 'qs',
      storage_type: 'sql',
      path: `sqlite:///${join(dir, 'q.db')}`,
      schema_type: 'sft',
    }).reader();
    assert.deepEqual(await s.read(1), [exp(1, 0)]);
    s.close();
  });
});

describe('priority queue (replay_buffer.enable)', () => {
  const pq = (args: Record<string, unknown>, extra: BufferSectionConfig = {}, opts: OpenBufferOptions = {}) =>
    queue({ capacity: 3, ...extra, replay_buffer: { enable: true, ...args } }, opts);
  const one = (batch: number, mv: number, useCount?: number) => [exp(batch, 0, 0, { modelVersion: mv, useCount })];

  test('linear_decay: highest priority first, oldest first among equals', async () => {
    const { buf, prios } = pq({ priority_fn: 'linear_decay' }, { capacity: 10 });
    const w = buf.writer();
    const r = buf.reader();
    for (const [b, mv] of [
      [0, 1],
      [1, 3],
      [2, 2],
      [3, 3],
    ])
      await w.write(one(b, mv));
    assert.deepEqual(prios(), [3, 3, 2, 1]); // model_version - 2.0 * 0
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(...ids(await r.read(1)));
    assert.deepEqual(got, ['1/0/0', '3/0/0', '2/0/0', '0/0/0']);
  });

  test('full queue: a lower new item is dropped, an equal or higher one evicts the oldest lowest', async () => {
    const { buf, prios } = pq({});
    const w = buf.writer();
    const r = buf.reader();
    await w.write(one(0, 1)); // A: 1
    await w.write(one(1, 3)); // B: 3
    await w.write(one(2, 2)); // C: 2 -> full (3 items)
    await w.write(one(3, 0)); // D: 0 < lowest 1 -> dropped
    assert.deepEqual(prios(), [3, 2, 1]);
    await w.write(one(4, 1)); // E: 1 == lowest -> evicts A
    assert.deepEqual(prios(), [3, 2, 1]);
    await w.write(one(5, 5)); // F: 5 -> evicts E
    assert.deepEqual(prios(), [5, 3, 2]);
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(...ids(await r.read(1)));
    assert.deepEqual(got, ['5/0/0', '1/0/0', '2/0/0']);
  });

  test('reuse_cooldown_time: served items come back with use_count + 1 and priority - decay', async () => {
    const { buf, prios } = pq({ reuse_cooldown_time: 0.03, priority_fn_args: { decay: 2.0 } }, { capacity: 10 });
    const w = buf.writer();
    const r = buf.reader();
    await w.write(one(0, 4)); // A: 4
    await w.write(one(1, 1)); // B: 1
    let [a] = await r.read(1);
    assert.equal(uid(a), '0/0/0');
    assert.equal(a.info?.use_count, 1);
    assert.deepEqual(prios(), [1]);
    await sleep(60);
    assert.deepEqual(prios(), [2, 1]); // A back: 4 - 2*1
    [a] = await r.read(1);
    assert.equal(uid(a), '0/0/0');
    assert.equal(a.info?.use_count, 2);
    await sleep(60);
    assert.deepEqual(prios(), [1, 0]); // A: 4 - 2*2
    const [b] = await r.read(1);
    assert.equal(uid(b), '1/0/0');
    assert.equal(b.info?.use_count, 1);
    await sleep(60);
    assert.deepEqual(prios(), [0, -1]); // B: 1 - 2*1
    await w.finish(); // closing stops reuse
    const last = [...ids(await r.read(1)), ...ids(await r.read(1))];
    assert.deepEqual(last, ['0/0/0', '1/0/0']);
    await sleep(60);
    assert.deepEqual(prios(), []);
    await assert.rejects(r.read(1), BufferStopError);
    r.close();
  });

  test('decay_limit_randomization: served at most use_count_limit times; new items past the limit are dropped', async () => {
    const { buf, prios } = pq(
      {
        priority_fn: 'decay_limit_randomization',
        reuse_cooldown_time: 0.02,
        priority_fn_args: { decay: 1, use_count_limit: 2 },
      },
      { capacity: 10 },
    );
    const w = buf.writer();
    const r = buf.reader();
    await w.write(one(0, 5));
    await w.write(one(1, 9, 2)); // use_count 2 is not < 2: never queued
    assert.deepEqual(prios(), [5]);
    assert.equal((await r.read(1))[0].info?.use_count, 1);
    await sleep(50);
    assert.deepEqual(prios(), [4]); // 1 < 2: back, 5 - 1*1
    assert.equal((await r.read(1))[0].info?.use_count, 2);
    await sleep(50);
    assert.deepEqual(prios(), [], '2 < 2 is false: not put back');
    await assert.rejects(r.read(1, { timeoutMs: 20 }), BufferReadTimeoutError);
    r.close();
  });

  test('decay_limit_randomization adds sigma * N(0,1) noise (Box-Muller from the injected source)', async () => {
    const { buf, prios } = pq(
      { priority_fn: 'decay_limit_randomization', priority_fn_args: { sigma: 0.5 } },
      {},
      { random: () => 0.5 },
    );
    await buf.writer().write(one(0, 3));
    // u1 = u2 = 0.5: sqrt(-2 ln 0.5) * cos(pi) = -1.1774100225154747
    assert.equal(prios()[0], 3 + 0.5 * (Math.sqrt(-2 * Math.log(0.5)) * Math.cos(Math.PI)));
  });

  test('pre-v0.3.2 keys: use_priority_queue, reuse_cooldown_time, replay_buffer_kwargs', async () => {
    const { buf, prios } = queue({
      storage_type: 'QUEUE',
      use_priority_queue: true,
      reuse_cooldown_time: 0.01,
      replay_buffer_kwargs: {
        priority_fn: 'linear_decay_use_count_control_randomization',
        decay: 0.1,
        use_count_limit: 0,
      },
    });
    assert.equal(buf.config.replay.enable, true);
    const w = buf.writer();
    const r = buf.reader();
    await w.write(one(0, 1));
    await r.read(1);
    await sleep(40);
    assert.deepEqual(prios(), [0.9]);
    r.close();
  });
});

describe('queue snapshot and restore (a both-mode checkpoint)', () => {
  test("FIFO: the read pool's rest, then the items in order; restored, reads continue exactly where they were", async () => {
    const { buf, registry } = queue({});
    const w = buf.writer();
    const r = buf.reader();
    await w.write([exp(0, 0), exp(0, 1)]);
    await w.write([exp(1, 0)]);
    assert.deepEqual(ids(await r.read(1)), ['0/0/0']);
    const snap = registry.get('q')!.snapshot();
    assert.deepEqual(snap.map(ids), [['0/1/0'], ['1/0/0']]);

    const other = queue({});
    other.buf.writer(); // creates the storage
    await other.registry.get('q')!.restore(snap, new AbortController().signal);
    assert.deepEqual(ids(await other.buf.reader().read(2)), ['0/1/0', '1/0/0']);
  });

  test('priority replay: items come back highest priority first, with their use counts, and are prioritised by them again', async () => {
    const cfg = {
      replay_buffer: { enable: true, priority_fn: 'linear_decay', priority_fn_args: { decay: 1 } },
    } as BufferSectionConfig;
    const { buf, registry, prios } = queue(cfg);
    const w = buf.writer();
    await w.write([exp(0, 0, 0, { modelVersion: 1 })]);
    await w.write([exp(1, 0, 0, { modelVersion: 3, useCount: 2 })]);
    await w.write([exp(2, 0, 0, { modelVersion: 2 })]);
    const before = prios();
    const snap = registry.get('q')!.snapshot();
    assert.deepEqual(
      snap.map(ids),
      [['2/0/0'], ['0/0/0'], ['1/0/0']],
      'linear_decay: version − decay·use_count, highest first',
    );
    const other = queue(cfg);
    other.buf.writer();
    await other.registry.get('q')!.restore(snap, new AbortController().signal);
    assert.deepEqual(other.prios(), before);
    const r = other.buf.reader();
    assert.deepEqual(ids(await r.read(3)), ['2/0/0', '0/0/0', '1/0/0']);
  });
});
