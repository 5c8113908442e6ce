/**
 * The GPU memory picture in the editor: a one-line hint at `trainer` ("actor ≈ 61.3 GiB of 79.1 peak, 77 %") and at
 * `explorer.rollout_model` (weights, KV cache, sequences that fit), and the hover that breaks each down term by term.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { InlayHintKind, type InlayHint, type Range } from 'vscode-languageserver-types';
import { sourcePathIn } from '../../runtime/config/check/check-context';
import type { Path } from '../../runtime/config/diagnostics';
import { nodeAt } from '../../runtime/config/load/load-config';
import {
  engineBreakdown,
  engineSummary,
  gib,
  moduleBreakdown,
  trainerSummary,
  type GpuMemoryReport,
} from '../../runtime/config/gpu-memory/report';
import type { CheckedRun } from '../../runtime/config/check-config';
import type { Analysis } from './analyze';

const ESTIMATE_NOTE =
  "Trinity's estimate (its GPUMemoryValidator's formulas), not a measurement; a local run measures its own peak as `perf/max_memory_allocated_gb`.";

/** The written key a run's hint belongs on: the first of `paths` written in the file (a stage's own section first). */
function keyLine(doc: TextDocument, analysis: Analysis, run: CheckedRun, paths: Path[]): number | undefined {
  for (const p of paths) {
    const n = nodeAt(analysis.result.loaded.root, sourcePathIn(run.stage, p));
    if (n?.origin === 'yaml' && n.keyRange) return doc.positionAt(n.keyRange[0]).line;
  }
  return undefined;
}

export function memoryHints(doc: TextDocument, analysis: Analysis, range: Range): InlayHint[] {
  const hints: InlayHint[] = [];
  const add = (line: number | undefined, label: string, tooltip: string) => {
    if (line === undefined || line < range.start.line || line > range.end.line) return;
    const end = doc.offsetAt({ line: line + 1, character: 0 });
    const text = doc.getText({ start: { line, character: 0 }, end: doc.positionAt(end) }).replace(/\r?\n$/, '');
    hints.push({
      position: { line, character: text.length },
      label,
      kind: InlayHintKind.Type,
      paddingLeft: true,
      tooltip,
    });
  };
  for (const run of analysis.result.runs) {
    const m = run.gpuMemory;
    if (!m) continue;
    const stage = run.stage ? `[${run.stage.name}] ` : '';
    if (m.trainer.status === 'estimated')
      add(
        keyLine(doc, analysis, run, [['trainer'], ['model', 'model_path']]),
        `${stage}${trainerSummary(m.trainer, m.gpu)}`,
        ESTIMATE_NOTE,
      );
    for (const e of m.engines) {
      if (e.status !== 'estimated') continue;
      const path: Path = [
        'explorer',
        ...e.engine
          .replace(/\[(\d+)\]$/, '.$1')
          .split('.')
          .map(index),
      ];
      add(keyLine(doc, analysis, run, [path, ['explorer']]), `${stage}${engineSummary(e)}`, 'vLLM: an upper bound');
    }
  }
  return hints;
}

const index = (k: string): string | number => (/^\d+$/.test(k) ? Number(k) : k);

/** The hover's GPU memory section for a key of the checked config (`trainer`, `explorer.rollout_model`, ...). */
export function memoryHover(run: CheckedRun | undefined, inner: Path): string | undefined {
  const m = run?.gpuMemory;
  if (!m) return undefined;
  if (inner.length === 1 && inner[0] === 'trainer') return trainerHover(m);
  if (inner[0] !== 'explorer' || (inner.length !== 2 && inner.length !== 3)) return undefined;
  const name = inner.length === 2 ? String(inner[1]) : `${String(inner[1])}[${String(inner[2])}]`;
  const e = m.engines.find((x) => x.engine === name);
  if (!e) return undefined;
  if (e.status === 'skipped') return `**GPU memory (vLLM):** no estimate: ${e.reason}.`;
  return [
    `**GPU memory of ${e.engine} on a ${m.gpu.name} (${gib(m.gpu.bytes)} GiB)**`,
    ...engineBreakdown(e, m.gpu),
    `Model shape: ${e.shape.source}.`,
  ].join('\n');
}

function trainerHover(m: GpuMemoryReport): string {
  const t = m.trainer;
  if (t.status === 'skipped') return `**GPU memory (trainer):** no estimate: ${t.reason}.`;
  const parts = [`**Trainer GPU memory per GPU on a ${m.gpu.name} (${gib(m.gpu.bytes)} GiB)** — ${ESTIMATE_NOTE}`];
  for (const mod of t.modules) parts.push(moduleBreakdown(mod, t, m.gpu).join('\n'));
  parts.push(`Model shape: ${t.shapeSource}.`);
  if (!t.checked) parts.push('`ignore_validator_suggestions: true`: Trinity skips this check.');
  else if (t.suggestions.length > 0)
    parts.push(`Trinity's MEMORY OVERUSE WARNING:\n\n\`\`\`text\n${t.suggestions.join('\n')}\n\`\`\``);
  return parts.join('\n\n');
}
