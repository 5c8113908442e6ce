/** A small, strict argument parser: unknown flags are usage errors (exit 2), never silently ignored. */

export class UsageError extends Error {}

export interface FlagSpec {
  /** Flags that take a value, e.g. `--format`. */
  values: readonly string[];
  /** Flags without a value, e.g. `--no-datasets`. */
  switches: readonly string[];
}

export interface ParsedArgs {
  /** Every value given for a flag, in order (flags may repeat). */
  values: Map<string, string[]>;
  switches: Set<string>;
  positionals: string[];
}

export function parseArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const out: ParsedArgs = { values: new Map(), switches: new Set(), positionals: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      out.positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (spec.switches.includes(name)) {
      if (eq >= 0) throw new UsageError(`${name} takes no value`);
      out.switches.add(name);
    } else if (spec.values.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      out.values.set(name, [...(out.values.get(name) ?? []), v]);
    } else {
      throw new UsageError(`unknown option ${name}`);
    }
  }
  return out;
}

/** The last value given for a flag. */
export function lastValue(args: ParsedArgs, flag: string): string | undefined {
  const v = args.values.get(flag);
  return v?.[v.length - 1];
}
