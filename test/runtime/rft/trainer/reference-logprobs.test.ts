/**
 * Reference log-probs carried by experiences (computed by the explorer worker in `both` mode) are the quantity the
 * trainer computes itself, and the trainer uses them instead of its own reference forward when every row has them.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel } from '../../../../runtime/engine/lm/checkpoint';
import type { Experience } from '../../../../runtime/rft/experience';
import { padBatch } from '../../../../runtime/rft/trainer/batch';
import {
  attachReferenceLogprobs,
  batchReferenceLogprobs,
  carriedReferenceLogprobs,
} from '../../../../runtime/rft/trainer/reference-logprobs';
import { RftTrainer } from '../../../../runtime/rft/trainer/train-step';
import { KL_TEMPERATURE, klTrainerOptions, paddedExperiences } from '../../../helpers/kl-batch';
import { tinyQwen2Config } from '../../../helpers/tiny-qwen2';

const cfg = tinyQwen2Config({ vocabSize: 12 });
const TEMPERATURE = KL_TEMPERATURE;
const experiences = (): Experience[] => paddedExperiences();

function trainer(reference: ReturnType<typeof initModel>): RftTrainer {
  return new RftTrainer(initModel(cfg, 1), reference, klTrainerOptions(1e-2));
}

before(async () => {
  await tf.setBackend('cpu');
});

describe('reference log-probs carried by experiences', () => {
  test('each experience gets its response’s log-probs, the same as scored alone without padding', async () => {
    const reference = initModel(cfg, 2);
    const exps = experiences();
    await attachReferenceLogprobs(reference, exps, { temperature: TEMPERATURE, padTokenId: 0 });
    for (const e of exps) {
      const alone = await batchReferenceLogprobs(reference, padBatch([e], 0), TEMPERATURE);
      assert.equal(e.refLogprobs!.length, e.tokens.length - e.promptLength);
      e.refLogprobs!.forEach((x, t) => {
        assert.ok(x < 0 && Number.isFinite(x), `log-prob ${x}`);
        assert.ok(Math.abs(x - alone[0][t]) <= 1e-5, `row ${e.eid.run} token ${t}: ${x} vs ${alone[0][t]}`);
      });
    }
    // In the trainer's padded layout: the same values on response tokens, zeros on padding (masked out of every loss,
    // where the trainer's own forward scores the pad tokens).
    const b = padBatch(exps, 0);
    const carried = carriedReferenceLogprobs(exps, b)!;
    const computed = await batchReferenceLogprobs(reference, b, TEMPERATURE);
    assert.deepEqual(
      carried.map((r) => r.length),
      [3, 3, 3],
    );
    carried.forEach((row, i) =>
      row.forEach((x, t) => {
        if (b.responseMask[i][t] === 0) assert.equal(x, 0, `[${i}, ${t}] is padding`);
        else assert.ok(Math.abs(x - computed[i][t]) <= 1e-5, `[${i}, ${t}]: ${x} vs ${computed[i][t]}`);
      }),
    );
    assert.deepEqual(carried[2].slice(1), [0, 0]);
    reference.dispose();
  });

  test('carried log-probs are used only when every row has its whole response’s', async () => {
    const exps = experiences();
    exps.forEach((e) => (e.refLogprobs = Array<number>(e.tokens.length - e.promptLength).fill(-1)));
    assert.ok(carriedReferenceLogprobs(exps, padBatch(exps, 0)));
    const short = experiences().map((e, i) => ({ ...e, refLogprobs: i === 1 ? [-1] : exps[i].refLogprobs }));
    assert.equal(carriedReferenceLogprobs(short, padBatch(short, 0)), undefined);
    const missing = experiences().map((e, i) => ({ ...e, refLogprobs: i === 0 ? undefined : exps[i].refLogprobs }));
    assert.equal(carriedReferenceLogprobs(missing, padBatch(missing, 0)), undefined);
  });

  test('the trainer’s KL loss from carried log-probs equals the one from its own reference forward', async () => {
    const truth = initModel(cfg, 2);
    const own = await trainer(truth).trainStep(experiences());
    // A trainer holding a different reference model, given the true reference's log-probs on the experiences.
    const carriedExps = experiences();
    await attachReferenceLogprobs(truth, carriedExps, { temperature: TEMPERATURE, padTokenId: 0 });
    const other = initModel(cfg, 3);
    const carried = await trainer(other).trainStep(carriedExps);
    const wrong = await trainer(initModel(cfg, 3)).trainStep(experiences());
    assert.ok(own['actor/kl_loss'] > 1e-4, `kl_loss ${own['actor/kl_loss']}`);
    assert.ok(
      Math.abs(carried['actor/kl_loss'] - own['actor/kl_loss']) <= 1e-5 * own['actor/kl_loss'],
      `kl_loss carried ${carried['actor/kl_loss']} vs own ${own['actor/kl_loss']}`,
    );
    assert.ok(Math.abs(wrong['actor/kl_loss'] - own['actor/kl_loss']) > 1e-3 * own['actor/kl_loss']);
    truth.dispose();
    other.dispose();
  });
});
