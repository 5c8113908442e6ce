/**
 * The config of a local run, checked exactly as the language server checks it: errors and entries the local
 * runtime does not implement stop the run before anything loads, each named by file, line and column.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../../config/types.generated';
import { checkConfig, type CheckResult } from '../../../config/check-config';
import { lineColumn } from '../../../config/load/load-config';
import { parseDotEnv } from '../../../config/environment/dotenv';
import { readModelConfigJson } from '../../../engine/lm/config-json-cache';
import { loadRuntimePlugins } from '../../plugins';
import { localRefusals } from '../../refusals/refusals';
import type { RunLog } from '../../monitor/run-log';

export class ConfigRejected extends Error {}

export interface RunnableConfig {
  result: CheckResult;
  /** One per stage (one for a config without stages), in order. */
  configs: Config[];
}

export async function loadRunnableConfig(
  path: string,
  opts: {
    pluginDirs?: string[];
    continueFromCheckpoint?: boolean;
    workDir?: string;
    /** The backend the run trains on (tf.getBackend()); wasm when not given. */
    backend?: string;
  },
  log: RunLog,
): Promise<RunnableConfig> {
  const text = readFileSync(path, 'utf8');
  const env = {
    ...(existsSync(resolve('.env')) ? parseDotEnv(readFileSync(resolve('.env'), 'utf8')) : {}),
    ...process.env,
  };
  const plugins = opts.pluginDirs?.length ? await loadRuntimePlugins(opts.pluginDirs) : undefined;
  for (const f of plugins?.files ?? []) log('info', `plugin ${f} loaded`);
  const result = await checkConfig(text, {
    env,
    host: {
      baseDirs: [opts.workDir ?? dirname(path)],
      env,
      exists: existsSync,
      readText,
      plugins: plugins?.names,
      pluginTaskColumns: plugins?.taskColumns,
      pluginWorkflowSpecs: plugins?.workflowSpecs,
      modelConfig: (modelPath, baseDirs) => readModelConfigJson(modelPath, baseDirs, env),
      // TRN323–TRN326 are about the wasm heap; webgpu, cpu and tfjs-node hold tensors outside it.
      localRuns: (opts.backend ?? 'wasm').startsWith('wasm'),
    },
  });
  const at = (offset: number): string => {
    const p = lineColumn(result.loaded.source, offset);
    return `${path}:${p.line}:${p.column}`;
  };
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) {
    const lines = errors.map((d) => `${at(d.range[0])} ${d.code} ${d.message}`);
    throw new ConfigRejected(`the config has ${errors.length} error(s):\n${lines.join('\n')}`);
  }
  const refusals = localRefusals(result, plugins?.names);
  if (refusals.length) {
    const lines = refusals.map((r) => `${at(r.range[0])} ${r.message}`);
    throw new ConfigRejected(
      `the config uses ${refusals.length === 1 ? 'an entry' : `${refusals.length} entries`} the local runtime does not implement:\n${lines.join('\n')}`,
    );
  }
  for (const d of result.diagnostics.filter((x) => x.severity === 'warning')) {
    log('warning', `${at(d.range[0])} ${d.code} ${d.message}`);
  }
  // The one narrowing to main's generated types: the config passed its own release's checks with no error, and
  // localRefusals has turned away every registry entry this runtime lacks, so what the runtime reads is there.
  const configs = result.runs.map((run) => run.resolved as Config);
  if (opts.continueFromCheckpoint !== undefined)
    for (const cfg of configs) cfg.continue_from_checkpoint = opts.continueFromCheckpoint;
  return { result, configs };
}

/** A file's text, or undefined when it cannot be read (the check then says what it lacks). */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
