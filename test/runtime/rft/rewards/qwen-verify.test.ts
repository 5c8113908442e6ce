/** Trinity's `verify_math_answer` (qwen25_eval.py), as on_policy_distill_math_workflow scores with it. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractAnswer, mathEqual, verifyMathAnswer } from '../../../../runtime/rft/rewards/qwen-verify';

describe('verify_math_answer', () => {
  test('extract_answer: last boxed, then "the answer is", then the last number', () => {
    assert.equal(extractAnswer('so \\boxed{3} or rather \\boxed{\\frac{1}{2}}'), '\\frac{1}{2}');
    assert.equal(extractAnswer('\\boxed 7$'), '7');
    assert.equal(extractAnswer('The final answer is: 12.'), '12');
    assert.equal(extractAnswer('we get 1,000 apples and 3.5 pears'), '3.5');
    assert.equal(extractAnswer('no numbers'), null);
    assert.equal(extractAnswer('ends in boxed'), null);
  });

  test('math_equal: strings, numbers (rel 1e-4, percentages), intervals, equations, then symbolic', () => {
    assert.ok(mathEqual('7', '7'));
    assert.ok(mathEqual('0.33333', '0.333333'));
    assert.ok(!mathEqual('0.33', '0.333333'));
    assert.ok(mathEqual('0.5', '50'), 'the truth ÷ 100');
    assert.ok(mathEqual('(1,2)', '[1, 2]'));
    assert.ok(mathEqual('y=5', '5'));
    assert.ok(mathEqual('\\frac{1}{2}', '0.5'));
    assert.ok(!mathEqual(null, '1'));
  });

  test('verify_math_answer: 1 for the same answer, 0 otherwise', () => {
    assert.equal(verifyMathAnswer('3+4 is \\boxed{7}', '7'), 1);
    assert.equal(verifyMathAnswer('The answer is 8', '#### 7'), 0);
    assert.equal(verifyMathAnswer('I think 2 then 7', '\\boxed{7}'), 1);
  });
});
