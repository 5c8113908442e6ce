/**
 * Value domains (model/domains.ts): every written value, after `${...}` resolution, checked against what the library
 * behind its key accepts. Reported at the value (for an interpolation, at its `${`), with the allowed range or set,
 * the code that enforces it and, for strings, the nearest allowed name.
 */
import type { ConfigDiagnostic } from '../diagnostics';
import { walk } from '../load/interpolate-config';
import type { LoadedConfig } from '../load/load-config';
import { pathText, type CScalar } from '../load/structured-merge';
import { describeDomain, inDomain } from '../model/domains';
import type { Range } from '../load/yaml-tree';
import { closest } from '../suggest';

export function checkDomains(loaded: LoadedConfig): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  walk(loaded.root, (node) => {
    if (node.kind !== 'scalar' || node.origin !== 'yaml' || !node.field?.domain || !node.range) return;
    const d = node.field.domain;
    if (inDomain(d, node.value)) return;
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
