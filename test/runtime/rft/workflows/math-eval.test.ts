/**
 * math_eval_workflow as Trinity's MathEvalWorkflow (trinity/common/workflows/eval_workflow.py, the same in every
 * release): the Qwen2.5-Math prompt from the row's `question`, fixed sampling, and `accuracy` from
 * `verify_math_answer` (qwen25_eval.py / math_eval_utils.py), not from a reward function. Expected accuracies are
 * what Trinity's verify_math_answer at 10796ed returns for the same texts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatMessage } from '../../../../runtime/engine/tokenizer';
import type { Experience } from '../../../../runtime/rft/experience';
import type { RolloutArgs, RolloutModel } from '../../../../runtime/rft/models/rollout-model';
import { workflowFactory } from '../../../../runtime/rft/workflows/registry';
import type { WorkflowTask } from '../../../../runtime/rft/workflows/types';

async function run(responseText: string, truth: string | undefined, workflow = 'math_eval_workflow') {
  const calls: { messages: ChatMessage[]; args: RolloutArgs }[] = [];
  const model = {
    chat(messages: ChatMessage[], args: RolloutArgs): Experience[] {
      calls.push({ messages, args });
      return [
        { eid: { batch: 0, task: 0, run: 0, step: 0, suffix: 'x' }, tokens: [1, 2], promptLength: 1, responseText },
      ];
    },
  } as unknown as RolloutModel;
  const task: WorkflowTask = {
    raw: { question: 'What is 3+4?', answer: truth },
    taskDesc: 'What is 3+4?',
    truth,
    systemPrompt: 'ignored',
    replyPrefix: null,
    rolloutArgs: { temperature: 1.5 },
    workflowArgs: {},
    rewardFnArgs: {},
    rewardFn: 'math_boxed_reward',
    isEval: true,
  };
  const created: string[] = [];
  const wf = workflowFactory(workflow)({
    model,
    task,
    repeatTimes: 1,
    runIdBase: 0,
    createReward: (name) => {
      created.push(name);
      return () => ({});
    },
    auxiliaryModels: [],
  });
  return { exps: await wf.run(), calls, created, repeatable: wf.repeatable };
}

describe('math_eval_workflow', () => {
  test('Qwen2.5-Math prompt and sampling; no reward function; not repeatable', async () => {
    const { calls, created, repeatable, exps } = await run('\\boxed{7}', '7');
    assert.deepEqual(calls[0].messages, [
      { role: 'system', content: 'You are a helpful assistant.' },
      {
        role: 'user',
        content: 'What is 3+4?\nPlease reason step by step, and put your final answer within \\boxed{}.',
      },
    ]);
    assert.deepEqual(calls[0].args, { temperature: 0.6, top_p: 0.8, n: 1 });
    assert.deepEqual(created, []);
    assert.equal(repeatable, false);
    assert.equal(exps[0].reward, undefined);
  });

  test('accuracy is verify_math_answer: "the final answer is …" counts without a box; the last box decides', async () => {
    for (const workflow of ['math_eval_workflow', 'async_math_eval_workflow']) {
      assert.deepEqual((await run('\\boxed{7}', '7', workflow)).exps[0].metrics, { accuracy: 1 });
      // math_boxed_reward gave 0 here: it needs a \boxed{}.
      assert.deepEqual((await run('The final answer is 7', '7', workflow)).exps[0].metrics, { accuracy: 1 });
      assert.deepEqual((await run('\\boxed{7} no, \\boxed{8}', '7', workflow)).exps[0].metrics, { accuracy: 0 });
      // Trinity parses "50\" out of \boxed{50\%}: not 0.5.
      assert.deepEqual((await run('so \\boxed{50\\%}', '0.5', workflow)).exps[0].metrics, { accuracy: 0 });
    }
  });

  test('a task without a truth gets no accuracy', async () => {
    assert.equal((await run('\\boxed{7}', undefined)).exps[0].metrics, undefined);
  });
});
