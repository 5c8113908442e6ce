/** Document links for local paths a config names (datasets, trainer config, chat template, checkpoints). */
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { DocumentLink } from 'vscode-languageserver-types';
import { URI } from 'vscode-uri';
import { candidatePaths, looksLocal } from '../../runtime/config/check/runtime';
import { CheckContext } from '../../runtime/config/check/check-context';
import type { YMap, YNode } from '../../runtime/config/load/yaml-tree';
import type { Analysis } from './analyze';

const PATH_KEYS = new Set([
  'path',
  'trainer_config_path',
  'chat_template_path',
  'checkpoint_root_dir',
  'config_path',
  'input_save_path',
]);

export function documentLinks(doc: TextDocument, analysis: Analysis): DocumentLink[] {
  const host = analysis.host;
  const root = analysis.result.loaded.source.root;
  const exists = host.exists;
  if (!root || !exists) return [];
  const ctx = new CheckContext(analysis.result.loaded, analysis.result.runs[0]?.resolved ?? {}, host);
  const out: DocumentLink[] = [];
  visit(root, (key, node) => {
    if (!PATH_KEYS.has(key) || node.kind !== 'scalar' || typeof node.value !== 'string' || node.value.includes('${'))
      return;
    const p = node.value;
    if (!looksLocal(p) && key !== 'checkpoint_root_dir' && key !== 'trainer_config_path') return;
    const found = candidatePaths(ctx, p).find((c) => exists(c));
    if (!found) return;
    out.push({
      range: { start: doc.positionAt(node.contentStart), end: doc.positionAt(node.contentStart + p.length) },
      target: URI.file(found).toString(),
      tooltip: found,
    });
  });
  return out;
}

function visit(n: YNode, f: (key: string, node: YNode) => void): void {
  if (n.kind === 'map') {
    for (const e of (n as YMap).entries) {
      f(e.key, e.value);
      visit(e.value, f);
    }
  } else if (n.kind === 'seq') for (const it of n.items) visit(it, f);
}
