/**
 * Trinity's replay-buffer priority functions (`PRIORITY_FUNC`, trinity/buffer/storage/__init__.py and queue.py at
 * main). Each takes a queue item (the experiences of one `write`) and returns `[priority, putIntoQueue]`; the item's
 * model version and use count are those of its first experience. `putIntoQueue` applies both to new items and to
 * items coming back after `reuse_cooldown_time`.
 *
 * - `linear_decay` (`LinearDecayPriority`, args `{decay: 2.0}`): `model_version - decay * use_count`; always put.
 * - `decay_limit_randomization` (`LinearDecayUseCountControlPriority`, args `{decay: 2.0, use_count_limit: 3,
 *   sigma: 0.0}`): the same priority plus N(0, sigma²) noise when sigma > 0; put only while
 *   `use_count < use_count_limit` (a limit <= 0 means no limit). Registered as
 *   `linear_decay_use_count_control_randomization` in v0.3.1 (renamed in cd82bfc); the old name is accepted.
 *
 * Arguments: the class's `default_config()` updated with `priority_fn_args`; an unknown key is an error (Python's
 * constructor raises TypeError).
 */
import { BufferConfigError } from './types';

export interface PriorityInput {
  modelVersion: number;
  useCount: number;
}

export type PriorityFn = (item: PriorityInput) => [priority: number, putIntoQueue: boolean];

interface PriorityFnSpec {
  defaults: Record<string, number>;
  make(args: Record<string, number>, random: () => number): PriorityFn;
}

/** Standard normal draw (Box-Muller) from a uniform source. */
function gaussian(random: () => number): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

const DECAY_LIMIT_RANDOMIZATION: PriorityFnSpec = {
  defaults: { decay: 2.0, use_count_limit: 3, sigma: 0.0 },
  make:
    ({ decay, use_count_limit, sigma }, random) =>
    (item) => {
      let priority = item.modelVersion - decay * item.useCount;
      if (sigma > 0) priority += gaussian(random) * sigma;
      return [priority, use_count_limit > 0 ? item.useCount < use_count_limit : true];
    },
};

export const PRIORITY_FUNCTIONS: Record<string, PriorityFnSpec> = {
  linear_decay: {
    defaults: { decay: 2.0 },
    make:
      ({ decay }) =>
      (item) => [item.modelVersion - decay * item.useCount, true],
  },
  decay_limit_randomization: DECAY_LIMIT_RANDOMIZATION,
};

/** v0.3.1's name of decay_limit_randomization. */
const ALIASES: Record<string, string> = { linear_decay_use_count_control_randomization: 'decay_limit_randomization' };

/** Every name `makePriorityFn` accepts (functions and aliases). */
export function priorityFnNames(): string[] {
  return [...Object.keys(PRIORITY_FUNCTIONS), ...Object.keys(ALIASES)];
}

export function makePriorityFn(
  name: string,
  args: Record<string, unknown> | null | undefined,
  opts: { keyPath?: string; fnKey?: string; argsKey?: string; random?: () => number } = {},
): PriorityFn {
  const keyPath = opts.keyPath ?? 'replay_buffer';
  const fnKey = opts.fnKey ?? `${keyPath}.priority_fn`;
  const argsKey = opts.argsKey ?? `${keyPath}.priority_fn_args`;
  const spec = PRIORITY_FUNCTIONS[name] ?? PRIORITY_FUNCTIONS[ALIASES[name] ?? ''];
  if (!spec) {
    throw new BufferConfigError(
      fnKey,
      `Unknown \`${fnKey}\` "${name}": expected one of ${Object.keys(PRIORITY_FUNCTIONS).join(', ')}.`,
    );
  }
  const resolved: Record<string, number> = { ...spec.defaults };
  for (const [k, v] of Object.entries(args ?? {})) {
    if (!(k in spec.defaults)) {
      throw new BufferConfigError(
        `${argsKey}.${k}`,
        `\`${argsKey}.${k}\`: ${name} takes no argument "${k}" (it takes ${Object.keys(spec.defaults).join(', ')}).`,
      );
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new BufferConfigError(`${argsKey}.${k}`, `\`${argsKey}.${k}\` must be a number, got ${JSON.stringify(v)}.`);
    }
    resolved[k] = v;
  }
  return spec.make(resolved, opts.random ?? Math.random);
}
