/**
 * No knots: inside each folder below, the files and subfolders at one level import each other without a cycle, type
 * imports included (a type-only circle still makes two modules one unit to read and to move). A cycle between two
 * files shows at their folder's level; one between two folders (load/ → interpolation/ → load/) at their parent's.
 * Imports are read with TypeScript's own pre-processor, relative ones resolved as Node16 and the bundler do.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
/** The trees kept untied (runtime/rft joins when its explorer/workflows knot is untied, issue 35: then all of runtime). */
const TREES = ['server', 'client', 'media', 'runtime/config', 'runtime/engine', 'runtime/metrics', 'runtime/cli'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec.replace(/\.js$/, ''));
  for (const p of [base, `${base}.ts`, `${base}.mts`, join(base, 'index.ts')]) {
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return undefined;
}

/** Every file under the tree -> the files (anywhere in the repository) it imports. */
function importGraph(tree: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(join(ROOT, tree))) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles.map((f) => resolveImport(file, f.fileName));
    graph.set(
      file,
      targets.filter((t): t is string => t !== undefined),
    );
  }
  return graph;
}

/** The child of `folder` that holds `file`, or undefined when `file` is outside it. */
function childOf(folder: string, file: string): string | undefined {
  const rel = relative(folder, file);
  if (rel.startsWith('..') || rel === '') return undefined;
  return rel.split(sep)[0];
}

/** Cycles among the children of each folder of the tree, as `folder: a → b → a`. */
function knots(tree: string, graph: Map<string, string[]>): string[] {
  const folders = new Set<string>([join(ROOT, tree)]);
  for (const file of graph.keys()) {
    for (let d = dirname(file); d.startsWith(join(ROOT, tree)); d = dirname(d)) folders.add(d);
  }
  const found: string[] = [];
  for (const folder of [...folders].sort()) {
    const edges = new Map<string, Set<string>>();
    for (const [file, targets] of graph) {
      const a = childOf(folder, file);
      if (a === undefined) continue;
      for (const t of targets) {
        const b = childOf(folder, t);
        if (b === undefined || b === a) continue;
        if (!edges.has(a)) edges.set(a, new Set());
        edges.get(a)!.add(b);
      }
    }
    for (const cycle of cyclesOf(edges)) found.push(`${relative(ROOT, folder) || '.'}: ${cycle.join(' → ')}`);
  }
  return found;
}

/** One cycle per strongly connected component with more than one node (Tarjan), closed (a → … → a). */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) out.push(pathThrough(new Set(component), edges));
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** A closed walk inside one strongly connected component, from its first name back to it. */
function pathThrough(component: Set<string>, edges: Map<string, Set<string>>): string[] {
  const start = [...component].sort()[0];
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

for (const tree of TREES) {
  test(`${tree}: no import cycle between files or folders at any level`, () => {
    const graph = importGraph(tree);
    const edges = [...graph.values()].reduce((n, t) => n + t.length, 0);
    assert.ok(graph.size > 2 && edges > 2, `${tree}: read ${graph.size} files, ${edges} imports`);
    assert.deepEqual(knots(tree, graph), []);
  });
}

test('a knot between two sibling folders is found, with its path', () => {
  const a = join(ROOT, 'runtime/config/load/x.ts');
  const b = join(ROOT, 'runtime/config/interpolation/y.ts');
  const c = join(ROOT, 'runtime/config/load/z.ts');
  const graph = new Map([
    [a, [b]],
    [b, [c]],
    [c, []],
  ]);
  assert.deepEqual(knots('runtime/config', graph), ['runtime/config: interpolation → load → interpolation']);
});
