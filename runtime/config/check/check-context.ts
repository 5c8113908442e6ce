/**
 * The state one run of Trinity's check step works on: a mutable copy of the loaded config, like the dataclasses
 * `check_and_update` mutates, plus what each check reports and every value it fills in or changes.
 */
import {
  CODES,
  type ConfigDiagnostic,
  type DiagnosticCode,
  type DiagnosticData,
  type Path,
  type Severity,
} from '../diagnostics';
import { nodeAt, rangeForPath, type LoadedConfig } from '../load/load-config';
import { atLeast, inRange, type Release } from '../releases';
import type { Range } from '../load/yaml-tree';
import { registryEntryAt, type RegistryId } from '../model/registries';
import type { PluginNames } from '../environment/plugin-names';
import type { PluginTaskColumns } from '../model/task-columns';
import type { PluginWorkflowSpecs } from '../model/workflow-args';
import type { ConfigPath, ConfigValueAt } from '../config-path';
import type { GpuSpec } from '../gpu-memory/gpu-cards';
import type { GpuMemoryReport } from '../gpu-memory/report';
import type { PeekOptions, PeekResult } from '../datasets/peek-result';

/** A value Trinity computes or changes during its check step, and why. */
export interface Derivation {
  path: string;
  value: unknown;
  /** What was there before (the written value or the schema default). */
  previous: unknown;
  /** The diagnostic reported for it, if any (silent fills have none). */
  code?: DiagnosticCode;
  /** Where that diagnostic points. */
  range?: Range;
  message: string;
}

/** What a check may ask of the outside world; all optional, so the checks run in an editor too. */
export interface CheckHost {
  /**
   * Directories a relative path may be relative to, in order. Trinity resolves them against the directory the run
   * starts in: the CLI passes its working directory, the language server the config's folder (where Run starts it).
   */
  baseDirs?: string[];
  /** Environment, for messages that mention it. */
  env?: Record<string, string | undefined>;
  /** Whether a local path exists (absolute). Undefined: skip existence checks. */
  exists?: (absPath: string) => boolean;
  /**
   * A local text file's contents (absolute path), for the files Trinity reads at launch (`model.chat_template_path`);
   * undefined when it cannot be read. Without it, such files are checked for existence only.
   */
  readText?: (absPath: string) => string | undefined;
  /** Names that plugin directories register (see environment/plugin-names.ts). */
  plugins?: PluginNames;
  /** Those of them a JavaScript plugin registers, which the local runtime runs (the editor's TRN312 passes them). */
  localPlugins?: PluginNames;
  /** The task columns each JavaScript plugin workflow reads (the dataset checks ask only for those). */
  pluginTaskColumns?: PluginTaskColumns;
  /** What JavaScript plugin workflows declare they read: row keys, `workflow_args` (environment/plugin-declarations.ts). */
  pluginWorkflowSpecs?: PluginWorkflowSpecs;
  /** The GPU the memory estimates are for (`trinityWorkbench.gpu`, `check --gpu`); H100-80G when absent. */
  gpu?: GpuSpec;
  /**
   * Runs go to the local runtime (`run`, `check --local`; the editor always asks and shows the findings only where
   * `trinityWorkbench.runWith` is `local`): the checks of what the local runtime can hold (TRN323–TRN326) apply.
   */
  localRuns?: boolean;
  /**
   * A model's `config.json` (`model_path` as written: a local directory or a hub id in the Hugging Face cache),
   * read and cached by the host; undefined when it is not on this machine (the estimates then use published shapes).
   */
  modelConfig?: (modelPath: string, baseDirs: readonly string[]) => ModelConfigRead | undefined;
  /**
   * The tokens of a task's first prompts (turn k's, the workflow's own for `row`, each earlier answer the shortest
   * the workflow takes, for k below `turns`) under the chat template of the tokenizer beside the model's
   * config.json; undefined when the model, its tokenizer or the workflow's prompt is unknown here (the
   * episode-budget checks are then silent). A host may count off its thread (the language server's worker: a
   * tokenizer's load takes seconds).
   */
  promptTokens?: (req: PromptTokensRequest) => number[] | undefined | Promise<number[] | undefined>;
  /**
   * Peeks at a local dataset (absolute path) in place of datasets/peek-dataset.ts, for a host that caches peeks;
   * undefined: not peeked (an editor's pass that a newer edit made stale), and that dataset is not checked.
   */
  peekDataset?: (absPath: string, opts: PeekOptions) => Promise<PeekResult | undefined>;
}

export interface PromptTokensRequest {
  modelPath: string;
  baseDirs: readonly string[];
  workflow: string;
  workflowArgs: Record<string, unknown>;
  row: Record<string, unknown>;
  /** How many turns' prompts (1: the first prompt only). */
  turns: number;
  /** The taskset's `format` keys and reward that a single-turn workflow builds its prompt from. */
  format: PromptFormat;
}

export interface PromptFormat {
  promptKey: string;
  systemPrompt: string | null;
  replyPrefix: string | null;
  rewardFn: string | null;
}

export type ModelConfigRead = { file: string; json: unknown } | { file: string; problem: string };

export interface StageInfo {
  index: number;
  name: string;
  /** Root sections this stage replaces (their source ranges are under `stages[index]`). */
  replaced: ReadonlySet<string>;
}

export type Cfg = Record<string, any>;

export class CheckContext {
  readonly diagnostics: ConfigDiagnostic[] = [];
  readonly derivations: Derivation[] = [];
  /** The trainer's and the rollout engines' GPU memory, once the memory checks ran. */
  gpuMemory: GpuMemoryReport | undefined;

  constructor(
    readonly loaded: LoadedConfig,
    /** The config being checked (the root, or one stage's effective config); mutated by the checks. */
    readonly cfg: Cfg,
    readonly host: CheckHost = {},
    readonly stage?: StageInfo,
  ) {}

  get release(): Release {
    return this.loaded.release;
  }

  /** True from release `r` on. */
  since(r: Release): boolean {
    return atLeast(this.release, r);
  }

  between(since: Release, until: Release): boolean {
    return inRange(this.release, since, until);
  }

  get<P extends ConfigPath>(path: P): ConfigValueAt<P> {
    let v: any = this.cfg;
    for (const k of split(path)) {
      if (v === null || v === undefined) return undefined as ConfigValueAt<P>;
      v = v[k];
    }
    return v;
  }

  /** Sets a value as Trinity does; with `note`, records it (information for a fill-in, warning for a change). */
  set(
    path: ConfigPath,
    value: unknown,
    note?: { code: DiagnosticCode; message: string; severity?: Severity; at?: ConfigPath },
  ): void {
    const previous = this.assign(path, value);
    if (note) {
      const range = this.range(note.at ?? path);
      this.derivations.push({ path, value, previous, code: note.code, range, message: note.message });
      this.report(note.code, note.message, range, { path: [...split(path)], value }, note.severity);
    }
  }

  /** Writes a value into the checked config, creating missing mappings; returns what was there. */
  private assign(path: ConfigPath, value: unknown): unknown {
    const keys = split(path);
    let o: any = this.cfg;
    for (const k of keys.slice(0, -1)) {
      if (o[k] === null || o[k] === undefined) o[k] = {};
      o = o[k];
    }
    const last = keys[keys.length - 1];
    const previous = o[last];
    o[last] = value;
    return previous;
  }

  /**
   * Whether `name` resolves in a registry the way Trinity resolves it: a built-in name, a plugin's name, or
   * (from v0.4.0) a dotted `package.module.Class` path.
   */
  isRegistered(registry: RegistryId, name: string): boolean {
    if (registryEntryAt(registry, name, this.release)) return true;
    if (this.host.plugins?.[registry]?.includes(name)) return true;
    return this.since('v0.4.0') && name.includes('.');
  }

  /** Fills in a value silently, as Trinity does for internal paths; recorded as a derivation only. */
  fill(path: ConfigPath, value: unknown, reason: string): void {
    this.derivations.push({ path, value, previous: this.assign(path, value), message: reason });
  }

  /**
   * Trinity sets `path` to `value` itself: a warning at the key when the user wrote it, else information at
   * `fallbackAt`, the key that makes Trinity do it.
   */
  force(path: ConfigPath, value: unknown, code: DiagnosticCode, message: string, fallbackAt: ConfigPath): void {
    const written = this.written(path);
    this.set(path, value, {
      code,
      message,
      severity: written ? 'warning' : 'information',
      at: written ? path : fallbackAt,
    });
  }

  /**
   * Trinity assigns `value` whatever was written: silently when nothing (or the same value) was written, with a
   * warning naming `from` when the user wrote something else.
   */
  overwrite(path: ConfigPath, value: unknown, from: ConfigPath): void {
    if (this.written(path) && this.get(path) !== value) {
      this.set(path, value, {
        code: 'TRN214',
        message: `\`${path}\` is overwritten with \`${from}\` (${JSON.stringify(value)}); set it there instead.`,
      });
    } else {
      this.fill(path, value, `from \`${from}\``);
    }
  }

  /** True when the user wrote this key (in the root or, for replaced sections, in the stage). */
  written(path: ConfigPath): boolean {
    const n = nodeAt(this.loaded.root, this.sourcePath(split(path)));
    return n !== undefined && n.origin === 'yaml';
  }

  /** The source range for a path of the checked config. */
  range(path: ConfigPath, prefer: 'key' | 'value' = 'key'): Range {
    return rangeForPath(this.loaded.root, this.sourcePath(split(path)), prefer);
  }

  report(
    code: DiagnosticCode,
    message: string,
    at: ConfigPath | Range,
    data?: DiagnosticData,
    severity?: Severity,
  ): void {
    const range = typeof at === 'string' ? this.range(at) : at;
    const d: DiagnosticData | undefined = typeof at === 'string' ? { path: [...split(at)], ...data } : data;
    const prefix = this.stage ? `[stage ${this.stage.name}] ` : '';
    this.diagnostics.push({
      code,
      severity: severity ?? CODES[code].severity,
      message: prefix + message,
      range,
      data: d,
    });
  }

  /** Maps a path of the checked config to the path in the file that sets it. */
  sourcePath(path: Path): Path {
    return sourcePathIn(this.stage, path);
  }
}

/** A stage's replaced sections are written under `stages[i]`; everything else under the root. */
export function sourcePathIn(stage: StageInfo | undefined, path: Path): Path {
  if (stage && typeof path[0] === 'string' && stage.replaced.has(path[0])) return ['stages', stage.index, ...path];
  return path;
}

const splitCache = new Map<string, Path>();

/** `a.b.0.c` -> ['a', 'b', 0, 'c']; cached, since checks ask for the same paths on every run. Do not mutate. */
export function split(path: string): Path {
  let p = splitCache.get(path);
  if (!p) {
    p = path === '' ? [] : path.split('.').map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    if (splitCache.size < 10_000) splitCache.set(path, p);
  }
  return p;
}
