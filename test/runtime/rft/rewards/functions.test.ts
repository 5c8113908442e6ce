/**
 * Each built-in reward function against hand-worked cases from Trinity's code (main = 10796ed unless a release
 * is named): the exact score dict and the summed reward.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MATH_REWARD_DEFAULT_PATTERN, matchesMathFormat } from '../../../../runtime/rft/rewards/functions';
import { pyMatch, pythonRegex } from '../../../../runtime/rft/rewards/python-regex';
import {
  RewardArgsError,
  RewardInputError,
  createReward,
  totalReward,
  type RewardDict,
  type RewardInput,
} from '../../../../runtime/rft/rewards';

function close(actual: RewardDict, expected: RewardDict): void {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort());
  for (const k of Object.keys(expected)) {
    assert.ok(Math.abs(actual[k] - expected[k]) < 1e-12, `${k}: ${actual[k]} vs ${expected[k]}`);
  }
}

function score(name: string, input: RewardInput, args: Record<string, unknown> = {}): RewardDict {
  return createReward(name, args)(input);
}

describe('format_reward', () => {
  const fmt = (response: string, args: Record<string, unknown> = {}) =>
    score('format_reward', { response }, args).format_score;

  test('default pattern ^<think>\\n.*?\\n</think>\\n<answer>\\n.*?\\n</answer>$ (DOTALL|MULTILINE, re.match)', () => {
    assert.equal(fmt('<think>\nabc\n</think>\n<answer>\n5\n</answer>'), 0.1);
    assert.equal(
      fmt('<think>\nline 1\nline 2\n</think>\n<answer>\n5\n</answer>'),
      0.1,
      'DOTALL: reasoning spans lines',
    );
    assert.equal(
      fmt('<think>\nabc\n</think>\n<answer>\n5\n</answer>\nextra text'),
      0.1,
      'MULTILINE: $ matches at a line end',
    );
    assert.equal(fmt('<think>abc</think><answer>5</answer>'), -0.1, 'the newlines are required');
    assert.equal(fmt(' <think>\nabc\n</think>\n<answer>\n5\n</answer>'), -0.1, 're.match is anchored at the start');
    assert.equal(fmt('<think>\nabc\n</think>\n<answer>\n5\n</answer> x'), -0.1);
    assert.equal(fmt(''), -0.1);
  });

  test('the dict and the summed reward', () => {
    const d = score('format_reward', { response: 'nothing' });
    assert.deepEqual(d, { format_score: -0.1 });
    assert.equal(totalReward(d), -0.1);
  });

  test('custom patterns in Python syntax', () => {
    assert.equal(fmt('<answer>x</answer>', { pattern: '^<answer>.*</answer>$' }), 0.1);
    assert.equal(fmt('12-12', { pattern: '^(?P<n>\\d+)-(?P=n)$' }), 0.1);
    assert.equal(fmt('12-13', { pattern: '^(?P<n>\\d+)-(?P=n)$' }), -0.1);
    assert.equal(fmt('ab\n', { pattern: 'ab\\Z' }), -0.1);
    assert.equal(fmt('ab', { pattern: 'ab\\Z' }), 0.1);
    assert.equal(
      fmt('<think>\na\n</think>\n<answer>\nb\n</answer>', { pattern: '' }),
      0.1,
      'an empty pattern means the default',
    );
  });

  test('bad arguments', () => {
    assert.throws(() => createReward('format_reward', { pattern: '(' }), RewardArgsError);
    assert.throws(() => createReward('format_reward', { patern: 'x' }), /unexpected argument 'patern'/);
  });
});

describe('math_reward', () => {
  const gsm8kTruth = 'She makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18';

  test('correct answer in the expected format: accuracy 1 + format 0.1', () => {
    const d = score('math_reward', {
      response: '<think> 16-3-4=9, 9*2=18 </think>\n<answer> 18 </answer>',
      truth: gsm8kTruth,
    });
    close(d, { accuracy: 1, format_score: 0.1 });
    assert.ok(Math.abs(totalReward(d) - 1.1) < 1e-12);
  });

  test('wrong answer, right format', () => {
    close(score('math_reward', { response: '<think>x</think><answer>17</answer>', truth: gsm8kTruth }), {
      accuracy: 0,
      format_score: 0.1,
    });
  });

  test('no tags: the whole response is parsed, format −0.1', () => {
    close(score('math_reward', { response: 'The answer is 18.', truth: '18' }), { accuracy: 1, format_score: -0.1 });
    close(score('math_reward', { response: 'I do not know', truth: '18' }), { accuracy: 0, format_score: -0.1 });
  });

  test('an <answer> spanning lines is not the single-line <answer>(.*?)</answer>: the whole text is parsed', () => {
    close(score('math_reward', { response: '<think>it is 3</think>\n<answer>\n18\n</answer>', truth: '18' }), {
      accuracy: 1,
      format_score: 0.1,
    });
    close(score('math_reward', { response: '<think>x</think><answer>\n18\n</answer> then 19', truth: '18' }), {
      accuracy: 0,
      format_score: -0.1,
    });
  });

  test('first <answer> wins; LaTeX answers compare by value', () => {
    close(score('math_reward', { response: '<think>a</think><answer>\\frac{1}{2}</answer>', truth: '0.5' }), {
      accuracy: 1,
      format_score: 0.1,
    });
    close(score('math_reward', { response: '<think>a</think><answer>5</answer> <answer>6</answer>', truth: '6' }), {
      accuracy: 0,
      format_score: 0.1,
    });
  });

  test('tags in the wrong order fail the format', () => {
    close(score('math_reward', { response: '<answer>5</answer><think>x</think>', truth: '5' }), {
      accuracy: 1,
      format_score: -0.1,
    });
  });

  test("pattern: null falls back to format_reward's strict default", () => {
    const r = '<think>a</think>\n<answer>5</answer>';
    close(score('math_reward', { response: r, truth: '5' }), { accuracy: 1, format_score: 0.1 });
    close(score('math_reward', { response: r, truth: '5' }, { pattern: null }), { accuracy: 1, format_score: -0.1 });
  });

  test("answer_parser: null uses accuracy_reward's LaTeX-only extraction", () => {
    close(
      score('math_reward', { response: '<think>a</think><answer>5</answer>', truth: '5' }, { answer_parser: null }),
      { accuracy: 0, format_score: 0.1 },
    );
    close(
      score('math_reward', { response: '<think>a</think><answer>$5$</answer>', truth: '5' }, { answer_parser: null }),
      { accuracy: 1, format_score: 0.1 },
    );
  });

  test('a TypeScript answer parser compares its strings exactly', () => {
    const lastWord = (t: string) => t.trim().split(/\s+/).pop() ?? '';
    close(
      score(
        'math_reward',
        { response: '<think>a</think><answer>x</answer> blue', truth: 'sky is blue' },
        { answer_parser: lastWord },
      ),
      { accuracy: 1, format_score: -0.1 },
    );
  });

  test('the linear-time format check decides exactly what the regex decides', () => {
    const re = pythonRegex(MATH_REWARD_DEFAULT_PATTERN, { dotAll: true, multiline: true });
    const piece = fc.constantFrom('<think>', '</think>', '<answer>', '</answer>', ' ', '\n', '\t', 'x', '5', '<', '>');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (parts) => {
        const text = parts.join('');
        assert.equal(matchesMathFormat(text), pyMatch(re, text) !== null, JSON.stringify(text));
      }),
      { numRuns: 4000 },
    );
  });

  // The regex backtracks cubically on this (minutes); matchesMathFormat decides it in one pass. Its time is
  // bench/latency.bench.ts's to report, not a bound here.
  test('a degenerate, repetitive response gets the format penalty', () => {
    const d = score('math_reward', { response: '<think></think><answer></answer>x'.repeat(3000), truth: '1' });
    assert.equal(d.format_score, -0.1);
  });

  test('missing ground truth is an error, as in Trinity', () => {
    assert.throws(() => score('math_reward', { response: '<answer>1</answer>' }), RewardInputError);
  });

  test('bad arguments', () => {
    assert.throws(() => createReward('math_reward', { answer_parser: 'simple' }), /must be a function/);
    assert.throws(() => createReward('math_reward', { with_think: true }), RewardArgsError);
  });
});

describe('all built-ins: arbitrary responses never throw and give finite scores', () => {
  const truths: Record<string, string> = { countdown_reward: '{"numbers":[1,2,3],"target":6}' };
  const text = fc.oneof(
    fc.string({ maxLength: 120 }),
    fc
      .array(
        fc.constantFrom(
          '<think>',
          '</think>',
          '<answer>',
          '</answer>',
          '\\boxed{',
          '}',
          '{',
          '$',
          '\n',
          ' ',
          '1',
          '2',
          '+',
          '/',
          '\\frac',
          'x',
          '=',
        ),
        { maxLength: 30 },
      )
      .map((a) => a.join('')),
  );
  for (const name of [
    'accuracy_reward',
    'math_reward',
    'math_boxed_reward',
    'format_reward',
    'countdown_reward',
    'math_dapo_reward',
  ]) {
    test(name, () => {
      const fn = createReward(name);
      fc.assert(
        fc.property(text, (response) => {
          const d = fn({
            response,
            truth: truths[name] ?? '\\frac{1}{2}',
            responseTokens: 5,
            callArgs: { with_think: true },
          });
          for (const v of Object.values(d)) assert.ok(Number.isFinite(v));
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('accuracy_reward', () => {
  const acc = (response: string, truth?: string) => score('accuracy_reward', { response, truth }).accuracy;

  test('boxed and LaTeX answers against LaTeX truths compare by value', () => {
    assert.equal(acc('so \\boxed{\\frac{1}{2}}', '$\\frac{1}{2}$'), 1);
    assert.equal(acc('so \\boxed{0.5}', '$\\frac{1}{2}$'), 1);
    assert.equal(acc('so \\boxed{0.6}', '$\\frac{1}{2}$'), 0);
    assert.equal(acc('The final answer is $18$', '$18$'), 1);
  });

  test('a plain truth (no LaTeX) is compared as a string with the extracted answer', () => {
    assert.equal(acc('\\boxed{18}', '18'), 1);
    assert.equal(acc('\\boxed{18.0}', '18'), 0);
    assert.equal(acc('\\boxed{\\frac{1}{2}}', '1/2'), 0);
  });

  test('plain numbers in the response are not extracted (LaTeX only, no unanchored matches)', () => {
    assert.equal(acc('The answer is 18', '18'), 0);
    assert.equal(acc('The answer is 18', '$18$'), 0);
  });

  test('boxed is tried first; the last \\boxed{} counts; nesting', () => {
    assert.equal(acc('first \\boxed{1}, then \\boxed{2}', '$2$'), 1);
    assert.equal(acc('first \\boxed{1}, then \\boxed{2}', '$1$'), 0);
    assert.equal(acc('$5$ and finally \\boxed{\\frac{\\sqrt{3}}{2}}', '$\\frac{\\sqrt3}{2}$'), 1);
  });

  test('no truth scores 0 (Trinity: verify against None fails)', () => {
    assert.equal(acc('\\boxed{1}'), 0);
  });

  test('dict shape', () => {
    assert.deepEqual(score('accuracy_reward', { response: '', truth: '1' }), { accuracy: 0 });
  });
});

describe('math_boxed_reward', () => {
  const boxed = (response: string, truth: string | undefined, callArgs?: Record<string, unknown>) =>
    score('math_boxed_reward', { response, truth, callArgs });

  test('last \\boxed{} against the truth, by normalised string', () => {
    close(boxed('so \\boxed{\\frac{1}{2}}', '\\frac{1}{2}'), { accuracy: 1, format_score: 0 });
    close(boxed('so \\boxed{\\frac{1}{2}}', '\\frac12'), { accuracy: 1, format_score: 0 });
    close(boxed('so \\boxed{\\dfrac{1}{2}}', '1/2'), { accuracy: 1, format_score: 0 });
    close(boxed('so \\boxed{0.5}', '\\frac{1}{2}'), { accuracy: 0, format_score: 0 });
  });

  test('nested braces and multiple boxes (the last one counts)', () => {
    close(boxed('\\boxed{\\frac{\\sqrt{3}}{2}}', '\\frac{\\sqrt{3}}{2}'), { accuracy: 1, format_score: 0 });
    close(boxed('first \\boxed{3}, final \\boxed{4}', '4'), { accuracy: 1, format_score: 0 });
    close(boxed('first \\boxed{3}, final \\boxed{4}', '3'), { accuracy: 0, format_score: 0 });
  });

  test('a boxed truth is unwrapped; a plain truth is used whole', () => {
    close(boxed('\\boxed{4}', 'so the answer is \\boxed{4}'), { accuracy: 1, format_score: 0 });
    close(boxed('\\boxed{18}', 'She makes $18.\n#### 18'), { accuracy: 0, format_score: 0 });
  });

  test('missing or unusable boxes score 0', () => {
    close(boxed('the answer is 4', '4'), { accuracy: 0, format_score: 0 });
    close(boxed('\\fbox{4}', '4'), { accuracy: 0, format_score: 0 });
    close(boxed('\\boxed{4', '4'), { accuracy: 0, format_score: 0 });
    close(boxed('\\boxed{4}', undefined), { accuracy: 0, format_score: 0 });
  });

  test('the "\\boxed " form reads up to the next $', () => {
    close(boxed('so $\\boxed 4$.', '4'), { accuracy: 1, format_score: 0 });
  });

  test('strip_string normalisation: units, words, x =, percent quirk', () => {
    assert.equal(boxed('\\boxed{5 cm}', '5').accuracy, 1);
    assert.equal(boxed('\\boxed{five}', '5').accuracy, 1);
    assert.equal(boxed('\\boxed{x = 5}', '5').accuracy, 1);
    assert.equal(boxed('\\boxed{3.0}', '3').accuracy, 1);
    assert.equal(boxed('\\boxed{90^\\circ}', '90').accuracy, 1);
    assert.equal(boxed('\\boxed{50\\%}', '50').accuracy, 0, '`%` is removed before `\\%`, leaving `50\\`');
    assert.equal(boxed('\\boxed{50\\%}', '50\\%').accuracy, 1);
    assert.equal(boxed('\\boxed{(1,2)}', '1,2').accuracy, 1, 'one enclosing () is dropped');
  });

  test("with_think / format_score_coef come from the call (math_boxed_workflow's workflow_args)", () => {
    const good = '<think> reasoning </think> so \\boxed{4}';
    close(boxed(good, '4', { with_think: true }), { accuracy: 1, format_score: 0 });
    close(boxed('no think \\boxed{4}', '4', { with_think: true }), { accuracy: 1, format_score: -0.1 });
    close(boxed('</think><think> \\boxed{4}', '4', { with_think: true }), { accuracy: 1, format_score: -0.1 });
    close(boxed('<think><think></think> \\boxed{4}', '4', { with_think: true }), { accuracy: 1, format_score: -0.1 });
    close(boxed('no think \\boxed{4}', '4', { with_think: true, format_score_coef: 0.5 }), {
      accuracy: 1,
      format_score: -0.5,
    });
    close(boxed('no think \\boxed{4}', '4', { with_think: true, format_score_coef: 0 }), {
      accuracy: 1,
      format_score: -0.1,
    });
    close(boxed('no think \\boxed{4}', '4', { with_think: false }), { accuracy: 1, format_score: 0 });
    assert.ok(Math.abs(totalReward(boxed('no think \\boxed{3}', '4', { with_think: true })) - -0.1) < 1e-12);
  });

  test('constructor arguments are accepted and ignored (MathBoxedRewardFn(**kwargs))', () => {
    const fn = createReward('math_boxed_reward', { with_think: true, anything: 1 });
    close(fn({ response: 'no think \\boxed{4}', truth: '4' }), { accuracy: 1, format_score: 0 });
  });
});

describe('countdown_reward', () => {
  const truth = JSON.stringify({ numbers: [44, 19, 35], target: 98 });
  const cd = (answerLine: string, t = truth) =>
    score('countdown_reward', { response: ` Let me try.</think>\n${answerLine}`, truth: t }).score;

  test('correct equation: 1.0', () => {
    assert.equal(cd('<answer>44 + 19 + 35</answer>'), 1);
    assert.equal(cd('<answer> (35 + 44) + 19 </answer>'), 1);
  });

  test('a number reused, a number unused, a foreign number: 0.1', () => {
    assert.equal(cd('<answer>44 + 19 + 19 + 16</answer>'), 0.1);
    assert.equal(cd('<answer>44 + 19 + 35 + 0</answer>'), 0.1);
    assert.equal(cd('<answer>44 + 54</answer>'), 0.1);
  });

  test('wrong value: 0.1', () => {
    assert.equal(cd('<answer>44 + 19 - 35</answer>'), 0.1);
  });

  test('no <answer> on the last line: 0', () => {
    assert.equal(cd('44 + 19 + 35'), 0);
    assert.equal(score('countdown_reward', { response: '<answer>44 + 19 + 35</answer>\n', truth }).score, 0);
    assert.equal(score('countdown_reward', { response: '<answer>44 + 19 + 35</answer>\nthat is all', truth }).score, 0);
  });

  test('several <answer> tags on the last line: the last one', () => {
    assert.equal(cd('<answer>1 + 1</answer> no, <answer>44 + 19 + 35</answer>'), 1);
    assert.equal(cd('<answer>44 + 19 + 35</answer> no, <answer>1 + 1</answer>'), 0.1);
  });

  test('precedence and parentheses decide the value', () => {
    const t = (target: number) => JSON.stringify({ numbers: [2, 3, 4], target });
    assert.equal(cd('<answer>2 + 3 * 4</answer>', t(14)), 1);
    assert.equal(cd('<answer>2 + 3 * 4</answer>', t(20)), 0.1);
    assert.equal(cd('<answer>(2 + 3) * 4</answer>', t(20)), 1);
    assert.equal(cd('<answer>2 ** 3 + 4</answer>', t(12)), 1, 'Python ** is allowed by the whitelist');
  });

  test('division: exact fractions, division by zero gives 0.1', () => {
    assert.equal(
      cd('<answer>(83 + 1) - (78 / 39)</answer>', JSON.stringify({ numbers: [83, 78, 1, 39], target: 82 })),
      1,
    );
    assert.equal(cd('<answer>4 / (2 - 2)</answer>', JSON.stringify({ numbers: [4, 2, 2], target: 1 })), 0.1);
  });

  test('Trinity quirks: decimals count as two numbers; leading zeros fail Python', () => {
    assert.equal(cd('<answer>2.5 * 4</answer>', JSON.stringify({ numbers: [2, 4, 5], target: 10 })), 1);
    assert.equal(cd('<answer>02 + 3</answer>', JSON.stringify({ numbers: [2, 3], target: 5 })), 0.1);
  });

  test('garbage in the answer: 0.1 (numbers valid) or 0.1 (numbers wrong), never a crash', () => {
    assert.equal(cd('<answer>44 + 19 + 35x</answer>'), 0.1);
    assert.equal(cd('<answer>44 + 19 + (35</answer>'), 0.1);
    assert.equal(cd('<answer></answer>'), 0.1);
  });

  test("truth must be the JSON Trinity's datasets carry", () => {
    assert.throws(() => score('countdown_reward', { response: '<answer>1</answer>', truth: 'nope' }), RewardInputError);
    assert.throws(() => score('countdown_reward', { response: '<answer>1</answer>' }), RewardInputError);
    assert.throws(() => score('countdown_reward', { response: '', truth: '{"target": 1}' }), RewardInputError);
  });

  test('takes no constructor arguments', () => {
    assert.throws(() => createReward('countdown_reward', { format_score: 0.2 }), /takes no arguments/);
  });
});

describe('math_dapo_reward', () => {
  const dapo = (
    response: string,
    truth: string,
    args: Record<string, unknown> = {},
    tokens: number = 10,
    release?: 'v0.3.2' | 'v0.4.0' | 'main',
  ) => createReward('math_dapo_reward', args, { release })({ response, truth, responseTokens: tokens });

  test('boxed answer after </think>: accuracy 1/0, format 0 without the penalty', () => {
    close(dapo('<think>\\boxed{5}</think> so \\boxed{3}', '3'), { accuracy: 1, format_score: 0 });
    close(dapo('\\boxed{4}', '3'), { accuracy: 0, format_score: 0 });
  });

  test('without a box the whole text after </think> is graded', () => {
    close(dapo('<think>long</think>3', '3'), { accuracy: 1, format_score: 0 });
    close(dapo('<think>\\boxed{3}</think> no box here', '3'), { accuracy: 0, format_score: 0 });
    close(dapo('The answer is 3', '3'), { accuracy: 0, format_score: 0 });
  });

  test('equivalent forms (naive_dapo grade_answer + prime_math math_equal)', () => {
    assert.equal(dapo('\\boxed{0.5}', '\\frac{1}{2}').accuracy, 1);
    assert.equal(dapo('\\boxed{\\dfrac{1}{2}}', '\\frac12').accuracy, 1);
    assert.equal(dapo('\\boxed{1,000}', '1000').accuracy, 1);
    assert.equal(dapo('\\boxed{(1,2)}', '(1,2)').accuracy, 1);
    assert.equal(dapo('\\boxed{(2,1)}', '(1,2)').accuracy, 0);
    assert.equal(dapo('\\boxed{x^2+2x+1}', '(x+1)^2').accuracy, 1);
    assert.equal(dapo('\\boxed{3.14159}', '3.1416').accuracy, 1, 'math_equal: relative tolerance 1e-4');
    assert.equal(dapo('\\boxed{3.2}', '3.1416').accuracy, 0);
  });

  test('percent leniency: the truth ×100 or ÷100 is accepted', () => {
    assert.equal(dapo('\\boxed{50}', '0.5').accuracy, 1);
    assert.equal(dapo('\\boxed{0.5}', '50').accuracy, 1);
  });

  test("\\pi answers: only grade_answer can accept them (Trinity's math_equal call has a misspelt keyword)", () => {
    assert.equal(dapo('\\boxed{2\\pi}', '2\\pi').accuracy, 1);
    assert.equal(dapo('\\boxed{\\pi}', '3.14159265').accuracy, 0);
  });

  test('overlong penalty: 0 below max−cache, linear to −factor at max, −factor beyond', () => {
    const args = { enable_overlong_penalty: true, penalty_factor: 1.0, max_response_length: 100, cache_length: 20 };
    const fs = (n: number) => dapo('\\boxed{3}', '3', args, n).format_score;
    assert.equal(fs(79), 0);
    assert.equal(fs(80), 0);
    assert.equal(fs(90), -0.5);
    assert.equal(fs(100), -1);
    assert.equal(fs(101), -1);
    assert.equal(fs(5000), -1);
    const d = createReward(
      'math_dapo_reward',
      args,
    )({ response: '\\boxed{3}', truth: '3', responseTokens: new Array(90).fill(7) });
    close(d, { accuracy: 1, format_score: -0.5 });
    assert.equal(totalReward(d), 0.5);
  });

  test('penalty disabled ignores the length', () => {
    assert.equal(
      dapo('\\boxed{3}', '3', { max_response_length: 10, cache_length: 5, penalty_factor: 1 }, 1000).format_score,
      0,
    );
  });

  test("argument checks (Trinity's assertions)", () => {
    assert.throws(() => createReward('math_dapo_reward', { enable_overlong_penalty: true }), /must be set/);
    assert.throws(
      () =>
        createReward('math_dapo_reward', {
          enable_overlong_penalty: true,
          penalty_factor: 1,
          max_response_length: 10,
          cache_length: 10,
        }),
      /greater than cache_length/,
    );
    assert.throws(() => createReward('math_dapo_reward', { penalty_factor: 'big' }), /must be a number/);
    assert.throws(() => createReward('math_dapo_reward', { max_length: 1 }), RewardArgsError);
  });

  test('needs the response tokens', () => {
    assert.throws(() => createReward('math_dapo_reward')({ response: '\\boxed{1}', truth: '1' }), /response tokens/);
  });

  test("up to v0.3.2 the accuracy is math_boxed_reward's string comparison", () => {
    assert.equal(dapo('\\boxed{0.5}', '\\frac{1}{2}', {}, 10, 'v0.3.2').accuracy, 0);
    assert.equal(dapo('\\boxed{0.5}', '\\frac{1}{2}', {}, 10, 'v0.4.0').accuracy, 1);
    assert.equal(dapo('<think>x</think>3', '3', {}, 10, 'v0.3.2').accuracy, 0);
    assert.equal(dapo('\\boxed{\\frac12}', '\\frac{1}{2}', {}, 10, 'v0.3.2').accuracy, 1);
  });
});
