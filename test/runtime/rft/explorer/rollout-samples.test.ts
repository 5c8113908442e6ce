/**
 * The explorer's rollout records of a step: single-turn ones spread over the step; multi-turn ones a whole task group
 * at a time (the dashboard sets a task's runs side by side), each with its group, numeric info, truncation, the
 * advantage the pipeline gave it (GRPO's, from the runtime's own advantage function) and its tokens' texts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { grpoAdvantage } from '../../../../runtime/rft/algorithm/advantage/grpo';
import { advantagesByUid, sampleRollouts } from '../../../../runtime/rft/explorer/rollout-samples';
import type { Experience } from '../../../../runtime/rft/experience';

/** An experience of task `task`, run `run`: prompt [1, 2], response [3, 4, 5] with the middle token not trained. */
function exp(task: number, run: number, reward: number, multiTurn: boolean): Experience {
  return {
    eid: { batch: 3, task, run, step: 0, suffix: `${task}${run}` },
    tokens: [1, 2, 3, 4, 5],
    promptLength: 2,
    reward,
    actionMask: [1, 0, 1],
    promptText: 'p',
    responseText: 'r',
    ...(multiTurn
      ? {
          messages: [
            { role: 'user' as const, content: 'go' },
            { role: 'assistant' as const, content: 'ok' },
          ],
          metrics: { env_steps: run + 1 },
          truncated: run === 1,
        }
      : {}),
  };
}

describe('rollout records of a step', () => {
  test('multi-turn records come a whole task group at a time, with group, info, truncation, advantage, token texts', () => {
    const rewards = [1, 0, 0, 1];
    const all = [0, 1, 2].flatMap((task) => rewards.map((r, run) => exp(task, run, r, true)));
    const { exps } = grpoAdvantage(
      all.map((e) => ({ ...e, reward: e.reward!, actionMask: e.actionMask! })),
      { epsilon: 1e-6 },
    );
    const samples = sampleRollouts(all, 4, {
      decode: (ids) => `<${ids.join(',')}>`,
      advantages: advantagesByUid(exps),
    });
    assert.deepEqual(
      samples.map((s) => `${s.task}#${s.run}`),
      ['3/0#0', '3/0#1', '3/0#2', '3/0#3'],
    );
    // GRPO by hand: mean 0.5, Bessel std sqrt(1/3); A = ±0.5 / (0.57735 + 1e-6).
    const a = 0.5 / (Math.sqrt(1 / 3) + 1e-6);
    samples.forEach((s, i) => assert.ok(Math.abs(s.advantage! - (rewards[i] ? a : -a)) < 1e-12, `run ${i}`));
    assert.deepEqual(samples[1].tokenTexts, ['<3>', '<4>', '<5>']);
    assert.deepEqual(samples[1].metrics, { env_steps: 2 });
    assert.equal(samples[1].truncated, true);
    assert.equal(samples[0].truncated, undefined);
  });

  test('single-turn records stay spread over the step, without episode fields', () => {
    const all = [0, 1, 2].flatMap((task) => [0, 1, 2, 3].map((run) => exp(task, run, 0, false)));
    const samples = sampleRollouts(all, 4, {});
    assert.equal(samples.length, 4);
    assert.deepEqual(
      samples.map((s) => Object.keys(s).sort()),
      samples.map(() => ['prompt', 'response', 'reward']),
    );
  });
});
