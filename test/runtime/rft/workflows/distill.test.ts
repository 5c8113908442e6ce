/**
 * The on-policy distillation workflows on two different tiny models: the teacher log-probs each experience carries
 * are the teacher's scores of the student's own tokens (as scoring them directly gives, to 1e-5), one per response
 * token like the student's; `kl_divergence` is their summed difference; rewards and run ids follow Trinity's
 * workflows; and without an auxiliary model the workflow refuses, saying why.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../../runtime/engine/backend';
import { scoreSequences } from '../../../../runtime/engine/logprobs';
import { loadPretrained, stopTokenIds, type Pretrained } from '../../../../runtime/engine/pretrained';
import { AuxiliaryModel } from '../../../../runtime/rft/models/auxiliary-model';
import { RolloutModel, type RolloutLimits } from '../../../../runtime/rft/models/rollout-model';
import { createReward } from '../../../../runtime/rft/rewards';
import { workflowFactory } from '../../../../runtime/rft/workflows/registry';
import type { WorkflowContext, WorkflowTask } from '../../../../runtime/rft/workflows/types';
import { saveTinyModel } from '../run/helpers';

const LIMITS: RolloutLimits = {
  maxPromptTokens: null,
  maxResponseTokens: 6,
  minResponseTokens: 0,
  enablePromptTruncation: false,
  temperature: 1,
  topP: 1,
  topK: -1,
  enableThinking: null,
};

let student: Pretrained;
let teacher: AuxiliaryModel;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  const dir = mkdtempSync(join(tmpdir(), 'twb-distill-'));
  // Room for the math workflow's Qwen2.5-Math prompt.
  saveTinyModel(join(dir, 'student'), 31, { maxPositions: 256 });
  saveTinyModel(join(dir, 'teacher'), 32, { sharpness: 8, maxPositions: 256 });
  student = loadPretrained(join(dir, 'student'));
  const t = loadPretrained(join(dir, 'teacher'));
  teacher = new AuxiliaryModel('0', t, LIMITS, 5, stopTokenIds(t));
});

function task(over: Partial<WorkflowTask> = {}): WorkflowTask {
  return {
    raw: { question: '3+4', answer: '7' },
    taskDesc: '3+4',
    truth: '7',
    systemPrompt: null,
    replyPrefix: null,
    rolloutArgs: { temperature: 1.2 },
    workflowArgs: {},
    rewardFnArgs: {},
    rewardFn: null,
    isEval: false,
    ...over,
  };
}

function context(t: WorkflowTask, auxiliaryModels: AuxiliaryModel[] = [teacher], runIdBase = 0): WorkflowContext {
  return {
    model: new RolloutModel(student.model, student.tokenizer, LIMITS, 7, stopTokenIds(student)),
    task: t,
    repeatTimes: 3,
    runIdBase,
    createReward: (name, args) => createReward(name, args, { release: 'main' }),
    auxiliaryModels,
  };
}

/** The teacher's log-probs of `tokens`' response part, scored directly on the engine. */
function teacherScores(tokens: number[], promptLength: number, temperature: number): number[] {
  return tf.tidy(() => {
    const ids = tf.tensor2d([tokens], [1, tokens.length], 'int32');
    return Array.from(scoreSequences(teacher.pretrained.model, ids, { temperature }).logprobs.dataSync()).slice(
      promptLength - 1,
    );
  });
}

describe('on-policy distillation workflows', () => {
  for (const [name, temperature] of [
    ['on_policy_distill_workflow', undefined],
    ['on_policy_distill_math_workflow', 0.7],
  ] as const) {
    test(`${name}: teacher log-probs of the student's tokens (temperature ${temperature ?? 'default 1.0'})`, async () => {
      const wf = workflowFactory(name)(
        context(task({ workflowArgs: temperature === undefined ? {} : { temperature } }), [teacher], 5),
      );
      assert.equal(wf.repeatable, true);
      const exps = await wf.run();
      assert.equal(exps.length, 3);
      exps.forEach((e, i) => {
        const n = e.tokens.length - e.promptLength;
        assert.ok(n > 0);
        assert.equal(e.logprobs!.length, n);
        assert.equal(e.teacherLogprobs!.length, n);
        const direct = teacherScores(e.tokens, e.promptLength, temperature ?? 1.0);
        e.teacherLogprobs!.forEach((v, k) =>
          assert.ok(Math.abs(v - direct[k]) < 1e-5, `token ${k}: ${v} vs ${direct[k]}`),
        );
        // A different model: the student's log-probs are not the teacher's.
        assert.ok(e.logprobs!.some((v, k) => Math.abs(v - e.teacherLogprobs![k]) > 1e-3));
        const kl = e.logprobs!.reduce((s, v, k) => s + v - e.teacherLogprobs![k], 0);
        assert.ok(Math.abs(e.metrics!.kl_divergence - kl) < 1e-9);
        assert.equal(e.eid.run, i + 5);
        if (name === 'on_policy_distill_workflow') {
          assert.equal(e.reward, 0);
          assert.deepEqual(Object.keys(e.metrics!), ['kl_divergence']);
        } else {
          assert.match(
            e.promptText!,
            /You are a helpful assistant\.[\s\S]*3\+4\nPlease reason step by step, and put your final answer within \\boxed\{\}\./,
          );
          if (e.responseText) assert.equal(e.reward, e.metrics!.accuracy);
          else assert.equal(e.reward, 0);
        }
      });
    });
  }

  test('the teacher scores the whole sequence: length − 1 entries, the first predicting token 1', async () => {
    const tokens = student.tokenizer.encode('12+3', { addSpecialTokens: false });
    const lp = await teacher.logprobs(tokens);
    assert.equal(lp.length, tokens.length - 1);
    const direct = teacherScores(tokens, 1, 1);
    lp.forEach((v, k) => assert.ok(Math.abs(v - direct[k]) < 1e-6));
    await assert.rejects(async () => teacher.logprobs([1, 10_000]), /outside this model's vocabulary/);
  });

  test('without an auxiliary model the workflow refuses, naming explorer.auxiliary_models', () => {
    assert.throws(
      () => workflowFactory('on_policy_distill_workflow')(context(task(), [])),
      /at least one auxiliary model as teacher \(explorer\.auxiliary_models\)/,
    );
  });
});
