/**
 * Experience buffers as Trinity defines them (trinity/buffer/buffer.py `get_buffer_reader` / `get_buffer_writer`):
 * a resolved experience-buffer config section (`ExperienceBufferConfig`, or an older `StorageConfig`, see
 * runtime/config/types.generated.ts) opens one of the storages by its `storage_type`:
 *
 * - `queue` (queue.ts): in-process FIFO or priority/replay queue, shared by name, optionally persisted to `path`;
 * - `file` (file.ts): JSON lines appended by writers and tailed by readers;
 * - `sql` (sql.ts): a SQLite table in WAL mode, FIFO or priority reads, resumable positions.
 *
 * Key names and defaults are those of Trinity main (`capacity` 10000, `max_read_timeout` 1800 s,
 * `replay_buffer: {enable: false, priority_fn: linear_decay, reuse_cooldown_time: null, priority_fn_args:
 * {decay: 2.0}}`); the pre-v0.3.2 keys `use_priority_queue`, `reuse_cooldown_time` and `replay_buffer_kwargs`
 * (`{priority_fn, ...args}`) are read when `replay_buffer` is absent.
 */
import { resolve } from 'node:path';
import type { ExperienceBufferConfig, ReplayBufferConfig, StorageConfig } from '../../config/types.generated';
import { JsonlExperienceReader, JsonlExperienceWriter, checkJsonPath } from './file';
import { makePriorityFn } from './priority';
import { QueueRegistry, QueueStorage, defaultQueueRegistry, type PersistWriter } from './queue';
import {
  SqlExperienceReader,
  SqlExperienceWriter,
  isDatabaseUrl,
  sqliteFile,
  type SqlOptions,
  type SqlReadPolicy,
} from './sql';
import {
  BufferConfigError,
  consoleLogger,
  type BufferPosition,
  type CorruptHandler,
  type ExperienceReader,
  type ExperienceWriter,
  type Logger,
} from './types';

export * from './types';
export { PRIORITY_FUNCTIONS, makePriorityFn, type PriorityFn } from './priority';
export { QueueRegistry, QueueStorage, defaultQueueRegistry } from './queue';
export { JsonlExperienceReader, JsonlExperienceWriter } from './file';
export { SqlExperienceReader, SqlExperienceWriter, isDatabaseUrl, sqliteFile, type SqlReadPolicy } from './sql';
export { experienceToRecord, recordToExperience } from './codec';

export const STORAGE_TYPES = ['file', 'queue', 'sql'] as const;
export type StorageType = (typeof STORAGE_TYPES)[number];

/** The keys of an experience-buffer section this module reads (all optional; Trinity's defaults fill the rest). */
export interface BufferSectionConfig {
  name?: string;
  storage_type?: string;
  path?: string | null;
  capacity?: number;
  max_read_timeout?: number;
  replay_buffer?: Partial<ReplayBufferConfig> | null;
  schema_type?: string | null;
  index?: number;
  max_retry_times?: number;
  max_retry_interval?: number;
  /** ≤ v0.3.1 StorageConfig. */
  use_priority_queue?: boolean;
  reuse_cooldown_time?: number | null;
  replay_buffer_kwargs?: Record<string, unknown> | null;
}

export interface ResolvedReplay {
  /** Config keys the values came from (for error messages). */
  fnKey: string;
  argsKey: string;
  enable: boolean;
  priorityFn: string;
  reuseCooldownS: number | null;
  priorityFnArgs: Record<string, unknown>;
}

export interface ResolvedBufferConfig {
  name: string;
  storageType: StorageType;
  path: string | null;
  capacity: number;
  maxReadTimeoutS: number;
  replay: ResolvedReplay;
  schemaType: string | null;
  index: number;
  maxRetryTimes: number;
  maxRetryIntervalS: number;
}

export interface OpenBufferOptions {
  /** Dotted path of the section, for error messages (default `buffer.trainer_input.experience_buffer`). */
  keyPath?: string;
  /** Trinity's `buffer.cache_dir`: a missing `path` becomes `<cache_dir>/<name>.db` (sql) or `<cache_dir>/<name>.jsonl`. */
  cacheDir?: string;
  /** Where named queues live (default: one registry per process). */
  queueRegistry?: QueueRegistry;
  /** Uniform source for `decay_limit_randomization`'s noise (default Math.random). */
  random?: () => number;
  /** How often file/sql readers look for new data (default 100 ms; Trinity's SQL reader polls every 1 s). */
  pollIntervalMs?: number;
  /** Overrides the SQL read policy that `schema_type` selects. */
  sqlReadPolicy?: SqlReadPolicy;
  busyTimeoutMs?: number;
  /** fsync file writes after every batch. */
  fsync?: boolean;
  logger?: Logger;
}

export interface ReaderOpenOptions {
  /** A position from an earlier reader's `state()`. */
  resumeFrom?: BufferPosition;
  /** SQL priority reads: the reader's name in the read log. */
  readerName?: string;
  /** Report and skip corrupt records instead of rejecting the read. */
  onCorrupt?: CorruptHandler;
}

export interface ExperienceBuffer {
  readonly config: ResolvedBufferConfig;
  writer(): ExperienceWriter;
  reader(opts?: ReaderOpenOptions): ExperienceReader;
}

function num(v: unknown, key: string, dflt: number, check: (x: number) => boolean, what: string): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !check(v))
    throw new BufferConfigError(key, `\`${key}\` must be ${what}, got ${JSON.stringify(v)}`);
  return v;
}

function cooldown(v: unknown, key: string): number | null {
  return v === undefined || v === null ? null : num(v, key, 0, (x) => x >= 0, 'a number of seconds >= 0, or null');
}

function resolveReplay(c: BufferSectionConfig, keyPath: string): ResolvedReplay {
  const rb = c.replay_buffer;
  if (rb !== undefined && rb !== null) {
    const key = `${keyPath}.replay_buffer`;
    if (typeof rb !== 'object' || Array.isArray(rb)) throw new BufferConfigError(key, `\`${key}\` must be a mapping`);
    const args = rb.priority_fn_args ?? { decay: 2.0 };
    if (typeof args !== 'object' || Array.isArray(args))
      throw new BufferConfigError(`${key}.priority_fn_args`, `\`${key}.priority_fn_args\` must be a mapping`);
    return {
      fnKey: `${key}.priority_fn`,
      argsKey: `${key}.priority_fn_args`,
      enable: rb.enable === true,
      priorityFn: rb.priority_fn ?? 'linear_decay',
      reuseCooldownS: cooldown(rb.reuse_cooldown_time, `${key}.reuse_cooldown_time`),
      priorityFnArgs: args,
    };
  }
  const legacy =
    c.use_priority_queue !== undefined || c.reuse_cooldown_time !== undefined || c.replay_buffer_kwargs !== undefined;
  if (!legacy) {
    const key = `${keyPath}.replay_buffer`;
    return {
      fnKey: `${key}.priority_fn`,
      argsKey: `${key}.priority_fn_args`,
      enable: false,
      priorityFn: 'linear_decay',
      reuseCooldownS: null,
      priorityFnArgs: { decay: 2.0 },
    };
  }
  // ≤ v0.3.1: use_priority_queue / reuse_cooldown_time / replay_buffer_kwargs {priority_fn, ...args}.
  const kwargs = { ...(c.replay_buffer_kwargs ?? { priority_fn: 'linear_decay', decay: 2.0 }) };
  const fn = typeof kwargs.priority_fn === 'string' ? kwargs.priority_fn : 'linear_decay';
  delete kwargs.priority_fn;
  return {
    fnKey: `${keyPath}.replay_buffer_kwargs.priority_fn`,
    argsKey: `${keyPath}.replay_buffer_kwargs`,
    enable: c.use_priority_queue === true,
    priorityFn: fn,
    reuseCooldownS: cooldown(c.reuse_cooldown_time, `${keyPath}.reuse_cooldown_time`),
    priorityFnArgs: kwargs,
  };
}

/** The section with Trinity main's defaults filled in and every value checked; errors name the offending key. */
export function resolveBufferConfig(
  config: BufferSectionConfig | ExperienceBufferConfig | StorageConfig,
  opts: OpenBufferOptions = {},
): ResolvedBufferConfig {
  const c = config as BufferSectionConfig;
  const keyPath = opts.keyPath ?? 'buffer.trainer_input.experience_buffer';
  const st = c.storage_type ?? 'queue';
  const storageType = typeof st === 'string' ? st.toLowerCase() : st;
  if (!(STORAGE_TYPES as readonly unknown[]).includes(storageType)) {
    throw new BufferConfigError(
      `${keyPath}.storage_type`,
      `Unknown \`${keyPath}.storage_type\`: ${JSON.stringify(st)}; expected one of ${STORAGE_TYPES.join(', ')}`,
    );
  }
  const name = c.name || 'experience_buffer';
  let path = c.path ?? null;
  if (path !== null && typeof path !== 'string')
    throw new BufferConfigError(`${keyPath}.path`, `\`${keyPath}.path\` must be a string`);
  if (!path && opts.cacheDir) {
    path =
      storageType === 'sql'
        ? `sqlite:///${resolve(opts.cacheDir, `${name}.db`)}`
        : resolve(opts.cacheDir, `${name}.jsonl`);
  }
  const r: ResolvedBufferConfig = {
    name,
    storageType: storageType as StorageType,
    path: path || null,
    capacity: num(c.capacity, `${keyPath}.capacity`, 10000, Number.isInteger, 'an integer'),
    maxReadTimeoutS: num(
      c.max_read_timeout,
      `${keyPath}.max_read_timeout`,
      1800,
      (x) => x >= 0,
      'a number of seconds >= 0',
    ),
    replay: resolveReplay(c, keyPath),
    schemaType: c.schema_type ?? null,
    index: num(c.index, `${keyPath}.index`, 0, (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer'),
    maxRetryTimes: num(
      c.max_retry_times,
      `${keyPath}.max_retry_times`,
      3,
      (x) => Number.isInteger(x) && x >= 1,
      'an integer >= 1',
    ),
    maxRetryIntervalS: num(
      c.max_retry_interval,
      `${keyPath}.max_retry_interval`,
      1,
      (x) => x >= 0,
      'a number of seconds >= 0',
    ),
  };
  if (r.storageType === 'sql') {
    if (!r.path)
      throw new BufferConfigError(
        `${keyPath}.path`,
        `\`path\` is required for SQL storage type (\`${keyPath}.path\`).`,
      );
    sqliteFile(r.path, `${keyPath}.path`);
  }
  if (r.storageType === 'file') {
    if (!r.path)
      throw new BufferConfigError(
        `${keyPath}.path`,
        `\`path\` is required for FILE storage type (\`${keyPath}.path\`).`,
      );
    checkJsonPath(r.path, `${keyPath}.path`);
  }
  if (r.storageType === 'queue' && r.replay.enable) {
    if (r.capacity < 1)
      throw new BufferConfigError(`${keyPath}.capacity`, `\`${keyPath}.capacity\` must be >= 1 for a priority queue`);
    makePriorityFn(r.replay.priorityFn, r.replay.priorityFnArgs, { fnKey: r.replay.fnKey, argsKey: r.replay.argsKey }); // checks name and args
  }
  return r;
}

function sqlPolicy(r: ResolvedBufferConfig, keyPath: string, override?: SqlReadPolicy): SqlReadPolicy {
  if (override) return override;
  switch (r.schemaType) {
    case null:
    case 'experience':
      return 'priority';
    case 'sft':
    case 'dpo':
      return 'fifo';
    default:
      throw new BufferConfigError(
        `${keyPath}.schema_type`,
        `\`${keyPath}.schema_type\` ${JSON.stringify(r.schemaType)} is not an experience schema (expected experience, sft or dpo)`,
      );
  }
}

/** Opens the storage a resolved experience-buffer section names. */
export function openBuffer(
  config: BufferSectionConfig | ExperienceBufferConfig | StorageConfig,
  opts: OpenBufferOptions = {},
): ExperienceBuffer {
  const keyPath = opts.keyPath ?? 'buffer.trainer_input.experience_buffer';
  const r = resolveBufferConfig(config, opts);
  const logger = opts.logger ?? consoleLogger;
  const sqlOpts: SqlOptions = {
    busyTimeoutMs: opts.busyTimeoutMs,
    maxRetryTimes: r.maxRetryTimes,
    maxRetryIntervalS: r.maxRetryIntervalS,
  };

  switch (r.storageType) {
    case 'sql': {
      const policy = sqlPolicy(r, keyPath, opts.sqlReadPolicy);
      return {
        config: r,
        writer: () => new SqlExperienceWriter(r.path!, r.name, sqlOpts),
        reader: (ro = {}) =>
          new SqlExperienceReader(r.path!, r.name, {
            ...sqlOpts,
            policy,
            replay: r.replay.enable,
            maxReadTimeoutS: r.maxReadTimeoutS,
            index: r.index,
            resumeFrom: ro.resumeFrom,
            readerName: ro.readerName,
            pollIntervalMs: opts.pollIntervalMs,
            logger,
            onCorrupt: ro.onCorrupt,
          }),
      };
    }
    case 'file':
      return {
        config: r,
        writer: () => new JsonlExperienceWriter(r.path!, { fsync: opts.fsync, logger }),
        reader: (ro = {}) =>
          new JsonlExperienceReader(r.path!, {
            maxReadTimeoutS: r.maxReadTimeoutS,
            resumeFrom: ro.resumeFrom,
            pollIntervalMs: opts.pollIntervalMs,
            logger,
            onCorrupt: ro.onCorrupt,
          }),
      };
    case 'queue': {
      const registry = opts.queueRegistry ?? defaultQueueRegistry;
      const storage = (): QueueStorage =>
        registry.getOrCreate(r.name, () => {
          let persist: PersistWriter | undefined;
          if (r.path) {
            if (isDatabaseUrl(r.path)) persist = new SqlExperienceWriter(r.path, r.name, sqlOpts);
            else if (/\.jsonl?$/.test(r.path))
              persist = new JsonlExperienceWriter(r.path, { fsync: opts.fsync, logger });
            else
              logger.warn(
                `Unknown supported storage path: ${r.path} (\`${keyPath}.path\`); experiences of queue "${r.name}" are not saved`,
              );
          }
          return new QueueStorage({
            name: r.name,
            capacity: r.capacity,
            maxReadTimeoutS: r.maxReadTimeoutS,
            priority: r.replay.enable
              ? {
                  fn: makePriorityFn(r.replay.priorityFn, r.replay.priorityFnArgs, {
                    fnKey: r.replay.fnKey,
                    argsKey: r.replay.argsKey,
                    random: opts.random,
                  }),
                  reuseCooldownS: r.replay.reuseCooldownS,
                }
              : undefined,
            persist,
          });
        });
      return {
        config: r,
        writer: () => storage().openWriter(),
        reader: (ro = {}) => storage().openReader(ro.resumeFrom),
      };
    }
  }
}

/** Trinity's get_buffer_writer. */
export function openExperienceWriter(
  config: BufferSectionConfig | ExperienceBufferConfig | StorageConfig,
  opts: OpenBufferOptions = {},
): ExperienceWriter {
  return openBuffer(config, opts).writer();
}

/** Trinity's get_buffer_reader, plus a position to resume from. */
export function openExperienceReader(
  config: BufferSectionConfig | ExperienceBufferConfig | StorageConfig,
  opts: OpenBufferOptions & ReaderOpenOptions = {},
): ExperienceReader {
  return openBuffer(config, opts).reader(opts);
}
