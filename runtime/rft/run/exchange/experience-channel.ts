/**
 * How an explorer step's experiences reach the trainer in `both` mode. With the default `queue` storage they wait in
 * this process's queue (FIFO or Trinity's priority replay queue), and a checkpoint keeps what it holds
 * (checkpoint/pending.ts). With an `sql` or `file`
 * experience buffer they go through that storage, as under Trinity: written per explorer step, read back by the
 * trainer, so the rows can be inspected, and a checkpoint records the trainer's read position instead.
 */
import type { ExperienceBufferConfig, StorageConfig } from '../../../config/types.generated';
import type { Experience } from '../../experience';
import {
  BufferReadTimeoutError,
  BufferStopError,
  QueueRegistry,
  openBuffer,
  resolveBufferConfig,
  openExperienceReader,
  openExperienceWriter,
  type BufferPosition,
  type ExperienceReader,
  isDatabaseUrl,
  type SqlReadPolicy,
} from '../../buffer';
import { readPendingExperiences, writePendingExperiences } from '../../checkpoint/pending';
import type { RunLog } from '../../monitor/run-log';

export interface ExperienceChannel {
  /** Hands one explorer step's experiences to the trainer's side. */
  put(exps: Experience[]): Promise<void>;
  /** Whether a put now would go past the in-process queue's `capacity` (stored buffers never fill). */
  full(): boolean;
  /**
   * `n` experiences when that many are ready now, else null (then nothing is consumed). With `minModelVersion`
   * (staleness control) older experiences are passed over as the storage does it (buffer/types.ts `ReadOptions`).
   */
  take(n: number, minModelVersion?: number): Promise<Experience[] | null>;
  /** What a checkpoint records of the trainer's side (merged into its `extra`). */
  position(): Record<string, unknown>;
  /** Writes what the checkpoint being saved into `dir` must hold besides `position()`. */
  saveInto(dir: string): void;
  close(): Promise<void>;
  /** Whether read experiences can come back (Trinity's replay buffer with a reuse cooldown). */
  readonly replays: boolean;
}

type BufferSection = ExperienceBufferConfig | StorageConfig;

export const EXPERIENCE_BUFFER_KEY = 'buffer.trainer_input.experience_buffer';

/** Whether `both` mode passes experiences through the configured storage (sql, file) rather than memory. */
export function isStoredBuffer(section: BufferSection | null | undefined): section is BufferSection {
  return section?.storage_type === 'sql' || section?.storage_type === 'file';
}

/**
 * The `queue` storage in this process (FIFO, or Trinity's priority replay queue with reuse), with what it holds
 * saved into checkpoints and put back on resume.
 */
export async function queueChannel(
  section: BufferSection | null | undefined,
  resumeDir: string | undefined,
): Promise<ExperienceChannel & { readonly waiting: number }> {
  const registry = new QueueRegistry();
  const config: BufferSection = section ?? ({ name: 'experience_buffer', storage_type: 'queue' } as BufferSection);
  const buffer = openBuffer(config, { keyPath: EXPERIENCE_BUFFER_KEY, queueRegistry: registry });
  const writer = buffer.writer();
  const reader = buffer.reader();
  const storage = registry.get(buffer.config.name)!;
  if (resumeDir) await storage.restore(readPendingExperiences(resumeDir), new AbortController().signal);
  const full = (): boolean =>
    !buffer.config.replay.enable && buffer.config.capacity > 0 && storage.length() >= buffer.config.capacity;
  return {
    get waiting() {
      return storage.snapshot().reduce((n, b) => n + b.length, 0);
    },
    full,
    put: async (exps) => {
      if (full()) {
        // Nothing in this process would ever make room: the trainer runs on this thread after the write returns.
        throw new Error(
          `${EXPERIENCE_BUFFER_KEY}.capacity ${buffer.config.capacity} is full: in both mode the queue must hold the explorer steps the trainer has not reached yet (up to sync_interval + sync_offset + 1)`,
        );
      }
      await writer.write(exps);
    },
    take: async (n, minModelVersion) => {
      try {
        return await reader.read(n, { timeoutMs: 0, minModelVersion });
      } catch (e) {
        if (e instanceof BufferStopError || e instanceof BufferReadTimeoutError) return null;
        throw e;
      }
    },
    position: () => ({}),
    saveInto: (dir) => writePendingExperiences(dir, storage.snapshot()),
    replays: buffer.config.replay.enable && buffer.config.replay.reuseCooldownS !== null,
    close: async () => {
      reader.close();
      await writer.finish();
    },
  };
}

/** The experience buffer as separate explore and train processes of one job write and read it. */
export interface SharedBuffer {
  section: BufferSection;
  /** How the trainer reads it: a queue's table first in, first out, as the queue hands experiences out. */
  sqlReadPolicy?: SqlReadPolicy;
}

/**
 * Trinity's `queue` across processes (an explore and a train launch of one job) is one Ray actor both reach by name
 * in the job's namespace (trinity/buffer/storage/queue.py `QueueStorage.get_wrapper`), persisted to its `path`.
 * Processes here share files only, so such a queue is the storage of its path: the SQLite table (read FIFO) or the
 * JSON lines file its writer persists to. The refusals turn away a queue the other process could not reach (no
 * path, or a priority replay queue).
 */
export function sharedBuffer(section: BufferSection): SharedBuffer {
  if (String(section.storage_type ?? 'queue').toLowerCase() !== 'queue' || !section.path) return { section };
  if (isDatabaseUrl(section.path)) return { section: { ...section, storage_type: 'sql' }, sqlReadPolicy: 'fifo' };
  return { section: { ...section, storage_type: 'file' } };
}

/**
 * A reader of the trainer's experience buffer resuming at `resumeFrom`. Without one (no checkpoint recorded it) a
 * priority SQL reader's earlier batches are read again: a trainer that took them died before checkpointing them.
 */
export function openTrainerReader(
  section: BufferSection,
  resumeFrom: BufferPosition | undefined,
  resuming: boolean,
  log: RunLog,
  sqlReadPolicy?: SqlReadPolicy,
): ExperienceReader {
  const logger = { warn: (m: string) => log('warning', m) };
  let reader = openExperienceReader(section, { keyPath: EXPERIENCE_BUFFER_KEY, resumeFrom, sqlReadPolicy, logger });
  if (resuming && !resumeFrom) {
    const st = reader.state();
    if (st.storage === 'sql' && st.policy === 'priority' && st.seq > 0) {
      reader.close();
      reader = openExperienceReader(section, {
        keyPath: EXPERIENCE_BUFFER_KEY,
        resumeFrom: { ...st, seq: 0, delivered: 0 },
        logger,
      });
      log(
        'info',
        `no checkpoint holds a buffer position: the ${st.seq} batch(es) an earlier trainer read from ${st.table} are read again`,
      );
    }
  }
  if (resumeFrom) log('info', `buffer position: ${JSON.stringify(resumeFrom)}`);
  return reader;
}

export function storedChannel(
  section: BufferSection,
  resumeFrom: BufferPosition | undefined,
  resuming: boolean,
  log: RunLog,
): ExperienceChannel {
  const writer = openExperienceWriter(section, { keyPath: EXPERIENCE_BUFFER_KEY });
  const reader = openTrainerReader(section, resumeFrom, resuming, log);
  return {
    put: (exps) => writer.write(exps),
    full: () => false,
    take: async (n, minModelVersion) => {
      try {
        return await reader.read(n, { timeoutMs: 0, minModelVersion });
      } catch (e) {
        if (e instanceof BufferStopError) return null;
        throw e;
      }
    },
    position: () => ({ buffer: reader.state() }),
    saveInto: () => {},
    replays: resolveBufferConfig(section, { keyPath: EXPERIENCE_BUFFER_KEY }).replay.enable,
    close: async () => {
      await writer.finish();
      reader.close();
    },
  };
}
