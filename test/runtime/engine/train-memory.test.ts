/**
 * A 200-step training loop on wasm (the real Trainer and AdamW, OpenBLAS kernels where the addon is built) holds its
 * memory flat: after 20 warm-up steps the live tensor count and tfjs' tensor bytes never change, the wasm heap does
 * not grow, and the process's resident set at the end is within a bound of what it was after the warm-up. The peak
 * resident set and the trainer's memory metrics are reported.
 *
 * Why these bounds. Tensor counts and bytes are exact: any tensor a step leaks (a gradient, an activation, an
 * optimizer temporary) raises them, so they must be equal at every sample. RSS covers what tfjs does not count (host
 * arrays read back, the native addon's buffers, closures kept): it is sampled after a forced GC and may move by a few
 * MiB for V8's heap, JIT code and malloc's arenas (observed: +1.3 MiB from step 20 to 200), so the end may exceed
 * the post-warm-up figure by at most 24 MiB, about 136 KiB per measured step. A step that kept one layer's gradients
 * on the host (42 K float32 of this model's 94 K weights, 168 KiB) would add 30 MiB over the 180 measured steps.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../runtime/engine/backend';
import { engineMemory, memoryMetrics, watchPeakMemory } from '../../../runtime/engine/backend/memory';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { scoreSequences } from '../../../runtime/engine/logprobs';
import { AdamW } from '../../../runtime/engine/train/adamw';
import { Trainer } from '../../../runtime/engine/train/step';

const STEPS = 200;
const WARMUP = 20;
const SAMPLE_EVERY = 30;
const RSS_SLACK_BYTES = 24 * 2 ** 20;
const MIB = 2 ** 20;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  watchPeakMemory();
});

test(`a ${STEPS}-step training loop on wasm does not grow tensors, the wasm heap or RSS`, async (t) => {
  assert.equal(tf.getBackend(), 'wasm');
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 2,
      hidden: 64,
      heads: 4,
      kvHeads: 2,
      vocabSize: 64,
      maxPositions: 32,
      eosTokenIds: [1],
    }),
  );
  const model = initModel(cfg, 7);
  const params = model.trainableVariables().reduce((n, v) => n + v.size, 0);
  // Two micro-batches of 4 rows x 16 tokens, a different batch each step.
  const batch = (step: number, micro: number) =>
    Array.from({ length: 4 }, (_, r) =>
      Array.from({ length: 16 }, (_, i) => (step * 7 + micro * 13 + r * 5 + i * 3) % 64),
    );
  const opt = new AdamW(model.trainableVariables(), { clipGradNorm: 1, weightDecay: 0.01 });
  const trainer = new Trainer(opt, { lr: 1e-3, style: 'cosine', warmupSteps: 10, totalSteps: STEPS });
  const sample = () => {
    gc();
    const m = engineMemory();
    return { tensors: tf.memory().numTensors, bytes: tf.memory().numBytes, heap: m.reservedBytes, rss: m.rssBytes };
  };
  const samples: { step: number; tensors: number; bytes: number; heap?: number; rss: number }[] = [];
  const losses: number[] = [];
  const t0 = performance.now();
  for (let step = 1; step <= STEPS; step++) {
    const micro = [0, 1].map(
      (mb) => () =>
        tf.tidy(() => {
          const lp = scoreSequences(model, tf.tensor2d(batch(step, mb), undefined, 'int32')).logprobs;
          return tf.mul(tf.neg(tf.mean(lp)), 0.5) as tf.Scalar;
        }),
    );
    const r = await trainer.step(micro);
    assert.ok(Number.isFinite(r.loss) && !r.skipped, `step ${step}: ${JSON.stringify(r)}`);
    losses.push(r.loss);
    if (step >= WARMUP && (step - WARMUP) % SAMPLE_EVERY === 0) samples.push({ step, ...sample() });
  }
  if (samples[samples.length - 1].step !== STEPS) samples.push({ step: STEPS, ...sample() });
  const seconds = (performance.now() - t0) / 1000;
  const metrics = memoryMetrics();
  const peak = engineMemory();
  const first = samples[0];
  const last = samples[samples.length - 1];
  t.diagnostic(
    `${params} weights, ${STEPS} steps in ${seconds.toFixed(1)} s; loss ${losses[0].toFixed(3)} -> ${losses[STEPS - 1].toFixed(3)}`,
  );
  t.diagnostic(
    `RSS (MiB) after warm-up ${(first.rss / MIB).toFixed(1)}, end ${(last.rss / MIB).toFixed(1)} (bound +${RSS_SLACK_BYTES / MIB}); samples ${samples.map((s) => `${s.step}:${(s.rss / MIB).toFixed(1)}`).join(' ')}`,
  );
  t.diagnostic(
    `peak RSS ${(peak.maxRssBytes / MIB).toFixed(1)} MiB; tensors ${first.tensors}, ${(first.bytes / 1024).toFixed(0)} KiB; wasm heap ${((first.heap ?? 0) / MIB).toFixed(0)} MiB; ${Object.entries(
      metrics,
    )
      .map(([k, v]) => `${k} ${v.toFixed(4)}`)
      .join(', ')}`,
  );
  for (const s of samples) {
    assert.equal(s.tensors, first.tensors, `live tensors at step ${s.step} vs step ${first.step}`);
    assert.equal(s.bytes, first.bytes, `tensor bytes at step ${s.step} vs step ${first.step}`);
    assert.equal(s.heap, first.heap, `wasm heap at step ${s.step} vs step ${first.step}`);
  }
  assert.ok(
    last.rss - first.rss <= RSS_SLACK_BYTES,
    `RSS grew by ${((last.rss - first.rss) / MIB).toFixed(1)} MiB over ${STEPS - WARMUP} steps (bound ${RSS_SLACK_BYTES / MIB} MiB)`,
  );
  assert.ok(losses[STEPS - 1] < losses[0], 'the loop trains');
  for (const k of ['perf/max_memory_allocated_gb', 'perf/max_memory_reserved_gb', 'perf/max_rss_gb'])
    assert.ok(metrics[k] > 0, `${k} = ${metrics[k]}`);
  assert.ok(metrics['perf/max_rss_gb'] * 2 ** 30 >= last.rss, 'peak RSS below the current RSS');
  opt.dispose();
  model.dispose();
});
