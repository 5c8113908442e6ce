/** `trinity-workbench rollouts`: the latest samples of a SQLite experience buffer, as JSON (what the dashboard reads). */
import { resolveModelPath } from '../engine/lm/hub';
import { loadTokenizer } from '../engine/tokenizer';
import { rolloutsFromBuffer, type BufferRollouts, type BufferSample } from '../metrics/buffer-rollouts';
import type { RolloutSample } from '../protocol';
import { lastValue, parseArgs } from './args';

// What this prints is RolloutSample (runtime/metrics may not import protocol.ts, so it declares the fields again): a
// field of its copy that drifts from protocol.ts fails to compile here.
const printsRolloutSamples = (s: Omit<BufferSample, 'reward'> & { reward: number }): RolloutSample => s;
void printsRolloutSamples;

const HELP = `Usage: trinity-workbench rollouts --table NAME [--steps N] [--model PATH] <sqlite file>

Prints the latest N steps (default 20) of an experience buffer kept in SQLite (Trinity-RFT's table layout or
trinity-workbench's), read-only, as JSON: [{"step", "samples": [{"prompt", "response", "reward", ...}]}], oldest
step first. --table is the buffer's name. Trinity's pickled experience_bytes are read without running code (only
the classes an experience holds): each sample then also carries its episode (messages, task, run, step,
responseTokens, actionMask, metrics, truncated, advantage); a row that cannot be read says why in its response.
--model is the config's model_path (a folder, relative to the current directory, or a hub id in the Hugging Face
cache): its tokenizer decodes each response token into tokenTexts. Without one (or when it cannot be loaded) the
samples keep token ids only, and stderr says so.
Exit status: 0; 1 when the file or table cannot be read or has neither layout; 2 on bad usage.`;

export function runRollouts(argv: string[]): number {
  let args;
  try {
    args = parseArgs(argv, { values: ['--table', '--steps', '--model'], switches: ['--help', '-h'] });
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
  const model = lastValue(args, '--model');
  const decoded = withTokenTexts(out, model);
  if (decoded.note) process.stderr.write(`trinity-workbench rollouts: ${decoded.note}\n`);
  process.stdout.write(`${JSON.stringify(decoded.steps)}\n`);
  return 0;
}

type DecodedRollouts = { steps: (BufferRollouts & { samples: (BufferSample & { tokenTexts?: string[] })[] })[] };

/**
 * Each sample's response tokens decoded one by one (special tokens kept, as a run's own records are) with the
 * model's tokenizer; a note when samples hold tokens that no tokenizer decodes.
 */
function withTokenTexts(steps: BufferRollouts[], model: string | undefined): DecodedRollouts & { note?: string } {
  const tokens = steps.reduce((n, s) => n + s.samples.filter((x) => x.responseTokens?.length).length, 0);
  if (tokens === 0) return { steps };
  let problem: string;
  if (model === undefined) problem = 'no --model given';
  else
    try {
      const tokenizer = loadTokenizer(resolveModelPath(model));
      const decode = (id: number) => tokenizer.decode([id], { skipSpecialTokens: false });
      return {
        steps: steps.map((s) => ({
          ...s,
          samples: s.samples.map((x) => (x.responseTokens ? { ...x, tokenTexts: x.responseTokens.map(decode) } : x)),
        })),
      };
    } catch (e) {
      problem = `no tokenizer for ${model}: ${(e as Error).message}`;
    }
  return { steps, note: `${problem}: token ids only, not their text (${tokens} sample${tokens === 1 ? '' : 's'})` };
}

function usage(message: string): number {
  process.stderr.write(`trinity-workbench rollouts: ${message}\n${HELP}\n`);
  return 2;
}
