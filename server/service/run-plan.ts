/**
 * The `trinity/runPlan` request: what the editor needs before it starts a run of a document — the errors that
 * must be fixed first (the same diagnostics the Problems panel shows) and where the run will write.
 */
import type { Diagnostic } from 'vscode-languageserver-types';
import { DiagnosticSeverity } from 'vscode-languageserver-types';
import { jobDirPath, jobNamingOf, runJobDirPath } from '../../runtime/config/runs/job-dir';
import type { Release } from '../../runtime/config/releases';
import type { Analysis } from './analyze';

export interface RunPlanStage {
  name: string;
  mode: string;
  /** Relative to the run's working directory unless absolute. */
  jobDir: string;
  /** `model.model_path` as this stage resolves it (a later stage starts from the previous stage's checkpoint). */
  modelPath: string;
}

/** A model a run loads: the config key that names it and its path as written (resolved). */
export interface RunPlanModel {
  key: string;
  path: string;
  /** Whether it loads here (set by the host, which may look at the disk). */
  found?: boolean;
  hubId?: boolean;
  problem?: string;
}

export interface RunPlanResponse {
  release: Release;
  /** Errors of the document as it is in the editor; a run does not start while there are any. */
  errors: Diagnostic[];
  /** The run's own job directory (its record, shared state), relative to the working directory unless absolute. */
  jobDir: string;
  stages: RunPlanStage[];
  /** The first stage's models: `model.model_path`, then each auxiliary model. */
  models: RunPlanModel[];
  /** The longest `max_model_len` any stage or auxiliary model asks for: what a model made for this config must hold. */
  maxModelLen?: number;
}

export function runPlan(analysis: Analysis, diagnostics: Diagnostic[]): RunPlanResponse {
  const configs = analysis.result.runs.map((r) => jobNamingOf(r.resolved));
  const lengths = analysis.result.runs.flatMap((r) => contextLengths(r.resolved));
  return {
    release: analysis.release,
    errors: diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error),
    jobDir: configs.length ? runJobDirPath(configs, analysis.result.loaded.value.name) : '',
    stages: analysis.result.runs.map((r, i) => {
      const model = r.resolved.model as { model_path?: unknown } | null | undefined;
      return {
        name: r.stage?.name ?? configs[i].name,
        mode: String(r.resolved.mode ?? 'both'),
        jobDir: jobDirPath(configs[i]),
        modelPath: String(model?.model_path ?? ''),
      };
    }),
    models: analysis.result.runs.length ? modelsOf(analysis.result.runs[0].resolved) : [],
    ...(lengths.length ? { maxModelLen: Math.max(...lengths) } : {}),
  };
}

interface ModelSections {
  model?: { model_path?: unknown; max_model_len?: unknown } | null;
  explorer?: { auxiliary_models?: { model_path?: unknown; max_model_len?: unknown }[] | null } | null;
}

function modelsOf(resolved: ModelSections): RunPlanModel[] {
  const out: RunPlanModel[] = [];
  if (typeof resolved.model?.model_path === 'string' && resolved.model.model_path)
    out.push({ key: 'model.model_path', path: resolved.model.model_path });
  (resolved.explorer?.auxiliary_models ?? []).forEach((m, i) => {
    if (typeof m?.model_path === 'string' && m.model_path)
      out.push({ key: `explorer.auxiliary_models.${i}.model_path`, path: m.model_path });
  });
  return out;
}

function contextLengths(resolved: ModelSections): number[] {
  return [
    resolved.model?.max_model_len,
    ...(resolved.explorer?.auxiliary_models ?? []).map((m) => m?.max_model_len),
  ].filter((v): v is number => typeof v === 'number' && v > 0);
}
