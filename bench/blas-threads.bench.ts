/**
 * Paired A/B of the OpenBLAS thread policy (runtime/engine/backend/blas-threads.ts) on bench:engine's training step:
 * A trains as beside both mode's explorer worker (1 thread), B as training alone (min(cores, 2) threads). Two copies
 * of the same model (same weights, same batch) in one process take turns step by step, ABBA, so background load
 * falls on both alike; each step's paired ratio is A's time over the B step next to it. Both copies must log the
 * same losses and gradient norms, bit for bit, where every inner dimension is at most OpenBLAS's K block or a
 * multiple of 32 (1 M and 12 M; 3 M's SwiGLU width 680 is neither, and there the bits differ: blas-threads.ts).
 *
 *   BENCH_MODELS=12m (default; also 1m, 3m) BENCH_STEPS=12 BENCH_OUT=bench/results/blas-threads.json (appends)
 *   node --import tsx bench/blas-threads.bench.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { BlasThreads, blasThreads, initBackend, type BlasWork } from '../runtime/engine/backend';
import { initModel } from '../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../runtime/engine/lm/config';
import { scoreSequences } from '../runtime/engine/logprobs';
import { Rng } from '../runtime/engine/random';
import { AdamW } from '../runtime/engine/train/adamw';
import { Trainer } from '../runtime/engine/train/step';

/** bench:engine's sizes and step (B = 8 sequences of 64 predicted tokens, AdamW at lr 1e-4 with clip 1). */
const MODELS = {
  '1m': { layers: 4, hidden: 128, heads: 4, vocab: 512 },
  '3m': { layers: 4, hidden: 256, heads: 4, vocab: 512 },
  '12m': { layers: 6, hidden: 384, heads: 6, vocab: 4096 },
} as const;
const B = 8;
const T = 64;
const STEPS = Number(process.env.BENCH_STEPS ?? 12);
const WARMUP = 2;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

interface Side {
  work: Exclude<BlasWork, 'not-training'>;
  step: () => Promise<{ loss: number; gradNorm: number }>;
  ms: number[];
  log: number[];
  threads?: number;
}

async function pair(id: keyof typeof MODELS): Promise<Record<string, unknown>> {
  const m = MODELS[id];
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: m.layers,
      hidden: m.hidden,
      heads: m.heads,
      vocabSize: m.vocab,
      maxPositions: 128,
      eosTokenIds: [0],
    }),
  );
  const rng = new Rng(99);
  const rows = Array.from({ length: B }, () => Array.from({ length: T + 1 }, () => rng.nextU32() % m.vocab));
  const ids = tf.tensor2d(rows, [B, T + 1], 'int32');
  const blas = new BlasThreads((line) => process.stderr.write(`  ${line}\n`));
  const side = (work: Side['work']): Side => {
    const model = initModel(cfg, 1234);
    const opt = new AdamW(model.trainableVariables(), {
      betas: [0.9, 0.999],
      eps: 1e-8,
      weightDecay: 0.01,
      clipGradNorm: 1,
    });
    const trainer = new Trainer(opt, { lr: 1e-4, style: 'constant', warmupSteps: 0, totalSteps: 1_000_000 });
    const loss = (): tf.Scalar => tf.neg(tf.mean(scoreSequences(model, ids).logprobs)) as tf.Scalar;
    return { work, step: () => trainer.step([loss]), ms: [], log: [] };
  };
  const a = side('explorer-thread');
  const b = side('nothing');
  const run = async (s: Side, timed: boolean): Promise<void> => {
    const t0 = performance.now();
    const r = await blas.training(s.work, async () => {
      s.threads = blasThreads();
      return s.step();
    });
    const ms = performance.now() - t0;
    s.log.push(r.loss, r.gradNorm);
    if (timed) s.ms.push(ms);
  };
  const load0 = loadavg()[0];
  for (let r = 0; r < WARMUP + STEPS; r++) for (const s of r % 2 === 0 ? [a, b] : [b, a]) await run(s, r >= WARMUP);
  const ratios = a.ms.map((x, i) => x / b.ms[i]);
  const identical = a.log.length === b.log.length && a.log.every((v, i) => Object.is(v, b.log[i]));
  const out = {
    model: id,
    steps: STEPS,
    threads: { a: a.threads, b: b.threads },
    medianMs: { a: median(a.ms), b: median(b.ms) },
    pairedRatio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
    lossesBitIdentical: identical,
    loadAverage: { start: load0, end: loadavg()[0] },
    msA: a.ms.map((x) => Math.round(x)),
    msB: b.ms.map((x) => Math.round(x)),
  };
  ids.dispose();
  console.log(
    `${id}: step ${out.medianMs.a.toFixed(0)} ms (${a.threads} thread) -> ${out.medianMs.b.toFixed(0)} ms (${b.threads} threads), ` +
      `paired ratio median ${out.pairedRatio.median.toFixed(2)}x (${out.pairedRatio.min.toFixed(2)}–${out.pairedRatio.max.toFixed(2)}), ` +
      `${STEPS} steps each; losses and grad norms ${identical ? 'bit-identical' : 'DIFFER'}; load ${load0.toFixed(1)} -> ${out.loadAverage.end.toFixed(1)}`,
  );
  return out;
}

async function main(): Promise<void> {
  const info = await initBackend({ prefer: 'wasm' });
  if (!info.accelerators?.includes('openblas-matmul'))
    throw new Error('the OpenBLAS addon is not in use (npm run build:native)');
  const ids = (process.env.BENCH_MODELS ?? '12m').split(',').map((s) => s.trim()) as (keyof typeof MODELS)[];
  const results = [];
  for (const id of ids) {
    if (!(id in MODELS)) throw new Error(`BENCH_MODELS: unknown model ${id}`);
    results.push(await pair(id));
  }
  // Each run is appended to the file's `runs`, so loaded and quiet windows stay side by side.
  const file = process.env.BENCH_OUT;
  if (file) {
    const runs = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs: unknown[] }).runs : [];
    runs.push({ date: new Date().toISOString(), cores: availableParallelism(), results });
    writeFileSync(file, JSON.stringify({ runs }, null, 2) + '\n');
  }
}

void main().catch((e: Error) => {
  console.error(e.stack ?? e.message);
  process.exit(1);
});
