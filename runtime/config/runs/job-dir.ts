/**
 * Where a run writes: Trinity's job directory (`checkpoint_job_dir` when set, else
 * `checkpoint_root_dir/project/group/name`), relative paths taken from the run's working directory, as Trinity does.
 * One home for the rule, used by the runtime (where it writes) and the editor (where it looks for a run).
 */
import { join, resolve } from 'node:path';
import type { Config } from '../types.generated';

export type JobNaming = Pick<Config, 'checkpoint_job_dir' | 'checkpoint_root_dir' | 'project' | 'group' | 'name'>;

/**
 * The naming keys of a resolved config of any release, checked rather than cast: every release has them, but a
 * config with errors may hold a number or nothing there (the editor plans runs of such configs too).
 */
export function jobNamingOf(resolved: Record<string, unknown>): JobNaming {
  const text = (key: keyof JobNaming): string => {
    const v = resolved[key];
    return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
  };
  return {
    checkpoint_job_dir: text('checkpoint_job_dir'),
    checkpoint_root_dir: text('checkpoint_root_dir'),
    project: text('project'),
    group: text('group'),
    name: text('name'),
  };
}

/** The job directory of one resolved (stage) config, relative when the config's paths are. */
export function jobDirPath(cfg: JobNaming): string {
  return cfg.checkpoint_job_dir || join(cfg.checkpoint_root_dir, cfg.project, cfg.group ?? '', cfg.name);
}

/**
 * The job directory of a whole run: a config with several stages keeps its shared state (stage progress, the run
 * record) under the name written at the top level, each stage writing into its own job directory.
 */
export function runJobDirPath(stageConfigs: JobNaming[], writtenName: unknown): string {
  const root = stageConfigs[0];
  if (stageConfigs.length === 1) return jobDirPath(root);
  return join(root.checkpoint_root_dir, root.project, root.group ?? '', String(writtenName ?? root.name));
}

export function jobDirOf(cfg: JobNaming, cwd = process.cwd()): string {
  return resolve(cwd, jobDirPath(cfg));
}

export function runJobDirOf(stageConfigs: JobNaming[], writtenName: unknown, cwd = process.cwd()): string {
  return resolve(cwd, runJobDirPath(stageConfigs, writtenName));
}
