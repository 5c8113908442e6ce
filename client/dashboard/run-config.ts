/**
 * A run's resolved config for the dashboard's Config tab. Neither our runtime nor Trinity leaves the resolved
 * config in the job directory; the run record (`state/run*.json`) names the config file, and the config is resolved
 * here with the project's own resolver (runtime/config: load, stages, Trinity's check step), as `Resolved` shows it.
 * Pure of `vscode`: the panel calls `runConfigOf` and posts the result.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Document } from 'yaml';
import { loadConfig } from '../../runtime/config/load';
import { checkLoaded, type CheckedRun } from '../../runtime/config/validate';
import { readRecords } from '../runs/job-dirs';
import type { RunConfigMessage } from './messages';

/** Dotted keys -> values as text. Lists of scalars stay one value (`[1, 2]`); lists of mappings are indexed (`a.0.b`). */
export function flattenConfig(value: unknown, prefix = ''): [string, string][] {
  const out: [string, string][] = [];
  const walk = (v: unknown, key: string): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (entries.length === 0 && key) out.push([key, '{}']);
      for (const [k, x] of entries) walk(x, key ? `${key}.${k}` : k);
    } else if (Array.isArray(v) && v.some((x) => x !== null && typeof x === 'object')) {
      if (v.length === 0) out.push([key, '[]']);
      v.forEach((x, i) => walk(x, `${key}.${i}`));
    } else out.push([key, scalarText(v)]);
  };
  walk(value, prefix);
  return out;
}

function scalarText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(scalarText).join(', ')}]`;
  return String(v);
}

/** The config file a job directory's run record names, and when that run started (ms), if any. */
export function recordedConfig(jobDir: string): { path: string; startedAt?: number } | undefined {
  const r = readRecords(jobDir).find((x) => typeof x.record.config === 'string' && x.record.config);
  if (!r) return undefined;
  const t = Date.parse(r.record.startedAt);
  return { path: r.record.config, ...(Number.isFinite(t) ? { startedAt: t } : {}) };
}

function yamlOf(runs: readonly CheckedRun[]): string {
  if (runs.length === 1) return new Document(runs[0].resolved).toString({ lineWidth: 0 });
  return runs
    .map((r) => `# stage ${r.stage?.name ?? ''}\n${new Document(r.resolved).toString({ lineWidth: 0 })}`)
    .join('---\n');
}

export interface ResolvedRunConfig {
  message: RunConfigMessage;
  /** Each run's (stage's) resolved config; none when it could not be resolved. */
  resolved: unknown[];
  configDir?: string;
}

/**
 * The resolved config of the run in `jobDir` (`configPath`: the one a live run was started with, else the record's).
 * A multi-stage config's keys are prefixed by their stage (`sft_warmup:algorithm.algorithm_type`).
 */
export function runConfigOf(
  key: string,
  jobDir: string,
  configPath?: string,
  env: Record<string, string | undefined> = process.env,
): RunConfigMessage {
  return resolveRunConfig(key, jobDir, configPath, env).message;
}

export function resolveRunConfig(
  key: string,
  jobDir: string,
  configPath?: string,
  env: Record<string, string | undefined> = process.env,
): ResolvedRunConfig {
  const fail = (m: RunConfigMessage): ResolvedRunConfig => ({ message: m, resolved: [] });
  const recorded = recordedConfig(jobDir);
  const path = configPath ?? recorded?.path;
  const empty = { key, source: path ?? '', note: '', yaml: '', flat: [] as [string, string][] };
  if (!path) return fail({ ...empty, error: 'The job directory has no run record naming its config file.' });
  let text: string;
  let mtime: number;
  try {
    text = readFileSync(path, 'utf8');
    mtime = statSync(path).mtimeMs;
  } catch (e) {
    return fail({
      ...empty,
      error: `Cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    });
  }
  try {
    const loaded = loadConfig(text, { env });
    const result = checkLoaded(loaded, { baseDirs: [dirname(path)], env, exists: existsSync });
    if (!result.runs.length) return fail({ ...empty, error: `${path} is not a config mapping.` });
    const flat =
      result.runs.length === 1
        ? flattenConfig(result.runs[0].resolved)
        : result.runs.flatMap((r) =>
            flattenConfig(r.resolved).map(([k, v]): [string, string] => [`${r.stage?.name ?? ''}:${k}`, v]),
          );
    const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
    const notes = [`Resolved for Trinity-RFT ${loaded.release}.`];
    if (recorded?.startedAt !== undefined && mtime > recorded.startedAt)
      notes.push(
        `The file changed after this run started (${new Date(recorded.startedAt).toISOString()}): this is what it resolves to now.`,
      );
    if (errors) notes.push(`The config has ${errors} error(s) now.`);
    return {
      message: { key, source: path, note: notes.join(' '), yaml: yamlOf(result.runs), flat },
      resolved: result.runs.map((r) => r.resolved),
      configDir: dirname(path),
    };
  } catch (e) {
    return fail({ ...empty, error: `Cannot resolve ${path}: ${(e as Error).message}` });
  }
}
