/**
 * The local runtime: `node <extension>/dist/cli.js run --config FILE --events jsonl` in a process group of its own.
 * Its stdout is the event stream (the only contract with the runtime), its stderr the run's output.
 */
import { existsSync } from 'node:fs';
import { GroupProcess } from '../process-group';
import { parseEventLine } from '../event-lines';
import type { DoneEvent } from '../../../runtime/protocol';
import type { LaunchedRun, Launcher, LaunchSink, LaunchSpec, RunEnd } from './launcher';

export interface LocalLauncherOptions {
  /** The Node.js to run the runtime with (an absolute path, found by `findNode`). */
  nodePath: string;
  /** dist/cli.js of the installed extension. */
  cliPath: string;
  /** Extra `run` arguments (`--backend wasm`). */
  extraArgs?: string[];
}

export class LocalLauncher implements Launcher {
  readonly kind = 'local' as const;
  constructor(private readonly opts: LocalLauncherOptions) {}

  async launch(spec: LaunchSpec, sink: LaunchSink): Promise<LaunchedRun> {
    if (!existsSync(this.opts.cliPath))
      throw new Error(
        `The runtime is missing at ${this.opts.cliPath}: reinstall the extension (or run \`npm run build\` in its folder).`,
      );
    const args = [
      this.opts.cliPath,
      'run',
      '--config',
      spec.configPath,
      '--events',
      'jsonl',
      ...(this.opts.extraArgs ?? []),
    ];
    if (spec.resume) args.push('--continue-from-checkpoint');
    for (const d of spec.pluginDirs) args.push('--plugin-dir', d);
    let done: DoneEvent | undefined;
    const stderrTail: string[] = [];
    let strayStdoutSeen = false;
    const proc = await GroupProcess.start({
      command: this.opts.nodePath,
      args,
      cwd: spec.cwd,
      env: spec.env,
      onStdoutLine: (line) => {
        const parsed = parseEventLine(line);
        if (!parsed) return;
        if ('notEvent' in parsed) {
          // Said once, with the first such line; the rest are the run's output (a chatty plugin would otherwise
          // spend the runtime's share of the channel on this warning).
          const first = !strayStdoutSeen;
          strayStdoutSeen = true;
          if (first)
            sink.warn(
              `not an event on the runtime's stdout (printed by a plugin?), shown as output from here on: ${parsed.notEvent.slice(0, 200)}`,
            );
          if (!first || parsed.notEvent.length > 200) sink.output(parsed.notEvent);
          return;
        }
        if (parsed.event.type === 'done') done = parsed.event;
        sink.event(parsed.event);
      },
      onStderrLine: (line) => {
        stderrTail.push(line);
        if (stderrTail.length > 20) stderrTail.shift();
        sink.output(line);
      },
    });
    const ended: Promise<RunEnd> = proc.exited.then((exit) => {
      if (exit.spawnError)
        return {
          status: 'failed',
          error: `Could not start ${this.opts.nodePath}: ${exit.spawnError}. Set trinityWorkbench.nodePath to a Node.js 20 executable.`,
        };
      const base = { exitCode: exit.exitCode, signal: exit.signal };
      if (done?.status === 'failed' || done?.status === 'refused')
        return {
          ...base,
          status: 'failed',
          error: done.error ?? 'the run failed',
          ...(done.refusal ? { refusal: done.refusal } : {}),
        };
      if (done && exit.exitCode !== null && !exit.signal) return { ...base, status: done.status };
      if (exit.stopRequested)
        return {
          ...base,
          status: 'stopped',
          ...(exit.killed ? { error: 'did not stop in time and was killed (its last checkpoint is kept)' } : {}),
        };
      const why = stderrTail
        .filter((l) => l.trim())
        .slice(-5)
        .join('\n');
      return {
        ...base,
        status: 'failed',
        error: `the runtime exited (${exit.signal ?? `code ${exit.exitCode}`}) without finishing${why ? `:\n${why}` : ''}`,
      };
    });
    if (proc.pid === undefined) {
      const end = await ended;
      throw new Error(end.error ?? `Could not start ${this.opts.nodePath}`);
    }
    return { id: `pid ${proc.pid}`, pid: proc.pid, ended, stop: async (graceMs) => (await proc.stop(graceMs), ended) };
  }
}
