/**
 * `frozen_lake_workflow` on a real model and chat template: Trinity's system prompt and per-turn user messages (step
 * counter, invalid-move hint exactly when the grid did not change, steps remaining), the episode's end at the goal,
 * in a hole, after agent_max_steps or at its token budget (last user message dropped, response_truncated, reward 0),
 * and `info`/metrics env_steps, env_done, test_score. Turns are the model's own samples, or chosen texts scored by
 * the model (teacher-forced) where a test needs particular moves.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import type { Pretrained } from '../../../../runtime/engine/pretrained';
import { forcedTurns, loadByteChatModel, rolloutModelOf, workflowTask } from '../../../helpers/byte-chat-model';
import type { Experience } from '../../../../runtime/rft/experience';
import {
  FROZEN_LAKE_INVALID_HINT,
  FROZEN_LAKE_SYSTEM_PROMPT,
  FrozenLakeGame,
  parseFrozenLakeAction,
} from '../../../../runtime/rft/environments/frozen-lake/frozen-lake-game';
import { generateRandomMap } from '../../../../runtime/rft/environments/frozen-lake/random-map';
import type { RolloutLimits } from '../../../../runtime/rft/models/rollout-model';
import { frozenLakeWorkflow } from '../../../../runtime/rft/workflows/frozen-lake';
import { completionTurnSampler, type TurnSampler } from '../../../../runtime/rft/workflows/multi-turn/turn-sampler';
import type { WorkflowContext } from '../../../../runtime/rft/workflows/types';

const MAP = ['SFF', 'FHF', 'FFG'];

let pretrained: Pretrained;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(8, 4096);
});

function context(
  opts: {
    workflowArgs?: Record<string, unknown>;
    raw?: Record<string, unknown>;
    rollout?: object;
    forced?: string[];
    turnTokens?: number;
  } = {},
  limits: Partial<RolloutLimits> = {},
): WorkflowContext {
  const model = rolloutModelOf(pretrained, { maxResponseTokens: 8, ...limits }, 3);
  const forced = opts.forced;
  // The model's own turns, at most `turnTokens` each (Trinity lets a turn take the episode's whole budget left).
  const ownTurns = (): TurnSampler => {
    const inner = completionTurnSampler(model);
    return {
      sampleTurn: (c, a) => inner.sampleTurn(c, { ...a, max_tokens: Math.min(a.max_tokens!, opts.turnTokens!) }),
      close: () => inner.close(),
    };
  };
  const turnSampler = forced ? () => forcedTurns(model, forced) : opts.turnTokens ? ownTurns : undefined;
  return {
    model,
    task: workflowTask({
      raw: opts.raw ?? { seed: 1 },
      rolloutArgs: { temperature: 1, ...opts.rollout },
      workflowArgs: opts.workflowArgs ?? { desc: MAP, agent_max_steps: 4 },
    }),
    repeatTimes: 1,
    runIdBase: 2,
    createReward: () => {
      throw new Error('no reward function');
    },
    auxiliaryModels: [],
    turnSampler,
  };
}

async function play(ctx: WorkflowContext): Promise<Experience> {
  const exps = await frozenLakeWorkflow(ctx).run();
  assert.equal(exps.length, 1);
  return exps[0];
}

/** Trinity's user message for turn k (workflow.py run_async). */
function userText(observation: string, k: number, hint: boolean, remaining: number): string {
  return (
    `Current Observation (${k}): \n${observation}\nYou have not achieved the goal, P has not reached G yet. Please give the next action.` +
    (hint ? `\n${FROZEN_LAKE_INVALID_HINT}` : '') +
    (remaining > 0 ? `\nThe maximum number of steps remaining is ${remaining}.` : '')
  );
}

describe('frozen_lake_workflow', () => {
  test("the model's own turns: Trinity's messages, the hint exactly when the grid did not change", async () => {
    const exp = await play(context({ turnTokens: 12 }));
    const messages = exp.messages!;
    assert.deepEqual(messages[0], { role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT });
    // Replay the answers on the game to know what each user message must say.
    const game = new FrozenLakeGame(MAP, false, 1);
    let obs = game.reset();
    let last: string | null = null;
    let k = 0;
    for (let i = 1; i < messages.length; i += 2) {
      assert.deepEqual(messages[i], { role: 'user', content: userText(obs, k, k > 0 && last === obs, 4 - k) });
      assert.equal(messages[i + 1].role, 'assistant');
      const r = game.step(parseFrozenLakeAction(messages[i + 1].content));
      last = obs;
      obs = r.observation;
      k++;
      if (r.done) break;
    }
    assert.equal(messages.length, 1 + 2 * k);
    assert.equal(exp.info!.env_steps, k);
    assert.deepEqual(exp.metrics, { env_steps: k, env_done: exp.info!.env_done, test_score: exp.reward });
    assert.equal(exp.eid.run, 2);
    assert.equal(exp.truncated, false);
    assert.equal(exp.turnRewards!.length, k);
    assert.equal(exp.actionMask!.filter((m) => m === 1).length > 0, true);
  });

  test('reaching the goal: reward 1, env_done 1, the step rewards per turn; a wall bump gets the hint', async () => {
    const exp = await play(
      context({
        forced: ['```Up```', 'I go ```right```', '```Right```', '```2```', '``` Down ```'],
        workflowArgs: { desc: MAP },
      }),
    );
    const users = exp.messages!.filter((m) => m.role === 'user').map((m) => m.content);
    assert.equal(users.length, 5);
    assert.ok(users[1].includes(FROZEN_LAKE_INVALID_HINT), 'Up at the top edge leaves the grid unchanged');
    assert.ok(!users[2].includes(FROZEN_LAKE_INVALID_HINT));
    assert.equal(exp.reward, 1);
    assert.deepEqual(exp.turnRewards, [0, 0, 0, 0, 1]);
    assert.deepEqual(exp.info, { env_steps: 5, env_done: 1, test_score: 1 });
    assert.equal(exp.messages![exp.messages!.length - 1].role, 'assistant');
  });

  test('a hole ends the episode with reward 0 and env_done 1', async () => {
    const exp = await play(context({ forced: ['```Right```', '```Down```'] }));
    assert.deepEqual(exp.info, { env_steps: 2, env_done: 1, test_score: 0 });
    assert.equal(exp.reward, 0);
  });

  test('agent_max_steps turns at most; the steps-remaining line counts down', async () => {
    const exp = await play(
      context({ forced: ['```Up```', '```Up```'], workflowArgs: { desc: MAP, agent_max_steps: 2 } }),
    );
    assert.deepEqual(exp.info, { env_steps: 2, env_done: 0, test_score: 0 });
    const users = exp.messages!.filter((m) => m.role === 'user').map((m) => m.content);
    assert.match(users[0], /remaining is 2\.$/);
    assert.match(users[1], /remaining is 1\.$/);
  });

  test('the token budget: the message that would overrun it is dropped, the episode response_truncated', async () => {
    const exp = await play(context({ forced: ['```Up```', '```Up```'], rollout: { max_response_tokens: 150 } }));
    // The first turn's 9 tokens and the next user message's ~170 template tokens pass 150: that message goes.
    assert.deepEqual(exp.info, { env_steps: 1, env_done: 0, test_score: 0 });
    assert.equal(exp.truncated, true);
    assert.equal(exp.reward, 0);
    assert.deepEqual(
      exp.messages!.map((m) => m.role),
      ['system', 'user', 'assistant'],
    );
    assert.equal(exp.tokens.length - exp.promptLength, 9);
  });

  test("max_model_len: a turn samples what it leaves; a next prompt that does not fit fails the run with vLLM's words", async () => {
    const prompt = pretrained.tokenizer.encode(
      pretrained.tokenizer.applyChatTemplate(
        [
          { role: 'system', content: FROZEN_LAKE_SYSTEM_PROMPT },
          { role: 'user', content: userText(new FrozenLakeGame(MAP, false, 1).reset(), 0, false, 4) },
        ],
        { addGenerationPrompt: true },
      ),
      { addSpecialTokens: false },
    ).length;
    // The first turn (9 tokens) fits; the second user message's ~170 template tokens do not.
    await assert.rejects(
      play(context({ forced: ['```Up```', '```Up```'] }, { maxModelLen: prompt + 50 })),
      new RegExp(`The decoder prompt \\(length \\d+\\) is longer than the maximum model length of ${prompt + 50}\\.`),
    );
    // A turn is capped where max_model_len ends; the conversation is then cut at max_model_len − 1 with reward 0.
    const ctx = context(
      { turnTokens: 12, workflowArgs: { desc: MAP, agent_max_steps: 1 } },
      { maxModelLen: prompt + 3 },
    );
    const exp = await play(ctx);
    assert.equal(exp.tokens.length, prompt + 2);
    assert.equal(exp.truncated, true);
    assert.equal(exp.reward, 0);
  });

  test("without desc, the row's size, p and seed draw Trinity's map", async () => {
    const exp = await play(
      context({ raw: { size: 4, p: 0.8, seed: 7 }, workflowArgs: { agent_max_steps: 1 }, forced: ['x'] }),
    );
    const rows = generateRandomMap(4, 0.8, 7, 8).rows;
    assert.equal(exp.messages![1].content, userText(new FrozenLakeGame(rows, false, 7).reset(), 0, false, 1));
  });

  test('bad arguments are refused, naming the key', () => {
    assert.throws(
      () => frozenLakeWorkflow(context({ workflowArgs: { agent_max_steps: 'ten' } })),
      /workflow_args\.agent_max_steps/,
    );
    assert.throws(
      () => frozenLakeWorkflow(context({ raw: { size: 'big' }, workflowArgs: {} })),
      /task's `size` is not a number/,
    );
    assert.throws(
      () => frozenLakeWorkflow(context({ workflowArgs: { reward_fn_type: 'openjudge_reward' } })),
      /reward_fn_type/,
    );
  });
});
