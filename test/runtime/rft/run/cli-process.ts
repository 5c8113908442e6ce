/** `dist/cli.js run --events jsonl` as a child process: its parsed event stream, stderr, exit, and kill. */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import type { RuntimeEvent } from '../../../../runtime/protocol';

const CLI = resolve(__dirname, '..', '..', '..', '..', 'dist', 'cli.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When it exited (Date.now()). */
  at: number;
}

export interface Running {
  pid: number;
  events: RuntimeEvent[];
  /**
   * What the run said: its stderr, then its `log` events and a failed `done` event's error as the CLI prints them
   * without --events (with it, messages travel in the event stream only).
   */
  stderr: () => string;
  exit: Promise<Exit>;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the first event (already seen or still to come) matching `pred`. */
  waitFor(pred: (e: RuntimeEvent) => boolean): Promise<RuntimeEvent>;
}

const children = new Set<ChildProcess>();

export function start(config: string, env: Record<string, string> = {}, cwd?: string, args: string[] = []): Running {
  const argv = [CLI, 'run', '--config', config, '--events', 'jsonl', '--backend', 'wasm', ...args];
  const child = spawn(process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // In the config's folder unless told otherwise, as the editor starts it: relative paths are taken from the run's
    // working directory.
    cwd: cwd ?? dirname(resolve(config)),
    env: { ...process.env, ...env },
  });
  children.add(child);
  const events: RuntimeEvent[] = [];
  const waiters: { pred: (e: RuntimeEvent) => boolean; resolve: (e: RuntimeEvent) => void }[] = [];
  let buf = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const e = JSON.parse(buf.slice(0, nl)) as RuntimeEvent;
      buf = buf.slice(nl + 1);
      events.push(e);
      for (const w of waiters.filter((x) => x.pred(e))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<Exit>((r) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      r({ code, signal, at: Date.now() });
    }),
  );
  return {
    pid: child.pid!,
    events,
    stderr: () =>
      err +
      events
        .flatMap((e) =>
          e.type === 'log'
            ? [`${e.level === 'info' ? '' : `${e.level}: `}${e.message}`]
            : e.type === 'done' && e.error
              ? [`run failed: ${e.error}`]
              : [],
        )
        .map((l) => `${l}\n`)
        .join(''),
    exit,
    kill: (s) => child.kill(s),
    waitFor: (pred) => {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((r, reject) => {
        waiters.push({ pred, resolve: r });
        void exit.then((x) =>
          reject(
            new Error(`the run exited (${x.code ?? x.signal}) before the event came; stderr: ${err.slice(-2000)}`),
          ),
        );
      });
    },
  };
}

/** Kills every child still running (test teardown). */
export function killAll(): void {
  for (const c of children) c.kill('SIGKILL');
}
