/**
 * Trinity's built-in reward functions (trinity/common/rewards/*.py), with Trinity's constructor parameters,
 * defaults, score values and output keys:
 *
 * | name              | constructor args (defaults)                          | returns                                      |
 * |-------------------|------------------------------------------------------|----------------------------------------------|
 * | accuracy_reward   | answer_parser=None                                   | {accuracy: 1 or 0}                           |
 * | format_reward     | pattern=None (→ FORMAT_REWARD_DEFAULT_PATTERN)       | {format_score: 0.1 or −0.1}                  |
 * | math_reward       | answer_parser=simple_answer_parser,                  | {accuracy: 1 or 0, format_score: ±0.1}       |
 * |                   | pattern=MATH_REWARD_DEFAULT_PATTERN                  |                                              |
 * | math_boxed_reward | anything (ignored); call args with_think=False,      | {accuracy: 1 or 0, format_score: 0 or −coef} |
 * |                   | format_score_coef=0.1                                |                                              |
 * | countdown_reward  | none                                                 | {score: 1.0, 0.1 or 0}                       |
 * | math_dapo_reward  | enable_overlong_penalty, penalty_factor,             | {accuracy: 1 or 0, format_score: ≤ 0}        |
 * |                   | max_response_length, cache_length (all None)         |                                              |
 *
 * The workflow's reward is the sum of the values.
 */

import { atLeast, type Release } from '../../config/releases';
import {
  RESPONSE_EXTRACTION,
  TRUTH_EXTRACTION,
  extractAnswers,
  simpleAnswerParser,
  verifyAnswers,
  type AnswerItem,
} from './answer-extraction';
import { checkArgNames, optNumber, pyTruthy } from './args';
import { lastBoxedOnlyString, pyStrip, removeBoxed } from './boxed';
import { digitRuns, evaluateCountdownExpression } from './countdown-expression';
import { naiveDapoScore } from './dapo-grader';
import { pyMatch, pythonRegex, PythonRegexError } from './python-regex';
import { isEquivStrict } from './qwen-strip';
import { RewardArgsError, RewardInputError, type RewardContext, type RewardFn } from './types';

// ---------------------------------------------------------------------------------------------------------------
// accuracy_reward

/**
 * A TypeScript answer parser (Trinity: any callable). Its results are compared the way math_verify compares
 * parser output that is not sympy: as strings, exactly (trimmed). Return `AnswerItem`s for semantic comparison.
 */
export type AnswerParser = (text: string) => string | readonly string[] | readonly AnswerItem[] | null | undefined;

function toItems(v: ReturnType<AnswerParser>): AnswerItem[] {
  if (v === null || v === undefined) return [];
  const list = (Array.isArray(v) ? v : [v]) as Array<string | AnswerItem>;
  return list.map((x) => (typeof x === 'string' ? { kind: 'str', text: x } : x));
}

function parserArg(fn: string, v: unknown, fallback: 'simple' | null): 'simple' | AnswerParser | null {
  if (v === undefined) return fallback;
  if (v === null) return null;
  if (typeof v === 'function') return v as AnswerParser;
  throw new RewardArgsError(
    `${fn}: reward_fn_args.answer_parser must be a function (Trinity calls it; a ${typeof v} fails with "object is not callable")`,
  );
}

function accuracyScore(parser: 'simple' | AnswerParser | null, response: string, truth: string | undefined): number {
  if (parser !== null) {
    if (truth === undefined || truth === null) {
      throw new RewardInputError("the task has no ground truth (Trinity's answer parser fails on None)");
    }
    try {
      const a = parser === 'simple' ? simpleAnswerParser(response) : toItems(parser(response));
      const t = parser === 'simple' ? simpleAnswerParser(truth) : toItems(parser(truth));
      return verifyAnswers(a, t) ? 1.0 : 0.0;
    } catch {
      return 0.0;
    }
  }
  let truthItems: AnswerItem[] = truth === undefined || truth === null ? [] : extractAnswers(truth, TRUTH_EXTRACTION);
  if (truthItems.length === 0) truthItems = truth === undefined || truth === null ? [] : [{ kind: 'str', text: truth }];
  const answerItems = extractAnswers(response, RESPONSE_EXTRACTION);
  return verifyAnswers(answerItems, truthItems) ? 1.0 : 0.0;
}

export function accuracyReward(args: Record<string, unknown>): RewardFn {
  checkArgNames('accuracy_reward', args, ['answer_parser']);
  const parser = parserArg('accuracy_reward', args.answer_parser, null);
  return ({ response, truth }) => ({ accuracy: accuracyScore(parser, response, truth) });
}

// ---------------------------------------------------------------------------------------------------------------
// format_reward

export const FORMAT_REWARD_DEFAULT_PATTERN = '^<think>\\n.*?\\n</think>\\n<answer>\\n.*?\\n</answer>$';
export const MATH_REWARD_DEFAULT_PATTERN = '.*?<think>.*?</think>\\s*<answer>.*?</answer>\\s*$';

function allIndexes(s: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) out.push(i);
  return out;
}

/**
 * `re.match(MATH_REWARD_DEFAULT_PATTERN, s, DOTALL | MULTILINE)` in linear time. The regex backtracks
 * cubically on responses that repeat the tags many times without matching (Python's `re` as much as ours); this
 * decides the same thing directly: some `<think>` … a later `</think>`, optional whitespace, `<answer>`, … a later
 * `</answer>` followed by whitespace that reaches a newline or the end.
 */
export function matchesMathFormat(s: string): boolean {
  const firstThink = s.indexOf('<think>');
  if (firstThink < 0) return false;
  let lastGoodClose = -1;
  for (const l of allIndexes(s, '</answer>')) {
    let p = l + '</answer>'.length;
    let ok = p === s.length;
    while (!ok && p < s.length && /\s/.test(s[p])) {
      if (s[p] === '\n') ok = true;
      p++;
      if (p === s.length) ok = true;
    }
    if (ok) lastGoodClose = l;
  }
  if (lastGoodClose < 0) return false;
  for (const j of allIndexes(s, '</think>')) {
    if (j < firstThink + '<think>'.length) continue;
    let q = j + '</think>'.length;
    while (q < s.length && /\s/.test(s[q])) q++;
    if (s.startsWith('<answer>', q) && lastGoodClose >= q + '<answer>'.length) return true;
  }
  return false;
}

function formatScorer(fn: string, pattern: unknown): (response: string) => number {
  let p = FORMAT_REWARD_DEFAULT_PATTERN;
  if (pyTruthy(pattern)) {
    if (typeof pattern !== 'string') throw new RewardArgsError(`${fn}: reward_fn_args.pattern must be a string`);
    p = pattern;
  }
  if (p === MATH_REWARD_DEFAULT_PATTERN) return (response) => (matchesMathFormat(response) ? 0.1 : -0.1);
  let re: RegExp;
  try {
    re = pythonRegex(p, { dotAll: true, multiline: true });
  } catch (e) {
    if (e instanceof PythonRegexError) throw new RewardArgsError(`${fn}: ${e.message}`);
    throw e;
  }
  return (response) => (pyMatch(re, response) ? 0.1 : -0.1);
}

export function formatReward(args: Record<string, unknown>): RewardFn {
  checkArgNames('format_reward', args, ['pattern']);
  const score = formatScorer('format_reward', args.pattern);
  return ({ response }) => ({ format_score: score(response) });
}

// ---------------------------------------------------------------------------------------------------------------
// math_reward

export function mathReward(args: Record<string, unknown>): RewardFn {
  checkArgNames('math_reward', args, ['answer_parser', 'pattern']);
  const parser = parserArg('math_reward', args.answer_parser, 'simple');
  // MathRewardFn passes its pattern to FormatReward, whose own default applies when it is None/empty.
  const score = formatScorer('math_reward', 'pattern' in args ? args.pattern : MATH_REWARD_DEFAULT_PATTERN);
  return ({ response, truth }) => ({
    accuracy: accuracyScore(parser, response, truth),
    format_score: score(response),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// math_boxed_reward

/** Trinity's `validate_think_pattern`: exactly one `<think>` and one `</think>`, in that order. */
export function validateThinkPattern(text: string): boolean {
  const count = (tag: string) => text.split(tag).length - 1;
  return count('<think>') === 1 && count('</think>') === 1 && text.indexOf('<think>') < text.indexOf('</think>');
}

/**
 * Trinity's `compute_score_v0` (and `compute_score` before v0.4.0): the last `\boxed{}` of the response against
 * the truth (its own last `\boxed{}` if it has one, else the whole truth), compared by `strip_string` equality.
 */
export function boxedStringScore(response: string, truth: string | undefined | null): number {
  if (typeof truth !== 'string') return 0.0; // Trinity: None.rfind / int.rfind raises → caught → 0.0
  const inLast = lastBoxedOnlyString(response);
  const boxedTruth = lastBoxedOnlyString(truth);
  if (inLast === null) return 0.0;
  const answer = removeBoxed(inLast);
  if (answer === null) return 0.0;
  const gt = boxedTruth !== null ? removeBoxed(boxedTruth) : truth;
  if (gt === null) return 0.0;
  return isEquivStrict(answer, gt) ? 1.0 : 0.0;
}

export function mathBoxedReward(): RewardFn {
  // MathBoxedRewardFn.__init__(**kwargs) ignores every constructor argument.
  return ({ response, truth, callArgs }) => {
    const withThink = callArgs?.with_think ?? false;
    const coef = callArgs?.format_score_coef ?? 0.1;
    const accuracy = boxedStringScore(response, truth);
    let format = 0.0;
    if (pyTruthy(withThink) && !validateThinkPattern(response)) {
      const c = pyTruthy(coef) ? Number(coef) : 0.1; // Python: (format_score_coef or 0.1)
      format = -c;
    }
    return { accuracy, format_score: format };
  };
}

// ---------------------------------------------------------------------------------------------------------------
// countdown_reward

/** TinyZero's `extract_solution`: the last `<answer>…</answer>` on the response's last line, stripped. */
export function extractCountdownEquation(response: string): string | null {
  const lines = response.split('\n');
  const last = lines[lines.length - 1];
  let found: string | null = null;
  for (const m of last.matchAll(/<answer>(.*?)<\/answer>/g)) found = m[1];
  return found === null ? null : pyStrip(found);
}

function parseCountdownTruth(truth: string | undefined): { target: number; numbers: number[] } {
  if (truth === undefined || truth === null) {
    throw new RewardInputError('countdown_reward: the task has no ground truth (expected JSON {"target", "numbers"})');
  }
  let t: unknown;
  try {
    t = JSON.parse(truth);
  } catch {
    throw new RewardInputError(`countdown_reward: the ground truth is not JSON: ${JSON.stringify(truth.slice(0, 80))}`);
  }
  const o = t as { target?: unknown; numbers?: unknown };
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.target !== 'number' ||
    !Array.isArray(o.numbers) ||
    !o.numbers.every((n) => typeof n === 'number')
  ) {
    throw new RewardInputError('countdown_reward: the ground truth must be {"target": number, "numbers": [number, …]}');
  }
  return { target: o.target, numbers: o.numbers as number[] };
}

export function countdownReward(args: Record<string, unknown>): RewardFn {
  checkArgNames('countdown_reward', args, []);
  return ({ response, truth }) => {
    const { target, numbers } = parseCountdownTruth(truth);
    const equation = extractCountdownEquation(response);
    if (equation === null) return { score: 0 };
    const formatScore = 0.1;
    const used = digitRuns(equation).sort((a, b) => a - b);
    const avail = [...numbers].sort((a, b) => a - b);
    if (used.length !== avail.length || used.some((n, i) => n !== avail[i])) return { score: formatScore };
    const r = evaluateCountdownExpression(equation);
    if (!r.ok) return { score: formatScore };
    return { score: Math.abs(r.value - target) < 1e-5 ? 1.0 : formatScore };
  };
}

// ---------------------------------------------------------------------------------------------------------------
// math_dapo_reward

export function mathDapoReward(args: Record<string, unknown>, context: RewardContext): RewardFn {
  const fn = 'math_dapo_reward';
  checkArgNames(fn, args, ['enable_overlong_penalty', 'penalty_factor', 'max_response_length', 'cache_length']);
  const enabled = pyTruthy(args.enable_overlong_penalty);
  const penalty = optNumber(fn, args, 'penalty_factor');
  const maxLen = optNumber(fn, args, 'max_response_length');
  const cache = optNumber(fn, args, 'cache_length');
  if (enabled) {
    if (maxLen === null || cache === null || penalty === null) {
      throw new RewardArgsError(
        `${fn}: When enable_overlong_penalty = true, max_response_length, penalty_factor, cache_length must be set`,
      );
    }
    if (!(maxLen > cache)) throw new RewardArgsError(`${fn}: max_response_length must be greater than cache_length`);
  }
  const release: Release = context.release ?? 'main';
  const naive = atLeast(release, 'v0.4.0');
  return ({ response, truth, responseTokens }) => {
    if (responseTokens === undefined) {
      throw new RewardInputError(
        `${fn}: needs the response tokens (Trinity passes response_token only from math_boxed_workflow; other workflows fail with a TypeError)`,
      );
    }
    const accuracy = naive
      ? naiveDapoScore(response, truth === undefined || truth === null ? 'None' : String(truth))
      : boxedStringScore(response, truth);
    let format = 0.0;
    if (enabled) {
      const len = typeof responseTokens === 'number' ? responseTokens : responseTokens.length;
      const expected = (maxLen as number) - (cache as number);
      if (len < expected) format = 0.0;
      else if (len > (maxLen as number)) format = -(penalty as number);
      else format = ((expected - len) / (cache as number)) * (penalty as number);
    }
    return { accuracy, format_score: format };
  };
}
