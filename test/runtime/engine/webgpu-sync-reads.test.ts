/**
 * The engine on webgpu (Dawn on SwiftShader's Vulkan driver here; CI installs libvulkan1, Debian's chromium ships the
 * driver) never reads the device synchronously: the backend's readSync is made to throw for any tensor still on the
 * GPU (what crashes in Node: tfjs-backend-webgpu's sync read draws through an OffscreenCanvas), then greedy generation
 * and an optimizer step run. Greedy tokens equal the cpu backend's, computed on the host beforehand.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { generate } from '../../../runtime/engine/sampling';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { Trainer } from '../../../runtime/engine/train/step';
import { addMany } from '../../../runtime/engine/ops';
import { startWebgpuGuarded, type SyncReadGuard } from '../../helpers/webgpu';
import { tinyQwen2Config } from '../../helpers/tiny-qwen2';

const cfg = tinyQwen2Config();
const prompts = [
  [2, 3, 4],
  [5, 6],
];
let cpuTokens: number[][];
let guard: SyncReadGuard;

before(async () => {
  await tf.setBackend('cpu');
  const m = initModel(cfg, 5);
  cpuTokens = (await generate(m, prompts, { maxNewTokens: 4, temperature: 0, stopTokenIds: [] })).map((c) => c.tokens);
  m.dispose();
  guard = await startWebgpuGuarded();
});

describe('webgpu: no synchronous reads', () => {
  test('greedy generation matches the cpu backend', async () => {
    const m = initModel(cfg, 5);
    const out = await generate(m, prompts, { maxNewTokens: 4, temperature: 0, stopTokenIds: [] });
    assert.deepEqual(
      out.map((c) => c.tokens),
      cpuTokens,
    );
    m.dispose();
    assert.equal(guard.count, 0);
  });

  test('addMany sums more tensors than a shader may bind (8 storage buffers on SwiftShader)', async () => {
    // 1 + 2 + ... + 20 = 210, elementwise over [2]; one tf.addN of 20 inputs makes an invalid pipeline on Dawn.
    const ts = Array.from({ length: 20 }, (_, i) => tf.tensor1d([i + 1, -(i + 1)]));
    const sum = addMany(ts);
    assert.deepEqual(Array.from(await sum.data()), [210, -210]);
    tf.dispose([sum, ...ts]);
    assert.equal(guard.count, 0);
  });

  test('an AdamW step trains and reports its loss and norm', async () => {
    const m = initModel(cfg, 5);
    const rows = [
      [2, 3, 4, 5, 6, 7],
      [7, 6, 5, 4, 3, 2],
    ];
    const nll = () =>
      tf.tidy(() => tf.neg(tf.mean(scoreSequences(m, tf.tensor2d(rows, undefined, 'int32')).logprobs)) as tf.Scalar);
    const opt = new AdamW(m.trainableVariables(), { clipGradNorm: 1 });
    const t = new Trainer(opt, { lr: 0.01, style: 'constant', warmupSteps: 0, totalSteps: 10 });
    const first = await t.step([nll]);
    const second = await t.step([nll]);
    assert.ok(Number.isFinite(first.loss) && first.gradNorm > 0, JSON.stringify(first));
    assert.ok(second.loss < first.loss, `${first.loss} -> ${second.loss}`);
    const state = await opt.exportState();
    assert.equal(state.step, 2);
    opt.dispose();
    m.dispose();
    assert.equal(guard.count, 0);
  });
});
