/**
 * The one source of truth for run state in the editor: every run the title button, the CodeLens, the status bar,
 * the Runs view and the end-of-run notification show. This window's runs come from their event streams (the run
 * manager); every other run (a terminal's, another window's, another host's, Trinity-RFT's) from its job folder: its
 * records, its job lock and its metrics. Each known folder's `state/` is watched (the OS's file events), so a run
 * starting, ending or taking the lock there is read at once; folders with a live run (whose process may die without
 * a word) and folders that cannot be watched are looked at every `pollMs`, the others every `idlePollMs` (a network
 * file system another machine writes sends no events). The workspace is searched for new folders every `rescanMs`
 * and whenever the editor's file watcher says so. Listeners hear of changes together, at most every
 * {@link CHANGE_MS}. No `vscode`.
 */
import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import { processRuns, type ProcessProbe } from '../../runtime/run-records';
import { findJobDirs, readJobRuns, stillRuns } from './job-dirs';
import type { RunManager } from './run-manager';
import type { RunState } from './run-state';

/** How often listeners hear of changes, at most: views stay within a fraction of a second of the runs. */
export const CHANGE_MS = 100;

/** How long a folder's file events are gathered before it is read (a run writes its record and lock together). */
const TOUCH_MS = 20;

export interface RunBoardOptions {
  /** Folders searched for job directories (the workspace folders). */
  roots: () => string[];
  /** Job directories listed even outside the roots (those this window ran). */
  extraJobDirs?: () => Iterable<string>;
  /** How often folders with a live run, and folders that cannot be watched, are looked at. */
  pollMs?: number;
  /** How often watched folders with no live run are looked at (what their file events may miss). */
  idlePollMs?: number;
  rescanMs?: number;
  isAlive?: ProcessProbe;
}

export class RunBoard {
  /** Runs read from disk, by job directory. */
  private readonly disk = new Map<string, RunState[]>();
  /** What each job directory's files looked like when last read. */
  private readonly stamps = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private readonly endListeners = new Set<(run: RunState) => void>();
  /** Runs last seen live, by key: a run leaving this set has ended. */
  private liveKeys = new Map<string, RunState>();
  private scanned = false;
  /** The merged list, until something changes. */
  private cached: RunState[] | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private rescanTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly intervals: ReturnType<typeof setInterval>[] = [];
  /** The watcher of each known folder's `state/`, with that directory's inode (a deleted, remade one is new). */
  private readonly watchers = new Map<string, { ino: number; watcher: FSWatcher }>();
  /** Folders whose `state/` changed, read together shortly after. */
  private readonly touched = new Set<string>();
  private touchTimer: ReturnType<typeof setTimeout> | undefined;
  private idlePolledAt = 0;
  private started = false;
  private readonly sub: { dispose(): void };
  private readonly isAlive: ProcessProbe;

  constructor(
    private readonly manager: RunManager,
    private readonly opts: RunBoardOptions,
  ) {
    this.isAlive = opts.isAlive ?? processRuns;
    this.sub = manager.onDidChange((run) => {
      // A run of this window that ended (or was refused: another run holds its job) leaves the job folder to what
      // is on disk: read it now, so that the views never show the folder's older state in between.
      if (!run.live && this.disk.has(run.jobDir)) this.read(run.jobDir);
      this.schedule();
    });
  }

  /** Starts watching the job folders (file events and polling); `dispose` stops it. */
  start(): this {
    this.started = true;
    for (const dir of this.disk.keys()) this.watch(dir);
    this.idlePolledAt = Date.now();
    this.intervals.push(
      setInterval(() => this.poll(), this.opts.pollMs ?? 1000),
      setInterval(() => this.rescan(), this.opts.rescanMs ?? 10_000),
    );
    return this;
  }

  /** Every run, live ones first, then the most recent. */
  list(): RunState[] {
    if (!this.scanned) {
      this.scanned = true;
      this.scanDirs();
    }
    if (this.cached) return this.cached;
    const byKey = new Map<string, RunState>();
    for (const runs of this.disk.values()) for (const r of runs) byKey.set(r.key, r);
    // What this window saw of a run it ran is at least as good as a directory without a run record (Trinity's).
    for (const done of this.manager.endedRuns()) {
      const onDisk = byKey.get(done.state.key);
      if (!onDisk || onDisk.status === 'unknown' || (onDisk.startedAt ?? 0) <= (done.state.startedAt ?? 0))
        byKey.set(done.state.key, done.state);
    }
    for (const live of this.manager.liveRuns()) byKey.set(live.state.key, live.state);
    return (this.cached = [...byKey.values()].sort(
      (a, b) =>
        Number(b.live) - Number(a.live) || (b.startedAt ?? 0) - (a.startedAt ?? 0) || a.jobDir.localeCompare(b.jobDir),
    ));
  }

  /** The run a config's buttons are about: its live run (from anywhere), else its most recent one. */
  runOf(configPath: string): RunState | undefined {
    return this.list().find((r) => r.configPath === configPath);
  }

  /** The run the status bar shows: the live run of the config in the active editor, else the first live run. */
  activeRun(activePath: string | undefined): RunState | undefined {
    const live = this.list().filter((r) => r.live);
    return live.find((r) => r.configPath === activePath) ?? live[0];
  }

  /** The live run writing to a job directory (this window's, a terminal's, another window's). */
  liveIn(jobDir: string): RunState | undefined {
    const dir = resolve(jobDir);
    return this.list().find((r) => r.live && r.jobDir === dir);
  }

  /** Whether this window started the run (it can stop it through its process group). */
  isOwn(run: RunState): boolean {
    return this.manager.get(run.key)?.state === run;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** A run seen live has ended (finished, failed, stopped or killed), from this window or elsewhere. */
  onDidEnd(listener: (run: RunState) => void): { dispose(): void } {
    this.endListeners.add(listener);
    return { dispose: () => this.endListeners.delete(listener) };
  }

  /** Searches the roots again soon (the editor's file watcher saw a run record or metrics file come or go). */
  rescan(): void {
    this.rescanTimer ??= setTimeout(() => {
      this.rescanTimer = undefined;
      if (this.scanDirs()) this.schedule();
    }, 200);
  }

  dispose(): void {
    this.started = false;
    this.sub.dispose();
    for (const i of this.intervals) clearInterval(i);
    if (this.timer) clearTimeout(this.timer);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    if (this.touchTimer) clearTimeout(this.touchTimer);
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
    this.listeners.clear();
    this.endListeners.clear();
  }

  /** Finds the job directories; reads those not known yet, forgets those gone. Whether the set changed. */
  private scanDirs(): boolean {
    const dirs = new Set([
      ...findJobDirs(this.opts.roots()),
      ...[...(this.opts.extraJobDirs?.() ?? [])].map((d) => resolve(d)).filter((d) => existsSync(d)),
    ]);
    let changed = false;
    for (const d of [...this.disk.keys()])
      if (!dirs.has(d)) {
        this.disk.delete(d);
        this.stamps.delete(d);
        this.watchers.get(d)?.watcher.close();
        this.watchers.delete(d);
        changed = true;
      }
    for (const d of dirs)
      if (!this.disk.has(d)) {
        this.read(d);
        changed = true;
      }
    if (changed) this.cached = undefined;
    return changed;
  }

  /**
   * Re-reads the job directories whose files changed, or whose live process went away: those with a live run or no
   * watcher each time, the others every `idlePollMs`.
   */
  private poll(): void {
    const idle = Date.now() - this.idlePolledAt >= (this.opts.idlePollMs ?? 10_000);
    if (idle) this.idlePolledAt = Date.now();
    this.reread(
      [...this.disk.keys()].filter((d) => idle || !this.watchers.has(d) || this.disk.get(d)!.some((r) => r.live)),
    );
  }

  /** Re-reads those of `dirs` whose files changed (or whose live process went away). */
  private reread(dirs: Iterable<string>): void {
    let changed = false;
    for (const dir of dirs)
      if (this.disk.has(dir) && this.stamps.get(dir) !== this.stamp(dir)) {
        this.read(dir);
        changed = true;
      }
    if (changed) this.schedule();
  }

  private read(dir: string): void {
    this.cached = undefined;
    this.stamps.set(dir, this.stamp(dir));
    try {
      this.disk.set(dir, readJobRuns(dir, this.isAlive));
    } catch {
      // Deleted while being read.
      this.disk.delete(dir);
    }
    this.watch(dir);
  }

  /**
   * Watches a known folder's `state/` (records and locks) once the board is started; again when that directory was
   * deleted and made anew. A folder without one (Trinity's), or beyond the OS's limit of watches, is polled.
   */
  private watch(dir: string): void {
    if (!this.started) return;
    const stateDir = join(dir, 'state');
    let ino: number | undefined;
    try {
      ino = statSync(stateDir).ino;
    } catch {
      ino = undefined;
    }
    const cur = this.watchers.get(dir);
    if (cur && cur.ino === ino) return;
    cur?.watcher.close();
    this.watchers.delete(dir);
    if (ino === undefined || !this.disk.has(dir)) return;
    try {
      const watcher = watch(stateDir, { persistent: false }, () => this.touch(dir));
      watcher.on('error', () => {
        watcher.close();
        if (this.watchers.get(dir)?.watcher === watcher) this.watchers.delete(dir);
        this.touch(dir);
      });
      this.watchers.set(dir, { ino, watcher });
    } catch {
      // No watch left (inotify's limit): the folder is polled.
    }
  }

  /** A watched folder's `state/` changed: it is read soon, with whatever else changed meanwhile. */
  private touch(dir: string): void {
    this.touched.add(dir);
    this.touchTimer ??= setTimeout(() => {
      this.touchTimer = undefined;
      const dirs = [...this.touched];
      this.touched.clear();
      this.reread(dirs);
    }, TOUCH_MS);
  }

  /** Sizes and times of what a run writes (records, locks, metrics), and whether the processes they name run. */
  private stamp(dir: string): string {
    const parts: string[] = [];
    const add = (p: string) => {
      try {
        const s = statSync(p);
        parts.push(`${s.size}:${s.mtimeMs}`);
      } catch {
        parts.push('-');
      }
    };
    try {
      for (const n of readdirSync(join(dir, 'state')).sort())
        if (/^(run|lock).*\.json$/.test(n)) add(join(dir, 'state', n));
    } catch {
      parts.push('no state');
    }
    add(join(dir, 'monitor', 'metrics.jsonl'));
    add(join(dir, 'monitor', 'tensorboard'));
    for (const r of this.disk.get(dir) ?? [])
      for (const s of r.stages) if (s.jobDir !== dir) add(join(s.jobDir, 'monitor', 'metrics.jsonl'));
    for (const r of this.disk.get(dir) ?? []) if (r.live) parts.push(`runs ${stillRuns(r, this.isAlive)}`);
    return parts.join('|');
  }

  private schedule(): void {
    this.cached = undefined;
    this.timer ??= setTimeout(() => this.fire(), CHANGE_MS);
  }

  private fire(): void {
    this.timer = undefined;
    const runs = this.list();
    const live = new Map(runs.filter((r) => r.live).map((r) => [r.key, r]));
    const ended = [...this.liveKeys.keys()].filter((k) => !live.has(k));
    const all = new Map(runs.map((r) => [r.key, r]));
    this.liveKeys = live;
    for (const l of [...this.listeners]) guarded(l);
    for (const k of ended) {
      const run = all.get(k);
      if (run) for (const l of [...this.endListeners]) guarded(() => l(run));
    }
  }
}

function guarded(f: () => void): void {
  try {
    f();
  } catch {
    // A listener's bug must not stop the others.
  }
}
