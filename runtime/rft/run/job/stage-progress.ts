/**
 * Which stages of a multi-stage config have finished, and each one's last checkpoint (Trinity's stage_meta.json),
 * so that a resumed run skips them. Only configs with stages keep it: the explore and train processes of one
 * asynchronous job share the job directory, and one finishing must not mark the other's stage done.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomically } from '../../../engine/named-write';
import { withIo } from '../../io-failure';

export interface StageProgress {
  finished: number;
  checkpoints: (string | null)[];
}

export function stageProgressPath(rootJobDir: string): string {
  return join(rootJobDir, 'state', 'stage.json');
}

/** The stages an earlier run finished, when this run resumes; none otherwise. */
export function readStageProgress(path: string, resume: boolean): StageProgress {
  if (resume && existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')) as StageProgress;
  return { finished: 0, checkpoints: [] };
}

export function writeStageProgress(path: string, progress: StageProgress): void {
  withIo('stage progress write', path, () => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileAtomically(path, JSON.stringify(progress));
  });
}
