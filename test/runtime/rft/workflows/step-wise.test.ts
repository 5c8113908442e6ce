/**
 * Step-wise episodes on a real model: every model call of a step becomes one experience of that step (the whole
 * history its prompt, `eid.step` set); RewardPropagationWorkflow gives every step the episode's reward and
 * `actual_env_steps`; StepWiseRewardWorkflow scores each step; step() returning false ends the episode. Through the
 * explorer (a registered workflow, as a plugin's would be): each experience of a run is numbered with the run,
 * `rollout/` metrics are reduced per episode before the mean over episodes, and the rollout samples carry the
 * conversation.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import type { Pretrained } from '../../../../runtime/engine/pretrained';
import { loadByteChatModel, rolloutModelOf, workflowTask } from '../../../helpers/byte-chat-model';
import type { ChatMessage } from '../../../../runtime/engine/tokenizer';
import type { Experience } from '../../../../runtime/rft/experience';
import { Explorer } from '../../../../runtime/rft/explorer/explore-step';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import type { RolloutLimits } from '../../../../runtime/rft/models/rollout-model';
import { HistoryModel } from '../../../../runtime/rft/workflows/multi-turn/history-model';
import { runRewardPropagation, runStepWiseReward } from '../../../../runtime/rft/workflows/multi-turn/step-wise';
import { registerWorkflow } from '../../../../runtime/rft/workflows/registry';

let pretrained: Pretrained;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(4, 256);
});

const model = (limits: Partial<RolloutLimits> = {}) =>
  rolloutModelOf(pretrained, { maxResponseTokens: 4, ...limits }, 9);

/** An agent that asks the model once per step about step k (twice at step 1), and stops after `stopAfter`. */
function agent(history: HistoryModel, stopAfter: number, maxStepNum = 5) {
  const conversation: ChatMessage[] = [{ role: 'system', content: 'Count.' }];
  return {
    maxStepNum,
    async step(k: number) {
      conversation.push({ role: 'user', content: `step ${k}` });
      const [e] = await history.chat(conversation, { n: 1 });
      if (k === 1) await history.chat(conversation, { n: 1 });
      conversation.push({ role: 'assistant', content: e.responseText ?? '' });
      return k < stopAfter;
    },
  };
}

describe('step-wise episodes', () => {
  test('RewardPropagation: one experience per call, eid.step per step, the episode reward and actual_env_steps on all', async () => {
    const history = new HistoryModel(model());
    const seen: number[] = [];
    const exps = await runRewardPropagation(history, {
      ...agent(history, 2),
      reward: (all: Experience[]) => {
        seen.push(all.length);
        return 0.75;
      },
    });
    assert.deepEqual(
      exps.map((e) => e.eid.step),
      [0, 1, 1, 2],
    );
    assert.deepEqual(seen, [4]);
    for (const e of exps) {
      assert.equal(e.reward, 0.75);
      assert.deepEqual(e.metrics, { actual_env_steps: 3 });
    }
    // Step 2's prompt is the whole history so far under the chat template; its messages end with its answer.
    const last = exps[3];
    const rendered = pretrained.tokenizer.applyChatTemplate(last.messages!.slice(0, -1), { addGenerationPrompt: true });
    assert.deepEqual(
      last.tokens.slice(0, last.promptLength),
      pretrained.tokenizer.encode(rendered, { addSpecialTokens: false }),
    );
    assert.deepEqual(last.messages!.slice(-2), [
      { role: 'user', content: 'step 2' },
      { role: 'assistant', content: last.responseText },
    ]);
    assert.deepEqual(history.extractExperienceFromHistory(), [], 'extraction cleared the history');
  });

  test('StepWiseReward: each step scored on its own experiences; no actual_env_steps', async () => {
    const history = new HistoryModel(model());
    const exps = await runStepWiseReward(history, {
      ...agent(history, 9, 3),
      reward: (stepExps, k) => 10 * k + stepExps.length,
    });
    assert.deepEqual(
      exps.map((e) => [e.eid.step, e.reward]),
      [
        [0, 1],
        [1, 12],
        [1, 12],
        [2, 21],
      ],
    );
    assert.ok(exps.every((e) => e.metrics === undefined));
  });

  test("a response cut by max_tokens does not end the episode (Trinity's recorded calls carry no truncation)", async () => {
    const history = new HistoryModel(model({ maxResponseTokens: 1 }));
    const exps = await runRewardPropagation(history, { ...agent(history, 9, 3), reward: () => 1 });
    assert.ok(exps.some((e) => e.truncated));
    assert.deepEqual(
      exps.map((e) => e.eid.step),
      [0, 1, 1, 2],
    );
  });

  test('through the explorer: runs numbered, rollout metrics reduced per episode, samples with the conversation', async () => {
    let calls = 0;
    registerWorkflow('test_step_wise_counter', (ctx) => ({
      repeatable: false,
      run: async () => {
        const history = ctx.agents!.historyModel();
        // Run 0 takes 3 steps, run 1 one step; each step's experience carries a metric equal to its step.
        const steps = calls++ % 2 === 0 ? 3 : 1;
        const exps = await ctx.agents!.runRewardPropagation(history, {
          ...agent(history, steps - 1, steps),
          reward: () => 0,
        });
        for (const e of exps) e.metrics = { ...e.metrics, step_index: e.eid.step };
        return exps;
      },
    }));
    const explorer = new Explorer(model(), {
      maxRetryTimes: 0,
      createReward: () => {
        throw new Error('unused');
      },
      samplesPerStep: 8,
      log: () => {},
    });
    const out = await explorer.explore(
      4,
      [{ ...workflowTask(), workflow: 'test_step_wise_counter', repeatTimes: 2 }],
      new ExperiencePipeline([], undefined),
    );
    // Run 0: steps 0, 1, 1, 2 (four calls); run 1: step 0.
    assert.deepEqual(
      out.experiences.map((e) => `${e.eid.run}/${e.eid.step}`),
      ['0/0', '0/1', '0/1', '0/2', '1/0'],
    );
    // Per episode first: run 0's step_index mean (0+1+1+2)/4 = 1, run 1's 0; then over episodes: 0.5 (per
    // experience it would be 0.8). actual_env_steps: (3 + 1) / 2.
    assert.equal(out.metrics['rollout/step_index/mean'], 0.5);
    assert.equal(out.metrics['rollout/actual_env_steps/mean'], 2);
    const s = out.samples[0];
    assert.equal(s.run, 0);
    assert.equal(s.step, 0);
    assert.deepEqual(s.messages![0], { role: 'system', content: 'Count.' });
  });
});
