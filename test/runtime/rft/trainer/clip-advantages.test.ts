/**
 * clipb and clipv through the real trainer: the trainer hands them the current policy's entropies (and clipv its
 * recomputed log-probs and `necs`), and the loss then applies to the tokens they keep. Each case picks `mu` so that
 * exactly one negative-advantage token falls outside the band, computed here in float64 from the model's own logits
 * (one unpadded forward per row), and checks the step equals a grpo_verl step on the same batch with that one token
 * masked out — and differs from one with nothing masked.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel } from '../../../../runtime/engine/lm/checkpoint';
import type { Experience } from '../../../../runtime/rft/experience';
import { RftTrainer, type TrainerOptions } from '../../../../runtime/rft/trainer/train-step';
import { tinyQwen2Config } from '../../../helpers/tiny-qwen2';

const cfg = tinyQwen2Config({ vocabSize: 12 });
const SEED = 3;
const TEMPERATURE = 0.8;

/** Two groups of two rollouts (rewards differ within each, so every response token has a non-zero advantage). */
function experiences(actionMasks?: number[][]): Experience[] {
  const rows: [number[], number, number[], number, number][] = [
    [[3, 4, 5, 6, 7, 8], 3, [-2, -2.5, -1], 1, 0],
    [[3, 4, 5, 9, 2], 3, [-1.8, -2.2], 0, 0],
    [[9, 10, 6, 7, 11], 2, [-2, -3, -2.4], 0, 1],
    [[9, 10, 2, 3], 2, [-1.5, -2.6], 1, 1],
  ];
  return rows.map(([tokens, promptLength, logprobs, reward, task], i) => ({
    eid: { batch: 1, task, run: i, step: 0, suffix: String(i) },
    tokens,
    promptLength,
    logprobs,
    reward,
    ...(actionMasks ? { actionMask: actionMasks[i] } : {}),
  }));
}

function options(advantage: string, args: Record<string, unknown>): TrainerOptions {
  return {
    algorithm: {
      policyLossFn: 'ppo',
      policyLossFnArgs: null,
      klLossFn: 'none',
      klLossFnArgs: null,
      entropyLossFn: 'none',
      entropyLossFnArgs: null,
      lossAggMode: 'token-mean',
      useReference: false,
      trainerAdvantageFn: advantage,
      trainerAdvantageFnArgs: args,
    },
    schedule: { lr: 1e-2, style: 'constant', warmupSteps: 0, totalSteps: 10 },
    betas: [0.9, 0.999],
    weightDecay: 0,
    gradClip: 1,
    ppoEpochs: 1,
    temperature: TEMPERATURE,
    padTokenId: 0,
  };
}

interface TokenSignals {
  row: number;
  t: number;
  advantageSign: number;
  /** log p of the sampled token, the entropy and N = H·Σp² + Σp²·log p, in float64 at the temperature. */
  logprob: number;
  entropy: number;
  nec: number;
  rolloutLogprob: number;
}

/** Every response token's signals from the model's logits, one unpadded row at a time, in float64. */
async function signals(): Promise<TokenSignals[]> {
  const model = initModel(cfg, SEED);
  const out: TokenSignals[] = [];
  const exps = experiences();
  for (const [row, e] of exps.entries()) {
    const ids = tf.tensor2d([e.tokens.slice(0, -1)], undefined, 'int32');
    const logits = tf.tidy(() => model.logits(model.forward(ids).hidden));
    const z = ((await logits.array()) as number[][][])[0];
    logits.dispose();
    ids.dispose();
    const group = exps.filter((x) => x.eid.task === e.eid.task).map((x) => x.reward!);
    const mean = group.reduce((a, b) => a + b, 0) / group.length;
    for (let t = 0; t < e.tokens.length - e.promptLength; t++) {
      const pos = e.promptLength - 1 + t;
      const zs = z[pos].map((v) => v / TEMPERATURE);
      const m = Math.max(...zs);
      const lse = m + Math.log(zs.reduce((a, v) => a + Math.exp(v - m), 0));
      const logp = zs.map((v) => v - lse);
      const p = logp.map(Math.exp);
      const entropy = -p.reduce((a, pi, i) => a + pi * logp[i], 0);
      const sumP2 = p.reduce((a, pi) => a + pi * pi, 0);
      const p2logp = p.reduce((a, pi, i) => a + pi * pi * logp[i], 0);
      out.push({
        row,
        t,
        advantageSign: Math.sign(e.reward! - mean),
        logprob: logp[e.tokens[pos + 1]],
        entropy,
        nec: entropy * sumP2 + p2logp,
        rolloutLogprob: e.logprobs![t],
      });
    }
  }
  model.dispose();
  return out;
}

/** Population mean and std over every response token (the mask is whole here). */
function meanStd(xs: number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, std: Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length) };
}

/** `mu` halfway between the worst and second-worst negative-advantage token's score, and the worst token. */
function oneOut(tokens: TokenSignals[], score: (s: TokenSignals) => number): { mu: number; out: TokenSignals } {
  const neg = tokens.filter((s) => s.advantageSign < 0).sort((a, b) => score(b) - score(a));
  const [first, second] = [score(neg[0]), score(neg[1])];
  assert.ok(first - second > 1e-3, `a clear margin between the two worst tokens (${first} vs ${second})`);
  return { mu: (first + second) / 2, out: neg[0] };
}

/** One step of a fresh trainer on the batch; its actor loss metrics. */
async function step(advantage: string, args: Record<string, unknown>, masks?: number[][]): Promise<number[]> {
  const trainer = new RftTrainer(initModel(cfg, SEED), undefined, options(advantage, args));
  const m = await trainer.trainStep(experiences(masks));
  const out = [m['actor/pg_loss'], m['actor/grad_norm']];
  trainer.model.dispose();
  trainer.dispose();
  return out;
}

/** Every response token kept but `out`. */
function masksWithout(out: TokenSignals): number[][] {
  return experiences().map((e, row) =>
    Array.from({ length: e.tokens.length - e.promptLength }, (_, t) => (row === out.row && t === out.t ? 0 : 1)),
  );
}

function assertClose(actual: number[], expected: number[], what: string): void {
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= 1e-5, `${what}: ${actual} vs ${expected}`));
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('clipb and clipv through the trainer', () => {
  test('clipb drops the negative-advantage token whose p·(H + ℓ_rollout) is furthest below the mean', async () => {
    const tokens = await signals();
    const S = tokens.map((s) => Math.exp(s.rolloutLogprob) * (s.entropy + s.rolloutLogprob));
    const { mean, std } = meanStd(S);
    // Kept where (S − E)/σ ≥ −mu: the lowest score is the most negative z.
    const { mu, out } = oneOut(
      tokens,
      (s) => -(Math.exp(s.rolloutLogprob) * (s.entropy + s.rolloutLogprob) - mean) / std,
    );
    const clipped = await step('clipb', { mu });
    assertClose(clipped, await step('grpo_verl', {}, masksWithout(out)), 'clipb = grpo_verl without that token');
    const whole = await step('grpo_verl', {});
    assert.ok(Math.abs(clipped[0] - whole[0]) > 1e-6, 'the token mattered');
  });

  test('clipv drops the negative-advantage token with the largest N − p·(H + ℓ), ℓ recomputed', async () => {
    const tokens = await signals();
    const D = tokens.map((s) => s.nec - Math.exp(s.logprob) * (s.entropy + s.logprob));
    const { std } = meanStd(D);
    // Kept where D ≤ mu·σ_D (not centred); max_frac 1 keeps the cap out of the way.
    const { mu, out } = oneOut(tokens, (s) => (s.nec - Math.exp(s.logprob) * (s.entropy + s.logprob)) / std);
    const clipped = await step('clipv', { mu, max_frac: 1 });
    assertClose(clipped, await step('grpo_verl', {}, masksWithout(out)), 'clipv = grpo_verl without that token');
    const whole = await step('grpo_verl', {});
    assert.ok(Math.abs(clipped[0] - whole[0]) > 1e-6, 'the token mattered');
  });
});
