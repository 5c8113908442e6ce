/**
 * Follows the files a Trinity job writes and turns them into protocol events, for launchers that do not run our
 * runtime: `metrics` from the TensorBoard event files under `<stage dir>/monitor/tensorboard/<role>/`, and
 * `checkpoint` when `<stage dir>/global_step_N` is complete. What was in the job dirs before the run started is
 * not reported again (a resumed run's history is the previous run's).
 *
 * A step's values are sent as one event: Trinity writes each scalar as its own record, so the values of a role's
 * newest step are held until a later step of that role appears, or a poll brings nothing new for it, or the run
 * ends. A checkpoint counts as complete once `latest_checkpointed_iteration.txt` names it (or a later step), which
 * Trinity writes after the checkpoint; without that file, once a later `global_step_*` exists or the run has ended.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MetricsReader } from '../../../runtime/metrics/job-metrics';
import type { ScalarRow } from '../../../runtime/metrics/types';
import type { Role } from '../../../runtime/protocol';
import type { LaunchSink } from './launcher';

export interface JobFollowerOptions {
  /** The job dirs to follow (one per stage). */
  dirs: readonly string[];
  /** When the run started (ms since the epoch): `metrics` events' `time` counts from here. */
  startedAt: number;
  roleOf(folder: string): Role | undefined;
  sink: LaunchSink;
  pollMs?: number;
}

const TRACKER = 'latest_checkpointed_iteration.txt';

interface Pending {
  step: number;
  time: number;
  values: Record<string, number>;
}
/** `<name>_YYYYmmddHHMMSS`: the job dir Trinity moves a fresh run to when `<name>` is not empty. */
const RENAMED = /^(.*)_\d{14}$/;

export class JobFollower {
  private readonly dirs: string[];
  /** One reader per followed dir, with the step each role has in hand there (stages reuse roles and steps). */
  private readonly followed: { reader: MetricsReader; pending: Map<Role, Pending> }[] = [];
  private readonly seenCheckpoints = new Set<string>();
  private readonly siblingsBefore = new Set<string>();
  private readonly unknownFolders = new Set<string>();
  private readonly warned = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly opts: JobFollowerOptions) {
    this.dirs = [...opts.dirs];
  }

  /** Notes what is already there (not reported), then polls every `pollMs` until `finish`. */
  start(): void {
    for (const dir of this.dirs) this.follow(dir, true);
    for (const dir of this.dirs) for (const s of this.siblings(dir)) this.siblingsBefore.add(s);
    this.timer = setInterval(() => this.poll(), this.opts.pollMs ?? 1000);
    this.timer.unref();
  }

  /** One look at the files; also called by launchers at moments they know something changed. */
  poll(final = false): void {
    try {
      this.pickUpRenamedDirs();
      for (const { reader, pending } of this.followed) {
        const seen = new Set<Role>();
        const got = reader.read();
        for (const p of got.problems) {
          if (this.warned.has(p.message)) continue;
          this.warned.add(p.message);
          this.opts.sink.warn(p.message);
        }
        for (const row of got.rows) {
          const role = this.role(row);
          if (!role) continue;
          seen.add(role);
          this.add(pending, role, row);
        }
        for (const role of [...pending.keys()]) if (final || !seen.has(role)) this.flush(pending, role);
      }
      this.checkpoints(final);
    } catch (e) {
      this.opts.sink.warn(`following the job's files failed: ${(e as Error).message}`);
    }
  }

  /** Stops polling and reports what is left (the last step of each role, checkpoints finished at the end). */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.poll(true);
  }

  private follow(dir: string, skipExisting: boolean): void {
    const reader = new MetricsReader([join(dir, 'monitor', 'tensorboard')], { skipExisting });
    if (skipExisting) reader.read();
    this.followed.push({ reader, pending: new Map() });
    if (skipExisting)
      for (const step of checkpointSteps(dir)) this.seenCheckpoints.add(join(dir, `global_step_${step}`));
  }

  private role(row: ScalarRow): Role | undefined {
    const role = this.opts.roleOf(row.run);
    if (!role && !this.unknownFolders.has(row.run)) {
      this.unknownFolders.add(row.run);
      this.opts.sink.warn(
        `metrics in monitor/tensorboard/${row.run} are not shown: it is not the explorer's, trainer's or benchmark's folder`,
      );
    }
    return role;
  }

  private add(pending: Map<Role, Pending>, role: Role, row: ScalarRow): void {
    const p = pending.get(role);
    if (p && p.step !== row.step) this.flush(pending, role);
    const time =
      row.wallTime === null
        ? (Date.now() - this.opts.startedAt) / 1000
        : Math.max(0, row.wallTime - this.opts.startedAt / 1000);
    const cur = pending.get(role) ?? { step: row.step, time, values: {} };
    cur.values[row.tag] = row.value;
    cur.time = Math.max(cur.time, time);
    pending.set(role, cur);
  }

  private flush(pending: Map<Role, Pending>, role: Role): void {
    const p = pending.get(role);
    if (!p) return;
    pending.delete(role);
    this.opts.sink.event({ type: 'metrics', role, step: p.step, time: p.time, values: p.values });
  }

  private checkpoints(final: boolean): void {
    for (const dir of this.dirs) {
      const steps = checkpointSteps(dir);
      if (!steps.length) continue;
      const tracker = readTracker(dir);
      const newest = steps[steps.length - 1];
      for (const step of steps) {
        const path = join(dir, `global_step_${step}`);
        if (this.seenCheckpoints.has(path)) continue;
        const complete = tracker !== undefined ? tracker >= step : step < newest || final;
        if (!complete) continue;
        this.seenCheckpoints.add(path);
        this.opts.sink.event({ type: 'checkpoint', step, path });
      }
    }
  }

  /** Folders beside `dir` named `<basename>_<timestamp>`. */
  private siblings(dir: string): string[] {
    const parent = dirname(dir);
    const base = basename(dir);
    try {
      return readdirSync(parent)
        .filter((n) => RENAMED.exec(n)?.[1] === base)
        .map((n) => join(parent, n));
    } catch {
      return [];
    }
  }

  private pickUpRenamedDirs(): void {
    for (const dir of [...this.dirs]) {
      for (const s of this.siblings(dir)) {
        if (this.siblingsBefore.has(s) || this.dirs.includes(s)) continue;
        this.dirs.push(s);
        this.follow(s, false);
        this.opts.sink.event({
          type: 'log',
          level: 'info',
          message: `Trinity renamed this run (continue_from_checkpoint is false and ${dir} was not empty): its job dir is ${s}`,
        });
      }
    }
  }
}

function checkpointSteps(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => /^global_step_(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null && isDir(join(dir, m[0])))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readTracker(dir: string): number | undefined {
  const p = join(dir, TRACKER);
  if (!existsSync(p)) return undefined;
  const n = Number.parseInt(readFileSync(p, 'utf8').trim(), 10);
  return Number.isFinite(n) ? n : undefined;
}
