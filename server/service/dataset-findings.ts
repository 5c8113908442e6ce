/**
 * The findings of the dataset checks (TRN305, TRN306, TRN317, TRN321), which the host computes off the keystroke
 * path for one version of a document, placed on another version: at the key they name there, so an edit elsewhere
 * neither drops them nor leaves them at stale offsets until the next pass is in.
 */
import type { DatasetFinding } from '../../runtime/config/check-config';
import type { ConfigDiagnostic } from '../../runtime/config/diagnostics';
import { rangeForPath } from '../../runtime/config/load/load-config';
import type { Analysis } from './analyze';

/** What the host's last pass over a document found, and the version it read. */
export interface DatasetFindings {
  version: number;
  findings: readonly DatasetFinding[];
}

export function placeDatasetFindings(analysis: Analysis, found: DatasetFindings): ConfigDiagnostic[] {
  if (found.version === analysis.version) return found.findings.map((f) => f.diagnostic);
  const root = analysis.result.loaded.root;
  // A finding at a bare range (TRN009) has no key to follow: it waits for the pass over this version.
  return found.findings.flatMap((f) => (f.at ? [{ ...f.diagnostic, range: rangeForPath(root, f.at) }] : []));
}
