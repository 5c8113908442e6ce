/**
 * Which checkpoint of a job to trust. A resume takes the newest `global_step_N` whose manifest verifies (manifest.ts),
 * whatever the pointer file says: a newer damaged one (a machine crash can truncate a file the rename had already
 * made visible) is set aside as `global_step_N.damaged` with a warning naming the file and why, so that no later
 * listing, pruning or bench takes it, and the pointer is moved to the one chosen. When checkpoints exist but none
 * verifies the resume is refused, naming each, rather than silently starting over.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from '../../run-records';
import { replaceFileDurably } from './durable-files';
import { verifyCheckpoint, type CheckpointVerdict } from './manifest';

export const POINTER_FILE = 'latest_checkpointed_iteration.txt';

export interface CheckpointRef {
  step: number;
  dir: string;
}

type Log = (level: 'info' | 'warning', message: string) => void;

export class NoIntactCheckpoint extends Error {
  override name = 'NoIntactCheckpoint';
}

/** Every `global_step_N` directory of the job, newest first. */
export function checkpointDirs(jobDir: string): CheckpointRef[] {
  if (!existsSync(jobDir)) return [];
  return readdirSync(jobDir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? /^global_step_(\d+)$/.exec(e.name) : null))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ step: Number(m[1]), dir: join(jobDir, m[0]) }))
    .sort((a, b) => b.step - a.step);
}

/** Why a checkpoint cannot be used, or undefined when it can (verified, or written before manifests, and whole). */
export function checkpointProblem(dir: string): string | undefined {
  const v: CheckpointVerdict = verifyCheckpoint(dir);
  if (v.status === 'damaged') return `${v.file}: ${v.reason}`;
  if (v.status === 'unverified' && !existsSync(join(dir, 'trainer_state.json')))
    return 'trainer_state.json: missing (and no manifest.json)';
  return undefined;
}

/**
 * The checkpoint a resume continues from: the newest intact one, after setting aside the damaged ones newer than it
 * and moving the pointer to it. Undefined when the job has no checkpoint; NoIntactCheckpoint when none is intact.
 */
export function newestIntactCheckpoint(jobDir: string, log: Log): CheckpointRef | undefined {
  removeAbandonedWrites(jobDir);
  const damaged: { ref: CheckpointRef; problem: string }[] = [];
  let chosen: CheckpointRef | undefined;
  for (const ref of checkpointDirs(jobDir)) {
    const problem = checkpointProblem(ref.dir);
    if (problem === undefined) {
      chosen = ref;
      break;
    }
    damaged.push({ ref, problem });
  }
  if (!chosen) {
    if (!damaged.length) return undefined;
    throw new NoIntactCheckpoint(
      `continue_from_checkpoint: no checkpoint in ${jobDir} is intact, so the run cannot resume:\n` +
        damaged.map((d) => `  global_step_${d.ref.step}: ${d.problem}`).join('\n') +
        `\nTo start over instead, set continue_from_checkpoint: false (or move these directories away).`,
    );
  }
  for (const { ref, problem } of damaged) {
    const aside = setAside(ref.dir);
    log(
      'warning',
      `checkpoint global_step_${ref.step} is damaged: ${problem}; it is set aside as ${aside} and the run resumes from global_step_${chosen.step}`,
    );
  }
  const pointer = join(jobDir, POINTER_FILE);
  const pointed = existsSync(pointer) ? Number(readFileSync(pointer, 'utf8').trim()) : undefined;
  if (pointed !== chosen.step) {
    replaceFileDurably(pointer, `${chosen.step}\n`);
    log('info', `${POINTER_FILE} now names global_step_${chosen.step} (it named ${pointed ?? 'nothing'})`);
  }
  return chosen;
}

/** Renames a damaged checkpoint out of the `global_step_N` namespace; returns its new name. */
function setAside(dir: string): string {
  for (let i = 1; ; i++) {
    const target = `${dir}.damaged${i === 1 ? '' : `-${i}`}`;
    if (existsSync(target)) continue;
    renameSync(dir, target);
    return target.slice(target.lastIndexOf('/') + 1);
  }
}

/** Temporary directories of checkpoint writes whose process died (a kill mid-write): only disk space. */
function removeAbandonedWrites(jobDir: string): void {
  if (!existsSync(jobDir)) return;
  for (const name of readdirSync(jobDir)) {
    const m = /^\.global_step_\d+\.(?:tmp|old)-(\d+)$/.exec(name);
    if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1])))
      rmSync(join(jobDir, name), { recursive: true, force: true });
  }
}
