/**
 * Typed dotted paths into a config: the paths the model lists (paths.generated.ts) and the type of the value each
 * holds in main's generated types, so a misspelt path in a check does not compile.
 */
import { CONFIG_PATH_PATTERNS, type ConfigPath } from './paths.generated';
import type { TrinityConfig } from './types.generated';

export type { ConfigPath } from './paths.generated';

/**
 * The value at `P` as main's generated types describe it, `unknown` where they do not (a key of an older release,
 * a free-form dict), `undefined` included. It says what a valid config holds: a user may have written anything
 * (the validator reports it), so a check still tests a value's type where a wrong one would mislead it.
 */
export type ConfigValueAt<P extends string, T = TrinityConfig> = P extends `${infer Head}.${infer Rest}`
  ? ConfigValueAt<Rest, Step<NonNullable<T>, Head>>
  : Step<NonNullable<T>, P> | undefined;

type Step<T, K extends string> = T extends readonly (infer Item)[]
  ? K extends `${number}`
    ? Item
    : unknown
  : T extends object
    ? K extends keyof T
      ? T[K]
      : unknown
    : unknown;

/** A path under a list: `buffer.explorer_input.tasksets.${number}` and the like, for rules that walk list items. */
export type ItemPath<L extends string> = Extract<ConfigPath, `${L}.${number}`>;

let compiled: RegExp | undefined;
const accepted = new Set<string>();

/**
 * A path built at run time from names the model lists (a registry's argument keys, a loop over sections), checked
 * against the generated patterns: a path the model does not hold throws instead of silently reading `undefined`.
 */
export function configPath(path: string): ConfigPath {
  if (accepted.has(path)) return path as ConfigPath;
  compiled ??= new RegExp(`^(?:${CONFIG_PATH_PATTERNS.map(patternSource).join('|')})$`);
  if (!compiled.test(path)) throw new Error(`not a config path of any modelled release: ${path}`);
  if (accepted.size < 10_000) accepted.add(path);
  return path as ConfigPath;
}

/** The value at a dotted `path` of a resolved config (plain objects), or undefined where a section is missing. */
export function valueAtPath(cfg: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | null | undefined)?.[k], cfg);
}

function patternSource(pattern: string): string {
  return pattern
    .split('.')
    .map((seg) =>
      seg === '${number}' ? '\\d+' : seg === '${string}' ? '.+' : seg.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&'),
    )
    .join('\\.');
}

/** Where a taskset sits: v0.3's single `taskset`, each of `tasksets`, each of `eval_tasksets`. */
export type TasksetPath =
  | 'buffer.explorer_input.taskset'
  | ItemPath<'buffer.explorer_input.tasksets'>
  | ItemPath<'buffer.explorer_input.eval_tasksets'>;

/** Where a buffer the trainer reads sits. */
export type TrainerBufferPath =
  | 'buffer.trainer_input.experience_buffer'
  | 'buffer.trainer_input.sft_warmup_dataset'
  | `buffer.trainer_input.auxiliary_buffers.${string}`;

/** Any storage section: a taskset, a trainer buffer, or the task pipeline's output. */
export type StoragePath = TasksetPath | TrainerBufferPath | 'data_processor.task_pipeline.output';

export function isTasksetPath(p: StoragePath): p is TasksetPath {
  return p.startsWith('buffer.explorer_input.');
}
