/**
 * The run event that opens a job's event stream, and the run record (`runRecordPath`) that says, after the process
 * is gone, how the run ended: written atomically when the run starts and again when it ends.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION, runRecordPath, type RunEvent, type RunRecord, type StageInfo } from '../../../protocol';
import { writeFileAtomically } from '../../checkpoint/checkpoints';

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
      mkdirSync(dirname(path), { recursive: true });
      writeFileAtomically(path, `${JSON.stringify(record, null, 1)}\n`);
    },
  };
}
