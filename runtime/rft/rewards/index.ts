/**
 * Reward functions under Trinity-RFT's registry names, with Trinity's scoring rules.
 *
 *   const fn = createReward('math_reward', taskset.reward_fn_args, { release: 'main' });
 *   const dict = fn({ response, truth });          // { accuracy: 1, format_score: 0.1 }
 *   const reward = totalReward(dict);              // 1.1, as Trinity's workflows sum the dict
 */
export {
  RewardArgsError,
  RewardInputError,
  UnknownRewardError,
  totalReward,
  type RewardContext,
  type RewardDict,
  type RewardFactory,
  type RewardFn,
  type RewardInput,
} from './types';
export {
  createReward,
  knownRewardNames,
  registerReward,
  rewardRegistry,
  trinityRewardNamesAt,
  unregisterReward,
  type RegisterRewardOptions,
  type RewardEntry,
} from './registry';
export {
  FORMAT_REWARD_DEFAULT_PATTERN,
  MATH_REWARD_DEFAULT_PATTERN,
  boxedStringScore,
  extractCountdownEquation,
  validateThinkPattern,
  type AnswerParser,
} from './functions';
export {
  ABSOLUTE_TOLERANCE,
  RELATIVE_TOLERANCE,
  mathEquivalent,
  mathValuesEqual,
  normalizeAnswerLatex,
  parseMathAnswer,
  type EquivalenceOptions,
  type MathValue,
} from './math-equivalence';
export {
  digitRuns,
  evaluateCountdownExpression,
  rationalToNumber,
  type CountdownEvaluation,
  type Rational,
} from './countdown-expression';
export { extractAnswers, simpleAnswerParser, verifyAnswers, type AnswerItem } from './answer-extraction';
export { naiveDapoScore, gradeAnswer } from './dapo-grader';
export { isEquivStrict, stripString } from './qwen-strip';
export { lastBoxedContent, lastBoxedOnlyString, removeBoxed, strictLastBoxed } from './boxed';
