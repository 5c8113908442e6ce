/**
 * A config's last (or live) run as the service sees it: each stage's metric series, read from its job directory by
 * the host. Run health diagnostics and the metric sparklines in hovers are made from it. Pure.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import { CODES, codeDocUrl, type Path } from '../../runtime/config/diagnostics';
import { nodeAt, rangeForPath } from '../../runtime/config/load/load-config';
import { metricsDrivenBy } from '../../runtime/config/model/metric-drivers';
import { checkRunHealth, type HealthSeries } from '../../runtime/config/runs/run-health';
import type { EpisodeTally } from '../../runtime/config/runs/episode-tally';
import { valueSource } from '../../runtime/config/check-config';
import type { Analysis } from './analyze';
import type { RunHealthSettings } from './settings';
import { sparkline } from './sparkline';

export interface StageMetrics {
  /** Index into the analysis' runs (the root config, or one stage). */
  run: number;
  jobDir: string;
  /** The run is still going (its record says running and its process is alive). */
  live: boolean;
  series: HealthSeries;
  /** How the recorded agent episodes of its latest steps ended (our runtime's monitor/rollouts.jsonl). */
  episodes?: readonly EpisodeTally[];
  /** Seconds since the epoch when the host last read the job dir. */
  readAt: number;
}

/** Where a path of a run's config is in the file: under `stages[i]` when that stage replaced the section. */
function filePath(analysis: Analysis, run: number, path: Path): Path {
  const stage = analysis.result.runs[run]?.stage;
  return stage && stage.replaced.has(String(path[0])) ? ['stages', stage.index, ...path] : path;
}

/** Run health findings as diagnostics on the key to change (its nearest written ancestor when not written). */
export function healthDiagnostics(
  doc: TextDocument,
  analysis: Analysis,
  stages: readonly StageMetrics[],
  settings: RunHealthSettings,
): Diagnostic[] {
  if (!settings.enabled) return [];
  const out: Diagnostic[] = [];
  const root = analysis.result.loaded.root;
  for (const s of stages) {
    const findings = checkRunHealth({
      series: s.series,
      episodes: s.episodes,
      live: s.live,
      now: s.readAt,
      thresholds: settings,
      release: analysis.release,
      value: (key) => valueSource(analysis.result, key, s.run)?.value,
    });
    for (const f of findings) {
      const path = filePath(analysis, s.run, f.path);
      const [start, end] = rangeForPath(root, path);
      const written = nodeAt(root, path)?.origin === 'yaml';
      out.push({
        range: { start: doc.positionAt(start), end: doc.positionAt(end) },
        severity: CODES[f.code].severity === 'warning' ? DiagnosticSeverity.Warning : DiagnosticSeverity.Information,
        code: f.code,
        codeDescription: { href: codeDocUrl(f.code) },
        source: 'trinity',
        message: `${written ? '' : `${f.path.join('.')}: `}${f.message}`,
        data: {
          path,
          ...(f.fix !== undefined ? { value: f.fix } : {}),
          metric: f.metric,
          step: f.step,
          release: analysis.release,
        },
      });
    }
  }
  return out;
}

/** Hover markdown: the last run's values of the metrics `key` drives, one sparkline each (at most `limit`). */
export function metricsHoverMarkdown(
  analysis: Analysis,
  stage: StageMetrics | undefined,
  key: string,
  limit = 6,
): string | undefined {
  if (!stage) return undefined;
  const tags = metricsDrivenBy(key, [...stage.series.keys()].sort(), analysis.release);
  if (!tags.length) return undefined;
  const lines: string[] = [];
  for (const tag of tags.slice(0, limit)) {
    const points = stage.series.get(tag)!;
    const values = points.map((p) => p.value);
    const finite = values.filter(Number.isFinite);
    if (!finite.length) continue;
    const last = points[points.length - 1];
    lines.push(
      `- \`${tag}\` \`${sparkline(values)}\` min ${num(Math.min(...finite))} · max ${num(Math.max(...finite))} · last ${num(last.value)} (step ${last.step})`,
    );
  }
  if (!lines.length) return undefined;
  const more = tags.length > limit ? `\n\n…and ${tags.length - limit} more metrics.` : '';
  return `**${stage.live ? 'Live run' : 'Last run'}** (\`${stage.jobDir}\`):\n${lines.join('\n')}${more}`;
}

function num(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0 || (Math.abs(x) >= 0.01 && Math.abs(x) < 1e5)) return String(Number(x.toPrecision(3)));
  return x.toExponential(2);
}
