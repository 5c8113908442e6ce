/**
 * How a function's arguments come together, read from the config model (runtime/config/model/algorithms.ts, the
 * single source of names and defaults): Trinity fills a null `<fn>_args` with the class's `default_args()`; a
 * written `<fn>_args` replaces those wholesale and the constructor's own defaults fill what it leaves out (they
 * sometimes differ, e.g. `rec`'s epsilon_*_prime); an argument without a constructor default is required; an
 * unknown key is a TypeError unless the constructor takes **kwargs.
 *
 * The pieces of this folder implement Trinity at `main`, so arguments are resolved against that release.
 */
import { fnSpecAt, type FnSpec } from '../../config/model/algorithms';
import type { Release } from '../../config/releases';

/** The registries of this folder, named as in algorithms.ts (`kl_fn` serves both kl_loss_fn and kl_penalty_fn). */
export type AlgorithmFnKind = 'advantage_fn' | 'policy_loss_fn' | 'kl_fn' | 'entropy_loss_fn';

/** The release whose math this folder implements. */
export const IMPLEMENTED_RELEASE: Release = 'main';

export type FnArgs = Record<string, unknown>;

export class AlgorithmArgsError extends Error {
  constructor(
    readonly kind: AlgorithmFnKind,
    readonly fnName: string,
    message: string,
  ) {
    super(`${kind} '${fnName}': ${message}`);
    this.name = 'AlgorithmArgsError';
  }
}

export function fnSpec(kind: AlgorithmFnKind, name: string): FnSpec | undefined {
  return fnSpecAt(kind, name, IMPLEMENTED_RELEASE);
}

/**
 * The arguments Trinity's constructor ends up with for `<fn>_args = userArgs` (null/undefined: default_args()).
 * Throws {@link AlgorithmArgsError} where the constructor call would raise (unknown or missing keyword).
 */
export function resolveFnArgs(kind: AlgorithmFnKind, name: string, userArgs?: FnArgs | null): FnArgs {
  const spec = fnSpec(kind, name);
  if (!spec) throw new AlgorithmArgsError(kind, name, 'not registered');
  const args: FnArgs = userArgs == null ? { ...spec.defaultArgs } : { ...userArgs };
  if (!spec.acceptsExtraKwargs) {
    const known = new Set(spec.params.map((p) => p.name));
    for (const k of Object.keys(args)) {
      if (!known.has(k)) {
        throw new AlgorithmArgsError(
          kind,
          name,
          `unexpected keyword argument '${k}' (accepted: ${[...known].join(', ') || 'none'})`,
        );
      }
    }
  }
  for (const p of spec.params) {
    if (p.name in args) continue;
    if (p.required) throw new AlgorithmArgsError(kind, name, `missing required argument '${p.name}'`);
    args[p.name] = p.default;
  }
  return args;
}

/**
 * Defaults for a direct call of one of this folder's functions: default_args() completed with the constructor's
 * defaults (what Trinity uses when the config leaves `<fn>_args` null).
 */
export function defaultFnArgs(kind: AlgorithmFnKind, name: string): FnArgs {
  return resolveFnArgs(kind, name, null);
}

/** `{...defaults, ...given}` with `undefined` entries in `given` ignored. */
export function withDefaults<T extends object>(defaults: T, given?: Partial<T> | null): T {
  const out = { ...defaults } as Record<string, unknown>;
  if (given) for (const [k, v] of Object.entries(given)) if (v !== undefined) out[k] = v;
  return out as T;
}
