/**
 * Event files from an independent writer: Python with Google's protobuf runtime (Debian's python3-protobuf) and
 * its own CRC-32C (test/fixtures/trinity-standin/tfevents_writer.py), never the project's TypeScript writer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Debian's Python, which has python3-protobuf and python3-yaml (.ci/run installs them). */
export const PYTHON = process.env.TRINITY_TEST_PYTHON ?? '/usr/bin/python3';
export const STANDIN_DIR = resolve(__dirname, '..', 'fixtures', 'trinity-standin');
const WRITER = join(STANDIN_DIR, 'tfevents_writer.py');

export type EventRecord = (
  | { scalar: string; value: number; step: number }
  | {
      tensor: string;
      value: number;
      step: number;
      encoding: 'float_val' | 'double_val' | 'content_f32' | 'content_f64';
    }
  | { histogram: string; values: number[]; step: number }
  | { graph: true }
  | { file_version: true }
  | { session_start: true; step: number }
) & { wall_time?: number; corrupt?: 'length' | 'payload'; cut?: number };

/** Appends the records to `file` (created if missing); returns each record's byte offset. */
export function writeEvents(file: string, records: EventRecord[]): number[] {
  const spec = join(mkdtempSync(join(tmpdir(), 'twb-tfspec-')), 'spec.json');
  writeFileSync(spec, JSON.stringify({ file, records }));
  return JSON.parse(execFileSync(PYTHON, [WRITER, spec], { encoding: 'utf8' })) as number[];
}
