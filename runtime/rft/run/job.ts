/**
 * `trinity run --config X` on this machine: check the config exactly as the language server does (errors stop the
 * run before anything loads, named by file, line and key), then run each stage in order, every later stage
 * starting from the previous stage's last checkpoint, as Trinity's launcher does. A stage already finished in an
 * earlier, interrupted run is skipped when `continue_from_checkpoint` is set.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config/types.generated';
import { checkConfig, writtenIn } from '../../config/validate';
import { lineColumn } from '../../config/load/load-config';
import { parseDotEnv } from '../../config/environment/dotenv';
import {
  PROTOCOL_VERSION,
  runRecordPath,
  type RunEvent,
  type RunRecord,
  type RuntimeEvent,
  type StageInfo,
} from '../../protocol';
import { writeFileAtomically } from '../checkpoint/checkpoints';
import { Monitor } from '../monitor/monitor';
import type { StageContext, StageResult } from './context';
import { runBench } from './run-bench';
import { runBoth } from './run-both';
import { runExplore } from './run-explore';
import { runTrain } from './run-train';
import { runServe } from './serve';
import { withAbsoluteAuxiliaryPaths } from './setup';
import { jobDirOf, runJobDirOf } from '../../config/runs/job-dir';
import { loadRuntimePlugins } from '../plugins';
import { localRefusals } from '../local-support';
import { isHubId } from '../../engine/model/hub';
import { ensureModelDir } from '../../engine/model/hub-download';

export interface JobOptions {
  events?: (e: RuntimeEvent) => void;
  log?: (level: 'info' | 'warning' | 'error', message: string) => void;
  progress?: StageContext['progress'];
  signal?: AbortSignal;
  /** The backend that was started (for the `run` event). */
  backend: string;
  seed?: number;
  /** Plugin directories: JavaScript workflows and reward functions (see runtime/rft/plugins.ts). */
  pluginDirs?: string[];
  /** Overrides `continue_from_checkpoint` in every stage (the editor's Resume). */
  continueFromCheckpoint?: boolean;
}

export interface StageSummary {
  name: string;
  mode: string;
  jobDir: string;
  result: StageResult;
}

export interface JobResult {
  status: 'finished' | 'stopped' | 'failed';
  stages: StageSummary[];
  error?: string;
}

export class ConfigRejected extends Error {}

export async function runJob(configPath: string, opts: JobOptions): Promise<JobResult> {
  const path = resolve(configPath);
  const configDir = dirname(path);
  const emit = opts.events ?? (() => {});
  const log = opts.log ?? (() => {});
  const signal = opts.signal ?? new AbortController().signal;
  const stages: StageSummary[] = [];
  // Set once the run's job directory is known: records how the run ended there.
  let endRecord: (status: RunRecord['status'], error?: string) => void = () => {};
  try {
    const text = readFileSync(path, 'utf8');
    const env = {
      ...(existsSync(resolve('.env')) ? parseDotEnv(readFileSync(resolve('.env'), 'utf8')) : {}),
      ...process.env,
    };
    const plugins = opts.pluginDirs?.length ? await loadRuntimePlugins(opts.pluginDirs) : undefined;
    for (const f of plugins?.files ?? []) log('info', `plugin ${f} loaded`);
    const result = await checkConfig(text, {
      env,
      host: { baseDirs: [...new Set([configDir, process.cwd()])], env, exists: existsSync, plugins: plugins?.names },
    });
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length) {
      const lines = errors.map((d) => {
        const at = lineColumn(result.loaded.source, d.range[0]);
        return `${path}:${at.line}:${at.column} ${d.code} ${d.message}`;
      });
      throw new ConfigRejected(`the config has ${errors.length} error(s):\n${lines.join('\n')}`);
    }
    const refusals = localRefusals(result, plugins?.names);
    if (refusals.length) {
      const lines = refusals.map((r) => {
        const at = lineColumn(result.loaded.source, r.range[0]);
        return `${path}:${at.line}:${at.column} ${r.message}`;
      });
      throw new ConfigRejected(
        `the config uses ${refusals.length === 1 ? 'an entry' : `${refusals.length} entries`} the local runtime does not implement:\n${lines.join('\n')}`,
      );
    }
    for (const d of result.diagnostics.filter((x) => x.severity === 'warning')) {
      const at = lineColumn(result.loaded.source, d.range[0]);
      log('warning', `${path}:${at.line}:${at.column} ${d.code} ${d.message}`);
    }
    const runs = result.runs;
    if (opts.continueFromCheckpoint !== undefined)
      for (const run of runs) (run.resolved as Config).continue_from_checkpoint = opts.continueFromCheckpoint;
    const rootCfg = runs[0].resolved as Config;
    const rootJobDir = runJobDirOf(
      runs.map((r) => r.resolved as Config),
      result.loaded.value.name,
    );
    mkdirSync(rootJobDir, { recursive: true });
    const runStarted = Date.now();
    const stageInfo: StageInfo[] = runs.map((run) => {
      const cfg = run.resolved as Config;
      return { name: run.stage?.name ?? cfg.name, mode: cfg.mode, jobDir: jobDirOf(cfg) };
    });
    const runEvent: RunEvent = {
      type: 'run',
      protocol: PROTOCOL_VERSION,
      runId: randomUUID(),
      config: path,
      jobDir: rootJobDir,
      backend: opts.backend,
      startedAt: new Date(runStarted).toISOString(),
      pid: process.pid,
      stages: stageInfo,
    };
    const { type: _, jobDir: __, ...recordBase } = runEvent;
    const recordPath = join(rootJobDir, runRecordPath(runs.length > 1 ? undefined : rootCfg.mode));
    const record = (status: RunRecord['status'], error?: string): void => {
      const r: RunRecord = {
        ...recordBase,
        status,
        ...(status === 'running' ? {} : { endedAt: new Date().toISOString() }),
        ...(error ? { error } : {}),
      };
      mkdirSync(dirname(recordPath), { recursive: true });
      writeFileAtomically(recordPath, `${JSON.stringify(r, null, 1)}\n`);
    };
    endRecord = (status, error) => record(status, error);
    record('running');
    emit(runEvent);
    // Stage progress only for configs with stages (Trinity's stage_meta.json): the explore and train processes of
    // one asynchronous job share the job directory, and one finishing must not mark the other's stage done.
    const stagePath = join(rootJobDir, 'state', 'stage.json');
    const staged = runs.length > 1;
    const resumeStages = staged && rootCfg.continue_from_checkpoint && existsSync(stagePath);
    const done = resumeStages
      ? (JSON.parse(readFileSync(stagePath, 'utf8')) as { finished: number; checkpoints: (string | null)[] })
      : { finished: 0, checkpoints: [] };
    let previous: string | undefined;
    for (const [i, run] of runs.entries()) {
      // Auxiliary models load wherever the explorer is built (worker, explore/bench modes): paths fixed here.
      const cfg = withAbsoluteAuxiliaryPaths(run.resolved as Config, configDir);
      const name = run.stage?.name ?? cfg.name;
      const jobDir = jobDirOf(cfg);
      const stageEvent = { type: 'stage', index: i, count: runs.length, name, mode: cfg.mode, jobDir } as const;
      if (i < done.finished) {
        emit({ ...stageEvent, skipped: true });
        previous = done.checkpoints[i] ?? previous;
        log('info', `stage ${i + 1}/${runs.length} (${name}) finished in an earlier run; skipped`);
        continue;
      }
      if (signal.aborted) break;
      emit(stageEvent);
      if (runs.length > 1) log('info', `stage ${i + 1}/${runs.length}: ${name} (${cfg.mode})`);
      // A hub id that is not cached is fetched first when downloads are allowed (else loading names the cache).
      if (!previous && isHubId(cfg.model.model_path) && !existsSync(resolve(configDir, cfg.model.model_path))) {
        await ensureModelDir(cfg.model.model_path, { baseDir: configDir, log: (m) => log('info', m) });
      }
      for (const m of cfg.explorer.auxiliary_models ?? []) {
        if (m.model_path && isHubId(m.model_path) && !existsSync(resolve(configDir, m.model_path)))
          await ensureModelDir(m.model_path, { baseDir: configDir, log: (x) => log('info', x) });
      }
      const monitor = new Monitor(
        jobDir,
        emit,
        (cfg.monitor?.monitor_type ?? 'tensorboard') === 'tensorboard',
        runStarted,
      );
      const ctx: StageContext = {
        cfg,
        release: result.loaded.release,
        written: (key) => writtenIn(result, key, i),
        configDir,
        jobDir,
        modelPath: previous,
        monitor,
        log,
        signal,
        seed: opts.seed ?? 42,
        progress: (role, step, total, detail) => {
          emit({ type: 'progress', role, step, total, detail });
          opts.progress?.(role, step, total, detail);
        },
      };
      const stageResult = await runStage(ctx);
      stages.push({ name, mode: cfg.mode, jobDir, result: stageResult });
      if (stageResult.stopped) break;
      previous = stageResult.lastCheckpoint ?? previous;
      done.finished = i + 1;
      done.checkpoints[i] = stageResult.lastCheckpoint ?? null;
      if (staged) {
        mkdirSync(dirname(stagePath), { recursive: true });
        writeFileAtomically(stagePath, JSON.stringify(done));
      }
    }
    const status = signal.aborted ? 'stopped' : 'finished';
    endRecord(status);
    emit({ type: 'done', status });
    return { status, stages };
  } catch (e) {
    const message = (e as Error).message;
    try {
      endRecord('failed', message);
    } catch {
      // The job directory itself may be what failed; the event still says why.
    }
    emit({ type: 'done', status: 'failed', error: message });
    return { status: 'failed', stages, error: message };
  }
}

function runStage(ctx: StageContext): Promise<StageResult> {
  switch (ctx.cfg.mode) {
    case 'both':
      return runBoth(ctx);
    case 'train':
      return runTrain(ctx);
    case 'explore':
      return runExplore(ctx);
    case 'bench':
      return runBench(ctx);
    case 'serve':
      return runServe(ctx);
    case 'colocate': // trinity/cli/launcher.py MODE_MAP: `both`, explorer and trainer taking turns on one GPU
      return runBoth(ctx);
    default:
      throw new Error(`mode ${ctx.cfg.mode} does not run locally`);
  }
}
