/**
 * Paired A/B of the fused training kernels (runtime/engine/backend/train-kernels.ts) on bench:engine's training
 * step: A trains on tfjs' own ops (the kernels switched off), B on the fused kernels, both on the same OpenBLAS
 * threads (a training step nothing computes beside: 2 on 2 cores). Two copies of the same model (same weights, same
 * batch) in one process take turns step by step, ABBA, so background load falls on both alike; each step's paired
 * ratio is A's time over the B step next to it. The losses of both copies are compared step by step (the fused
 * kernels round differently: they are close, not bit-identical).
 *
 * Peak RSS: with BENCH_RSS=1 (default) each side also trains alone in a fresh Node process (the same steps), and
 * its `maxRSS` is reported, since one process holding both copies cannot tell them apart.
 *
 * Each step's process CPU time (user + system) is recorded too: on a machine whose cores other processes hold, the
 * wall-clock pairs scatter widely while the CPU time (the work done) barely moves; with BENCH_BLAS_THREADS=1 it is
 * free of OpenBLAS's spin-waiting as well.
 *
 *   BENCH_MODELS=1m,3m,12m (default) BENCH_STEPS=12 BENCH_RSS=1 BENCH_BLAS_THREADS=2|1
 *   BENCH_OUT=bench/results/train-kernels.json (appends)
 *   node --import tsx bench/train-kernels.bench.ts
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { BlasThreads, blasThreads, initBackend } from '../runtime/engine/backend';
import { useTrainKernels } from '../runtime/engine/backend/train-kernels';
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
type ModelId = keyof typeof MODELS;
const B = 8;
const T = 64;
const STEPS = Number(process.env.BENCH_STEPS ?? 12);
const WARMUP = 2;
/** BENCH_BLAS_THREADS=1 trains as beside both mode's explorer worker (1 OpenBLAS thread), else as training alone. */
const WORK = process.env.BENCH_BLAS_THREADS === '1' ? 'explorer-thread' : 'nothing';
const LABELS = { a: 'tfjs ops', b: 'fused' };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Switches this thread to side A's (`b` false: tfjs ops) or side B's configuration (the fused kernels). */
function configure(b: boolean): void {
  if (useTrainKernels(b) !== b) throw new Error('the fused training kernels are not available');
}

interface Side {
  /** Side B's configuration (else A's). */
  b: boolean;
  step: () => Promise<{ loss: number; gradNorm: number }>;
  ms: number[];
  /** CPU time of the process (user + system) per step: the work done, which background load barely changes. */
  cpuMs: number[];
  losses: number[];
}

function makeSide(id: ModelId, b: boolean): Side {
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
  const model = initModel(cfg, 1234);
  const opt = new AdamW(model.trainableVariables(), {
    betas: [0.9, 0.999],
    eps: 1e-8,
    weightDecay: 0.01,
    clipGradNorm: 1,
  });
  const trainer = new Trainer(opt, { lr: 1e-4, style: 'constant', warmupSteps: 0, totalSteps: 1_000_000 });
  const loss = (): tf.Scalar => tf.neg(tf.mean(scoreSequences(model, ids).logprobs)) as tf.Scalar;
  return { b, step: () => trainer.step([loss]), ms: [], cpuMs: [], losses: [] };
}

async function pair(id: ModelId, blas: BlasThreads): Promise<Record<string, unknown>> {
  const a = makeSide(id, false);
  const b = makeSide(id, true);
  let threads: number | undefined;
  const run = async (s: Side, timed: boolean): Promise<void> => {
    configure(s.b);
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const r = await blas.training(WORK, async () => {
      threads = blasThreads();
      return s.step();
    });
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    s.losses.push(r.loss);
    if (timed) {
      s.ms.push(ms);
      s.cpuMs.push((c.user + c.system) / 1000);
    }
  };
  const load0 = loadavg()[0];
  for (let r = 0; r < WARMUP + STEPS; r++) for (const s of r % 2 === 0 ? [a, b] : [b, a]) await run(s, r >= WARMUP);
  configure(true);
  const ratios = a.ms.map((x, i) => x / b.ms[i]);
  const cpuRatios = a.cpuMs.map((x, i) => x / b.cpuMs[i]);
  const lossRelDiff = Math.max(...a.losses.map((x, i) => Math.abs(x - b.losses[i]) / Math.abs(x)));
  const out = {
    model: id,
    sides: LABELS,
    steps: STEPS,
    blasThreads: threads,
    medianMs: { a: median(a.ms), b: median(b.ms) },
    pairedRatio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
    cpuMedianMs: { a: median(a.cpuMs), b: median(b.cpuMs) },
    cpuPairedRatio: { median: median(cpuRatios), min: Math.min(...cpuRatios), max: Math.max(...cpuRatios) },
    lossMaxRelDiff: lossRelDiff,
    losses: { a: a.losses, b: b.losses },
    loadAverage: { start: load0, end: loadavg()[0] },
    msA: a.ms.map((x) => Math.round(x)),
    msB: b.ms.map((x) => Math.round(x)),
  };
  console.log(
    `${id}: step ${out.medianMs.a.toFixed(0)} ms (${LABELS.a}) -> ${out.medianMs.b.toFixed(0)} ms (${LABELS.b}), ` +
      `paired ratio median ${out.pairedRatio.median.toFixed(2)}x (${out.pairedRatio.min.toFixed(2)}–${out.pairedRatio.max.toFixed(2)}), ` +
      `${STEPS} steps each on ${threads} BLAS thread(s); CPU time per step ${out.cpuMedianMs.a.toFixed(0)} -> ` +
      `${out.cpuMedianMs.b.toFixed(0)} ms, paired ratio ${out.cpuPairedRatio.median.toFixed(2)}x ` +
      `(${out.cpuPairedRatio.min.toFixed(2)}–${out.cpuPairedRatio.max.toFixed(2)}); losses within ${lossRelDiff.toExponential(1)} (relative) over ` +
      `${a.losses.length} steps; load ${load0.toFixed(1)} -> ${out.loadAverage.end.toFixed(1)}`,
  );
  return out;
}

/** BENCH_RSS_CHILD=<model>:<0|1>: trains side A (0) or B (1) alone for the same steps and prints its peak RSS (MiB). */
async function rssChild(spec: string): Promise<void> {
  const [id, side] = spec.split(':');
  configure(side === '1');
  const blas = new BlasThreads(() => {});
  const s = makeSide(id as ModelId, side === '1');
  for (let r = 0; r < WARMUP + STEPS; r++) await blas.training(WORK, () => s.step());
  process.stdout.write(`${process.resourceUsage().maxRSS / 1024}\n`);
}

function peakRss(id: ModelId, b: boolean): number {
  const r = spawnSync(process.execPath, [...process.execArgv, __filename], {
    env: { ...process.env, BENCH_RSS_CHILD: `${id}:${b ? 1 : 0}` },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`peak RSS child failed: ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

async function main(): Promise<void> {
  const info = await initBackend({ prefer: 'wasm' });
  if (!info.accelerators?.includes('openblas-matmul'))
    throw new Error('the OpenBLAS addon is not in use (npm run build:native)');
  if (process.env.BENCH_RSS_CHILD) return rssChild(process.env.BENCH_RSS_CHILD);
  const ids = (process.env.BENCH_MODELS ?? '1m,3m,12m').split(',').map((s) => s.trim()) as ModelId[];
  const blas = new BlasThreads((line) => process.stderr.write(`  ${line}\n`));
  const results = [];
  for (const id of ids) {
    if (!(id in MODELS)) throw new Error(`BENCH_MODELS: unknown model ${id}`);
    const r = await pair(id, blas);
    if (process.env.BENCH_RSS !== '0') {
      const rss = { a: peakRss(id, false), b: peakRss(id, true) };
      console.log(
        `${id}: peak RSS alone, ${WARMUP + STEPS} steps: ${rss.a.toFixed(0)} MiB (${LABELS.a}) -> ${rss.b.toFixed(0)} MiB (${LABELS.b})`,
      );
      r.peakRssMiB = rss;
    }
    results.push(r);
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
