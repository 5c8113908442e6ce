/** Helpers for `reward_fn_args` as Trinity passes them (`RewardFnClass(**reward_fn_args)`). */
import { RewardArgsError } from './types';

/** Python's TypeError for an unexpected keyword argument, as a RewardArgsError. */
export function checkArgNames(fn: string, args: Record<string, unknown>, accepted: readonly string[]): void {
  for (const k of Object.keys(args)) {
    if (!accepted.includes(k)) {
      const takes = accepted.length === 0 ? 'it takes no arguments' : `it accepts: ${accepted.join(', ')}`;
      throw new RewardArgsError(`${fn}: unexpected argument '${k}' in reward_fn_args (${takes})`);
    }
  }
}

/** Python truthiness for YAML-ish values. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (typeof v === 'number' && Number.isNaN(v)) return true;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** An optional number argument (null/undefined → null). */
export function optNumber(fn: string, args: Record<string, unknown>, key: string): number | null {
  const v = args[key];
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0; // Python bools are ints
  if (typeof v !== 'number' || Number.isNaN(v)) {
    throw new RewardArgsError(`${fn}: reward_fn_args.${key} must be a number, got ${JSON.stringify(v)}`);
  }
  return v;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
