/**
 * Hover: what a key means (type, default, release, deprecation), what value Trinity will actually use (and how
 * it derived it), what a registry name does, and what an interpolation resolves to.
 */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import type { Hover, Position } from 'vscode-languageserver-types';
import type { ResolvedScalar } from '../../runtime/config/load/interpolate-config';
import { nodeAt } from '../../runtime/config/load/load-config';
import { allowedValues, schemaAt, typeName } from '../../runtime/config/model';
import { algorithmTypeAt, effectiveAlgorithmDefaults } from '../../runtime/config/model/algorithms';
import type { ResolvedField } from '../../runtime/config/model/types';
import { fieldMarkdown } from '../../runtime/config/codegen/schema-gen';
import { valueSource } from '../../runtime/config/check-config';
import type { Analysis } from './analyze';
import { locate } from './locate';
import { runFor } from './paths';
import { metricsHoverMarkdown, type StageMetrics } from './run-metrics';
import { memoryHover } from './memory-hints';
import { workflowArgsAt } from './workflow-args';
import { workflowArg, workflowArgMarkdown, workflowArgTypeName } from '../../runtime/config/model/workflow-args';

export function hover(
  doc: TextDocument,
  analysis: Analysis,
  position: Position,
  runs: readonly StageMetrics[] = [],
): Hover | null {
  const offset = doc.offsetAt(position);
  const loaded = analysis.result.loaded;
  const hit = locate(loaded.source.root, offset);
  if (!hit) return null;
  const { field } = schemaAt(hit.path, analysis.release);
  const parts: string[] = [];
  const key = String(hit.path[hit.path.length - 1]);

  const wfArgs = field
    ? undefined
    : workflowArgsAt(analysis.result, hit.path.slice(0, -1), analysis.release, analysis.host.pluginWorkflowSpecs);
  const wfArg = wfArgs && workflowArg(wfArgs.spec, key);
  if (field)
    parts.push(`**\`${key}\`** · ${typeName(field.type)}${field.optional ? ' or null' : ''}`, fieldMarkdown(field));
  else if (wfArgs && wfArg)
    parts.push(`**\`${key}\`** · ${workflowArgTypeName(wfArg)}`, workflowArgMarkdown(wfArg, wfArgs.spec));
  else if (wfArgs && hit.on === 'key' && wfArgs.spec.readAt.includes(analysis.release))
    parts.push(
      `**\`${key}\`**`,
      `Not read by \`${wfArgs.workflow}\`, which reads ${wfArgs.spec.args.map((a) => `\`${a.name}\``).join(', ')}.`,
    );
  else if (hit.on === 'key')
    parts.push(`**\`${key}\`**`, 'Free-form: Trinity passes this on without checking its keys.');

  const cnode = nodeAt(loaded.root, hit.path) as ResolvedScalar | undefined;
  const interp = cnode?.kind === 'scalar' && cnode.interpolation !== undefined ? cnode : undefined;
  if (interp && hit.on === 'value') parts.push(interpolationMarkdown(interp, offset));

  if (hit.on === 'value' && PATH_KEY.test(key)) {
    const written = interp ? interp.value : hit.node.kind === 'scalar' ? hit.node.value : undefined;
    const where = typeof written === 'string' ? relativePathMarkdown(written, analysis.host.baseDirs?.[0]) : undefined;
    if (where) parts.push(where);
  }

  if (hit.on === 'value' && field?.values && hit.node.kind === 'scalar' && typeof hit.node.value === 'string') {
    const v = registryValueMarkdown(field, hit.node.value, analysis);
    if (v) parts.push(v);
  }

  const { run, inner } = runFor(analysis.result, hit.path);
  const src = valueSource(analysis.result, inner.join('.'), run);
  if (src?.origin === 'derived' && src.derivation) {
    parts.push(`**Trinity uses:** \`${short(src.value)}\` — ${src.derivation.message}`);
  } else if (interp && src) {
    // The resolved value is already shown with the interpolation.
  } else if (src?.origin === 'written' && field?.auto) {
    parts.push('Trinity sets this itself; the written value is overwritten or ignored.');
  }
  const driven = derivedAt(
    analysis,
    hit.on === 'key' && hit.keyRange ? hit.keyRange : hit.node.range,
    src?.derivation?.path,
  );
  if (driven.length) {
    const line = (d: { path: string; value: unknown; message: string }) =>
      d.message.includes(`\`${d.path}\``) || d.message.includes(`\`${d.path.split('.').pop()}\``)
        ? `- ${d.message}`
        : `- \`${d.path}\` = \`${short(d.value)}\`: ${d.message}`;
    parts.push(`**Trinity derives from this:**\n${driven.map(line).join('\n')}`);
  }
  const metrics =
    hit.on === 'key'
      ? metricsHoverMarkdown(
          analysis,
          runs.find((s) => s.run === run),
          inner.join('.'),
        )
      : undefined;
  if (metrics) parts.push(metrics);
  const memory = hit.on === 'key' ? memoryHover(analysis.result.runs[run], inner) : undefined;
  if (memory) parts.push(memory);
  if (parts.length === 0) return null;
  const start = hit.on === 'key' && hit.keyRange ? hit.keyRange[0] : hit.node.range[0];
  const end = hit.on === 'key' && hit.keyRange ? hit.keyRange[1] : hit.node.range[1];
  return {
    contents: { kind: 'markdown', value: parts.join('\n\n') },
    range: { start: doc.positionAt(start), end: doc.positionAt(end) },
  };
}

function interpolationMarkdown(node: ResolvedScalar, offset: number): string {
  const lines = [`**Resolves to:** \`${short(node.value)}\``];
  const base = node.contentStart ?? node.range?.[0] ?? 0;
  const refs = node.refs ?? [];
  const focused = refs.filter((r) => offset >= base + r.start && offset <= base + r.end);
  for (const r of focused.length ? focused : refs) {
    if (r.defaulted) {
      lines.push(`- the default: environment variable \`${r.target as string}\` is not set`);
      continue;
    }
    const target = typeof r.target === 'string' ? `environment variable \`${r.target}\`` : `\`${r.target.join('.')}\``;
    lines.push(`- from ${target}${r.value === undefined ? '' : ` = \`${short(r.value)}\``}`);
  }
  return lines.join('\n');
}

/** Keys whose value is a file or folder Trinity opens (`path`, `model_path`, `checkpoint_root_dir`, …). */
const PATH_KEY = /(^|_)path$|^checkpoint_(root|job)_dir$/;

/**
 * Where a relative path lands: Trinity opens it from the directory the run starts in, which for the editor's Run is
 * the config's folder (the first base directory). Hub ids, URLs and absolute paths are left alone.
 */
function relativePathMarkdown(value: string, runDir: string | undefined): string | undefined {
  const sqlite = /^sqlite:\/\/\/(?!\/)(.+)$/.exec(value);
  const path = sqlite ? sqlite[1] : value;
  if (!runDir || !path || isAbsolute(path) || path.startsWith('~') || /^[a-z][\w+.-]*:/i.test(path)) return undefined;
  return `**Opened at:** \`${resolvePath(runDir, path)}\` — relative paths are taken from the directory the run starts in (Run from the editor starts it in this file's folder).`;
}

function registryValueMarkdown(field: ResolvedField, value: string, analysis: Analysis): string | undefined {
  const entry = allowedValues(field.values!, analysis.release).find((v) => v.value === value);
  if (!entry) return undefined;
  const lines = [`**\`${value}\`**: ${entry.doc}${entry.deprecated ? ` *(deprecated: ${entry.deprecated})*` : ''}`];
  if (field.key === 'algorithm_type') lines.push(algorithmSummary(value, analysis));
  return lines.join('\n\n');
}

/** What an algorithm type brings: its default pieces and whether it needs a critic or a reference model. */
export function algorithmSummary(name: string, analysis: Pick<Analysis, 'release'>): string {
  const spec = algorithmTypeAt(name, analysis.release);
  const d = effectiveAlgorithmDefaults(name, analysis.release);
  if (!spec || !d) return '';
  const needs = [spec.useCritic ? 'a critic (value model)' : '', spec.useReference ? 'a reference model' : ''].filter(
    Boolean,
  );
  return [
    `Defaults: advantage \`${d.advantage_fn}\`, policy loss \`${d.policy_loss_fn}\`, KL loss \`${d.kl_loss_fn}\`, KL penalty \`${d.kl_penalty_fn}\`, entropy \`${d.entropy_loss_fn}\`, sampling \`${d.sample_strategy}\`.`,
    needs.length ? `Needs ${needs.join(' and ')}.` : 'Needs no critic and no reference model.',
    `Data: \`${spec.schema}\` experiences; advantages computed ${spec.computeAdvantageInTrainer ? 'in the trainer' : 'by the explorer'}.`,
  ].join(' ');
}

/** Values Trinity fills in or changes that it reports at this key (train_batch_size at batch_size, ...). */
function derivedAt(
  analysis: Analysis,
  range: readonly [number, number],
  except?: string,
): { path: string; value: unknown; message: string }[] {
  const out: { path: string; value: unknown; message: string }[] = [];
  for (const run of analysis.result.runs) {
    for (const d of run.derivations) {
      if (!d.range || d.path === except) continue;
      if (d.range[0] >= range[0] && d.range[0] <= range[1] && !out.some((o) => o.path === d.path))
        out.push({ path: d.path, value: d.value, message: d.message });
    }
  }
  return out;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}
