/**
 * Value domains (model/domains.ts): every written value, after `${...}` resolution, checked against what the library
 * behind its key accepts. Reported at the value (for an interpolation, at its `${`), with the allowed range or set,
 * the code that enforces it and, for strings, the nearest allowed name.
 */
import type { ConfigDiagnostic, Path } from '../diagnostics';
import { walk } from '../load/interpolate-config';
import { nodeAt, type LoadedConfig } from '../load/load-config';
import { pathText, type CMap, type CNode, type CScalar } from '../load/structured-merge';
import { describeDomain, inDomain } from '../model/domains';
import type { Domain } from '../model/types';
import type { Range } from '../load/yaml-tree';
import type { StageInfo } from './check-context';
import { closest } from '../suggest';

/** `stages`: the config's stages as Trinity runs them (check-config.ts `effectiveConfigs`), none without `stages`. */
export function checkDomains(loaded: LoadedConfig, stages: readonly StageInfo[]): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  walk(loaded.root, (node) => {
    if (node.kind !== 'scalar' || node.origin !== 'yaml' || !node.field?.domain || !node.range) return;
    const d = domainsFor(loaded.root, stages, node).find((x) => !inDomain(x, node.value));
    if (!d) return;
    const shown = typeof node.value === 'string' ? `\`${node.value}\`` : String(node.value);
    const best = d.oneOf && typeof node.value === 'string' ? closest(node.value, [...d.oneOf]) : undefined;
    const via = node.interpolation !== undefined ? ` (resolved from \`${node.interpolation}\`)` : '';
    out.push({
      code: 'TRN024',
      severity: d.severity,
      message:
        `\`${pathText(node.path)}\` is ${shown}${via}; it must be ${describeDomain(d)}: ${d.source}.` +
        (best ? ` Did you mean \`${best}\`?` : ''),
      range: rangeOf(node),
      data: {
        path: node.path,
        ...(d.oneOf ? { candidates: [...d.oneOf], ...(best ? { suggestion: best } : {}) } : {}),
      },
    });
  });
  return out;
}

/** The value's range; for an interpolation, from its `${`. */
function rangeOf(node: CScalar): Range {
  const r = node.range!;
  if (node.interpolation === undefined || node.contentStart === undefined) return r;
  const i = node.interpolation.indexOf('${');
  return i > 0 ? [node.contentStart + i, r[1]] : r;
}

/**
 * The domains a value must meet: its field's, except where a sampling field reaches an SGLang engine (main), which
 * checks it with its own bounds (`sglangDomain`). A value that reaches engines of both kinds meets both.
 */
function domainsFor(root: CMap, stages: readonly StageInfo[], node: CScalar): Domain[] {
  const own = node.field!.domain!;
  const sglang = node.field!.sglangDomain;
  if (!sglang) return [own];
  const engines = enginesReached(root, stages, node.path);
  if (!engines.includes('sglang')) return [own];
  const others = engines.some((e) => e !== 'sglang') ? [own] : [];
  // SGLang makes a temperature below 1e-6 greedy by setting top_k to 1 before it checks top_k.
  if (node.field!.key === 'top_k' && greedy(root, node.path)) return others;
  return [...others, sglang];
}

/**
 * The engine types a sampling value is sent to: a model's own, the rollout model's for a taskset's `rollout_args`,
 * and for a model-wide default (`model.*`) the rollout model's and those of the auxiliary models that leave the
 * field unset (Trinity fills it in from `model`). With `stages`, each stage runs with its own `explorer` where it
 * replaces the root's and with the root's otherwise; a root value in a section every stage replaces reaches none.
 */
function enginesReached(root: CMap, stages: readonly StageInfo[], path: Path): string[] {
  const type = (model: Path) => {
    const v = valueAt(root, [...model, 'engine_type']);
    return typeof v === 'string' ? v : 'vllm';
  };
  const stage = path[0] === 'stages' ? stages.find((s) => s.index === path[1]) : undefined;
  const rel = stage ? path.slice(2) : path;
  const explorerOf = (s: StageInfo | undefined): Path =>
    s?.replaced.has('explorer') ? ['stages', s.index, 'explorer'] : ['explorer'];
  // The explorers of the runs that read this value: the stage's own run, or every run that keeps the root section.
  const explorers = stage
    ? [explorerOf(stage)]
    : stages.length === 0
      ? [explorerOf(undefined)]
      : stages.filter((s) => !s.replaced.has(String(rel[0]))).map(explorerOf);
  if (rel[0] === 'explorer' && rel[1] === 'rollout_model') return explorers.map((e) => type([...e, 'rollout_model']));
  if (rel[0] === 'explorer' && rel[1] === 'auxiliary_models' && rel.length > 2)
    return explorers.map((e) => type([...e, 'auxiliary_models', rel[2]]));
  if (rel[0] === 'buffer') return explorers.map((e) => type([...e, 'rollout_model']));
  if (rel[0] !== 'model' || rel.length !== 2) return [];
  return explorers.flatMap((e) => {
    const aux = nodeAt(root, [...e, 'auxiliary_models']);
    const unset = (aux?.kind === 'list' ? aux.items : [])
      .map((_, i): Path => [...e, 'auxiliary_models', i])
      .filter((m) => valueAt(root, [...m, rel[1]]) === undefined || valueAt(root, [...m, rel[1]]) === null);
    return [type([...e, 'rollout_model']), ...unset.map(type)];
  });
}

/** Whether the temperature that goes with this top_k (beside it, else `model.temperature`) is below 1e-6. */
function greedy(root: CMap, path: Path): boolean {
  const beside = valueAt(root, [...path.slice(0, -1), 'temperature']);
  const t = typeof beside === 'number' ? beside : valueAt(root, ['model', 'temperature']);
  return typeof t === 'number' && t >= 0 && t < 1e-6;
}

/** A written scalar's (resolved) value; undefined where nothing is written. */
function valueAt(root: CNode, path: Path): unknown {
  const node = nodeAt(root, path);
  return node?.kind === 'scalar' && node.origin === 'yaml' ? node.value : undefined;
}
