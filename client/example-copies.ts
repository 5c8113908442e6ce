/**
 * The examples New Config from Example offers, and copying one into a workspace folder: a config in its own folder
 * is copied with that folder (its data; not a model or runs made there), a top-level config with `examples/data`.
 * No `vscode`: the examples test copies them the same way.
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

export interface Example {
  label: string;
  description: string;
  /** The config, and the folder copied with it. */
  config: string;
  folder: string;
}

/** Our examples: each config's first comment lines are its description. */
export function listExamples(examplesDir: string): Example[] {
  const out: Example[] = [];
  const visit = (dir: string, depth: number): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) {
        if (depth === 0 && name !== 'data') visit(p, 1);
        continue;
      }
      if (!/\.trinity\.ya?ml$/.test(name)) continue;
      const lines = readFileSync(p, 'utf8').split('\n');
      const description = lines
        .filter((l) => l.startsWith('#') && !/trinity-version/.test(l))
        .slice(0, 3)
        .map((l) => l.replace(/^#\s?/, ''))
        .join(' ');
      out.push({
        label: path.relative(examplesDir, p),
        description,
        config: p,
        folder: depth === 0 ? examplesDir : dir,
      });
    }
  };
  if (existsSync(examplesDir)) visit(examplesDir, 0);
  return out;
}

/** Copies `e` into a new folder of `workspaceDir` (named after it, `-2`, `-3`… when taken); returns the copied config. */
export function copyExample(e: Example, examplesDir: string, workspaceDir: string): string {
  const name =
    e.folder === examplesDir ? path.basename(e.config).replace(/\.trinity\.ya?ml$/, '') : path.basename(e.folder);
  let target = path.join(workspaceDir, name);
  for (let i = 2; existsSync(target); i++) target = path.join(workspaceDir, `${name}-${i}`);
  if (e.folder === examplesDir) {
    cpSync(e.config, path.join(target, path.basename(e.config)));
    if (existsSync(path.join(examplesDir, 'data')))
      cpSync(path.join(examplesDir, 'data'), path.join(target, 'data'), { recursive: true });
  } else {
    // A model or runs made inside the extension's copy are not part of the example.
    cpSync(e.folder, target, {
      recursive: true,
      filter: (src) => !/^(model|teacher|checkpoints)([/\\]|$)/.test(path.relative(e.folder, src)),
    });
  }
  return path.join(target, path.relative(e.folder, e.config));
}
