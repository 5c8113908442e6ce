/**
 * Concurrent episodes whose turns go to the engine as one batched call, each continuing its own KV cache: on the
 * real tiny chat model (ChatML, byte tokenizer) and Trinity's frozen_lake_workflow, greedy episodes run four at once
 * equal the one-at-a-time, recompute-every-turn path token for token, with log-probs within 1e-4 (float32, the
 * cached keys against recomputed ones); sampled episodes are the same for the same seed however they are batched;
 * and every cache is freed when its episode ends (tf.memory back to its baseline).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../../runtime/engine/backend';
import { generateContinued, keepsRowCaches, RowCache } from '../../../../runtime/engine/continued-generation';
import { GenerationStoppedError } from '../../../../runtime/engine/sampling';
import type { Pretrained } from '../../../../runtime/engine/pretrained';
import type { Experience } from '../../../../runtime/rft/experience';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import type { ExplorerTask } from '../../../../runtime/rft/explorer/explore-step';
import type { RolloutArgs, RolloutModel } from '../../../../runtime/rft/models/rollout-model';
import { frozenLakeWorkflow } from '../../../../runtime/rft/workflows/frozen-lake';
import { TurnBatcher } from '../../../../runtime/rft/workflows/multi-turn/batched-turns';
import { completionTurnSampler, type TurnSampler } from '../../../../runtime/rft/workflows/multi-turn/turn-sampler';
import {
  explorerWithoutRewards,
  loadByteChatModel,
  rolloutModelOf,
  workflowTask,
} from '../../../helpers/byte-chat-model';

const TURN_TOKENS = 6;
const EPISODES = 4;
const LOGPROB_TOL = 1e-4;

let pretrained: Pretrained;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(8, 4096);
});

/** Each turn at most TURN_TOKENS (FrozenLake lets a turn take the whole budget left; the random model never stops). */
function capped(inner: TurnSampler): TurnSampler {
  return {
    sampleTurn: (c, a) => inner.sampleTurn(c, { ...a, max_tokens: Math.min(a.max_tokens!, TURN_TOKENS) }),
    close: () => inner.close(),
  };
}

/** Episode i plays the random 3×3 map of seed 100 + i, two turns at most. */
function episode(model: RolloutModel, i: number, temperature: number, sampler: () => TurnSampler) {
  return frozenLakeWorkflow({
    model,
    task: workflowTask({
      raw: { seed: 100 + i, size: 3, p: 0.8 },
      rolloutArgs: { temperature },
      workflowArgs: { agent_max_steps: 2 },
    }),
    repeatTimes: 1,
    runIdBase: i,
    createReward: () => {
      throw new Error('no reward function');
    },
    auxiliaryModels: [],
    turnSampler: () => capped(sampler()),
  });
}

async function concurrently(temperature: number, reuseCache: boolean, seed = 5): Promise<Experience[]> {
  const model = rolloutModelOf(pretrained, {}, seed);
  const batcher = new TurnBatcher(model, { reuseCache });
  try {
    const runs = await Promise.all(
      Array.from({ length: EPISODES }, (_, i) => episode(model, i, temperature, () => batcher.open()).run()),
    );
    return runs.map((r) => r[0]);
  } finally {
    batcher.dispose();
  }
}

/** One episode after another: each turn through `RolloutModel.complete` (the whole history prefilled again). */
async function oneAtATime(temperature: number): Promise<Experience[]> {
  const model = rolloutModelOf(pretrained, {}, 5);
  const out: Experience[] = [];
  for (let i = 0; i < EPISODES; i++)
    out.push((await episode(model, i, temperature, () => completionTurnSampler(model)).run())[0]);
  return out;
}

/** One episode after another through the batcher: every batch holds one turn. */
async function batchesOfOne(temperature: number): Promise<Experience[]> {
  const model = rolloutModelOf(pretrained, {}, 5);
  const batcher = new TurnBatcher(model);
  const out: Experience[] = [];
  for (let i = 0; i < EPISODES; i++) out.push((await episode(model, i, temperature, () => batcher.open()).run())[0]);
  return out;
}

/** One explorer step of FrozenLake tasks (a 3×3 map per seed), `repeats` episodes each, at `runnersPerModel`. */
async function lakeStep(runnersPerModel: number, seeds: number[], repeats: number): Promise<Experience[]> {
  const ex = explorerWithoutRewards(rolloutModelOf(pretrained, {}, 5), runnersPerModel);
  const tasks: ExplorerTask[] = seeds.map((seed) => ({
    ...workflowTask({
      raw: { seed, size: 3, p: 0.8 },
      // An episode budget of 10 tokens: one sampled turn of the random model, then the budget ends it.
      rolloutArgs: { temperature: 1, max_response_tokens: 10 } as RolloutArgs,
      workflowArgs: { agent_max_steps: 2 },
    }),
    workflow: 'frozen_lake_workflow',
    repeatTimes: repeats,
  }));
  return (await ex.explore(1, tasks, new ExperiencePipeline([], undefined, 'main'))).experiences;
}

function assertSameEpisodes(got: Experience[], want: Experience[]): void {
  assert.equal(got.length, want.length);
  got.forEach((g, i) => {
    assert.deepEqual(g.tokens, want[i].tokens, `episode ${i}: tokens`);
    assert.deepEqual(g.actionMask, want[i].actionMask, `episode ${i}: action mask`);
    assert.deepEqual(g.messages, want[i].messages, `episode ${i}: messages`);
    const lp = g.logprobs!;
    want[i].logprobs!.forEach((w, t) =>
      assert.ok(Math.abs(lp[t] - w) <= LOGPROB_TOL, `episode ${i} token ${t}: log-prob ${lp[t]} vs ${w}`),
    );
  });
}

describe('batched turns with the KV cache following each episode', () => {
  test('the engine keeps caches here (wasm with the native addon)', () => {
    assert.ok(keepsRowCaches(pretrained.model), 'the native decoder must run for the cache path to be tested');
  });

  test('greedy: four episodes at once equal one at a time, recomputing every turn, token for token', async () => {
    const want = await oneAtATime(0);
    assert.ok(
      want.every((e) => (e.messages?.length ?? 0) >= 5),
      'every episode has at least two turns',
    );
    assertSameEpisodes(await concurrently(0, true), want);
    assertSameEpisodes(await concurrently(0, false), want);
  });

  test('sampling: the same seed gives the same episodes, batched or not, cached or not', async () => {
    const a = await concurrently(1, true);
    assertSameEpisodes(await batchesOfOne(1), a);
    assertSameEpisodes(await concurrently(1, false), a);
  });

  test("a turn continues the episode's cache: only the new tokens are fed, and a wrong cache changes the answer", async () => {
    const model = pretrained.model;
    const params = { temperature: 0, padTokenId: pretrained.tokenizer.padTokenId };
    const context = pretrained.tokenizer.encode('<|im_start|>user\nGo left.<|im_end|>\n<|im_start|>assistant\n', {
      addSpecialTokens: false,
    });
    const [first] = await generateContinued(model, [{ context, cache: null, maxNewTokens: 5, seed: 1 }], params);
    const cache = first.cache!;
    assert.deepEqual(cache.tokens, [...context, ...first.completion.tokens.slice(0, 4)]);
    assert.equal(cache.keys[0].shape[2], cache.length);
    const next = [...context, ...first.completion.tokens, ...context];
    // A copy of the cache with its values zeroed: a turn that recomputed the prefix would not notice.
    const zeroed = new RowCache(
      cache.keys.map((k) => tf.clone(k)),
      cache.values.map((v) => tf.zerosLike(v)),
      cache.tokens,
    );
    const [cached] = await generateContinued(model, [{ context: next, cache, maxNewTokens: 5, seed: 2 }], params);
    const [fresh] = await generateContinued(model, [{ context: next, cache: null, maxNewTokens: 5, seed: 2 }], params);
    const [wrong] = await generateContinued(
      model,
      [{ context: next, cache: zeroed, maxNewTokens: 5, seed: 2 }],
      params,
    );
    for (const r of [cached, fresh, wrong]) r.cache!.dispose();
    assert.deepEqual(cached.completion.tokens, fresh.completion.tokens);
    cached.completion.logprobs.forEach((l, t) => assert.ok(Math.abs(l - fresh.completion.logprobs[t]) <= LOGPROB_TOL));
    assert.ok(
      wrong.completion.logprobs.some((l, t) => Math.abs(l - fresh.completion.logprobs[t]) > 1e-3),
      'the zeroed cache was used',
    );
  });

  test("a row with little room left ends at the model's positions while the others go on (no position past the RoPE tables)", async () => {
    const small = loadByteChatModel(8, 64);
    const params = { temperature: 0, padTokenId: small.tokenizer.padTokenId, stopTokenIds: [] };
    const short = small.tokenizer.encode('<|im_start|>user\nGo.<|im_end|>\n', { addSpecialTokens: false });
    const long = Array.from({ length: 60 }, (_, i) => short[i % short.length]);
    const rows = [
      { context: long, cache: null, maxNewTokens: 20, seed: 1 },
      { context: short, cache: null, maxNewTokens: 20, seed: 2 },
    ];
    const both = await generateContinued(small.model, rows, params);
    const [alone] = await generateContinued(small.model, [rows[1]], params);
    for (const r of [...both, alone]) r.cache?.dispose();
    assert.equal(both[0].completion.tokens.length, 64 - 60);
    assert.deepEqual(both[1].completion.tokens, alone.completion.tokens);
    assert.equal(both[1].completion.tokens.length, 20);
  });

  test("the explorer runs a task's episodes at once (runner_per_model) and gets the same experiences", async () => {
    const one = await lakeStep(1, [3], EPISODES);
    const atOnce = await lakeStep(EPISODES, [3], EPISODES);
    assert.equal(one.length, EPISODES);
    assert.deepEqual(
      atOnce.map((e) => [e.eid.run, e.tokens]),
      one.map((e) => [e.eid.run, e.tokens]),
    );
    assert.ok(new Set(one.map((e) => e.tokens.join())).size > 1, 'the runs sampled different episodes');
  });

  test("the episodes of all a step's tasks go at once and sample what they sample one task after another", async () => {
    const one = await lakeStep(1, [3, 4], 2);
    const atOnce = await lakeStep(EPISODES, [3, 4], 2);
    assert.equal(one.length, 4);
    assert.deepEqual(
      atOnce.map((e) => [e.eid.task, e.eid.run, e.tokens]),
      one.map((e) => [e.eid.task, e.eid.run, e.tokens]),
    );
  });

  test("a deadline that comes closer while a turn decodes (over-rollout's cut) ends it at the next decode step", async () => {
    const ids = pretrained.tokenizer.encode('<|im_start|>assistant\n', { addSpecialTokens: false });
    const baseline = tf.memory().numTensors;
    const batcher = new TurnBatcher(rolloutModelOf(pretrained, {}, 5));
    const started = performance.now();
    // No deadline for the first 100 ms, then one that has come (the cut is set between decode steps, as a task that
    // comes back sets it); 2,000 tokens take far longer, and with no turn left the batch stops decoding.
    const sampler = batcher.open(() => (performance.now() - started >= 100 ? started + 100 : null));
    const turn = sampler.sampleTurn(ids, { min_tokens: 2000, max_tokens: 2000 });
    await assert.rejects(turn, GenerationStoppedError);
    const ms = performance.now() - started;
    assert.ok(ms >= 100 && ms < 1000, `took ${ms} ms`);
    await new Promise((r) => setImmediate(r));
    batcher.dispose();
    assert.equal(tf.memory().numTensors, baseline, 'the stopped batch freed its rows');
  });

  test('every cache is freed when its episode ends', async () => {
    const ids = pretrained.tokenizer.encode('<|im_start|>assistant\n', { addSpecialTokens: false });
    // Warm: the model's lazily made decoding tensors (RoPE tables) stay.
    (
      await generateContinued(pretrained.model, [{ context: ids, cache: null, maxNewTokens: 2, seed: 0 }], {})
    )[0].cache?.dispose();
    const baseline = tf.memory().numTensors;
    const model = rolloutModelOf(pretrained, {}, 5);
    const batcher = new TurnBatcher(model);
    await Promise.all(Array.from({ length: EPISODES }, (_, i) => episode(model, i, 1, () => batcher.open()).run()));
    assert.equal(tf.memory().numTensors, baseline);
    // An episode that never closed (its workflow threw away the sampler) is freed with the batcher.
    const open = batcher.open();
    await open.sampleTurn(ids, { max_tokens: 3 });
    assert.ok(tf.memory().numTensors > baseline);
    batcher.dispose();
    assert.equal(tf.memory().numTensors, baseline);
  });
});
