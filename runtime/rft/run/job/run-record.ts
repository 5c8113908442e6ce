/**
 * The run event that opens a job's event stream, and the run record (`runRecordPath`) that says, after the process
 * is gone, how the run ended: written atomically when the run starts and again when it ends. The first record is
 * padded to RESERVED_BYTES, so that a run ending on a full disk, where the atomic write's temporary file cannot be
 * created, still records why: the final record then overwrites the reserved bytes in place.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION, runRecordPath, type RunEvent, type RunRecord, type StageInfo } from '../../../protocol';
import { writeFileAtomically } from '../../../engine/named-write';
import { isIoError, withIo } from '../../io-failure';

/** The room a run record keeps for its final version (trailing spaces, which JSON ignores). */
export const RESERVED_BYTES = 4096;

export interface RunRecordWriter {
  event: RunEvent;
  write(status: RunRecord['status'], error?: string): void;
}

export function runRecordWriter(args: {
  configPath: string;
  rootJobDir: string;
  backend: string;
  startedAt: number;
  stages: StageInfo[];
  /** The mode of a config without stages (its record is named after it); undefined for a staged config. */
  singleMode: string | undefined;
}): RunRecordWriter {
  const event: RunEvent = {
    type: 'run',
    protocol: PROTOCOL_VERSION,
    runId: randomUUID(),
    config: args.configPath,
    jobDir: args.rootJobDir,
    backend: args.backend,
    startedAt: new Date(args.startedAt).toISOString(),
    pid: process.pid,
    stages: args.stages,
  };
  const { type: _, jobDir: __, ...base } = event;
  const path = join(args.rootJobDir, runRecordPath(args.singleMode));
  return {
    event,
    write(status, error) {
      const record: RunRecord = {
        ...base,
        status,
        ...(status === 'running' ? {} : { endedAt: new Date().toISOString() }),
        ...(error ? { error } : {}),
      };
      const text = fitted(record);
      withIo('run record write', path, () => {
        mkdirSync(dirname(path), { recursive: true });
        try {
          writeFileAtomically(path, status === 'running' ? reserved(text) : text);
        } catch (e) {
          if (status === 'running' || !isIoError(e)) throw e;
          overwriteInPlace(path, text);
        }
      });
    },
  };
}

/** The record's JSON within the reserved room (a very long error is shortened to fit). */
function fitted(record: RunRecord): string {
  let text = `${JSON.stringify(record, null, 1)}\n`;
  const over = Buffer.byteLength(text) - RESERVED_BYTES;
  if (over > 0 && record.error)
    text = `${JSON.stringify({ ...record, error: `${record.error.slice(0, Math.max(0, record.error.length - over - 40))} …` }, null, 1)}\n`;
  return text;
}

/** `text` (ending in a newline) followed by spaces up to RESERVED_BYTES bytes. */
function reserved(text: string): string {
  return text + ' '.repeat(Math.max(0, RESERVED_BYTES - Buffer.byteLength(text)));
}

/** Writes `text` over the start of the existing (reserved) file, blanking the rest: no block has to be allocated. */
function overwriteInPlace(path: string, text: string): void {
  const fd = openSync(path, 'r+');
  try {
    const bytes = new TextEncoder().encode(reserved(text));
    writeSync(fd, bytes, 0, bytes.length, 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
