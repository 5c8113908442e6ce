/**
 * PPO's critic in the trainer: values aligned with response tokens, GAE advantages from them, the clipped value loss
 * going down on a fixed batch, critic warm-up holding the actor still, and the KL penalty on rewards.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel } from '../../../../runtime/engine/lm/checkpoint';
import { withValueHead } from '../../../../runtime/engine/lm/value-head';
import type { Experience } from '../../../../runtime/rft/experience';
import { RftTrainer, type CriticSetup, type TrainerOptions } from '../../../../runtime/rft/trainer/train-step';
import { tinyQwen2Config } from '../../../helpers/tiny-qwen2';

const cfg = tinyQwen2Config({ vocabSize: 12 });
const constant = (lr: number) => ({ lr, style: 'constant' as const, warmupSteps: 0, totalSteps: 100 });

function batch(): Experience[] {
  // Two prompts of different lengths (left padding in the batch), responses of 3 and 2 tokens.
  return [
    {
      eid: { batch: 1, task: 0, run: 0, step: 0, suffix: 'a' },
      tokens: [3, 4, 5, 6, 7, 8],
      promptLength: 3,
      logprobs: [-2, -2, -2],
      reward: 1,
    },
    {
      eid: { batch: 1, task: 1, run: 0, step: 0, suffix: 'b' },
      tokens: [9, 10, 6, 7],
      promptLength: 2,
      logprobs: [-2, -2],
      reward: 0,
    },
  ];
}

function setup(warmup: number, klPenalty = 'none'): { trainer: RftTrainer; actorBefore: Float32Array } {
  const actor = initModel(cfg, 1);
  const reference = initModel(cfg, 1);
  const opts: TrainerOptions = {
    algorithm: {
      policyLossFn: 'ppo',
      policyLossFnArgs: null,
      klLossFn: 'none',
      klLossFnArgs: null,
      entropyLossFn: 'none',
      entropyLossFnArgs: null,
      lossAggMode: 'token-mean',
      useReference: true,
      trainerAdvantageFn: 'ppo',
      trainerAdvantageFnArgs: null,
    },
    schedule: constant(1e-2),
    betas: [0.9, 0.999],
    weightDecay: 0,
    gradClip: 1,
    ppoEpochs: 1,
    temperature: 1,
    padTokenId: 0,
  };
  const critic: CriticSetup = {
    model: withValueHead(initModel(cfg, 2), 3),
    schedule: constant(3e-2),
    betas: [0.9, 0.999],
    weightDecay: 0,
    gradClip: 1,
    ppoEpochs: 1,
    cliprangeValue: 0.5,
    lossAggMode: 'token-mean',
    warmupSteps: warmup,
    klPenaltyFn: klPenalty,
    klPenaltyFnArgs: { kl_coef: 0.1 },
  };
  return {
    trainer: new RftTrainer(actor, reference, opts, critic),
    actorBefore: actor.variables()[1].dataSync().slice() as Float32Array,
  };
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('PPO critic', () => {
  test('the value loss falls on a fixed batch, and veRL’s critic metrics are logged', async () => {
    const { trainer } = setup(0);
    const losses: number[] = [];
    let m: Record<string, number> = {};
    for (let i = 0; i < 25; i++) {
      m = await trainer.trainStep(batch());
      losses.push(m['critic/vf_loss']);
    }
    for (const k of [
      'critic/vf_loss',
      'critic/vf_clipfrac',
      'critic/vpred_mean',
      'critic/grad_norm',
      'critic/lr',
      'critic/returns/mean',
      'critic/values/mean',
      'critic/rewards/mean',
      'actor/pg_loss',
    ]) {
      assert.ok(Number.isFinite(m[k]), `${k} = ${m[k]}`);
    }
    assert.ok(losses[24] < losses[0] * 0.5, `vf_loss ${losses[0]} -> ${losses[24]}`);
    // Token-level rewards: the score sits on the last response token, so each row's sum is its reward.
    assert.equal(m['critic/rewards/max'], 1);
    assert.equal(m['critic/rewards/min'], 0);
    assert.equal(trainer.step, 25);
  });

  test('during critic warm-up the actor does not move but the step counts', async () => {
    const { trainer, actorBefore } = setup(2);
    const m1 = await trainer.trainStep(batch());
    assert.ok(!('actor/pg_loss' in m1));
    await trainer.trainStep(batch());
    assert.equal(trainer.step, 2);
    assert.deepEqual(trainer.model.variables()[1].dataSync(), actorBefore);
    const m3 = await trainer.trainStep(batch());
    assert.ok('actor/pg_loss' in m3);
    assert.notDeepEqual(trainer.model.variables()[1].dataSync(), actorBefore);
    trainer.restoreStep(7);
    assert.equal(trainer.step, 7);
  });

  test('a KL penalty lowers the token-level rewards by kl_coef · KL(old ‖ ref)', async () => {
    const { trainer } = setup(0, 'k1');
    const m = await trainer.trainStep(batch());
    // Rollout log-probs are −2 while the reference (same weights as the actor) gives about −ln 12 ≈ −2.48:
    // k1 = old − ref ≈ 0.48 per token, so rewards drop by about 0.1 · 0.48 per token.
    assert.ok(m['critic/kl'] > 0.3 && m['critic/kl'] < 0.7, `kl ${m['critic/kl']}`);
    assert.equal(m['critic/kl_coef'], 0.1);
    assert.ok(m['critic/rewards/max'] < 1 && m['critic/rewards/max'] > 0.7, `rewards max ${m['critic/rewards/max']}`);
  });
});
