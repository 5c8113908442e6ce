/**
 * Value domains (model/domains.ts): every written value, after `${...}` resolution, checked against what the library
 * behind its key accepts. Reported at the value (for an interpolation, at its `${`), with the allowed range or set,
 * the code that enforces it and, for strings, the nearest allowed name.
 */
import type { ConfigDiagnostic, Path } from '../diagnostics';
import { walk } from '../load/interpolate-config';
import { nodeAt, type LoadedConfig } from '../load/load-config';
import { pathText, type CMap, type CNode, type CScalar } from '../load/structured-merge';
import { describeDomain, inDomain, SGLANG_DOMAINS } from '../model/domains';
import type { Domain } from '../model/types';
import type { Range } from '../load/yaml-tree';
import { atLeast } from '../releases';
import { closest } from '../suggest';

export function checkDomains(loaded: LoadedConfig): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  walk(loaded.root, (node) => {
    if (node.kind !== 'scalar' || node.origin !== 'yaml' || !node.field?.domain || !node.range) return;
    const d = domainsFor(loaded, node).find((x) => !inDomain(x, node.value));
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
 * checks it with its own bounds (SGLANG_DOMAINS). A value that reaches engines of both kinds meets both.
 */
function domainsFor(loaded: LoadedConfig, node: CScalar): Domain[] {
  const own = node.field!.domain!;
  const key = `${node.field!.section.name}.${node.field!.key}`;
  if (!atLeast(loaded.release, 'main') || !(key in SGLANG_DOMAINS)) return [own];
  const engines = enginesReached(loaded.root, node.path);
  if (!engines.includes('sglang')) return [own];
  let sglang = SGLANG_DOMAINS[key];
  // SGLang makes a temperature below 1e-6 greedy by setting top_k to 1 before it checks top_k.
  if (node.field!.key === 'top_k' && greedy(loaded.root, node.path)) sglang = null;
  return [...(engines.some((e) => e !== 'sglang') ? [own] : []), ...(sglang ? [sglang] : [])];
}

/**
 * The engine types a sampling value is sent to: a model's own, the rollout model's for a taskset's `rollout_args`,
 * and for a model-wide default (`model.*`) the rollout model's and those of the auxiliary models that leave the
 * field unset (Trinity fills it in from `model`). Empty where no engine is known (inside `stages`).
 */
function enginesReached(root: CMap, path: Path): string[] {
  const type = (model: Path) => {
    const v = valueAt(root, [...model, 'engine_type']);
    return typeof v === 'string' ? v : 'vllm';
  };
  const rollout: Path = ['explorer', 'rollout_model'];
  if (path[0] === 'explorer' && path[1] === 'rollout_model') return [type(rollout)];
  if (path[0] === 'explorer' && path[1] === 'auxiliary_models' && path.length > 2) return [type(path.slice(0, 3))];
  if (path[0] === 'buffer') return [type(rollout)];
  if (path[0] !== 'model' || path.length !== 2) return [];
  const aux = nodeAt(root, ['explorer', 'auxiliary_models']);
  const unset = (aux?.kind === 'list' ? aux.items : [])
    .map((_, i): Path => ['explorer', 'auxiliary_models', i])
    .filter((m) => valueAt(root, [...m, path[1]]) === undefined || valueAt(root, [...m, path[1]]) === null);
  return [type(rollout), ...unset.map(type)];
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
