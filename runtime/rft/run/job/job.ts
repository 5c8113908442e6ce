/**
 * `trinity run --config X` on this machine: check the config exactly as the language server does (errors stop the
 * run before anything loads, named by file, line and key), then run each stage in order, every later stage
 * starting from the previous stage's last checkpoint, as Trinity's launcher does. A stage already finished in an
 * earlier, interrupted run is skipped when `continue_from_checkpoint` is set.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../../config/types.generated';
import { explainOutOfMemory } from '../../../engine/backend/out-of-memory';
import { writtenIn, type CheckResult } from '../../../config/check-config';
import type { RunRecord, RuntimeEvent, StageInfo } from '../../../protocol';
import { checkSqlStorages } from '../../buffer/integrity';
import { checkpointProblem } from '../../checkpoint/checkpoint-choice';
import { ioFailureMessage, makeDirs, withIo } from '../../io-failure';
import { JobLocked, takeJobLock, type JobLock } from './job-lock';
import { Monitor } from '../../monitor/run-monitor';
import type { StageContext, StageResult } from '../stage/stage-context';
import { loadRunnableConfig } from './job-config';
import type { RunLog } from '../../monitor/run-log';
import { runRecordWriter } from './run-record';
import { runBench } from '../modes/run-bench';
import { runBoth } from '../modes/run-both';
import { runExplore } from '../modes/run-explore';
import { runTrain } from '../modes/run-train';
import { runServe } from '../modes/run-serve';
import { withAbsoluteAuxiliaryPaths, withAbsolutePath } from '../stage/config-paths';
import { remoteMonitorNotice } from './monitor-notice';
import { scaleNotice } from '../../../config/check/scale-settings';
import { readStageProgress, stageProgressPath, writeStageProgress } from './stage-progress';
import { jobDirOf, runJobDirOf } from '../../../config/runs/job-dir';
import { isHubId } from '../../../engine/lm/hub';
import { ensureModelDir } from '../../../engine/lm/hub-download';

export { ConfigRejected } from './job-config';

export interface JobOptions {
  events?: (e: RuntimeEvent) => void;
  log?: RunLog;
  progress?: StageContext['progress'];
  signal?: AbortSignal;
  /** The backend that was started (for the `run` event). */
  backend: string;
  seed?: number;
  /** Plugin directories: JavaScript workflows and reward functions (see runtime/rft/plugins.ts). */
  pluginDirs?: string[];
  /** Overrides `continue_from_checkpoint` in every stage (the editor's Resume). */
  continueFromCheckpoint?: boolean;
  /**
   * What relative data and model paths resolve against: Trinity's rule, the directory the run starts in (the
   * CLI passes its working directory). Default: the config's folder, for callers in another process's directory.
   */
  workDir?: string;
}

export interface StageSummary {
  name: string;
  mode: string;
  jobDir: string;
  result: StageResult;
}

export interface JobResult {
  /** `refused`: another run holds the job folder; nothing was done (protocol.ts DoneEvent). */
  status: 'finished' | 'stopped' | 'failed' | 'refused';
  stages: StageSummary[];
  error?: string;
}

export async function runJob(configPath: string, opts: JobOptions): Promise<JobResult> {
  const path = resolve(configPath);
  const configDir = opts.workDir ?? dirname(path);
  const emit = opts.events ?? (() => {});
  const log = opts.log ?? (() => {});
  const signal = opts.signal ?? new AbortController().signal;
  const stages: StageSummary[] = [];
  // Set once the run's job directory is known: records how the run ended there.
  let endRecord: (status: RunRecord['status'], error?: string) => void = () => {};
  let lock: JobLock | undefined;
  try {
    const { result, configs } = await loadRunnableConfig(path, opts, log);
    const rootJobDir = runJobDirOf(configs, result.loaded.value.name);
    withIo('job folder creation', rootJobDir, () => makeDirs(rootJobDir));
    const runStarted = Date.now();
    const stageInfo: StageInfo[] = configs.map((cfg, i) => ({
      name: result.runs[i].stage?.name ?? cfg.name,
      mode: cfg.mode,
      jobDir: jobDirOf(cfg),
    }));
    const staged = configs.length > 1;
    const record = runRecordWriter({
      configPath: path,
      rootJobDir,
      backend: opts.backend,
      startedAt: runStarted,
      stages: stageInfo,
      singleMode: staged ? undefined : configs[0].mode,
    });
    lock = takeJobLock(
      rootJobDir,
      staged ? undefined : configs[0].mode,
      { runId: record.event.runId, config: path },
      log,
    );
    endRecord = (status, error) => record.write(status, error);
    for (const cfg of configs) checkSqlStorages(cfg, (p) => withAbsolutePath({ path: p }, configDir).path!);
    record.write('running');
    emit(record.event);
    const progressPath = stageProgressPath(rootJobDir);
    const done = readStageProgress(progressPath, staged && !!configs[0].continue_from_checkpoint);
    let previous: string | undefined;
    for (const [i, resolved] of configs.entries()) {
      // Auxiliary models load wherever the explorer is built (worker, explore/bench modes): paths fixed here.
      const cfg = withAbsoluteAuxiliaryPaths(resolved, configDir);
      const { name, jobDir } = stageInfo[i];
      const stageEvent = { type: 'stage', index: i, count: configs.length, name, mode: cfg.mode, jobDir } as const;
      if (i < done.finished) {
        emit({ ...stageEvent, skipped: true });
        previous = done.checkpoints[i] ?? previous;
        log('info', `stage ${i + 1}/${configs.length} (${name}) finished in an earlier run; skipped`);
        continue;
      }
      if (signal.aborted) break;
      emit(stageEvent);
      if (staged) log('info', `stage ${i + 1}/${configs.length}: ${name} (${cfg.mode})`);
      const monitorNotice = remoteMonitorNotice(cfg.monitor.monitor_type, jobDir);
      if (monitorNotice) log('info', monitorNotice);
      const scale = scaleNotice(cfg as unknown as Record<string, unknown>);
      if (scale) log('info', scale);
      const damaged = previous === undefined ? undefined : checkpointProblem(previous);
      if (damaged) throw new Error(`stage ${name} starts from ${previous}, which is damaged: ${damaged}`);
      await fetchHubModels(cfg, configDir, previous, log);
      const ctx = stageContext({
        cfg,
        result,
        index: i,
        configDir,
        jobDir,
        previous,
        runStarted,
        opts,
        emit,
        log,
        signal,
      });
      const stageResult = await runStage(ctx);
      stages.push({ name, mode: cfg.mode, jobDir, result: stageResult });
      if (stageResult.stopped) break;
      previous = stageResult.lastCheckpoint ?? previous;
      done.finished = i + 1;
      done.checkpoints[i] = stageResult.lastCheckpoint ?? null;
      if (staged) writeStageProgress(progressPath, done);
    }
    const status = signal.aborted ? 'stopped' : 'finished';
    endRecord(status);
    emit({ type: 'done', status });
    return { status, stages };
  } catch (e) {
    if (e instanceof JobLocked) {
      emit({ type: 'done', status: 'refused', error: e.message, refusal: e.refusal });
      return { status: 'refused', stages, error: e.message };
    }
    const message = ioFailureMessage(e, path) ?? explainOutOfMemory(e, opts.backend);
    try {
      endRecord('failed', message);
    } catch {
      // The job directory itself may be what failed; the event still says why.
    }
    emit({ type: 'done', status: 'failed', error: message });
    return { status: 'failed', stages, error: message };
  } finally {
    lock?.release();
  }
}

/** A hub id that is not cached is fetched first when downloads are allowed (else loading names the cache). */
async function fetchHubModels(
  cfg: Config,
  configDir: string,
  previous: string | undefined,
  log: RunLog,
): Promise<void> {
  if (!previous && isHubId(cfg.model.model_path) && !existsSync(resolve(configDir, cfg.model.model_path))) {
    await ensureModelDir(cfg.model.model_path, { baseDir: configDir, log: (m) => log('info', m) });
  }
  for (const m of cfg.explorer.auxiliary_models) {
    if (m.model_path && isHubId(m.model_path) && !existsSync(resolve(configDir, m.model_path)))
      await ensureModelDir(m.model_path, { baseDir: configDir, log: (x) => log('info', x) });
  }
}

function stageContext(args: {
  cfg: Config;
  result: CheckResult;
  index: number;
  configDir: string;
  jobDir: string;
  previous: string | undefined;
  runStarted: number;
  opts: JobOptions;
  emit: (e: RuntimeEvent) => void;
  log: RunLog;
  signal: AbortSignal;
}): StageContext {
  const { cfg, result, index, jobDir, opts, emit } = args;
  const tensorboard = cfg.monitor.monitor_type === 'tensorboard';
  return {
    cfg,
    release: result.loaded.release,
    written: (key) => writtenIn(result, key, index),
    configDir: args.configDir,
    jobDir,
    modelPath: args.previous,
    monitor: new Monitor(jobDir, emit, tensorboard, args.runStarted),
    log: args.log,
    signal: args.signal,
    // `--seed`, else the rollout engine's `seed` (Trinity hands `explorer.rollout_model.seed` to vLLM; default 42).
    seed: opts.seed ?? cfg.explorer.rollout_model.seed ?? 42,
    pluginDirs: (opts.pluginDirs ?? []).map((d) => resolve(d)),
    progress: (role, step, total, detail) => {
      emit({ type: 'progress', role, step, total, detail });
      opts.progress?.(role, step, total, detail);
    },
  };
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
