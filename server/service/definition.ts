/** Go to definition and find references for `${a.b.c}`: the key an interpolation points at, and who points at it. */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Location, Position } from 'vscode-languageserver-types';
import type { Path } from '../../runtime/config/diagnostics';
import { walk, type ResolvedScalar } from '../../runtime/config/load/interpolate-config';
import { nodeAt } from '../../runtime/config/load/load-config';
import type { Analysis } from './analyze';
import { locate } from './locate';

export function definition(doc: TextDocument, analysis: Analysis, position: Position): Location[] {
  const offset = doc.offsetAt(position);
  const root = analysis.result.loaded.root;
  const hit = locate(analysis.result.loaded.source.root, offset);
  if (!hit || hit.on !== 'value') return [];
  const node = nodeAt(root, hit.path) as ResolvedScalar | undefined;
  if (!node?.refs || node.kind !== 'scalar') return [];
  const base = node.contentStart ?? node.range?.[0] ?? 0;
  const out: Location[] = [];
  for (const r of node.refs) {
    if (typeof r.target === 'string' || offset < base + r.start || offset > base + r.end) continue;
    const target = nodeAt(root, r.target);
    const range = target?.origin === 'yaml' ? (target.keyRange ?? target.range) : undefined;
    if (range) out.push({ uri: doc.uri, range: { start: doc.positionAt(range[0]), end: doc.positionAt(range[1]) } });
  }
  return out;
}

/** Every `${...}` in the file that refers to the key under the cursor (or to something inside it). */
export function references(doc: TextDocument, analysis: Analysis, position: Position): Location[] {
  const hit = locate(analysis.result.loaded.source.root, doc.offsetAt(position));
  if (!hit) return [];
  const want = hit.path.join('.');
  const out: Location[] = [];
  walk(analysis.result.loaded.root, (n) => {
    const s = n as ResolvedScalar;
    if (n.kind !== 'scalar' || !s.refs) return;
    const base = s.contentStart ?? s.range?.[0] ?? 0;
    for (const r of s.refs) {
      if (typeof r.target === 'string') continue;
      const t = (r.target as Path).join('.');
      if (t === want || t.startsWith(`${want}.`))
        out.push({ uri: doc.uri, range: { start: doc.positionAt(base + r.start), end: doc.positionAt(base + r.end) } });
    }
  });
  return out;
}
