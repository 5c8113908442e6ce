/**
 * Inlay hints: the values Trinity fills in or silently changes, at the end of the line that drives them
 * (`batch_size: 16` shows `train_batch_size: 128`). Only values Trinity reports are shown, not internal paths.
 * The GPU memory estimates add theirs at `trainer` and `explorer.rollout_model` (memory-hints.ts).
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { InlayHintKind, type InlayHint, type Range } from 'vscode-languageserver-types';
import type { Analysis } from './analyze';
import { memoryHints } from './memory-hints';

export function inlayHints(doc: TextDocument, analysis: Analysis, range: Range): InlayHint[] {
  const { result } = analysis;
  const byLine = new Map<number, { label: string; tooltip: string }[]>();
  for (const run of result.runs) {
    for (const d of run.derivations) {
      if (!d.range || d.value === undefined || (d.value !== null && typeof d.value === 'object')) continue;
      const line = doc.positionAt(d.range[0]).line;
      if (line < range.start.line || line > range.end.line) continue;
      const key = d.path.split('.').slice(-1)[0];
      const label = `${run.stage ? `[${run.stage.name}] ` : ''}${key}: ${String(d.value)}`;
      const list = byLine.get(line) ?? [];
      if (!list.some((h) => h.label === label)) list.push({ label, tooltip: d.message });
      byLine.set(line, list);
    }
  }
  const hints: InlayHint[] = [];
  for (const [line, list] of byLine) {
    const end = doc.offsetAt({ line: line + 1, character: 0 });
    const text = doc.getText({ start: { line, character: 0 }, end: doc.positionAt(end) }).replace(/\r?\n$/, '');
    for (const h of list) {
      hints.push({
        position: { line, character: text.length },
        label: `→ ${h.label}`,
        kind: InlayHintKind.Type,
        paddingLeft: true,
        tooltip: h.tooltip,
      });
    }
  }
  hints.push(...memoryHints(doc, analysis, range));
  return hints.sort((a, b) => a.position.line - b.position.line);
}
