/**
 * `trinity-workbench run --config FILE`: runs a Trinity config on the local runtime. With `--events jsonl` stdout
 * carries only the event stream (one JSON object per line) and logs go to stderr; otherwise stderr shows progress
 * and stdout a summary table. SIGTERM/SIGINT stop at the next boundary inside the step in progress (a micro-batch,
 * a task, a turn: rft/stop-point.ts), giving that step up; a checkpoint being written is finished first. The run
 * ends "stopped" on its last complete checkpoint. A second signal exits at once.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { lastValue, parseArgs, UsageError, type ParsedArgs } from './args';
import { initBackend, isBackendName, type BackendPreference } from '../engine/backend';
import type { RuntimeEvent } from '../protocol';
import type { RunLog } from '../rft/monitor/run-log';
import type { JobResult } from '../rft/run/job/job';

const USAGE = `Usage: trinity-workbench run --config FILE [options]

Runs a Trinity-RFT config (the same file \`trinity run --config\` takes) on this machine.

Options:
  --config FILE        the Trinity config (required)
  --events jsonl       print the event stream on stdout (run, metrics, rollouts, log, checkpoint, done)
  --backend NAME       auto (default), tensorflow-gpu, tensorflow, webgpu, wasm or cpu
  --seed N             seed for sampling (default: explorer.rollout_model.seed, 42)
  --continue-from-checkpoint
                       continue from the job's last checkpoint even when the config sets
                       continue_from_checkpoint: false (what the editor's Resume does)
  --download           fetch a model_path hub id that is not in the Hugging Face cache (HF_ENDPOINT, HF_TOKEN)
  --nice N             run at nice value N (0–19), every thread of it (its BLAS threads, the explorer's worker),
                       so an editor or a shell stays responsive beside a run that uses every core (the editor
                       passes trinityWorkbench.runNice, 10 by default)
  --plugin-dir DIR     load JavaScript workflows and reward functions from DIR (repeatable; also
                       $TRINITY_PLUGIN_DIRS, colon-separated): each .js/.mjs file may export \`workflows\` and
                       \`rewards\` maps. Plugins run with your permissions: only use directories you trust.

Exit status: 0 finished; 1 failed (the reason on stderr and in <job dir>/state/run.json); 2 bad usage;
75 refused: another run is writing the same job folder (named on stderr); 130 stopped by a signal.`;

/** Exit status of a run refused because another run holds its job folder (sysexits' EX_TEMPFAIL: try again later). */
export const EXIT_REFUSED = 75;

export async function runRun(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  let nice: number | undefined;
  try {
    args = parseArgs(argv, {
      values: ['--config', '--events', '--backend', '--seed', '--plugin-dir', '--nice'],
      switches: ['--help', '--download', '--continue-from-checkpoint'],
    });
    if (args.switches.has('--help')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (args.positionals.length) throw new UsageError(`unexpected argument ${args.positionals[0]}`);
    if (!lastValue(args, '--config')) throw new UsageError('--config FILE is required');
    const events = lastValue(args, '--events');
    if (events !== undefined && events !== 'jsonl') throw new UsageError('--events must be jsonl');
    const backend = lastValue(args, '--backend') ?? 'auto';
    if (backend !== 'auto' && !isBackendName(backend)) throw new UsageError(`--backend ${backend} is not a backend`);
    const seed = lastValue(args, '--seed');
    if (seed !== undefined && !Number.isInteger(Number(seed)))
      throw new UsageError(`--seed must be an integer, got ${seed}`);
    const niceArg = lastValue(args, '--nice');
    if (niceArg !== undefined) {
      nice = Number(niceArg);
      if (!(Number.isInteger(nice) && nice >= 0 && nice <= 19))
        throw new UsageError(`--nice must be an integer from 0 to 19, got ${niceArg}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`run: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const jsonl = lastValue(args, '--events') === 'jsonl';
  if (args.switches.has('--download')) process.env.TRINITY_WORKBENCH_ALLOW_DOWNLOAD = '1';
  const emit = (e: RuntimeEvent): void => {
    if (jsonl) process.stdout.write(`${JSON.stringify(e)}\n`);
  };
  // With --events jsonl a message is a `log` event only: the editor shows the event stream and stderr both, so
  // writing it to stderr too would show it twice.
  const log: RunLog = (level, message) => {
    if (jsonl) emit({ type: 'log', level, message });
    else process.stderr.write(`${level === 'info' ? '' : `${level}: `}${message}\n`);
  };
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) process.exit(130);
    process.stderr.write(`${sig}: stopping (the step in progress is given up; the run keeps its last checkpoint)…\n`);
    controller.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Before the backend starts its threads: on Linux a priority is a thread's, and a new thread takes its creator's.
  if (nice !== undefined) lowerPriority(nice);

  let backendName: string;
  let backendLine: string | undefined;
  try {
    const tried: string[] = [];
    const info = await initBackend({
      prefer: (lastValue(args, '--backend') ?? 'auto') as BackendPreference,
      log: (m) => (jsonl ? tried.push(m) : process.stderr.write(`${m}\n`)),
    });
    // The event stream names the backend that runs (the last line), right after the `run` event that opens the
    // stream (protocol.ts); why the others could not is `doctor`'s to say.
    backendLine = tried.at(-1);
    backendName = info.name;
  } catch (e) {
    emit({ type: 'done', status: 'failed', error: (e as Error).message });
    if (!jsonl) process.stderr.write(`run: ${(e as Error).message}\n`);
    return 1;
  }
  const { runJob } = require('../rft/run/job/job') as typeof import('../rft/run/job/job');
  const progress = jsonl ? undefined : progressPrinter();
  const result = await runJob(lastValue(args, '--config')!, {
    events: (e) => {
      emit(e);
      if (e.type === 'run' && backendLine !== undefined) {
        log('info', backendLine);
        backendLine = undefined;
      }
    },
    log,
    progress,
    signal: controller.signal,
    backend: backendName,
    seed: lastValue(args, '--seed') === undefined ? undefined : Number(lastValue(args, '--seed')),
    continueFromCheckpoint: args.switches.has('--continue-from-checkpoint') || undefined,
    // Trinity opens relative paths from the directory `trinity run` starts in.
    workDir: process.cwd(),
    pluginDirs: [
      ...(args.values.get('--plugin-dir') ?? []),
      ...(process.env.TRINITY_PLUGIN_DIRS ?? '').split(':').filter(Boolean),
    ],
  });
  if (!jsonl) printSummary(result);
  if (result.status === 'failed') {
    // The `done` event carries it in the event stream.
    if (!jsonl) process.stderr.write(`run failed: ${result.error}\n`);
    return 1;
  }
  if (result.status === 'refused') {
    process.stderr.write(`run refused: ${result.error}\n`);
    return EXIT_REFUSED;
  }
  return result.status === 'stopped' ? 130 : 0;
}

/**
 * Progress per role: on a terminal one bar per role redrawn in place (explorer, trainer, bench), elsewhere a line
 * per role at most every 5 s (and at the last step), so logs stay readable.
 */
function progressPrinter(): (role: string, step: number, total: number | undefined, detail: string) => void {
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  const lines = new Map<string, string>();
  const lastPrint = new Map<string, number>();
  let drawn = 0;
  return (role, step, total, detail) => {
    const elapsed = (Date.now() - started) / 1000;
    const rate = step / Math.max(elapsed, 1e-9);
    const eta = total ? ` eta ${formatSeconds(Math.max(0, (total - step) / Math.max(rate, 1e-9)))}` : '';
    const bar = total ? ` [${'#'.repeat(Math.round((20 * Math.min(step, total)) / total)).padEnd(20, '.')}]` : '';
    const line = `${role.padEnd(8)}${bar} step ${step}${total ? `/${total}` : ''}  ${detail}  ${rate.toFixed(2)} step/s${eta}`;
    if (tty) {
      lines.set(role, line);
      process.stderr.write(
        `${drawn ? `\x1b[${drawn}A` : ''}${[...lines.values()].map((l) => `\r\x1b[2K${l}`).join('\n')}\n`,
      );
      drawn = lines.size;
      return;
    }
    const now = Date.now();
    if (now - (lastPrint.get(role) ?? 0) >= 5000 || step === total) {
      lastPrint.set(role, now);
      process.stderr.write(`${line}\n`);
    }
  };
}

function formatSeconds(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${s.toFixed(0)}s`;
}

function printSummary(r: JobResult): void {
  if (!r.stages.length) return;
  const rows = r.stages.flatMap((s) => {
    const evals = Object.entries(s.result.evals);
    return evals.length ? evals.map(([k, v]) => [s.name, s.mode, k, v.toFixed(4)]) : [[s.name, s.mode, '–', '–']];
  });
  const header = ['stage', 'mode', 'final eval metric', 'value'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  process.stdout.write(
    `${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.map(line).join('\n')}\n`,
  );
  for (const s of r.stages)
    if (s.result.lastCheckpoint) process.stdout.write(`${s.name}: last checkpoint ${s.result.lastCheckpoint}\n`);
}

/**
 * The process's nice value raised to `nice` (never lowered: that needs privileges). Linux keeps one per thread, and
 * a new thread takes its creator's: every thread now running is raised (Node's helper threads start before this code
 * runs), and the threads the run starts later take it from them. Said on stderr where it fails: the event stream
 * opens with the `run` event.
 */
function lowerPriority(nice: number): void {
  for (const tid of threadIds()) {
    try {
      if (getPriority(tid) < nice) setPriority(tid, nice);
    } catch (e) {
      // A helper thread may have ended since the listing; the main thread's failure is the process's.
      if (tid === 0 || tid === process.pid)
        process.stderr.write(
          `run: --nice ${nice} could not be set (${(e as Error).message}); the run goes on at its own\n`,
        );
    }
  }
}

/** This process's threads (Linux's /proc/self/task); elsewhere 0, the calling thread, which sets the whole process. */
function threadIds(): number[] {
  try {
    const tids = readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
    // The main thread first: its failure is the one reported.
    return [process.pid, ...tids.filter((t) => t !== process.pid)];
  } catch {
    return [0];
  }
}
