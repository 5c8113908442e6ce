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

export interface RunPlanResponse {
  release: Release;
  /** Errors of the document as it is in the editor; a run does not start while there are any. */
  errors: Diagnostic[];
  /** The run's own job directory (its record, shared state), relative to the working directory unless absolute. */
  jobDir: string;
  stages: RunPlanStage[];
  /** Whether the first stage's model can be loaded here (set by the host, which may look at the disk). */
  model?: { path: string; found: boolean; hubId: boolean; problem?: string };
}

export function runPlan(analysis: Analysis, diagnostics: Diagnostic[]): RunPlanResponse {
  const configs = analysis.result.runs.map((r) => jobNamingOf(r.resolved));
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
  };
}
