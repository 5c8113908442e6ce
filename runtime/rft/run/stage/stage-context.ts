/**
 * What every mode gets of its stage (the resolved stage config, where things go, how to report, when to stop), what
 * it returns, and how its set-up refuses a config it cannot run.
 */
import type { Config } from '../../../config/types.generated';
import type { Release } from '../../../config/releases';
import type { RunLog } from '../../monitor/run-log';
import type { Monitor } from '../../monitor/run-monitor';

export interface StageContext {
  cfg: Config;
  release: Release;
  /** Whether the user wrote the key at a dotted path of `cfg` (the resolved config also holds defaults). */
  written: (path: string) => boolean;
  configDir: string;
  jobDir: string;
  /** Overrides model.model_path (a later stage starts from the previous stage's checkpoint). */
  modelPath?: string;
  monitor: Monitor;
  log: RunLog;
  /** Aborted on SIGTERM/stop: runners finish the current unit of work, never write half a checkpoint, and return. */
  signal: AbortSignal;
  seed: number;
  /** The job's plugin directories, absolute (already loaded in this thread; a worker thread loads them again). */
  pluginDirs: string[];
  /** Progress lines for the terminal (steps, rates); silent when events go to stdout. */
  progress: (role: 'explorer' | 'trainer' | 'bench', step: number, total: number | undefined, detail: string) => void;
}

export interface StageResult {
  /** The newest checkpoint this stage wrote (the next stage starts from it). */
  lastCheckpoint?: string;
  /** Final eval metrics by name, for the summary table. */
  evals: Record<string, number>;
  stopped: boolean;
}

/** A stage's config asks for something its set-up cannot provide (a model that does not load, a missing section). */
export class RunSetupError extends Error {}
