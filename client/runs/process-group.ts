/**
 * A child process in a process group of its own, so that stopping it stops everything it started: SIGTERM to the
 * group, then SIGKILL to the group once the grace period is over. Used by every launcher that runs something on
 * this machine (the local runtime, `trinity run`).
 */
import type { ResultPromise, execa as Execa } from 'execa' with { 'resolution-mode': 'import' };
import { LineSplitter } from './event-lines';

export interface GroupProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
}

export interface GroupExit {
  exitCode: number | null;
  signal: string | null;
  /** True when the exit came after our stop request. */
  stopRequested: boolean;
  /** True when the grace period ran out and the group was SIGKILLed. */
  killed: boolean;
  /** Set when the process could not be started at all: the error code (ENOENT, EACCES) or message. */
  spawnError?: string;
}

export class GroupProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<GroupExit>;
  private stopRequested = false;
  private killed = false;
  private readonly child: ResultPromise;

  /** Starts the process. (execa is an ES module: loaded on first use.) */
  static async start(opts: GroupProcessOptions): Promise<GroupProcess> {
    const { execa } = await import('execa');
    return new GroupProcess(opts, execa);
  }

  private constructor(opts: GroupProcessOptions, execa: typeof Execa) {
    this.child = execa(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env,
      extendEnv: false,
      detached: true,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      // A detached group is stopped by us (stop, stopAll at deactivation), not by execa's exit hook.
      cleanup: false,
      encoding: 'utf8',
    });
    this.pid = this.child.pid;
    const out = new LineSplitter(opts.onStdoutLine);
    const err = new LineSplitter(opts.onStderrLine);
    this.child.stdout?.setEncoding('utf8').on('data', (d: string) => out.push(d));
    this.child.stderr?.setEncoding('utf8').on('data', (d: string) => err.push(d));
    this.exited = this.child.then(
      (r) => {
        out.flush();
        err.flush();
        const failedToStart = r.failed && r.exitCode === undefined && !r.signal;
        const code = (r as { code?: string }).code;
        return {
          exitCode: r.exitCode ?? null,
          signal: r.signal ?? null,
          stopRequested: this.stopRequested,
          killed: this.killed,
          ...(failedToStart ? { spawnError: code ?? (r.originalMessage || r.shortMessage) } : {}),
        };
      },
      (e: Error) => ({
        exitCode: null,
        signal: null,
        stopRequested: this.stopRequested,
        killed: this.killed,
        spawnError: e.message,
      }),
    );
  }

  /**
   * SIGTERM to the group; SIGKILL to the group after `graceMs` if it has not exited. Once the leader has exited,
   * what it started in its group (Ray workers, say) gets the rest of the grace, then SIGKILL. Resolves on exit.
   */
  async stop(graceMs: number): Promise<GroupExit> {
    this.stopRequested = true;
    const deadline = Date.now() + graceMs;
    this.signalGroup('SIGTERM');
    const timer = setTimeout(() => {
      this.killed = true;
      this.signalGroup('SIGKILL');
    }, graceMs);
    try {
      const exit = await this.exited;
      while (this.groupAlive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (this.groupAlive()) this.signalGroup('SIGKILL');
      return exit;
    } finally {
      clearTimeout(timer);
    }
  }

  private groupAlive(): boolean {
    if (this.pid === undefined) return false;
    try {
      process.kill(-this.pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }
}
