/**
 * The validator's entry point: load, then run Trinity's check step on the config (or on each stage's config, as
 * `trinity run` does for multi-stage configs), then the checks for what Trinity only finds at run time.
 */
import {
  CheckContext,
  sourcePathIn,
  split,
  type Cfg,
  type CheckHost,
  type Derivation,
  type StageInfo,
} from './check/check-context';
import { guarded, runLaunchChecks } from './check/pipeline';
import { checkDatasets } from './check/datasets';
import { runRuntimeChecks } from './check/runtime';
import { checkDomains } from './check/domains';
import type { ConfigDiagnostic, Path } from './diagnostics';
import { loadConfig, nodeAt, rangeForPath, type LoadedConfig, type LoadOptions } from './load/load-config';
import type { Range } from './load/yaml-tree';
import { cloneData } from './model/defaults';
import type { GpuMemoryReport } from './gpu-memory/report';

export interface CheckOptions extends LoadOptions {
  host?: CheckHost;
  /** Open local datasets to check configured keys (async; default true). */
  datasets?: boolean;
}

/** One checked config: the root, or one stage of a multi-stage config. */
export interface CheckedRun {
  stage?: StageInfo;
  /** The config after Trinity's check step: defaults, auto-filled and adjusted values applied. */
  resolved: Cfg;
  derivations: Derivation[];
  /** The trainer's and the rollout engines' GPU memory (gpu-memory/), when the checks got that far. */
  gpuMemory?: GpuMemoryReport;
}

export interface CheckResult {
  loaded: LoadedConfig;
  /** Sorted by position; duplicates (the same finding in several stages) removed. */
  diagnostics: ConfigDiagnostic[];
  runs: CheckedRun[];
}

/** Everything that needs no I/O beyond `host.exists`: fast enough to run on every keystroke. */
export function checkLoaded(loaded: LoadedConfig, host: CheckHost = {}): CheckResult {
  const diagnostics = [...loaded.diagnostics];
  // A document that did not parse into a mapping has nothing further to check.
  const planned = loaded.source.root !== undefined ? effectiveConfigs(loaded) : [];
  if (loaded.source.root !== undefined) {
    try {
      diagnostics.push(
        ...checkDomains(
          loaded,
          planned.flatMap((r) => (r.stage ? [r.stage] : [])),
        ),
      );
    } catch (e) {
      diagnostics.push({
        code: 'TRN009',
        severity: 'error',
        message: `Internal error while checking value domains: ${(e as Error).message}.`,
        range: [0, 0],
      });
    }
  }
  const runs: CheckedRun[] = [];
  const contexts: CheckContext[] = [];
  for (const { cfg, stage } of planned) {
    const ctx = new CheckContext(loaded, cfg, host, stage);
    runLaunchChecks(ctx);
    guarded(ctx, runRuntimeChecks);
    contexts.push(ctx);
    diagnostics.push(...ctx.diagnostics);
    runs.push({ stage, resolved: ctx.cfg, derivations: ctx.derivations, gpuMemory: ctx.gpuMemory });
  }
  return { loaded, diagnostics: normalize(diagnostics), runs };
}

export async function checkConfig(text: string, opts: CheckOptions = {}): Promise<CheckResult> {
  const loaded = loadConfig(text, opts);
  const result = checkLoaded(loaded, opts.host);
  if (opts.datasets !== false && opts.host) {
    const findings = await checkDatasetsOf(result, opts.host);
    result.diagnostics = normalize([...result.diagnostics, ...findings.map((f) => f.diagnostic)]);
  }
  return result;
}

/** A finding of the dataset checks, with the key it is at in the file (where an editor places it after edits). */
export interface DatasetFinding {
  diagnostic: ConfigDiagnostic;
  /** The path in the file (under `stages[i]` for a stage's replaced section); absent when reported at a range. */
  at?: Path;
}

/**
 * The checks that open local datasets (check/datasets.ts: TRN305, TRN306, TRN317, TRN321), over each run of a
 * checked config; none without base directories to resolve relative paths against. Async I/O: the CLI awaits it in
 * checkConfig, the language server runs it after a document's other diagnostics are out.
 */
export async function checkDatasetsOf(result: CheckResult, host: CheckHost): Promise<DatasetFinding[]> {
  if (result.loaded.source.root === undefined || !host.baseDirs?.length) return [];
  const out: DatasetFinding[] = [];
  for (const run of result.runs) {
    const ctx = new CheckContext(result.loaded, run.resolved, host, run.stage);
    try {
      await checkDatasets(ctx);
    } catch (e) {
      ctx.report('TRN009', `Internal error while reading datasets: ${(e as Error).message}.`, [0, 0]);
    }
    for (const diagnostic of ctx.diagnostics) {
      const path = diagnostic.data?.path;
      out.push(path ? { diagnostic, at: sourcePathIn(run.stage, path) } : { diagnostic });
    }
  }
  return out;
}

/** The sections a stage may replace, as Trinity's `Config.__iter__` replaces them: whole, not merged. */
const STAGE_SECTIONS = ['mode', 'algorithm', 'buffer', 'data_processor', 'explorer', 'trainer'] as const;

export function effectiveConfigs(loaded: LoadedConfig): { cfg: Cfg; stage?: StageInfo }[] {
  const root = loaded.value;
  const stages = (root.stages as Cfg[] | undefined) ?? [];
  if (stages.length === 0) return [{ cfg: cloneData(root) }];
  return stages.map((s, index) => {
    const cfg = cloneData(root);
    const replaced = new Set<string>();
    for (const key of STAGE_SECTIONS) {
      if (s[key] !== null && s[key] !== undefined) {
        cfg[key] = cloneData(s[key]);
        replaced.add(key);
      }
    }
    const name = String(s.stage_name ?? index);
    cfg.name = `${root.name}/${name}`;
    cfg.stages = [];
    return { cfg, stage: { index, name, replaced } };
  });
}

function normalize(diags: ConfigDiagnostic[]): ConfigDiagnostic[] {
  const seen = new Set<string>();
  const out: ConfigDiagnostic[] = [];
  for (const d of diags) {
    // The same finding in several stages is reported once, without the stage prefix when it is not stage-specific.
    const key = `${d.code}|${d.range[0]}|${d.range[1]}|${d.message.replace(/^\[stage [^\]]*\] /, '')}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out.sort((a, b) => a.range[0] - b.range[0] || a.range[1] - b.range[1] || a.code.localeCompare(b.code));
}

/** Where a value of the checked config comes from. */
export interface ValueSource {
  value: unknown;
  /** `written` in the file, `derived` by Trinity's check step, or the schema `default`. */
  origin: 'written' | 'derived' | 'default';
  /** The written value's range; for a derived one, the key that caused it; for a default, the nearest written ancestor. */
  range: Range;
  derivation?: Derivation;
}

/** The value at a dotted path after the checks (for run `runIndex`, i.e. a stage), and the source that set it. */
export function valueSource(result: CheckResult, path: string, runIndex = 0): ValueSource | undefined {
  const run = result.runs[runIndex];
  if (!run) return undefined;
  const keys = split(path);
  let value: unknown = run.resolved;
  for (const k of keys) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[String(k)];
  }
  const root = result.loaded.root;
  const src = sourcePathIn(run.stage, keys);
  const derivation = [...run.derivations].reverse().find((d) => d.path === path);
  if (derivation) return { value, origin: 'derived', range: derivation.range ?? rangeForPath(root, src), derivation };
  const node = nodeAt(root, src);
  if (node && node.origin === 'yaml' && node.range) return { value, origin: 'written', range: node.range };
  return { value, origin: 'default', range: rangeForPath(root, src) };
}

/** Where the key of a dotted path is written (its nearest written ancestor's key when it is not), for a whole-section finding. */
export function keyRangeOf(result: CheckResult, path: string, runIndex = 0): Range {
  const run = result.runs[runIndex];
  return run ? rangeForPath(result.loaded.root, sourcePathIn(run.stage, split(path)), 'key') : [0, 0];
}

/** Whether the user wrote the key at a dotted path (for run `runIndex`: in its stage when the stage replaces that section). */
export function writtenIn(result: CheckResult, path: string, runIndex = 0): boolean {
  const run = result.runs[runIndex];
  const node = run && nodeAt(result.loaded.root, sourcePathIn(run.stage, split(path)));
  return node !== undefined && node.origin === 'yaml';
}
