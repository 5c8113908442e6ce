/** openBuffer: Trinity config sections to storages, defaults from Trinity main, errors that name the key. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  BufferConfigError,
  JsonlExperienceReader,
  QueueRegistry,
  SqlExperienceReader,
  openBuffer,
  openExperienceReader,
  openExperienceWriter,
  resolveBufferConfig,
} from '../../../../runtime/rft/buffer';
import type { ExperienceBufferConfig } from '../../../../runtime/config/types.generated';
import { exp, tmp } from './helpers';

const keyError = (key: string, re: RegExp) => (e: unknown) =>
  e instanceof BufferConfigError && e.key === key && re.test(e.message);

describe('openBuffer', () => {
  test("defaults are Trinity main's ExperienceBufferConfig defaults", () => {
    assert.deepEqual(resolveBufferConfig({}), {
      name: 'experience_buffer',
      storageType: 'queue',
      path: null,
      capacity: 10000,
      maxReadTimeoutS: 1800,
      replay: {
        fnKey: 'buffer.trainer_input.experience_buffer.replay_buffer.priority_fn',
        argsKey: 'buffer.trainer_input.experience_buffer.replay_buffer.priority_fn_args',
        enable: false,
        priorityFn: 'linear_decay',
        reuseCooldownS: null,
        priorityFnArgs: { decay: 2.0 },
      },
      schemaType: null,
      index: 0,
      maxRetryTimes: 3,
      maxRetryIntervalS: 1,
    });
  });

  test('unknown storage_type: a clear error naming the key', () => {
    assert.throws(
      () =>
        openBuffer(
          { name: 'b', storage_type: 'redis' },
          { keyPath: 'buffer.trainer_input.auxiliary_buffers.sft_dataset' },
        ),
      keyError(
        'buffer.trainer_input.auxiliary_buffers.sft_dataset.storage_type',
        /Unknown `buffer\.trainer_input\.auxiliary_buffers\.sft_dataset\.storage_type`: "redis"; expected one of file, queue, sql/,
      ),
    );
  });

  test('a resolved ExperienceBufferConfig section opens the storage its storage_type names (case-insensitive)', async () => {
    const dir = tmp('factory');
    const section: Pick<
      ExperienceBufferConfig,
      'name' | 'storage_type' | 'path' | 'capacity' | 'max_read_timeout' | 'replay_buffer' | 'schema_type'
    > = {
      name: 'gsm8k_buffer',
      storage_type: 'SQL',
      path: `sqlite:///${join(dir, 'gsm8k.db')}`,
      capacity: 10000,
      max_read_timeout: 1800,
      replay_buffer: {
        enable: false,
        priority_fn: 'linear_decay',
        reuse_cooldown_time: null,
        priority_fn_args: { decay: 2.0 },
      },
      schema_type: 'experience',
    };
    const w = openExperienceWriter(section);
    await w.write([exp(0, 0)]);
    await w.finish();
    const r = openExperienceReader(section);
    assert.ok(r instanceof SqlExperienceReader);
    assert.equal(r.policy, 'priority');
    assert.equal(r.table, 'gsm8k_buffer');
    assert.deepEqual(await r.read(1), [exp(0, 0)]);
    r.close();
    const fifo = openBuffer({ ...section, schema_type: 'sft' }).reader() as SqlExperienceReader;
    assert.equal(fifo.policy, 'fifo');
    fifo.close();
    assert.ok(
      openBuffer({ storage_type: 'File', path: join(dir, 'x.jsonl') }).reader() instanceof JsonlExperienceReader,
    );
    assert.throws(
      () => openBuffer({ ...section, schema_type: 'task' }),
      keyError('buffer.trainer_input.experience_buffer.schema_type', /not an experience schema/),
    );
  });

  test("cache_dir gives Trinity's default paths", () => {
    const dir = tmp('cache');
    assert.equal(
      resolveBufferConfig({ storage_type: 'sql', name: 'b' }, { cacheDir: dir }).path,
      `sqlite:///${join(dir, 'b.db')}`,
    );
    assert.equal(
      resolveBufferConfig({ storage_type: 'file' }, { cacheDir: dir }).path,
      join(dir, 'experience_buffer.jsonl'),
    );
    assert.equal(
      resolveBufferConfig({ storage_type: 'queue' }, { cacheDir: dir }).path,
      join(dir, 'experience_buffer.jsonl'),
    );
  });

  test('bad values name their key', () => {
    const k = 'buffer.trainer_input.experience_buffer';
    assert.throws(() => resolveBufferConfig({ capacity: 2.5 }), keyError(`${k}.capacity`, /must be an integer/));
    assert.throws(() => resolveBufferConfig({ max_read_timeout: -1 }), keyError(`${k}.max_read_timeout`, /seconds/));
    assert.throws(
      () => resolveBufferConfig({ storage_type: 'file' }),
      keyError(`${k}.path`, /`path` is required for FILE storage type/),
    );
    assert.throws(
      () => resolveBufferConfig({ replay_buffer: { enable: true, priority_fn: 'exponential' } }),
      keyError(`${k}.replay_buffer.priority_fn`, /expected one of linear_decay, decay_limit_randomization/),
    );
    assert.throws(
      () => resolveBufferConfig({ replay_buffer: { enable: true, priority_fn_args: { decay: 1, sigma: 0.1 } } }),
      keyError(`${k}.replay_buffer.priority_fn_args.sigma`, /linear_decay takes no argument "sigma"/),
    );
    assert.throws(
      () =>
        resolveBufferConfig({
          use_priority_queue: true,
          replay_buffer_kwargs: { priority_fn: 'linear_decay', decay: 'x' },
        }),
      keyError(`${k}.replay_buffer_kwargs.decay`, /must be a number/),
    );
    assert.throws(
      () => resolveBufferConfig({ replay_buffer: { enable: true, reuse_cooldown_time: -2 } }),
      keyError(`${k}.replay_buffer.reuse_cooldown_time`, />= 0/),
    );
    assert.throws(
      () => resolveBufferConfig({ replay_buffer: { enable: true }, capacity: 0 }),
      keyError(`${k}.capacity`, /priority queue/),
    );
  });

  test('an unknown queue path is warned about and not persisted', async () => {
    const warnings: string[] = [];
    const buf = openBuffer(
      { storage_type: 'queue', path: '/tmp/somewhere.parquet' },
      { queueRegistry: new QueueRegistry(), logger: { warn: (m) => warnings.push(m) } },
    );
    const w = buf.writer();
    await w.write([exp(0, 0)]);
    assert.match(warnings[0], /Unknown supported storage path: \/tmp\/somewhere\.parquet/);
    await w.finish();
  });
});
