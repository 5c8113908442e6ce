/** `trinity-workbench rollouts`: the latest samples of a SQLite experience buffer, as JSON (what the dashboard reads). */
import { rolloutsFromBuffer, type BufferSample } from '../metrics/buffer-rollouts';
import type { RolloutSample } from '../protocol';
import { lastValue, parseArgs } from './args';

// What this prints is RolloutSample (runtime/metrics may not import protocol.ts, so it declares the fields again): a
// field of its copy that drifts from protocol.ts fails to compile here.
const printsRolloutSamples = (s: Omit<BufferSample, 'reward'> & { reward: number }): RolloutSample => s;
void printsRolloutSamples;

const HELP = `Usage: trinity-workbench rollouts --table NAME [--steps N] <sqlite file>

Prints the latest N steps (default 20) of an experience buffer kept in SQLite (Trinity-RFT's table layout or
trinity-workbench's), read-only, as JSON: [{"step", "samples": [{"prompt", "response", "reward", ...}]}], oldest
step first. --table is the buffer's name. Trinity's pickled experience_bytes are read without running code (only
the classes an experience holds): each sample then also carries its episode (messages, task, run, step,
responseTokens, actionMask, metrics, truncated, advantage); a row that cannot be read says why in its response.
Exit status: 0; 1 when the file or table cannot be read or has neither layout; 2 on bad usage.`;

export function runRollouts(argv: string[]): number {
  let args;
  try {
    args = parseArgs(argv, { values: ['--table', '--steps'], switches: ['--help', '-h'] });
  } catch (e) {
    return usage((e as Error).message);
  }
  if (args.switches.has('--help') || args.switches.has('-h')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const table = lastValue(args, '--table');
  const steps = Number(lastValue(args, '--steps') ?? 20);
  if (!table) return usage('--table is required');
  if (!Number.isInteger(steps) || steps < 1) return usage('--steps must be a positive integer');
  if (args.positionals.length !== 1) return usage('give one SQLite file');
  const file = args.positionals[0];
  const out = rolloutsFromBuffer({ file, table }, steps);
  if (!out) {
    process.stderr.write(`trinity-workbench rollouts: ${file}: no readable experience table "${table}"\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}

function usage(message: string): number {
  process.stderr.write(`trinity-workbench rollouts: ${message}\n${HELP}\n`);
  return 2;
}
