/**
 * Names registered by Trinity plugin directories (`trinity run --plugin-dir DIR`, `TRINITY_PLUGIN_DIRS`): Trinity
 * imports every `.py` file there, and each `@REGISTRY.register_module("name")` adds a name to a registry.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RegistryId } from '../model/registries';

export type PluginNames = Partial<Record<RegistryId, string[]>>;

const REGISTRY_VARS: Record<string, RegistryId> = {
  WORKFLOWS: 'workflow',
  REWARD_FUNCTIONS: 'reward_fn',
  ALGORITHM_TYPE: 'algorithm_type',
  ADVANTAGE_FN: 'advantage_fn',
  POLICY_LOSS_FN: 'policy_loss_fn',
  KL_FN: 'kl_fn',
  ENTROPY_LOSS_FN: 'entropy_loss_fn',
  SAMPLE_STRATEGY: 'sample_strategy',
  MONITOR: 'monitor',
  EXPERIENCE_OPERATORS: 'experience_operator',
  SELECTORS: 'selector',
  PRIORITY_FUNC: 'priority_fn',
};

const REGISTRATION = /\b([A-Z_]+)\.register_module\(\s*(?:name\s*=\s*)?["']([^"']+)["']/g;

/** Registrations in Python source text. */
export function registrationsIn(source: string): PluginNames {
  const out: PluginNames = {};
  for (const m of source.matchAll(REGISTRATION)) {
    const id = REGISTRY_VARS[m[1]];
    if (id) (out[id] ??= []).push(m[2]);
  }
  return out;
}

/** Scans plugin directories (recursively, at most `maxFiles` .py files); unreadable entries are skipped. */
export function scanPluginDirs(dirs: readonly string[], maxFiles = 2000): PluginNames {
  const out: PluginNames = {};
  let budget = maxFiles;
  const visit = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (budget <= 0 || name.startsWith('.') || name === '__pycache__') continue;
      const p = join(dir, name);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        continue;
      }
      if (isDir) visit(p);
      else if (name.endsWith('.py')) {
        budget--;
        try {
          mergeNames(out, registrationsIn(readFileSync(p, 'utf8')));
        } catch {
          // An unreadable plugin file registers nothing, as a failing import would.
        }
      }
    }
  };
  for (const d of dirs) visit(d);
  return out;
}

export function mergeNames(into: PluginNames, from: PluginNames): PluginNames {
  for (const [k, names] of Object.entries(from) as [RegistryId, string[]][])
    into[k] = [...new Set([...(into[k] ?? []), ...names])];
  return into;
}
