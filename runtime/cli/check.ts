/** `trinity-workbench check`: reads files, runs the validator, prints text or JSON. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { looksLikeTrinityConfig } from '../config/detect';
import { checkConfig } from '../config/check-config';
import { disableComments } from '../config/disable-comments';
import { lineColumn } from '../config/load/load-config';
import { parseDotEnv } from '../config/environment/dotenv';
import { RELEASES, parseRelease, type Release } from '../config/releases';
import { scanPluginDirs } from '../config/environment/plugin-names';
import { lastValue, parseArgs } from './args';
import { GPU_CARDS, parseGpu, type GpuSpec } from '../config/gpu-memory/gpu-cards';
import { reportLines, type GpuMemoryReport } from '../config/gpu-memory/report';
import { readModelConfigJson } from '../engine/lm/config-json-cache';
import { promptTokens } from '../rft/workflows/prompt-tokens';

const HELP = `Usage: trinity-workbench check [--trinity-version <release>|auto] [--format text|json] [--plugin-dir DIR]... [--min-severity S] [--gpu CARD|GiB] [--no-datasets] [--local] <file>...

Checks Trinity-RFT config files (a directory: every YAML file in it that is a Trinity config): the schema of the selected release, OmegaConf interpolation, every rule
Trinity enforces at launch, and problems Trinity only finds at run time (unknown workflows, partial *_args,
missing dataset files and keys).

  --trinity-version  ${RELEASES.join(', ')}, or auto (default: the file's
                     \`# trinity-version:\` comment, else ${RELEASES[RELEASES.length - 1]})
  --format           text (default): one \`file:line:col severity code message\` line per problem;
                     json: [{"file", "version", "diagnostics": [{line, column, endLine, endColumn, severity, code, message}]}]
  --plugin-dir       a Trinity plugin directory (repeatable; also $TRINITY_PLUGIN_DIRS): names its .py
                     files register (workflows, reward functions, ...) count as known
  --min-severity     report only problems at least this severe: error, warning, information (default), hint
  --gpu              the GPU the memory checks are for: ${Object.keys(GPU_CARDS).join(', ')}, or its memory in
                     GiB (default H100-80G); also prints each file's estimate (json: "gpuMemory", one per run).
                     Trainer numbers are Trinity's GPUMemoryValidator estimate (v0.5.0+); the model's shape comes
                     from model_path's config.json (local or in the Hugging Face cache), else published shapes
  --no-datasets      do not open local datasets to check their keys
  --local            the config runs on the local runtime (\`trinity-workbench run\`): also check what it cannot
                     hold (TRN323–TRN326: the trainer's pass and the explorer's generation against the wasm
                     backend's 4 GiB heaps)

A \`# trinity-disable-next-line [TRN123 ...]\` comment silences those codes (no codes: all) on the line after it,
as in the editor.

Environment: \${oc.env:...} reads the process environment and a .env file in the current directory.
Exit status: 1 when any file has an error, 2 on bad usage, 0 otherwise.`;

const SEVERITY_RANK: Record<string, number> = { hint: 0, information: 1, warning: 2, error: 3 };

export interface JsonReport {
  file: string;
  version: Release;
  diagnostics: {
    line: number;
    column: number;
    endLine: number;
    endColumn: number;
    severity: string;
    code: string;
    message: string;
  }[];
  /** With --gpu: each run's GPU memory picture (one per stage for a staged config). */
  gpuMemory?: GpuMemoryReport[];
}

export async function runCheck(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, {
      values: ['--trinity-version', '--format', '--plugin-dir', '--min-severity', '--gpu'],
      switches: ['--help', '-h', '--no-datasets', '--local'],
    });
  } catch (e) {
    return usage((e as Error).message);
  }
  if (args.switches.has('--help') || args.switches.has('-h')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const format = lastValue(args, '--format') ?? 'text';
  if (format !== 'text' && format !== 'json') return usage(`--format must be text or json, not \`${format}\``);
  const versionArg = lastValue(args, '--trinity-version') ?? 'auto';
  let release: Release | 'auto' = 'auto';
  if (versionArg !== 'auto') {
    const r = parseRelease(versionArg);
    if (!r) return usage(`unknown Trinity release \`${versionArg}\`; known: ${RELEASES.join(', ')}, auto`);
    release = r;
  }
  const minSeverity = lastValue(args, '--min-severity') ?? 'information';
  if (!(minSeverity in SEVERITY_RANK))
    return usage(`--min-severity must be one of ${Object.keys(SEVERITY_RANK).join(', ')}`);
  if (args.positionals.length === 0) return usage('no files given');
  const gpuArg = lastValue(args, '--gpu');
  const gpu = parseGpu(gpuArg);
  if ('problem' in gpu) return usage(`--gpu: ${gpu.problem}`);

  const env = { ...loadDotEnv(resolve('.env')), ...process.env };
  const pluginDirs = [
    ...(args.values.get('--plugin-dir') ?? []),
    ...(env.TRINITY_PLUGIN_DIRS ?? '').split(':').filter(Boolean),
  ];
  const plugins = scanPluginDirs(pluginDirs.map((d) => resolve(d)));
  const files: string[] = [];
  for (const p of args.positionals) {
    let isDir = false;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      // Reported below as unreadable.
    }
    files.push(...(isDir ? trinityConfigsIn(p) : [p]));
  }
  const reports: JsonReport[] = [];
  let anyError = false;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      process.stderr.write(
        `trinity-workbench check: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`,
      );
      return 2;
    }
    const result = await checkConfig(text, {
      release,
      env,
      // Relative paths as `trinity run` opens them: from the directory it starts in.
      host: {
        baseDirs: [process.cwd()],
        env,
        exists: existsSync,
        plugins: plugins.names,
        pluginTaskColumns: plugins.taskColumns,
        pluginWorkflowSpecs: plugins.workflowSpecs,
        gpu: gpu as GpuSpec,
        modelConfig: (modelPath, dirs) => readModelConfigJson(modelPath, dirs, env),
        localRuns: args.switches.has('--local'),
        promptTokens: (req) => promptTokens(req, env),
      },
      datasets: !args.switches.has('--no-datasets'),
    });
    const silenced = disableComments(text);
    const diagnostics = result.diagnostics
      .filter((d) => SEVERITY_RANK[d.severity] >= SEVERITY_RANK[minSeverity] && !silenced(d.range[0], d.code))
      .map((d) => {
        const s = lineColumn(result.loaded.source, d.range[0]);
        const e = lineColumn(result.loaded.source, d.range[1]);
        return {
          line: s.line,
          column: s.column,
          endLine: e.line,
          endColumn: e.column,
          severity: d.severity,
          code: d.code,
          message: d.message,
        };
      });
    anyError ||= diagnostics.some((d) => d.severity === 'error');
    const gpuMemory = result.runs.flatMap((r) => (r.gpuMemory ? [r.gpuMemory] : []));
    reports.push({ file, version: result.loaded.release, diagnostics, ...(gpuArg !== undefined ? { gpuMemory } : {}) });
  }
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  } else {
    const lines: string[] = [];
    for (const r of reports) {
      for (const d of r.diagnostics) lines.push(`${r.file}:${d.line}:${d.column} ${d.severity} ${d.code} ${d.message}`);
      (r.gpuMemory ?? []).forEach((m, i, all) => {
        const stage = all.length > 1 ? ` (run ${i + 1} of ${all.length})` : '';
        lines.push(`${r.file}: GPU memory${stage}:`, ...reportLines(m).map((l) => `  ${l}`));
      });
    }
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
    const counts = count(reports);
    process.stderr.write(
      `${reports.length} file${reports.length === 1 ? '' : 's'} checked: ${counts.error} error(s), ${counts.warning} warning(s), ${counts.information} info.\n`,
    );
  }
  return anyError ? 1 : 0;
}

/** The Trinity configs under a directory: `*.yaml`/`*.yml` files that look like one (dot-folders and node_modules skipped). */
function trinityConfigsIn(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (name.startsWith('.') || name === 'node_modules') continue;
      const p = join(d, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(name) && st.size < 4 * 1024 * 1024 && looksLikeTrinityConfig(readFileSync(p, 'utf8')))
        out.push(p);
    }
  };
  walk(dir);
  return out;
}

function count(reports: JsonReport[]): Record<'error' | 'warning' | 'information', number> {
  const c = { error: 0, warning: 0, information: 0 };
  for (const r of reports) for (const d of r.diagnostics) if (d.severity in c) c[d.severity as keyof typeof c]++;
  return c;
}

function loadDotEnv(path: string): Record<string, string> {
  try {
    return parseDotEnv(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

function usage(message: string): number {
  process.stderr.write(`trinity-workbench check: ${message}\n\n${HELP}\n`);
  return 2;
}
