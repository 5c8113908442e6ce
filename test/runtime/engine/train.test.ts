/**
 * Training primitives: AdamW and gradient clipping against torch.optim.AdamW, veRL's learning-rate schedules,
 * gradient accumulation, skipped non-finite steps, optimizer state round trips, and a leak-free training loop.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { learningRate, warmupSteps } from '../../../runtime/engine/train/schedule';
import { Trainer } from '../../../runtime/engine/train/step';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { tinyQwen2Config } from '../../helpers/tiny-qwen2';

before(async () => {
  await tf.setBackend('cpu');
});

const constant = (lr: number) => ({ lr, style: 'constant' as const, warmupSteps: 0, totalSteps: 100 });

describe('AdamW', () => {
  test('three clipped steps match torch.optim.AdamW (float64) to float32 precision', async () => {
    // Reference: torch 1.13, float64, AdamW(lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01),
    // clip_grad_norm_(max_norm=1.0) before each step, loss = sum(c·w) so the gradient is c.
    const cs = [
      [3, -4, 0],
      [0.5, 0.5, -1],
      [-1, 2, 2],
    ];
    const expected = [
      { norm: 5.0, w: [0.8990000016666669, -1.8980000012500002, 0.4995] },
      { norm: 1.224744871391589, w: [0.800836270677797, -1.8702623091857584, 0.5734141810681367] },
      { norm: 3.0, w: [0.7584041350796311, -1.890455105919767, 0.5769739269180255] },
    ];
    const w = tf.variable(tf.tensor1d([1, -2, 0.5]));
    const opt = new AdamW([w], { betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, clipGradNorm: 1 });
    const trainer = new Trainer(opt, constant(0.1));
    for (const [i, c] of cs.entries()) {
      const r = await trainer.step([() => tf.sum(tf.mul(w, tf.tensor1d(c)))]);
      assert.ok(Math.abs(r.gradNorm - expected[i].norm) < 1e-5, `step ${i} norm ${r.gradNorm}`);
      const got = Array.from(w.dataSync());
      expected[i].w.forEach((e, j) =>
        assert.ok(Math.abs(got[j] - e) < 2e-6, `step ${i} w[${j}] = ${got[j]}, torch ${e}`),
      );
    }
    assert.equal(opt.step, 3);
    opt.dispose();
    w.dispose();
  });

  test('a non-finite gradient norm skips the step and leaves the weights alone', async () => {
    const w = tf.variable(tf.tensor1d([1, 2]));
    const opt = new AdamW([w]);
    const r = await new Trainer(opt, constant(0.1)).step([() => tf.sum(tf.mul(w, tf.tensor1d([NaN, 1])))]);
    assert.equal(r.skipped, true);
    assert.ok(Number.isNaN(r.gradNorm));
    assert.deepEqual(Array.from(w.dataSync()), [1, 2]);
    assert.equal(opt.step, 0);
    opt.dispose();
    w.dispose();
  });

  test('exported state resumes to exactly the uninterrupted trajectory', async () => {
    const run = async (resumeAt: number | undefined): Promise<number[]> => {
      const w = tf.variable(tf.tensor1d([0.3, -0.7, 1.1]));
      let opt = new AdamW([w], { clipGradNorm: 0.5 });
      for (let s = 0; s < 6; s++) {
        if (s === resumeAt) {
          const state = await opt.exportState();
          opt.dispose();
          opt = new AdamW([w], { clipGradNorm: 0.5 });
          opt.loadState(state);
        }
        await new Trainer(opt, constant(0.05)).step([() => tf.sum(tf.square(tf.sub(w, tf.tensor1d([s, -s, 2]))))]);
      }
      const out = Array.from(w.dataSync());
      opt.dispose();
      w.dispose();
      return out;
    };
    assert.deepEqual(await run(3), await run(undefined));
  });
});

describe('learning-rate schedules', () => {
  test('linear warmup, then constant', () => {
    const s = { lr: 1e-3, style: 'constant' as const, warmupSteps: 4, totalSteps: 10 };
    assert.deepEqual(
      [0, 1, 2, 4, 9].map((k) => learningRate(s, k)),
      [0, 0.00025, 0.0005, 1e-3, 1e-3],
    );
  });

  test('cosine from lr to min_lr_ratio·lr after warmup (hand-computed)', () => {
    const s = { lr: 1, style: 'cosine' as const, warmupSteps: 2, totalSteps: 10, minLrRatio: 0.1 };
    // step 6: progress 0.5, cos(π/2) = 0 → 0.9·0.5 + 0.1 = 0.55; step 4: progress 0.25 → 0.9·(1+cos(π/4))/2 + 0.1.
    const expected: [number, number][] = [
      [0, 0],
      [1, 0.5],
      [2, 1],
      [4, 0.9 * (1 + Math.SQRT1_2) * 0.5 + 0.1],
      [6, 0.55],
      [10, 0.1],
    ];
    for (const [k, v] of expected)
      assert.ok(Math.abs(learningRate(s, k) - v) < 1e-12, `step ${k}: ${learningRate(s, k)} vs ${v}`);
  });

  test('warmup length: explicit steps win, else the ratio of total steps', () => {
    assert.equal(warmupSteps(100, 7, 0.5), 7);
    assert.equal(warmupSteps(100, -1, 0.15), 15);
    assert.equal(warmupSteps(100, undefined, undefined), 0);
  });
});

describe('training a model', () => {
  const cfg = tinyQwen2Config();
  const batch = [
    [2, 3, 4, 5, 6, 7, 8, 9],
    [9, 8, 7, 6, 5, 4, 3, 2],
  ];
  const nll = (m: ReturnType<typeof initModel>, rows: number[][], scale: number) => () =>
    tf.tidy(
      () =>
        tf.mul(tf.neg(tf.mean(scoreSequences(m, tf.tensor2d(rows, undefined, 'int32')).logprobs)), scale) as tf.Scalar,
    );

  test('two half micro-batches give the same step as the whole batch', async () => {
    const a = initModel(cfg, 3);
    const b = initModel(cfg, 3);
    const ta = new Trainer(new AdamW(a.trainableVariables(), { clipGradNorm: 1 }), constant(1e-2));
    const tb = new Trainer(new AdamW(b.trainableVariables(), { clipGradNorm: 1 }), constant(1e-2));
    const ra = await ta.step([nll(a, batch, 1)]);
    const rb = await tb.step([nll(b, [batch[0]], 0.5), nll(b, [batch[1]], 0.5)]);
    assert.ok(Math.abs(ra.loss - rb.loss) < 1e-5);
    assert.ok(Math.abs(ra.gradNorm - rb.gradNorm) < 1e-5 * ra.gradNorm);
    const va = a.variables();
    const vb = b.variables();
    let maxDiff = 0;
    va.forEach((v, i) => {
      const x = v.dataSync();
      const y = vb[i].dataSync();
      for (let j = 0; j < x.length; j++) maxDiff = Math.max(maxDiff, Math.abs(x[j] - y[j]));
    });
    assert.ok(maxDiff < 1e-6, `weights differ by ${maxDiff}`);
    a.dispose();
    b.dispose();
  });

  test('the loss falls and the tensor count stays flat over a training loop', async () => {
    const m = initModel(cfg, 5);
    const opt = new AdamW(m.trainableVariables(), { clipGradNorm: 1, weightDecay: 0 });
    const trainer = new Trainer(opt, { lr: 1e-2, style: 'cosine', warmupSteps: 2, totalSteps: 40, minLrRatio: 0.1 });
    const first = await trainer.step([nll(m, batch, 1)]);
    const tensors = tf.memory().numTensors;
    let last = first;
    for (let i = 0; i < 30; i++) last = await trainer.step([nll(m, batch, 1)]);
    assert.equal(tf.memory().numTensors, tensors);
    assert.ok(last.loss < 0.5 * first.loss, `loss ${first.loss} -> ${last.loss}`);
    assert.ok(last.lr < 1e-2 && last.lr > 1e-3);
    opt.dispose();
    m.dispose();
  });
});

describe('AdamW memory', () => {
  test('creating and disposing an optimizer leaves no tensors behind', async () => {
    const w = tf.variable(tf.ones([64, 64]));
    const before = tf.memory().numTensors;
    const opt = new AdamW([w]);
    await new Trainer(opt, constant(0.01)).step([() => tf.sum(tf.square(w))]);
    opt.dispose();
    assert.equal(tf.memory().numTensors, before);
    w.dispose();
  });
});
