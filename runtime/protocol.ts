/**
 * The runtime's event stream (`trinity-workbench run --events jsonl`): one JSON object per stdout line. Type-only
 * (but for the version), shared by the runtime, the extension and the tests. This stream is the only contract
 * between the extension and the runtime: a reader ignores event types it does not know, and the version in `run`
 * goes up when a field changes meaning.
 */

/** Version of this stream, sent in the `run` event. */
export const PROTOCOL_VERSION = 1;

export type Role = 'explorer' | 'trainer' | 'bench';

export interface RunEvent {
  type: 'run';
  /** PROTOCOL_VERSION of the runtime that wrote the stream. */
  protocol: number;
  runId: string;
  config: string;
  jobDir: string;
  backend: string;
  startedAt: string;
  /** The runtime's process id (the extension stops it by its process group); 0 when no local process runs it. */
  pid: number;
  /** The stages that will run, in order (one, named after the config, when it has no `stages`). */
  stages: StageInfo[];
}

export interface StageInfo {
  name: string;
  mode: string;
  jobDir: string;
}

/** A stage begins (also sent for a stage skipped because an earlier run finished it, with `skipped`). */
export interface StageEvent {
  type: 'stage';
  index: number;
  count: number;
  name: string;
  mode: string;
  jobDir: string;
  skipped?: boolean;
}

/** A role finished a step: what the status bar and progress notification show. */
export interface ProgressEvent {
  type: 'progress';
  role: Role;
  step: number;
  /** Steps this role will take in this stage, when known. */
  total?: number;
  /** Short words for the step, e.g. `reward 0.41`. */
  detail: string;
}

export interface MetricsEvent {
  type: 'metrics';
  role: Role;
  step: number;
  /** Seconds since the run started. */
  time: number;
  values: Record<string, number>;
}

/**
 * One rollout as a step reports it (the `rollouts` event, a line of monitor/rollouts.jsonl). Multi-turn experiences
 * (a concatenated episode, or one step of a step-wise episode) also carry their conversation and what the policy did.
 */
export interface RolloutSample {
  prompt: string;
  response: string;
  reward: number;
  /** The conversation in order, the model's turns as role `assistant` (a step-wise step: its prompt messages and its answer). */
  messages?: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[];
  /** The run (episode) of the task and, for step-wise experiences, the step within it (`eid.run`, `eid.step`). */
  run?: number;
  step?: number;
  /** A concatenated episode's reward for each assistant turn, in order (the environment's step rewards). */
  turnRewards?: number[];
  /**
   * The model turns (index among the assistant turns) whose answer the environment parsed as its invalid action
   * (FrozenLake: no fenced block naming a direction); the episode ended on one when it holds the last turn.
   */
  invalidActions?: number[];
  /** Token ids after the prompt, and 1 where the policy sampled the token, 0 where the template or environment added it. */
  responseTokens?: number[];
  actionMask?: number[];
  /** Each of `responseTokens` decoded alone (special tokens kept), so a viewer can show token boundaries without the tokenizer. */
  tokenTexts?: string[];
  /** The GRPO group the experience belongs to: every run of one task in one batch (`eid.batch/eid.task`). */
  task?: string;
  /** The experience's numeric `info` (FrozenLake: `env_steps`, `env_done`, `test_score`). */
  metrics?: Record<string, number>;
  /** The episode ended on its token budget or the model's context (`response_truncated`). */
  truncated?: boolean;
  /** The advantage the explorer-side pipeline gave it (GRPO: the group-normalised reward), when it computed one. */
  advantage?: number;
}

export interface RolloutsEvent {
  type: 'rollouts';
  step: number;
  samples: RolloutSample[];
  /**
   * Records of an evaluation at `step` (monitor/eval-rollouts.jsonl): the eval taskset's name, and the role whose
   * metrics hold its numbers (`explorer`, or `bench` for `mode: bench`). Absent: an explorer step's rollouts.
   */
  eval?: { taskset: string; role: 'explorer' | 'bench' };
}

export interface LogEvent {
  type: 'log';
  level: 'debug' | 'info' | 'warning' | 'error';
  message: string;
}

export interface CheckpointEvent {
  type: 'checkpoint';
  step: number;
  path: string;
}

export interface DoneEvent {
  type: 'done';
  /**
   * `refused`: the run never started, because another run holds the job folder (`refusal` says which); the job's
   * run record is that run's and is left alone.
   */
  status: 'finished' | 'stopped' | 'failed' | 'refused';
  error?: string;
  refusal?: JobRefusal;
}

/** Why a run was refused before any work. */
export interface JobRefusal {
  /** `job-locked`: another run writes this job folder (a live process here, or one on another host). */
  reason: 'job-locked';
  /** The job's lock file and the run it names. */
  lockFile: string;
  holder: JobLockHolder;
}

export type RuntimeEvent =
  | RunEvent
  | StageEvent
  | ProgressEvent
  | MetricsEvent
  | RolloutsEvent
  | LogEvent
  | CheckpointEvent
  | DoneEvent;

/**
 * `<job dir>/state/run.json`: the runtime's record of its latest run in a job directory, written atomically when
 * the run starts and when it ends, so that a window that did not start the run can tell its state. A record that
 * says `running` whose pid is gone is a run that was killed.
 */
export interface RunRecord {
  protocol: number;
  runId: string;
  config: string;
  status: 'running' | 'finished' | 'stopped' | 'failed';
  pid: number;
  backend: string;
  startedAt: string;
  endedAt?: string;
  error?: string;
  stages: StageInfo[];
}

/**
 * Where a run record sits, relative to its job directory. The explore and train processes of one asynchronous job
 * share the job directory, so each of them keeps its own record (`mode` is the config's mode when it has no stages).
 */
export function runRecordPath(mode?: string): string {
  return mode === 'explore' || mode === 'train' ? `state/run-${mode}.json` : 'state/run.json';
}

/** Every record name `runRecordPath` gives, as a pattern on the file name in `state/`. */
export const RUN_RECORD_FILE = /^run(-explore|-train)?\.json$/;

/**
 * `<job dir>/state/lock.json` (`lock-explore.json`, `lock-train.json` for the two processes of an asynchronous job,
 * as with run records): the run that writes the job folder now. A run takes the job by an OS lock on the sibling
 * `lock*.db` (SQLite's exclusive lock, which the kernel releases when the process exits, even by SIGKILL), then
 * writes this file; it removes the file when it ends. A second run is refused while the lock is held; a file left
 * behind by a run that died is taken over, with a line saying so. A holder is live when its host is this machine
 * and its process (that pid, started before it took the lock) is alive (run-records.ts `lockHolderLive`); on another
 * host, this machine cannot tell.
 */
export interface JobLockHolder {
  protocol: number;
  runId: string;
  pid: number;
  host: string;
  /** ISO time the run took the job. */
  startedAt: string;
  /** The config file the run was started with. */
  config: string;
}

/** Where a job lock's holder file sits, relative to its job directory (`mode` as for `runRecordPath`). */
export function jobLockPath(mode?: string): string {
  return mode === 'explore' || mode === 'train' ? `state/lock-${mode}.json` : 'state/lock.json';
}
