/**
 * A run as the editor shows it: status, stage, steps of each role, the latest reward and eval score,
 * checkpoints. Built from the event stream of a live run (`applyEvent`) or from a job directory on disk
 * (job-dirs.ts). Plain data, no `vscode`.
 */
import { hostname } from 'node:os';
import type { JobLockHolder, Role, RuntimeEvent, StageInfo } from '../../runtime/protocol';
import { EVAL_SCORE_METRICS } from './eval-scores';
import type { RunEnd, RunWith } from './launchers/launcher';

export type RunStatus =
  | 'starting'
  | 'running'
  | 'stopping'
  | 'finished'
  | 'stopped'
  | 'failed'
  | 'interrupted'
  | 'unknown';

export interface RoleProgress {
  step: number;
  total?: number;
  detail: string;
}

export interface CheckpointInfo {
  step: number;
  path: string;
  /** The stage that wrote it (configs with `stages`). */
  stage?: string;
}

export interface RunState {
  /** What identifies a run across windows: its job directory, and which half of an asynchronous pair it is. */
  key: string;
  /** The run's job directory (absolute). */
  jobDir: string;
  configPath?: string;
  runWith: RunWith;
  status: RunStatus;
  /** Going on now: started by this window and not yet ended, or read from disk with its process running. */
  live: boolean;
  pid?: number;
  /** The process writing the job folder, as the job's lock names it (a run read from disk; maybe on another host). */
  holder?: JobLockHolder;
  /** Epoch milliseconds. */
  startedAt?: number;
  endedAt?: number;
  stages: StageInfo[];
  stage?: { index: number; count: number; name: string; mode: string };
  progress: Partial<Record<Role, RoleProgress>>;
  reward?: number;
  /** The loss of a run without rewards (SFT, DPO). */
  loss?: number;
  /** The latest evaluation's score (one of EVAL_SCORE_METRICS): its taskset, which metric it is, and its value. */
  evalScore?: { taskset: string; metric: string; value: number };
  checkpoints: CheckpointInfo[];
  error?: string;
}

export function newRunState(jobDir: string, runWith: RunWith, configPath?: string, mode?: string): RunState {
  return {
    key: runKey(jobDir, mode),
    jobDir,
    configPath,
    runWith,
    status: 'starting',
    live: true,
    stages: [],
    progress: {},
    checkpoints: [],
  };
}

/** `jobDir`, or `jobDir#explore` / `jobDir#train` for a half of an asynchronous pair (they share the job directory). */
export function runKey(jobDir: string, mode?: string): string {
  return mode === 'explore' || mode === 'train' ? `${jobDir}#${mode}` : jobDir;
}

/** The half of an asynchronous pair a run is (`explore`, `train`), from its key; undefined for a whole job. */
export function runMode(run: RunState): string | undefined {
  return /#(explore|train)$/.exec(run.key)?.[1];
}

/** Trinity's names for a step's reward, best first: the trainer's score is the reward every algorithm logs. */
const REWARD_KEYS = ['critic/score/mean', 'rollout/reward/mean', 'rollout/score/mean', 'rollout/accuracy/mean'];
/** An eval taskset's mean of a metric; of `<key>/mean@k`, the largest k (all its runs) is shown. */
const EVAL_MEAN = /^eval\/(.+)\/([^/]+)\/mean(?:@(\d+))?$/;

/** Losses of the algorithms that learn without rewards (they log no `critic/score`). */
const LOSS_KEYS = ['actor/sft_loss', 'actor/dpo_loss'];

/** Updates the latest reward (or loss) and eval score from one step's metric values. */
export function noteMetrics(run: RunState, values: Record<string, number>): void {
  const loss = LOSS_KEYS.find((k) => Number.isFinite(values[k]));
  if (loss) {
    run.loss = values[loss];
    run.reward = undefined;
  } else
    for (const k of REWARD_KEYS) {
      if (Number.isFinite(values[k])) {
        run.reward = values[k];
        break;
      }
    }
  let best: { rank: number; k: number; score: NonNullable<RunState['evalScore']> } | undefined;
  for (const [key, value] of Object.entries(values)) {
    const m = EVAL_MEAN.exec(key);
    const rank = m ? EVAL_SCORE_METRICS.indexOf(m[2]) : -1;
    const k = Number(m?.[3] ?? 1);
    if (rank < 0 || !Number.isFinite(value)) continue;
    if (!best || rank < best.rank || (rank === best.rank && k > best.k))
      best = { rank, k, score: { taskset: m![1], metric: m![2], value } };
  }
  if (best) run.evalScore = best.score;
}

export function applyEvent(run: RunState, e: RuntimeEvent): void {
  switch (e.type) {
    case 'run':
      if (run.status === 'starting') run.status = 'running';
      // A run without a local process (a Ray job) reports pid 0: never a process to signal.
      if (e.pid > 0) run.pid = e.pid;
      run.stages = e.stages ?? [];
      run.startedAt = Date.parse(e.startedAt) || Date.now();
      run.configPath = e.config;
      break;
    case 'stage':
      run.stage = { index: e.index, count: e.count, name: e.name, mode: e.mode };
      if (!e.skipped) {
        run.progress = {};
        run.reward = run.loss = undefined;
      }
      break;
    case 'progress':
      run.progress[e.role] = { step: e.step, total: e.total, detail: e.detail };
      break;
    case 'metrics':
      noteMetrics(run, e.values);
      // Runtimes without progress events (Trinity's, seen through its event files) still show their step.
      if ((run.progress[e.role]?.step ?? -1) < e.step)
        run.progress[e.role] = { ...run.progress[e.role], step: e.step, detail: run.progress[e.role]?.detail ?? '' };
      break;
    case 'checkpoint':
      run.checkpoints.push({ step: e.step, path: e.path, stage: run.stage?.name });
      break;
    case 'done':
      run.status = e.status === 'refused' ? 'failed' : e.status;
      if (e.error) run.error = e.error;
      break;
    case 'rollouts':
    case 'log':
      break;
  }
}

/** The run has ended (the process exited or the job reached a final state). */
export function applyEnd(run: RunState, end: RunEnd): void {
  run.live = false;
  run.endedAt = Date.now();
  run.status = end.status;
  if (end.error) run.error = end.error;
}

/**
 * Where a run's numbers name its stage: `always` where nothing else names the run (the status bar); `several` beside
 * the run's label, where a run of one stage is not named again (its stage takes the config's `name`, which is the
 * label); `never` on a stage's own row.
 */
export type StageNaming = 'always' | 'several' | 'never';

/**
 * A run's numbers: `grpo step 37/250 · reward 0.41`. Of a run that ended without finishing, the step is the last one
 * done, and is said so (`grpo 62/80 steps done`): it failed, or was stopped, in the step after it.
 */
export function describeProgress(run: RunState, naming: StageNaming): string {
  const role: Role | undefined = run.progress.trainer
    ? 'trainer'
    : run.progress.explorer
      ? 'explorer'
      : run.progress.bench
        ? 'bench'
        : undefined;
  const parts: string[] = [];
  const several = (run.stage?.count ?? run.stages.length) > 1;
  const name =
    naming === 'always' || (naming === 'several' && several) ? (run.stage?.name ?? run.stages[0]?.name) : undefined;
  if (role) {
    const p = run.progress[role]!;
    const prefix = name ? `${name} ` : '';
    const of = `${p.step}${p.total ? `/${p.total}` : ''}`;
    parts.push(endedShortOf(run, p) ? `${prefix}${of} steps done` : `${prefix}step ${of}`);
  } else if (name) parts.push(name);
  if (run.reward !== undefined) parts.push(`reward ${formatNumber(run.reward)}`);
  else if (run.loss !== undefined) parts.push(`loss ${formatNumber(run.loss)}`);
  if (run.evalScore) parts.push(`eval ${formatNumber(run.evalScore.value)}`);
  return parts.join(' · ');
}

/**
 * Whether a role's last step is one the run ended after without finishing (failed or stopped in the step after it,
 * short of its total): then the step is said as steps done, not as the step in progress.
 */
export function endedShortOf(run: RunState, p: { step: number; total?: number }): boolean {
  return !run.live && run.status !== 'finished' && !(p.total && p.step >= p.total);
}

/** The status bar's text for a live run: `$(sync~spin) grpo step 37/250 · reward 0.41`. */
export function runStatusText(run: RunState): string {
  const spin = run.status === 'stopping' ? '$(loading~spin)' : '$(sync~spin)';
  return `${spin} ${describeProgress(run, 'always') || run.status}`;
}

/**
 * How a run ended, with its last numbers: `arith finished · grpo step 90/90 · reward 0.41 · eval 0.73`, or
 * `failed: <the first line of its error>`, or stopped with the checkpoint Resume continues from.
 */
export function describeEnd(run: RunState, label: string): string {
  const how =
    run.status === 'interrupted'
      ? 'ended without finishing (its process is gone)'
      : run.status === 'failed'
        ? `failed${run.error ? `: ${run.error.split('\n')[0]}` : ''}`
        : run.status;
  const last = run.checkpoints.at(-1);
  const kept =
    (run.status === 'stopped' || run.status === 'interrupted') && last
      ? ` · global_step_${last.step} kept, Resume continues from it`
      : '';
  const numbers = describeProgress(run, 'several');
  return `${label} ${how}${numbers ? ` · ${numbers}` : ''}${kept}`;
}

/** The process a job lock names, as every message says it: `pid 4242 on gpu-7, started <local time> (run 5c0f1a2b)`. */
export function describeHolder(holder: JobLockHolder): string {
  const started = Date.parse(holder.startedAt);
  const when = Number.isFinite(started) ? new Date(started).toLocaleString() : holder.startedAt;
  const where = holder.host === hostname() ? '' : ` on ${holder.host}`;
  return `pid ${holder.pid}${where}, started ${when} (run ${holder.runId.slice(0, 8)})`;
}

/** Whether this machine can stop the holder (it runs here): another host's run is stopped there. */
export function holderIsHere(holder: JobLockHolder): boolean {
  return holder.host === hostname();
}

/** The fraction of the current stage done, 0..1, when a total is known. */
export function stageFraction(run: RunState): number | undefined {
  const p = run.progress.trainer?.total
    ? run.progress.trainer
    : run.progress.explorer?.total
      ? run.progress.explorer
      : undefined;
  return p?.total ? Math.min(1, p.step / p.total) : undefined;
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Number(v.toFixed(a < 1 ? 3 : 2)));
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}
