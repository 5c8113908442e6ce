/** `trinity-workbench <command>`: dispatch only; each command lives in its own module. */
import { runCheck } from './check';

const USAGE = `Usage: trinity-workbench <command> [options]

Commands:
  check [--trinity-version <release>|auto] [--format text|json] <file>...
        Validate Trinity-RFT config files the way \`trinity run\` checks them at launch, and more.

Run \`trinity-workbench <command> --help\` for a command's options.`;

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'check':
      return runCheck(rest);
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
      process.stderr.write(`trinity-workbench: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 3;
    },
  );
}
