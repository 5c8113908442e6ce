/**
 * The `trinity/resolvedConfig` request: the config Trinity will actually run (each stage's, for multi-stage
 * files) as YAML, every value Trinity filled in or changed marked with a comment saying why, and the metric names
 * the run will log.
 */
import { Document } from 'yaml';
import { split } from '../../runtime/config/check/check-context';
import { metricNames, type MetricNames } from '../../runtime/config/runs/metric-names';
import type { Release } from '../../runtime/config/releases';
import type { Analysis, ReleaseSource } from './analyze';
import { reportLines, type GpuMemoryReport } from '../../runtime/config/gpu-memory/report';

export interface ResolvedConfigRun {
  stage?: string;
  /** YAML of the resolved config; values Trinity set carry a `# set by Trinity: ...` comment. */
  yaml: string;
  /** The same config as plain data. */
  resolved: unknown;
  derived: { path: string; value: unknown; reason: string }[];
  metrics: MetricNames;
  /** The trainer's and rollout engines' GPU memory (Trinity's estimate; vLLM's budget), also a comment atop `yaml`. */
  gpuMemory?: GpuMemoryReport;
}

export interface ResolvedConfigResponse {
  release: Release;
  releaseSource: ReleaseSource;
  runs: ResolvedConfigRun[];
  /** How many errors the config has: a config with errors resolves only as far as its valid parts go. */
  errors: number;
}

export function resolvedConfig(analysis: Analysis): ResolvedConfigResponse {
  const runs = analysis.result.runs.map((run) => {
    const doc = new Document(run.resolved);
    if (run.gpuMemory)
      doc.commentBefore = [
        ' GPU memory (estimates, not measurements):',
        ...reportLines(run.gpuMemory).map((l) => `   ${l}`),
      ].join('\n');
    const derived: ResolvedConfigRun['derived'] = [];
    const last = new Map(run.derivations.map((d) => [d.path, d]));
    for (const [path, d] of last) {
      derived.push({ path, value: d.value, reason: d.message });
      const node = doc.getIn(split(path), true) as { comment?: string } | undefined;
      if (node && typeof node === 'object') node.comment = ` set by Trinity: ${d.message.replace(/\s+/g, ' ')}`;
    }
    return {
      stage: run.stage?.name,
      yaml: doc.toString({ lineWidth: 0 }),
      resolved: run.resolved,
      derived,
      metrics: metricNames(run.resolved, analysis.release),
      gpuMemory: run.gpuMemory,
    };
  });
  const errors = analysis.result.diagnostics.filter((d) => d.severity === 'error').length;
  return { release: analysis.release, releaseSource: analysis.releaseSource, runs, errors };
}
