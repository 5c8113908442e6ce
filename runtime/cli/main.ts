/** `trinity-workbench <command>`: dispatch only; each command lives in its own module. */
import { runCheck } from './check';

const USAGE = `Usage: trinity-workbench <command> [options]

Commands:
  check [--trinity-version <release>|auto] [--format text|json] <file>...
        Validate Trinity-RFT config files the way \`trinity run\` checks them at launch, and more.
  doctor [--json]
        Report what the local runtime can run on here: host, each TensorFlow.js backend, the one picked.
  run --config FILE [--events jsonl] [--backend NAME]
        Run a Trinity config on this machine: explorer, buffer, trainer, synchronizer, stages.
  model create --out DIR [--arch qwen2] [--layers 4] [--hidden 128] [--vocab byte|char:ABC|DIR] ...
        Create a small randomly initialised model directory in Hugging Face format.
  generate --model DIR --prompt TEXT [--chat] [--max-new-tokens N] [--temperature T] [--json] ...
        Sample from a model directory, with per-token log probabilities.
  metrics [--format csv|json] [--tag REGEX] <job dir | event dir | file>...
        Every scalar of a run: TensorBoard event files (Trinity's or ours) and metrics.jsonl, as CSV or JSON.
  rollouts --table NAME [--steps N] <sqlite file>
        The latest prompts, responses and rewards of a SQLite experience buffer, as JSON.

Run \`trinity-workbench <command> --help\` for a command's options.`;

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'check':
      return runCheck(rest);
    case 'doctor':
      // Loaded on demand: it pulls in TensorFlow.js, which other commands do not need.
      return (require('./doctor') as typeof import('./doctor')).runDoctor(rest);
    case 'run':
      return (require('./run') as typeof import('./run')).runRun(rest);
    case 'model':
      return (require('./model') as typeof import('./model')).runModel(rest);
    case 'generate':
      return (require('./generate') as typeof import('./generate')).runGenerate(rest);
    case 'metrics':
      return (require('./metrics') as typeof import('./metrics')).runMetrics(rest);
    case 'rollouts':
      return (require('./rollouts') as typeof import('./rollouts')).runRollouts(rest);
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case '--version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    default:
      process.stderr.write(`${cmd ? `Unknown command \`${cmd}\`.\n` : ''}${USAGE}\n`);
      return 2;
  }
}

declare const __VERSION__: string | undefined;
const VERSION = typeof __VERSION__ === 'string' ? __VERSION__ : 'dev';

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `trinity-workbench: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 3;
    },
  );
}
