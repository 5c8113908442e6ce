/**
 * What every way of running a config shares: the local runtime (`node dist/cli.js run --events jsonl`), the real
 * Trinity-RFT (`python -m trinity.cli.launcher run`) and a Ray job (Jobs REST API). A launcher starts a run and
 * turns what it can observe into `runtime/protocol.ts` events; the run manager knows nothing else of it.
 * No `vscode` import: launchers are tested with real processes and servers outside VS Code.
 */
import type { JobRefusal, RuntimeEvent } from '../../../runtime/protocol';

export type RunWith = 'local' | 'trinity' | 'ray-job';

export interface LaunchSpec {
  /** Absolute path of the Trinity config. */
  configPath: string;
  /** Working directory of the run (the workspace folder holding the config). */
  cwd: string;
  /** The job directory the config writes to (`checkpoint_root_dir/project/group/name`), absolute. */
  jobDir: string;
  /** The config's mode when it has no stages (`explore` and `train` halves of one job share its directory). */
  mode?: string;
  /** Continue from the job's last checkpoint (`continue_from_checkpoint`). */
  resume: boolean;
  pluginDirs: string[];
  /** Environment of the run (the window's environment plus settings). */
  env: NodeJS.ProcessEnv;
}

/** Where a launcher reports. Calls may come from any point until `ended` resolves. */
export interface LaunchSink {
  /** An event in the protocol's shape (launchers that do not run our runtime synthesise them). */
  event(e: RuntimeEvent): void;
  /** One line of the run's diagnostic output (stderr, Trinity's log, the Ray job's log). */
  output(line: string): void;
  /** Something odd but not fatal (a non-JSON stdout line, an unreadable event file). */
  warn(message: string): void;
}

export interface RunEnd {
  status: 'finished' | 'stopped' | 'failed';
  /** Why it failed, in words the user can act on. */
  error?: string;
  exitCode?: number | null;
  signal?: string | null;
  /** The run never started: another run holds the job folder (the runtime's `done` event names it). */
  refusal?: JobRefusal;
}

export interface LaunchedRun {
  /** What identifies the run outside this window: a pid, a Ray submission id. */
  readonly id: string;
  /** The local process (group leader), when there is one; tests check it is gone after stop. */
  readonly pid?: number;
  /**
   * Asks the run to stop (SIGTERM, Ray's stop), and forces it after `graceMs` (SIGKILL of the process group).
   * Resolves once the run has ended.
   */
  stop(graceMs: number): Promise<RunEnd>;
  /** Resolves once, when the run has ended for any reason; never rejects. */
  readonly ended: Promise<RunEnd>;
}

export interface Launcher {
  readonly kind: RunWith;
  /** Starts the run; rejects (with a message that says the fix) when it cannot start at all. */
  launch(spec: LaunchSpec, sink: LaunchSink): Promise<LaunchedRun>;
}
