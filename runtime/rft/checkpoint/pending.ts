/**
 * Experiences the explorer produced that the trainer has not consumed yet, kept in a `both`-mode checkpoint so a
 * resumed run trains on them instead of losing them (the explorer resumes after the last step it finished, so
 * these are exactly the ones no future step will produce again).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Experience } from '../experience';
import { experienceToRecord, recordToExperience } from '../buffer/codec';

export const PENDING_FILE = 'pending_experiences.jsonl';

/** Writes into a checkpoint directory that is not yet swapped in (the checkpoint's own atomic rename covers it). */
export function writePendingExperiences(dir: string, exps: readonly Experience[]): void {
  writeFileSync(join(dir, PENDING_FILE), exps.map((e) => `${JSON.stringify(experienceToRecord(e))}\n`).join(''));
}

export function readPendingExperiences(dir: string): Experience[] {
  const path = join(dir, PENDING_FILE);
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: Experience[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push(recordToExperience(JSON.parse(line)));
    } catch (e) {
      throw new Error(`${path}:${i + 1}: ${(e as Error).message}`);
    }
  });
  return out;
}
