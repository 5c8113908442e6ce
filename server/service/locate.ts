/** What is under the cursor in a parsed config: the path of the key or value, and the node. */
import type { Path } from '../../runtime/config/diagnostics';
import type { Range, YMap, YNode } from '../../runtime/config/load/yaml-tree';

export interface Located {
  path: Path;
  /** On the key text itself, or on (or after) the value. */
  on: 'key' | 'value';
  node: YNode;
  keyRange?: Range;
}

/** The deepest key or value containing `offset` (end inclusive, so a cursor right after a word still hits it). */
export function locate(root: YMap | undefined, offset: number): Located | undefined {
  if (!root) return undefined;
  return inMap(root, offset, []);
}

function within(r: Range, offset: number): boolean {
  return offset >= r[0] && offset <= r[1];
}

function inNode(node: YNode, offset: number, path: Path, keyRange?: Range): Located | undefined {
  if (node.kind === 'map')
    return (
      inMap(node, offset, path) ?? (within(node.range, offset) ? { path, on: 'value', node, keyRange } : undefined)
    );
  if (node.kind === 'seq') {
    for (let i = 0; i < node.items.length; i++) {
      const hit = within(node.items[i].range, offset) ? inNode(node.items[i], offset, [...path, i]) : undefined;
      if (hit) return hit;
    }
    return within(node.range, offset) ? { path, on: 'value', node, keyRange } : undefined;
  }
  return within(node.range, offset) ? { path, on: 'value', node, keyRange } : undefined;
}

function inMap(map: YMap, offset: number, path: Path): Located | undefined {
  for (const e of map.entries) {
    const p = [...path, e.key];
    if (within(e.keyRange, offset)) return { path: p, on: 'key', node: e.value, keyRange: e.keyRange };
    const hit = inNode(e.value, offset, p, e.keyRange);
    if (hit) return hit;
  }
  return undefined;
}
