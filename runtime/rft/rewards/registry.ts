/**
 * The reward-function registry: Trinity's `REWARD_FUNCTIONS` names → our implementations.
 *
 * Names per release (Trinity `@REWARD_FUNCTIONS.register_module(...)` up to v0.3.2, the lazy `default_mapping`
 * in trinity/common/rewards/__init__.py from v0.4.0):
 *
 * | name               | v0.2.0 | v0.3.0–v0.3.2 | v0.4.0–v0.5.2 | main |
 * |--------------------|--------|---------------|---------------|------|
 * | accuracy_reward    | ✓      | ✓             | ✓             | ✓    |
 * | math_reward        | ✓      | ✓             | ✓             | ✓    |
 * | math_boxed_reward  | ✓      | ✓             | ✓             | ✓    |
 * | format_reward      | ✓      | ✓             | ✓             | ✓    |
 * | countdown_reward   | ✓      | ✓             | ✓             | ✓    |
 * | math_dapo_reward   | –      | ✓             | ✓             | ✓    |
 * | rm_gallery_reward  | ✓      | ✓             | ✓             | ✓ (OpenJudge) |
 * | openjudge_*, trajectory_accuracy_grader_reward, rlcr_reward | – | – | – | ✓ |
 *
 * No aliases. Not implemented here: `rm_gallery_reward` (the Python RM-Gallery package up to v0.5.2; on main an
 * alias of the OpenJudge multi-grader, which was gone at 10796ed and is back at 8b7fce3), the OpenJudge rewards
 * (LLM judges behind an OpenAI-compatible API) and `rlcr_reward` (cc24051).
 * `math_dapo_reward` scores differently before and after v0.4.0 (see functions.ts / dapo-grader.ts), chosen by
 * `context.release`.
 *
 * Trinity's registry also resolves a dotted name (`my_pkg.rewards.MyReward`) by importing that Python class, and
 * plugin directories register more names; here plugins call `registerReward(name, factory)`.
 */

import { inRange, type Release } from '../../config/releases';
import { isPlainObject } from './args';
import {
  accuracyReward,
  countdownReward,
  formatReward,
  mathBoxedReward,
  mathDapoReward,
  mathReward,
} from './functions';
import { RewardArgsError, UnknownRewardError, type RewardContext, type RewardFactory, type RewardFn } from './types';

export interface RewardEntry {
  name: string;
  factory: RewardFactory;
  /** One line on what it scores. */
  doc: string;
  /** Trinity's class, for built-ins. */
  trinityClass?: string;
  /** First/last modelled release that registers the name (built-ins). */
  since?: Release;
  until?: Release;
  builtin: boolean;
}

const BUILTINS: RewardEntry[] = [
  {
    name: 'accuracy_reward',
    factory: (args) => accuracyReward(args),
    doc: "{accuracy: 1|0}: the response's (boxed/LaTeX) answer matches the ground truth (math_verify style).",
    trinityClass: 'trinity.common.rewards.accuracy_reward.AccuracyReward',
    builtin: true,
  },
  {
    name: 'math_reward',
    factory: (args) => mathReward(args),
    doc: '{accuracy: 1|0, format_score: ±0.1}: <answer> content vs truth, and the <think>…</think><answer>…</answer> format.',
    trinityClass: 'trinity.common.rewards.math_reward.MathRewardFn',
    builtin: true,
  },
  {
    name: 'math_boxed_reward',
    factory: () => mathBoxedReward(),
    doc: '{accuracy: 1|0, format_score: 0|−coef}: last \\boxed{} vs truth by normalised string; think-tag check with with_think.',
    trinityClass: 'trinity.common.rewards.math_reward.MathBoxedRewardFn',
    builtin: true,
  },
  {
    name: 'format_reward',
    factory: (args) => formatReward(args),
    doc: '{format_score: 0.1|−0.1}: the response matches the format pattern (re.match, DOTALL|MULTILINE).',
    trinityClass: 'trinity.common.rewards.format_reward.FormatReward',
    builtin: true,
  },
  {
    name: 'countdown_reward',
    factory: (args) => countdownReward(args),
    doc: '{score: 1|0.1|0}: the <answer> equation on the last line uses each number once and equals the target.',
    trinityClass: 'trinity.common.rewards.countdown_reward.CountDownRewardFn',
    builtin: true,
  },
  {
    name: 'math_dapo_reward',
    factory: (args, context) => mathDapoReward(args, context),
    doc: '{accuracy: 1|0, format_score: ≤0}: DAPO math correctness plus the optional overlong-response penalty.',
    trinityClass: 'trinity.common.rewards.dapo_reward.MathDAPORewardFn',
    since: 'v0.3.0',
    builtin: true,
  },
];

/** Names Trinity registers that this runtime does not implement, with why (the releases that register each). */
const OPENJUDGE =
  "Trinity's OpenJudge rewards call the Python OpenJudge package and an LLM judge, which this runtime cannot run";
const NOT_IMPLEMENTED: Record<string, { ranges: { since?: Release; until?: Release }[]; why: string }> = {
  rm_gallery_reward: {
    ranges: [{ until: 'v0.5.2' }, { since: 'main' }],
    why: "Trinity's rm_gallery_reward calls the Python RM-Gallery (up to v0.5.2) or OpenJudge (main) package, which this runtime cannot run",
  },
  openjudge_reward: { ranges: [{ since: 'main' }], why: OPENJUDGE },
  openjudge_multi_grader_reward: { ranges: [{ since: 'main' }], why: OPENJUDGE },
  openjudge_trajectory_accuracy_reward: { ranges: [{ since: 'main' }], why: OPENJUDGE },
  trajectory_accuracy_grader_reward: { ranges: [{ since: 'main' }], why: OPENJUDGE },
  rlcr_reward: {
    ranges: [{ since: 'main' }],
    why: 'the RLCR reward (format, accuracy and calibration terms) is not ported to this runtime',
  },
};

function registeredAt(release: Release, ranges: readonly { since?: Release; until?: Release }[]): boolean {
  return ranges.some((r) => inRange(release, r.since, r.until));
}

/** Every registered reward function: Trinity's built-ins, then what plugins registered. */
export const rewardRegistry: Map<string, RewardEntry> = new Map(BUILTINS.map((e) => [e.name, e]));

/** Options for `registerReward`. */
export interface RegisterRewardOptions {
  /** Replace an existing registration (Trinity: `register_module(..., force=True)`). */
  force?: boolean;
  doc?: string;
}

/**
 * Registers a reward function under `name` (for plugins). Like Trinity's registry, registering a name twice is
 * an error unless `force` is set.
 */
export function registerReward(name: string, factory: RewardFactory, options: RegisterRewardOptions = {}): void {
  if (typeof name !== 'string' || name.trim() === '')
    throw new TypeError('registerReward: the name must be a non-empty string');
  if (typeof factory !== 'function') throw new TypeError('registerReward: the factory must be a function');
  if (rewardRegistry.has(name) && !options.force) {
    throw new Error(`reward function '${name}' is already registered; pass { force: true } to replace it`);
  }
  rewardRegistry.set(name, { name, factory, doc: options.doc ?? '', builtin: false });
}

/** Removes a plugin's registration (built-ins stay). Returns whether something was removed. */
export function unregisterReward(name: string): boolean {
  const e = rewardRegistry.get(name);
  if (!e || e.builtin) return false;
  return rewardRegistry.delete(name);
}

/** The names registered now (built-ins and plugins), sorted. */
export function knownRewardNames(): string[] {
  return [...rewardRegistry.keys()].sort();
}

/** The names Trinity itself registers at `release` (including ones this runtime does not implement). */
export function trinityRewardNamesAt(release: Release): string[] {
  const names = BUILTINS.filter((e) => inRange(release, e.since, e.until)).map((e) => e.name);
  for (const [n, info] of Object.entries(NOT_IMPLEMENTED)) if (registeredAt(release, info.ranges)) names.push(n);
  return names.sort();
}

/**
 * Builds the reward function registered as `name` from `reward_fn_args` (Trinity: `REWARD_FUNCTIONS.get(name)`
 * then `cls(**reward_fn_args)`). Throws `UnknownRewardError` (listing the known names) for an unknown name and
 * `RewardArgsError` for arguments Trinity's constructor would reject.
 */
export function createReward(
  name: string,
  args: Record<string, unknown> | null | undefined = {},
  context: RewardContext = {},
): RewardFn {
  const entry = rewardRegistry.get(name);
  if (!entry) {
    const known = knownRewardNames();
    const ni = NOT_IMPLEMENTED[name];
    if (ni) {
      const gone = context.release !== undefined && !registeredAt(context.release, ni.ranges);
      throw new UnknownRewardError(name, known, gone ? `not registered in Trinity ${context.release}` : ni.why);
    }
    if (typeof name === 'string' && name.includes('.')) {
      throw new UnknownRewardError(
        name,
        known,
        'Trinity would import this dotted name as a Python class; register a TypeScript reward with registerReward()',
      );
    }
    throw new UnknownRewardError(name, known);
  }
  if (entry.builtin && context.release !== undefined && !inRange(context.release, entry.since, entry.until)) {
    throw new UnknownRewardError(name, knownRewardNames(), `not registered in Trinity ${context.release}`);
  }
  const a = args ?? {};
  if (!isPlainObject(a)) throw new RewardArgsError(`${name}: reward_fn_args must be a mapping`);
  return entry.factory({ ...a }, context);
}
