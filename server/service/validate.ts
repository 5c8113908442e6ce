/** Diagnostics for a document: the validator's findings as LSP diagnostics, minus what the user turned off. */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver-types';
import { codeDocUrl, type ConfigDiagnostic } from '../../runtime/config/diagnostics';
import { disableComments } from '../../runtime/config/disable-comments';
import { localRefusals } from '../../runtime/rft/refusals/refusals';
import type { Analysis } from './analyze';
import type { ServiceSettings } from './settings';

const SEVERITY: Record<ConfigDiagnostic['severity'], DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** Findings about what a run of the local runtime does, said only where runs are local (as TRN312 is). */
const LOCAL_RUNS_ONLY = new Set(['TRN241', 'TRN319', 'TRN323', 'TRN324', 'TRN325', 'TRN326']);

/** `found`: what the host found in the config's datasets (dataset-findings.ts), placed on this version. */
export function validate(
  doc: TextDocument,
  analysis: Analysis,
  settings: ServiceSettings,
  found: readonly ConfigDiagnostic[] = [],
): Diagnostic[] {
  const silenced = disableComments(doc.getText());
  const disabled = new Set(settings.disabledRules.map((c) => c.toUpperCase()));
  const out: Diagnostic[] = [];
  const all = [...analysis.result.diagnostics, ...found, ...(settings.runsLocally ? refusals(analysis) : [])];
  for (const d of all) {
    if (disabled.has(d.code) || (!settings.runsLocally && LOCAL_RUNS_ONLY.has(d.code))) continue;
    if (silenced(d.range[0], d.code)) continue;
    const range = { start: doc.positionAt(d.range[0]), end: doc.positionAt(d.range[1]) };
    out.push({
      range,
      severity: SEVERITY[d.severity],
      code: d.code,
      codeDescription: { href: codeDocUrl(d.code) },
      source: 'trinity',
      message: d.message,
      data: { ...d.data, release: analysis.release },
    });
  }
  return out;
}

/** TRN312: what the local runtime would refuse (information: Trinity-RFT runs it). */
function refusals(analysis: Analysis): ConfigDiagnostic[] {
  // A name already reported as an error there (TRN307's unknown workflow) is not also "Trinity-only".
  const errorAt = new Set(analysis.result.diagnostics.filter((d) => d.severity === 'error').map((d) => d.range[0]));
  return localRefusals(analysis.result, analysis.host.localPlugins)
    .filter((r) => !errorAt.has(r.range[0]))
    .map((r) => ({
      code: 'TRN312',
      severity: 'information',
      message: r.message,
      range: r.range,
      data: { path: r.path.split('.').map((k) => (/^\d+$/.test(k) ? Number(k) : k)), candidates: [...r.local] },
    }));
}
