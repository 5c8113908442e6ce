/** `trinity-workbench metrics`: every scalar of job directories, TensorBoard folders or event files, as CSV or JSON. */
import { statSync } from 'node:fs';
import { readAllMetrics } from '../metrics/job-metrics';
import type { ScalarRow } from '../metrics/types';
import { lastValue, parseArgs } from './args';
import { scalarsCsv } from '../metrics/csv';

const HELP = `Usage: trinity-workbench metrics [--format csv|json] [--tag REGEX] <job dir | event dir | file>...

Prints every scalar logged by a Trinity-RFT (or trinity-workbench) run: the TensorBoard event files under
<job>/monitor/tensorboard/<role>/ and the runtime's <job>/monitor/metrics.jsonl. A path may be a job directory
(staged jobs included), a tensorboard directory, one role directory, or one file.

  --format   csv (default): header run,tag,step,wall_time,value, one row per scalar;
             json: [{"run", "tag", "step", "wallTime", "value"}] (non-finite values as null)
  --tag      only tags matching this regular expression (JavaScript syntax), e.g. '^actor/'

run is the role folder (explorer, trainer, benchmark), prefixed by the stage for a staged job; wall_time is in
seconds since the epoch, empty where the source does not record it.
Exit status: 0; 1 when a path cannot be read or a file is damaged (named on stderr, with the byte offset; the
rows that could be read are still printed); 2 on bad usage.`;

export function runMetrics(argv: string[]): number {
  let args;
  try {
    args = parseArgs(argv, { values: ['--format', '--tag'], switches: ['--help', '-h'] });
  } catch (e) {
    return usage((e as Error).message);
  }
  if (args.switches.has('--help') || args.switches.has('-h')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const format = lastValue(args, '--format') ?? 'csv';
  if (format !== 'csv' && format !== 'json') return usage(`--format must be csv or json, not \`${format}\``);
  let tag: RegExp | undefined;
  const tagArg = lastValue(args, '--tag');
  if (tagArg !== undefined) {
    try {
      tag = new RegExp(tagArg);
    } catch (e) {
      return usage(`--tag is not a valid regular expression: ${(e as Error).message}`);
    }
  }
  if (args.positionals.length === 0) return usage('no paths given');

  let failed = false;
  const paths: string[] = [];
  for (const p of args.positionals) {
    try {
      statSync(p);
      paths.push(p);
    } catch (e) {
      process.stderr.write(
        `trinity-workbench metrics: cannot read ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`,
      );
      failed = true;
    }
  }
  const { rows, problems } = readAllMetrics(paths);
  for (const p of problems) process.stderr.write(`trinity-workbench metrics: ${p.message}\n`);
  if (paths.length > 0 && rows.length === 0 && problems.length === 0)
    process.stderr.write(`trinity-workbench metrics: no scalars found under ${paths.join(', ')}\n`);
  const kept = tag ? rows.filter((r) => tag.test(r.tag)) : rows;
  process.stdout.write(format === 'json' ? `${JSON.stringify(kept.map(jsonRow), null, 1)}\n` : scalarsCsv(kept));
  return failed || problems.length > 0 ? 1 : 0;
}

function jsonRow(r: ScalarRow): ScalarRow | (Omit<ScalarRow, 'value'> & { value: null }) {
  return Number.isFinite(r.value) ? r : { ...r, value: null };
}

function usage(message: string): number {
  process.stderr.write(`trinity-workbench metrics: ${message}\n\n${HELP}\n`);
  return 2;
}
