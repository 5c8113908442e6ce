/**
 * The runs this window started: launches them through a launcher, keeps their state from the event stream, stops
 * them (one, or all when the window closes) and tells listeners when anything changed. No UI and no `vscode`:
 * the views, the status bar and the commands read from it. Events are taken in batches (whatever arrived since the
 * last turn of the event loop, at most every {@link BATCH_MS}): the state takes them all, listeners hear of a batch
 * once, and the output is rate-limited (the runtime's messages and its raw output each with a share), so a runtime
 * printing thousands of lines a second cannot put the editor behind the process.
 */
import { resolve } from 'node:path';
import type { RuntimeEvent } from '../../runtime/protocol';
import type { LaunchedRun, Launcher, LaunchSpec, RunEnd } from './launchers/launcher';
import { OutputLimiter } from './output-limiter';
import { applyEnd, applyEvent, newRunState, runKey, type RunState } from './run-state';

/** Where one run's words go (an output channel per run in VS Code, an array in tests). */
export interface RunOutput {
  line(text: string): void;
}

export interface RunManagerOptions {
  /** Makes the output for a new run. */
  output(run: RunState): RunOutput;
}

export interface LiveRun {
  readonly state: RunState;
  readonly handle: LaunchedRun;
  /** Every event this run has sent but its log lines, in order (the dashboard replays them). */
  readonly events: RuntimeEvent[];
  readonly output: RunOutput;
}

/** How often a run's queued events are applied, at most: the state lags the process by no more than this. */
export const BATCH_MS = 50;

export class RunManager {
  private readonly live = new Map<string, LiveRun>();
  /** Runs whose launcher has not started them yet, by key: reserved so that a second Run is refused. */
  private readonly starting = new Map<string, RunState>();
  /** Runs of this window that have ended, by run key (the latest of each). */
  private readonly ended_ = new Map<string, LiveRun>();
  private readonly listeners = new Set<(run: RunState) => void>();
  private readonly eventListeners = new Set<(run: RunState, e: RuntimeEvent) => void>();
  private readonly outputListeners = new Set<(run: RunState, line: string) => void>();
  /** Applies a run's queued events now, flushes its limited output and writes its last line past the limit. */
  private readonly flushers = new Map<RunState, (last: string) => void>();

  constructor(private readonly opts: RunManagerOptions) {}

  /** Runs started by this window that have not ended. */
  liveRuns(): LiveRun[] {
    return [...this.live.values()];
  }

  /** Runs of this window that have ended (the latest per job directory). */
  endedRuns(): LiveRun[] {
    return [...this.ended_.values()];
  }

  /** The live run of `key` (RunState.key), else the last one this window ran there. */
  get(key: string): LiveRun | undefined {
    return this.live.get(key) ?? this.ended_.get(key);
  }

  onDidChange(listener: (run: RunState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  onEvent(listener: (run: RunState, e: RuntimeEvent) => void): { dispose(): void } {
    this.eventListeners.add(listener);
    return { dispose: () => this.eventListeners.delete(listener) };
  }

  /** Every line written to any run's output (a task's terminal follows its run this way). */
  onOutput(listener: (run: RunState, line: string) => void): { dispose(): void } {
    this.outputListeners.add(listener);
    return { dispose: () => this.outputListeners.delete(listener) };
  }

  /**
   * Starts a run. Rejects when a run of this window already writes to the same job directory (two runs would
   * interleave checkpoints), or when the launcher cannot start it.
   */
  async start(launcher: Launcher, spec: LaunchSpec): Promise<LiveRun> {
    const jobDir = resolve(spec.jobDir);
    const key = runKey(jobDir, spec.mode);
    const busy = this.live.get(key)?.state ?? this.starting.get(key);
    if (busy) throw new Error(`A run of ${busy.configPath ?? jobDir} is already writing to ${jobDir}: stop it first.`);
    const state = newRunState(jobDir, launcher.kind, spec.configPath, spec.mode);
    state.startedAt = Date.now();
    const sink = this.opts.output(state);
    const write = (text: string): void => {
      sink.line(text);
      for (const l of this.outputListeners) l(state, text);
    };
    const limiter = new OutputLimiter({ write });
    // The runtime's own words and the raw output have a share each, so a flood of one cannot hide the other.
    const output: RunOutput = { line: (text) => limiter.line(text, 'messages') };
    const events: RuntimeEvent[] = [];
    let queue: RuntimeEvent[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const batch = queue;
      queue = [];
      for (const e of batch) {
        applyEvent(state, e);
        if (e.type === 'log') {
          output.line(`[${e.level}] ${e.message}`);
          continue;
        }
        events.push(e);
        for (const l of this.eventListeners) l(state, e);
      }
      if (batch.length) this.changed(state);
    };
    this.flushers.set(state, (last) => {
      flush();
      limiter.flush();
      write(last);
    });
    // Reserve the job directory while the launcher starts, so that a second Run of the same file is refused.
    this.starting.set(key, state);
    this.changed(state);
    let handle: LaunchedRun;
    try {
      handle = await launcher.launch(spec, {
        event: (e) => {
          queue.push(e);
          timer ??= setTimeout(flush, BATCH_MS);
        },
        output: (line) => limiter.line(line, 'output'),
        warn: (message) => output.line(`[workbench] ${message}`),
      });
    } catch (e) {
      this.starting.delete(key);
      this.flushers.get(state)?.(`[workbench] could not start: ${(e as Error).message}`);
      this.flushers.delete(state);
      applyEnd(state, { status: 'failed', error: (e as Error).message });
      this.changed(state);
      throw e;
    }
    const run: LiveRun = { state, handle, events, output };
    this.starting.delete(key);
    this.live.set(key, run);
    if (handle.pid !== undefined) state.pid = handle.pid;
    void handle.ended.then((end) => this.ended(run, end));
    return run;
  }

  /** Stops a live run: SIGTERM (or the job system's stop), then a forced kill after `graceMs`. */
  async stop(key: string, graceMs: number): Promise<RunEnd | undefined> {
    const run = this.live.get(key);
    if (!run) return undefined;
    if (!run.state.live) return run.handle.ended;
    run.state.status = 'stopping';
    this.changed(run.state);
    // `ended` was subscribed at start, so the state is final by the time this resolves.
    return run.handle.stop(graceMs);
  }

  /** Stops every live run (the window is closing). */
  async stopAll(graceMs: number): Promise<void> {
    await Promise.all([...this.live.keys()].map((k) => this.stop(k, graceMs)));
  }

  private ended(run: LiveRun, end: RunEnd): void {
    this.flushers.get(run.state)?.(
      end.refusal
        ? `[workbench] run refused: ${end.error}`
        : end.error && end.status !== 'finished'
          ? `[workbench] run ${end.status}: ${end.error}`
          : `[workbench] run ${end.status}`,
    );
    this.flushers.delete(run.state);
    applyEnd(run.state, end);
    if (this.live.get(run.state.key) === run) this.live.delete(run.state.key);
    // A refused run never ran: the job folder stays the run that holds it, not a failed attempt.
    if (!end.refusal) this.ended_.set(run.state.key, run);
    this.changed(run.state);
  }

  private changed(state: RunState): void {
    for (const l of this.listeners) {
      try {
        l(state);
      } catch {
        // A listener's bug must not stop the run's bookkeeping.
      }
    }
  }
}
