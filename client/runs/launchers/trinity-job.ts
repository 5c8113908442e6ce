/**
 * What a launcher of the real Trinity-RFT can know of a job from outside it: the stages and modes its config asks
 * for, the folders its monitor writes per role, how `resume` maps onto `continue_from_checkpoint`, and the log
 * lines by which Trinity reports a failed stage. The config is read as plain YAML (no interpolation): a value
 * written as `${…}` is not known here and its default is used.
 */
import { join } from 'node:path';
import { isMap } from 'yaml';
import { parseYamlDocument } from '../../../runtime/config/load/yaml-document';
import type { Role, StageInfo } from '../../../runtime/protocol';

export interface TrinityJob {
  /** The stages Trinity will run, each in its own job dir (`<job dir>/<stage_name>` for a staged config). */
  stages: StageInfo[];
  /** `continue_from_checkpoint` as written, else Trinity's default (true). */
  continueFromCheckpoint: boolean;
  /** A folder under `monitor/tensorboard/` -> the protocol's role (Trinity names them after the explorer and trainer). */
  roleOf(folder: string): Role | undefined;
}

type Plain = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v && !v.includes('${') ? v : undefined);

export function readTrinityJob(configText: string, jobDir: string): TrinityJob {
  const doc = parseYamlDocument(configText);
  const top = (isMap(doc.contents) ? (doc.toJS() as Plain) : {}) ?? {};
  const mode = str(top.mode) ?? 'both';
  const name = str(top.name) ?? 'rft';
  const stagesIn = Array.isArray(top.stages) ? (top.stages as Plain[]).filter((s) => s && typeof s === 'object') : [];
  const stages: StageInfo[] = stagesIn.length
    ? stagesIn.map((s, i) => {
        const stageName = str(s.stage_name) ?? String(i);
        return { name: stageName, mode: str(s.mode) ?? mode, jobDir: join(jobDir, stageName) };
      })
    : [{ name, mode, jobDir }];
  const explorerName = str((top.explorer as Plain | undefined)?.name) ?? 'explorer';
  const trainerName = str((top.trainer as Plain | undefined)?.name) ?? 'trainer';
  const continueFromCheckpoint = top.continue_from_checkpoint === false ? false : true;
  return {
    stages,
    continueFromCheckpoint,
    roleOf(folder) {
      // Trinity's bench mode renames the explorer `benchmark`.
      if (folder === 'benchmark' || folder === 'bench') return 'bench';
      if (folder === trainerName || folder === 'trainer') return 'trainer';
      if (folder === explorerName || folder === 'explorer') return 'explorer';
      return undefined;
    },
  };
}

/**
 * The config text to run so that the run resumes (or not) as asked: Trinity resumes from the job's last
 * checkpoint when `continue_from_checkpoint` is true (its default), and starts afresh when it is false (renaming
 * the run `<name>_<timestamp>` when the job dir is not empty). Returns undefined when the config already says what
 * was asked; otherwise the text with that one key set (comments and layout kept).
 */
export function configTextForResume(configText: string, resume: boolean): string | undefined {
  if (readTrinityJob(configText, '.').continueFromCheckpoint === resume) return undefined;
  const doc = parseYamlDocument(configText);
  if (!isMap(doc.contents)) return undefined;
  doc.set('continue_from_checkpoint', resume);
  return doc.toString();
}

/**
 * Trinity's `run` logs a failed stage ("Trainer failed:", "Explorer failed:", "Benchmark failed:", "Explorer or
 * Trainer failed:", each followed by the traceback) and returns normally, so its exit status is 0. Returns the
 * failure and the traceback's last line from a run's output, or undefined when no stage failed.
 */
export function stageFailure(lines: readonly string[]): string | undefined {
  const at = lines.findIndex((l) => /\b(Explorer or Trainer|Explorer|Trainer|Benchmark) failed:/.test(l));
  if (at < 0) return undefined;
  const head = lines[at].replace(/^.*?\b((?:Explorer or Trainer|Explorer|Trainer|Benchmark) failed:)/, '$1');
  // The traceback: "Traceback (most recent call last):", indented frames, then the exception's own line.
  const exception = lines.slice(at + 1).find((l) => l.trim() && !/^\s/.test(l) && !l.startsWith('Traceback'));
  return exception ? `${head} ${exception.trim()}` : head;
}
