/**
 * The trainer's reference model loaded lazily: not at all while every row carries its reference log-probs, at the
 * first batch that needs a forward otherwise, and then from the initial weights' files, never the trained policy.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel, loadModel, saveInitialModel } from '../../../../runtime/engine/lm/checkpoint';
import { CausalLM } from '../../../../runtime/engine/lm/transformer';
import type { Experience } from '../../../../runtime/rft/experience';
import { attachReferenceLogprobs } from '../../../../runtime/rft/trainer/reference-logprobs';
import { RftTrainer, type ReferenceSource } from '../../../../runtime/rft/trainer/train-step';
import { KL_TEMPERATURE, klTrainerOptions, paddedExperiences } from '../../../helpers/kl-batch';
import { tinyQwen2Config } from '../../../helpers/tiny-qwen2';

const cfg = tinyQwen2Config({ vocabSize: 12 });
const SEED = 1;
/** What the run's model directory holds: the weights `initModel(cfg, SEED)` makes. */
const initialDir = join(mkdtempSync(join(tmpdir(), 'twb-lazy-ref-')), 'model');
const experiences = (): Experience[] => paddedExperiences((row) => (row === 1 ? -1 : 1));

/** The experiences with the initial weights' reference log-probs on them, as the explorer worker leaves them. */
async function carrying(): Promise<Experience[]> {
  const reference = initModel(cfg, SEED);
  const exps = experiences();
  await attachReferenceLogprobs(reference, exps, { temperature: KL_TEMPERATURE, padTokenId: 0 });
  reference.dispose();
  return exps;
}

const opts = klTrainerOptions(5e-2);

/** A trainer of a fresh policy with the initial weights, and how many times it loaded its reference. */
function lazyTrainer(): { trainer: RftTrainer; loads: () => number } {
  let loads = 0;
  const trainer = new RftTrainer(
    initModel(cfg, SEED),
    () => {
      loads++;
      return loadModel(initialDir);
    },
    opts,
  );
  return { trainer, loads: () => loads };
}

/** A trainer of a fresh policy with the initial weights and `reference` (by default the initial weights, given). */
function trainerWith(reference: ReferenceSource = initModel(cfg, SEED)): RftTrainer {
  return new RftTrainer(initModel(cfg, SEED), reference, opts);
}

/** A step's loss metrics (time and memory figures aside). */
const actor = (m: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('actor/')));

function release(t: RftTrainer): void {
  t.model.dispose();
  t.dispose();
}

before(async () => {
  await tf.setBackend('cpu');
  saveInitialModel(cfg, SEED, initialDir);
});

describe('the trainer’s lazily loaded reference model', () => {
  test('is never loaded while every row carries its reference log-probs', async () => {
    const { trainer, loads } = lazyTrainer();
    for (let i = 0; i < 3; i++) await trainer.trainStep(await carrying());
    assert.equal(loads(), 0);
    assert.equal(trainer.referenceLoaded, false);
    // One row without them: the batch needs the forward.
    const mixed = await carrying();
    mixed[1].refLogprobs = undefined;
    await trainer.trainStep(mixed);
    assert.equal(loads(), 1);
    assert.equal(trainer.referenceLoaded, true);
    release(trainer);
  });

  test('gives the metrics of a reference given up front when rows carry nothing, loaded once', async () => {
    const { trainer, loads } = lazyTrainer();
    const eager = trainerWith();
    for (let step = 1; step <= 2; step++) {
      const lazy = actor(await trainer.trainStep(experiences()));
      const given = actor(await eager.trainStep(experiences()));
      assert.ok(lazy['actor/kl_loss'] !== undefined && (step === 1 || lazy['actor/kl_loss'] > 1e-4), `step ${step}`);
      // The same weights through the same kernels: equal to the last bit.
      assert.deepEqual(lazy, given, `step ${step}`);
    }
    assert.equal(loads(), 1);
    release(trainer);
    release(eager);
  });

  test('is the initial weights when the policy has trained before the first load', async () => {
    // Step 1 on carried values (no load), step 2 without: the load comes after an optimizer step.
    const { trainer, loads } = lazyTrainer();
    const eager = trainerWith();
    await trainer.trainStep(await carrying());
    await eager.trainStep(await carrying());
    assert.equal(loads(), 0);
    const lazy = actor(await trainer.trainStep(experiences()));
    const given = actor(await eager.trainStep(experiences()));
    assert.equal(loads(), 1);
    assert.deepEqual(lazy, given);
    // What a lazy load that copied the policy at that point would give instead: a KL of (about) zero.
    const naive: RftTrainer = trainerWith(() => copyOf(naive.model));
    await naive.trainStep(await carrying());
    const copied = actor(await naive.trainStep(experiences()));
    assert.ok(lazy['actor/kl_loss'] > 1e-4, `kl_loss ${lazy['actor/kl_loss']}`);
    assert.ok(copied['actor/kl_loss'] < 1e-3 * lazy['actor/kl_loss'], `copied ${copied['actor/kl_loss']}`);
    release(trainer);
    release(eager);
    release(naive);
  });

  test('is freed with the trainer; a model given up front stays the caller’s', async () => {
    let loaded: CausalLM | undefined;
    const lazy = trainerWith(() => (loaded = loadModel(initialDir)));
    await lazy.trainStep(experiences());
    release(lazy);
    assert.ok(loaded && [...loaded.params.values()].every((v) => v.isDisposed));
    const given = initModel(cfg, SEED);
    const eager = trainerWith(given);
    await eager.trainStep(experiences());
    release(eager);
    assert.ok([...given.params.values()].every((v) => !v.isDisposed));
    given.dispose();
  });
});

function copyOf(m: CausalLM): CausalLM {
  // tidy frees each clone's handle; the variable keeps its data.
  return new CausalLM(
    m.config,
    new Map([...m.params].map(([k, v]) => [k, tf.tidy(() => tf.variable(v.clone(), false))])),
  );
}
