/**
 * A run's resolved config for the dashboard's Config tab. Neither our runtime nor Trinity leaves the resolved
 * config in the job directory: the run record (`state/run*.json`) names the config file, and the language server
 * resolves it (`trinity/resolvedConfig`, the same answer Show Resolved Config shows). Pure of `vscode`: the panel
 * asks the server and turns its answer into the tab's message here.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { readRunRecords } from '../../runtime/run-records';
import type { ResolvedConfigResponse } from '../../server/lsp-messages';
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
  const r = readRunRecords(jobDir).find((x) => typeof x.record.config === 'string' && x.record.config);
  if (!r) return undefined;
  const t = Date.parse(r.record.startedAt);
  return { path: r.record.config, ...(Number.isFinite(t) ? { startedAt: t } : {}) };
}

export interface ResolvedRunConfig {
  message: RunConfigMessage;
  /** Each run's (stage's) resolved config; none when it could not be resolved. */
  resolved: unknown[];
  configDir?: string;
}

/** The config file a run was started with: the one this window knows, else the one its record names. */
export function runConfigPath(jobDir: string, configPath?: string): string | undefined {
  return configPath ?? recordedConfig(jobDir)?.path;
}

/**
 * The Config tab's message for the run in `jobDir`, from the server's answer for its config file `path` (null: the
 * file is gone; an Error: the server could not be asked). A multi-stage config's keys are prefixed by their stage
 * (`sft_warmup:algorithm.algorithm_type`).
 */
export function runConfigMessage(
  key: string,
  jobDir: string,
  path: string | undefined,
  answer: ResolvedConfigResponse | null | Error,
): ResolvedRunConfig {
  const empty = { key, source: path ?? '', note: '', yaml: '', flat: [] as [string, string][] };
  const fail = (error: string): ResolvedRunConfig => ({ message: { ...empty, error }, resolved: [] });
  if (!path) return fail('The job directory has no run record naming its config file.');
  if (answer instanceof Error) return fail(`Cannot resolve ${path}: ${answer.message}`);
  if (!answer) return fail(`Cannot read ${path}: it is no longer there.`);
  if (!answer.runs.length) return fail(`${path} is not a config mapping.`);
  const staged = answer.runs.length > 1;
  const flat = answer.runs.flatMap((r) =>
    flattenConfig(r.resolved).map(([k, v]): [string, string] => [staged ? `${r.stage ?? ''}:${k}` : k, v]),
  );
  const yaml = staged
    ? answer.runs.map((r) => `# stage ${r.stage ?? ''}\n${r.yaml}`).join('---\n')
    : answer.runs[0].yaml;
  const notes = [`Resolved for Trinity-RFT ${answer.release}.`];
  const startedAt = recordedConfig(jobDir)?.startedAt;
  if (startedAt !== undefined && modifiedAt(path) > startedAt)
    notes.push(
      `The file changed after this run started (${new Date(startedAt).toISOString()}): this is what it resolves to now.`,
    );
  if (answer.errors) notes.push(`The config has ${answer.errors} error(s) now.`);
  return {
    message: { key, source: path, note: notes.join(' '), yaml, flat },
    resolved: answer.runs.map((r) => r.resolved),
    configDir: dirname(path),
  };
}

function modifiedAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}
