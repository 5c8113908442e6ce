/** Semantic highlighting of `${...}` interpolations: the braces, resolver names and referenced keys. */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { SemanticTokens, SemanticTokensLegend } from 'vscode-languageserver-types';
import { findInterpolations } from '../../runtime/config/interpolation';
import { walk } from '../../runtime/config/load/interpolate-config';
import type { Analysis } from './analyze';

export const SEMANTIC_LEGEND: SemanticTokensLegend = {
  tokenTypes: ['macro', 'function', 'variable'],
  tokenModifiers: ['readonly'],
};
const MACRO = 0;
const FUNCTION = 1;
const VARIABLE = 2;

export function semanticTokens(doc: TextDocument, analysis: Analysis): SemanticTokens {
  const tokens: [number, number, number][] = []; // offset, length, type
  walk(analysis.result.loaded.root, (n) => {
    if (n.kind !== 'scalar' || n.interpolation === undefined) return;
    const base = n.contentStart ?? n.range?.[0] ?? 0;
    for (const { start, end } of findInterpolations(n.interpolation)) {
      const inner = n.interpolation.slice(start + 2, end - 1);
      tokens.push([base + start, 2, MACRO]);
      const resolver = /^([A-Za-z_][\w.]*):/.exec(inner);
      if (resolver) tokens.push([base + start + 2, resolver[1].length, FUNCTION]);
      else if (/^[.\w[\]]+$/.test(inner)) tokens.push([base + start + 2, inner.length, VARIABLE]);
      tokens.push([base + end - 1, 1, MACRO]);
    }
  });
  tokens.sort((a, b) => a[0] - b[0]);
  const data: number[] = [];
  let prevLine = 0;
  let prevChar = 0;
  for (const [offset, length, type] of tokens) {
    const p = doc.positionAt(offset);
    data.push(p.line - prevLine, p.line === prevLine ? p.character - prevChar : p.character, length, type, 0);
    prevLine = p.line;
    prevChar = p.character;
  }
  return { data };
}
