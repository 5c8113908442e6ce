/**
 * The experiences of a `both`-mode run's queue that the trainer has not read yet, kept in its checkpoint so a resumed
 * run trains on them instead of losing them (the explorer resumes after the last step it finished, so these are
 * exactly the ones no future step produces again). One line per queue item: a JSON array of experience records.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileNamed } from '../../engine/named-write';
import type { Experience } from '../experience';
import { experienceToRecord, recordToExperience } from '../buffer/codec';

export const PENDING_FILE = 'pending_experiences.jsonl';

/** Writes into a checkpoint directory that is not yet swapped in (the checkpoint's own atomic rename covers it). */
export function writePendingExperiences(dir: string, batches: readonly Experience[][]): void {
  writeFileNamed(
    join(dir, PENDING_FILE),
    batches.map((b) => `${JSON.stringify(b.map((e) => experienceToRecord(e)))}\n`).join(''),
  );
}

export function readPendingExperiences(dir: string): Experience[][] {
  const path = join(dir, PENDING_FILE);
  if (!existsSync(path)) return [];
  const out: Experience[][] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const records: unknown = JSON.parse(line);
        if (!Array.isArray(records)) throw new Error('not a JSON array of experiences');
        out.push(records.map((r) => recordToExperience(r)));
      } catch (e) {
        throw new Error(`${path}:${i + 1}: ${(e as Error).message}`);
      }
    });
  return out;
}
