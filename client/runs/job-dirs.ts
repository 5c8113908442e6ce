/**
 * Runs on disk: job directories under the workspace (ours hold `state/run.json` and `monitor/metrics.jsonl`;
 * Trinity-RFT's hold `monitor/tensorboard/`), read back into `RunState`s so that runs of earlier windows, of the
 * terminal and of other machines show in the Runs view. A record that says running, of a process that is alive, is
 * a live run (started elsewhere); its numbers are its own: metrics logged before it started (an earlier run of the
 * same job directory appends to the same files) are not its. The directory walk has a limited depth, and each job's
 * metrics are read incrementally (runtime/metrics), so a rescan reads only what the files gained.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Role, StageInfo } from '../../runtime/protocol';
import {
  lockHolderLive,
  processRuns,
  readJobRunsNow,
  readRunRecords,
  type JobRunNow,
  type ProcessProbe,
} from '../../runtime/run-records';
import { MetricsReader } from '../../runtime/metrics/job-metrics';
import { noteMetrics, runKey, type CheckpointInfo, type RunState } from './run-state';

const SKIP = new Set(['node_modules', '.git', 'dist', 'out', '__pycache__', '.venv', 'venv']);
const GLOBAL_STEP = /^global_step_(\d+)$/;
/** What a job folder holds besides its stages' folders: the search does not go in. */
const JOB_PARTS = new Set(['monitor', 'buffer', 'state']);

/** Job directories under `roots`, down to `maxDepth` levels; a run's stage directories are not listed apart. */
export function findJobDirs(roots: string[], maxDepth = 6): string[] {
  const found = new Set<string>();
  const stageDirs = new Set<string>();
  const walk = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const records = names.includes('state') ? readRunRecords(dir) : [];
    if (records.length) {
      found.add(dir);
      for (const { record } of records)
        for (const s of record.stages ?? []) if (resolve(s.jobDir) !== dir) stageDirs.add(resolve(s.jobDir));
    } else if (
      names.includes('monitor') &&
      (existsSync(join(dir, 'monitor', 'metrics.jsonl')) || existsSync(join(dir, 'monitor', 'tensorboard')))
    ) {
      found.add(dir);
      return;
    }
    if (depth >= maxDepth) return;
    for (const n of names) {
      if (n.startsWith('.') || SKIP.has(n) || GLOBAL_STEP.test(n) || JOB_PARTS.has(n)) continue;
      const p = join(dir, n);
      try {
        if (statSync(p).isDirectory()) walk(p, depth + 1);
      } catch {
        // Vanished or unreadable: not a run.
      }
    }
  };
  for (const r of roots) walk(resolve(r), 0);
  return [...found].filter((d) => !stageDirs.has(d)).sort();
}

/** Every run of a job directory: one per run record (the explore and train halves of a job each keep one), else one. */
export function readJobRuns(jobDir: string, isAlive: ProcessProbe = processRuns): RunState[] {
  const runs = readJobRunsNow(resolve(jobDir), isAlive);
  return runs.length ? runs.map((r) => runFrom(jobDir, r)) : [runFrom(jobDir, undefined)];
}

/** A job directory as one run (its first record's): the record, each stage's latest metrics and its checkpoints. */
export function readJobDir(jobDir: string, isAlive: ProcessProbe = processRuns): RunState {
  return readJobRuns(jobDir, isAlive)[0];
}

function runFrom(jobDir: string, now: JobRunNow | undefined): RunState {
  const dir = resolve(jobDir);
  const { record, mode, holder } = now ?? {};
  const stages: StageInfo[] = record?.stages?.length ? record.stages : [{ name: basename(dir), mode: '', jobDir: dir }];
  const run: RunState = {
    key: runKey(dir, mode),
    jobDir: dir,
    configPath: record?.config,
    runWith: record ? 'local' : 'trinity',
    status: record ? record.status : 'unknown',
    live: now?.live ?? false,
    pid: record?.pid,
    startedAt: record ? Date.parse(record.startedAt) : undefined,
    endedAt: record?.endedAt ? Date.parse(record.endedAt) : undefined,
    stages,
    progress: {},
    checkpoints: [],
    error: record?.error,
  };
  // The job's live lock holder is the run writing the folder now, also while the record is still an earlier run's.
  if (holder) {
    if (holder.runId !== record?.runId)
      Object.assign(run, {
        startedAt: Date.parse(holder.startedAt),
        endedAt: undefined,
        error: undefined,
        configPath: holder.config || run.configPath,
      });
    Object.assign(run, { status: 'running', live: true, pid: holder.pid, holder });
  }
  // A record that still says running, of a process that is gone, is a run that was killed.
  if (run.status === 'running' && !run.live) run.status = 'interrupted';
  let lastWall: number | undefined;
  // The two halves of an asynchronous job write into one metrics file: each shows its own role.
  const ownRole: Role | undefined = mode === 'explore' ? 'explorer' : mode === 'train' ? 'trainer' : undefined;
  for (const [i, s] of stages.entries()) {
    const { steps: latest, evals } = latestSteps(s.jobDir, run.startedAt);
    if (latest.length) {
      run.stage = { index: i, count: stages.length, name: s.name, mode: s.mode };
      run.progress = {};
      run.reward = run.loss = undefined;
    }
    // Evaluated every eval_interval steps only: the last evaluation, as this window's runs keep it from their events.
    noteMetrics(run, evals);
    for (const m of latest) {
      if (ownRole && m.role !== ownRole) continue;
      noteMetrics(run, m.values);
      run.progress[m.role] = { step: m.step, detail: '' };
      if (m.wallTime !== null) lastWall = Math.max(lastWall ?? 0, m.wallTime);
    }
    run.checkpoints.push(...checkpointsIn(s.jobDir, stages.length > 1 ? s.name : undefined));
  }
  // A killed run's record has no end: its last logged step is when it stopped.
  if (run.endedAt === undefined && lastWall !== undefined && run.status !== 'running') run.endedAt = lastWall * 1000;
  return run;
}

/** Whether the process of a run read from disk still runs (its lock's holder, else its record's). */
export function stillRuns(run: RunState, isAlive: ProcessProbe = processRuns): boolean {
  if (run.holder) return lockHolderLive(run.holder, isAlive);
  return run.pid !== undefined && isAlive(run.pid, run.startedAt);
}

/**
 * A job's checkpoints: each stage's, named by its stage, when its record lists several stages (each stage saves
 * into its own folder and counts its steps from 1), else those in the job directory itself.
 */
export function jobCheckpoints(jobDir: string): CheckpointInfo[] {
  const stages = readRunRecords(jobDir)[0]?.record.stages ?? [];
  if (stages.length <= 1) return checkpointsIn(jobDir);
  return stages.flatMap((s) => checkpointsIn(s.jobDir, s.name));
}

export function checkpointsIn(jobDir: string, stage?: string): CheckpointInfo[] {
  let names: string[];
  try {
    names = readdirSync(jobDir);
  } catch {
    return [];
  }
  return names
    .flatMap((n) => {
      const m = GLOBAL_STEP.exec(n);
      return m ? [{ step: Number(m[1]), path: join(jobDir, n), ...(stage ? { stage } : {}) }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

interface LatestStep {
  role: Role;
  step: number;
  wallTime: number | null;
  values: Record<string, number>;
}

/**
 * One metrics reader per job directory (our metrics.jsonl, else Trinity's TensorBoard event files) and run start,
 * kept so that each look at a job reads only what its files gained since the last one.
 */
const readers = new Map<
  string,
  { reader: MetricsReader; latest: Map<Role, LatestStep>; evals: Record<string, number> }
>();
const MAX_READERS = 200;

/** Rows logged this long before a run's recorded start still count as its own (clocks of one machine). */
const START_SLACK_MS = 2000;

/**
 * The latest step of each role in a job directory, with that step's values. With `since` (the run's start, from its
 * record), only rows logged since then count, and the latest is the last one logged (a resumed run logs its steps
 * again from its checkpoint); without a record (Trinity's own runs), the highest step.
 */
function latestSteps(jobDir: string, since?: number): { steps: LatestStep[]; evals: Record<string, number> } {
  if (!existsSync(join(jobDir, 'monitor'))) return { steps: [], evals: {} };
  // Both halves of an asynchronous job read the same folder, each since its own start.
  const key = `${jobDir}\0${since ?? ''}`;
  let r = readers.get(key);
  if (!r) {
    readers.set(key, (r = { reader: new MetricsReader([jobDir]), latest: new Map(), evals: {} }));
    if (readers.size > MAX_READERS) readers.delete(readers.keys().next().value as string);
  }
  const got = r.reader.read();
  if (got.purges.length && r.latest.size) {
    // The run restarted from a checkpoint: a latest step may have been its abandoned timeline's; read afresh.
    readers.delete(key);
    return latestSteps(jobDir, since);
  }
  for (const row of got.rows) {
    const role = ROLE_OF_RUN.exec(row.run)?.[1] as Role | undefined;
    if (!role) continue;
    if (since !== undefined && row.wallTime !== null && row.wallTime * 1000 < since - START_SLACK_MS) continue;
    if (row.tag.startsWith('eval/')) r.evals[row.tag] = row.value;
    const cur = r.latest.get(role);
    if (!cur || (since !== undefined ? row.step !== cur.step : row.step > cur.step))
      r.latest.set(role, { role, step: row.step, wallTime: row.wallTime, values: { [row.tag]: row.value } });
    else if (row.step === cur.step) {
      cur.values[row.tag] = row.value;
      if (row.wallTime !== null) cur.wallTime = Math.max(cur.wallTime ?? 0, row.wallTime);
    }
  }
  return { steps: [...r.latest.values()], evals: r.evals };
}

/** The role in a reader's run name (`trainer`, or Trinity's role folders such as `trainer_0`). */
const ROLE_OF_RUN = /(explorer|trainer|bench)/;
