/** Where a config key is shown in its file (the dashboard's driver links, `trinity/keyLocation`). Pure. */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Path } from '../../runtime/config/diagnostics';
import { nodeAt, rangeForPath } from '../../runtime/config/load/load-config';
import type { Analysis } from './analyze';

export interface KeyLocation {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** The key itself is written there (false: an ancestor is shown, the key is not in the file). */
  written: boolean;
}

/** Where a dotted key is shown in the file: written at the root, else in the first stage that writes it, else its nearest written ancestor. */
export function keyLocation(doc: TextDocument, analysis: Analysis, key: string): KeyLocation | null {
  const root = analysis.result.loaded.root;
  const path: Path = key.split('.');
  const candidates: Path[] = [path];
  for (const run of analysis.result.runs) if (run.stage) candidates.push(['stages', run.stage.index, ...path]);
  const written = candidates.find((p) => nodeAt(root, p)?.origin === 'yaml');
  const [start, end] = rangeForPath(root, written ?? path);
  return { range: { start: doc.positionAt(start), end: doc.positionAt(end) }, written: written !== undefined };
}
