/**
 * What Create Small Model makes for a config: `trinity-workbench model create` arguments sized to it (its context
 * holds the config's longest `max_model_len`, so vLLM's length check — TRN318 — passes and no prompt runs out of
 * positions), and the folders of the models a config names that are not there. No `vscode`: tests use it as is.
 */
import * as path from 'node:path';
import type { RunPlanModel, RunPlanResponse } from '../server/lsp-messages';

export interface ModelSize {
  label: string;
  detail: string;
  layers: number;
  hidden: number;
  heads: number;
}

export const MODEL_SIZES: ModelSize[] = [
  {
    label: 'tiny',
    detail: '2 layers, hidden 64 (about 0.1M parameters): seconds per step on a laptop',
    layers: 2,
    hidden: 64,
    heads: 4,
  },
  { label: 'small', detail: '4 layers, hidden 128 (about 1M parameters)', layers: 4, hidden: 128, heads: 4 },
  { label: 'medium', detail: '6 layers, hidden 256 (about 5M parameters)', layers: 6, hidden: 256, heads: 8 },
];

export const MODEL_VOCABS = [
  { label: 'byte', detail: 'byte-level (259 tokens): any text, so any dataset', vocab: 'byte' },
  {
    label: 'arithmetic characters',
    detail: "one token per character of digits, + { } \\ space, newline and a–z: the arithmetic demo's data only",
    vocab: 'char:0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz',
  },
];

/** Positions a model for `plan` gets: the config's longest context, else `model create`'s default. */
export function positionsFor(plan: Pick<RunPlanResponse, 'maxModelLen'> | null | undefined): number {
  return plan?.maxModelLen ?? 512;
}

export function modelCreateArgs(opts: {
  cliPath: string;
  arch: string;
  size: ModelSize;
  vocab: string;
  maxPositions: number;
  outDir: string;
  seed: number;
}): string[] {
  return [
    opts.cliPath,
    'model',
    'create',
    '--arch',
    opts.arch,
    '--layers',
    String(opts.size.layers),
    '--hidden',
    String(opts.size.hidden),
    '--heads',
    String(opts.size.heads),
    '--max-positions',
    String(opts.maxPositions),
    '--vocab',
    opts.vocab,
    '--seed',
    String(opts.seed),
    '--out',
    opts.outDir,
    '--force',
  ];
}

export interface ModelTarget {
  /** The config key that names the model (`model.model_path`, `explorer.auxiliary_models.0.model_path`). */
  key: string;
  outDir: string;
}

/**
 * Where each model the run cannot find goes: the folder a local path names (relative to the config's folder, where
 * Run starts the runtime); a hub id that is not on this machine gets a folder beside the config instead.
 */
export function missingModelTargets(models: readonly RunPlanModel[], configDir: string): ModelTarget[] {
  return models
    .filter((m) => m.found === false)
    .map((m) => ({
      key: m.key,
      outDir: m.hubId
        ? path.join(configDir, m.key === 'model.model_path' ? 'model' : m.key.split('.').slice(1, 3).join('-'))
        : path.resolve(configDir, m.path),
    }));
}

/** A dotted config key as a YAML path (`explorer.auxiliary_models.0.model_path` -> [..., 0, 'model_path']). */
export function yamlPathOf(key: string): (string | number)[] {
  return key.split('.').map((k) => (/^\d+$/.test(k) ? Number(k) : k));
}
