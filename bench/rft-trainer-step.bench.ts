/**
 * Paired A/B of the GRPO trainer step (RftTrainer.trainStep: forward, backward, AdamW) at bench:rft's model and batch
 * (64 experiences: 8 prompts of 20–22 tokens × 8 responses of up to 12 tokens, left-padded; the reference log-probs
 * carried, as the explorer worker attaches them in the overlapped loop; Trinity's GRPO losses: ppo clip, k2 KL at
 * 0.001, the entropy term at coefficient 0), on 1 OpenBLAS thread as in that loop. A scores every column and cuts
 * the response's afterwards (`TRINITY_WORKBENCH_SCORE_TAIL=0`: the trainer before the tail), B only the response's
 * (the last layer and the head skip the prompt's positions). Two trainers on the same weights take turns step by step,
 * ABBA, so background load falls on both alike; the ratio of each pair is A's time over B's, wall and CPU (process
 * CPU time: less at the mercy of other processes). Each pair's metrics are compared (they must agree to float
 * tolerance: the same computation).
 *
 *   BENCH_STEPS=24 node --import tsx bench/rft-trainer-step.bench.ts
 */
import { loadavg } from 'node:os';
import { initBackend } from '../runtime/engine/backend';
import { initModel } from '../runtime/engine/lm/checkpoint';
import { SCORE_TAIL_ENV } from '../runtime/engine/logprobs';
import { Rng } from '../runtime/engine/random';
import type { Experience } from '../runtime/rft/experience';
import { RftTrainer, type TrainerOptions } from '../runtime/rft/trainer/train-step';
import { rftBenchModel } from './rft-model';

const STEPS = Number(process.env.BENCH_STEPS ?? 24);
const WARMUP = 3;

const options: TrainerOptions = {
  algorithm: {
    policyLossFn: 'ppo',
    policyLossFnArgs: null,
    klLossFn: 'k2',
    klLossFnArgs: { kl_coef: 0.001 },
    entropyLossFn: 'default',
    entropyLossFnArgs: { entropy_coef: 0 },
    lossAggMode: 'token-mean',
    useReference: true,
  },
  schedule: { lr: 5e-4, style: 'constant', warmupSteps: 0, totalSteps: 1000 },
  betas: [0.9, 0.999],
  weightDecay: 0.01,
  gradClip: 1,
  ppoEpochs: 1,
  temperature: 1,
  padTokenId: 0,
};

/** bench:rft's batch shape: 8 prompts × 8 responses, random tokens of the char vocabulary. */
function experiences(vocab: number, rng: Rng): Experience[] {
  const out: Experience[] = [];
  for (let p = 0; p < 8; p++) {
    const prompt = Array.from({ length: 20 + (p % 3) }, () => 1 + Math.floor(rng.uniform() * (vocab - 1)));
    for (let r = 0; r < 8; r++) {
      const n = r < 6 ? 12 : 6 + r;
      const response = Array.from({ length: n }, () => 1 + Math.floor(rng.uniform() * (vocab - 1)));
      const adv = rng.normal();
      out.push({
        eid: { batch: 0, task: p, run: r, step: 0, suffix: `${p}-${r}` },
        tokens: [...prompt, ...response],
        promptLength: prompt.length,
        logprobs: response.map(() => -3 + 0.1 * rng.normal()),
        refLogprobs: response.map(() => -3 + 0.1 * rng.normal()),
        reward: adv > 0 ? 1 : 0,
        advantages: response.map(() => adv),
      });
    }
  }
  return out;
}

/** Never called: every row carries its reference log-probs (as in the overlapped loop). */
const carried = (): never => {
  throw new Error('the reference log-probs are carried by the experiences');
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const info = await initBackend({ prefer: 'wasm' });
  const { cfg } = rftBenchModel();
  const sides = {
    a: new RftTrainer(initModel(cfg, 1), carried, options),
    b: new RftTrainer(initModel(cfg, 1), carried, options),
  };
  const rng = new Rng(3);
  const load0 = loadavg()[0];
  const ratios = { wall: [] as number[], cpu: [] as number[] };
  const times = { a: { wall: [] as number[], cpu: [] as number[] }, b: { wall: [] as number[], cpu: [] as number[] } };
  let worst = 0;
  const step = async (side: 'a' | 'b', exps: Experience[]) => {
    if (side === 'a') process.env[SCORE_TAIL_ENV] = '0';
    else delete process.env[SCORE_TAIL_ENV];
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const m = await sides[side].trainStep(exps);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    return { wall, cpu: (c.user + c.system) / 1000, m };
  };
  for (let i = 0; i < WARMUP + STEPS; i++) {
    const exps = experiences(cfg.vocabSize, rng);
    const order: ('a' | 'b')[] = i % 2 ? ['b', 'a'] : ['a', 'b'];
    const r: Record<string, Awaited<ReturnType<typeof step>>> = {};
    for (const s of order) r[s] = await step(s, exps);
    for (const k of ['actor/pg_loss', 'actor/kl_loss', 'actor/grad_norm', 'actor/entropy_loss']) {
      const [x, y] = [r.a.m[k], r.b.m[k]];
      if (x === undefined || y === undefined) throw new Error(`metric ${k} missing`);
      worst = Math.max(worst, Math.abs(x - y) / Math.max(1e-6, Math.abs(x)));
    }
    if (i < WARMUP) continue;
    for (const s of ['a', 'b'] as const) {
      times[s].wall.push(r[s].wall);
      times[s].cpu.push(r[s].cpu);
    }
    ratios.wall.push(r.a.wall / r.b.wall);
    ratios.cpu.push(r.a.cpu / r.b.cpu);
  }
  const f = (x: number): string => x.toFixed(1);
  console.log(
    `trainer step, bench:rft's model and batch (${info.name}${info.accelerators?.length ? ` + ${info.accelerators.join(', ')}` : ''}), ${STEPS} pairs ABBA, load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  );
  console.log(
    `  A every column, cut after:  wall ${f(median(times.a.wall))} ms, CPU ${f(median(times.a.cpu))} ms (medians)`,
  );
  console.log(`  B response columns only:    wall ${f(median(times.b.wall))} ms, CPU ${f(median(times.b.cpu))} ms`);
  console.log(
    `  A/B per pair: wall ${median(ratios.wall).toFixed(3)}x (${Math.min(...ratios.wall).toFixed(2)}–${Math.max(...ratios.wall).toFixed(2)}), CPU ${median(ratios.cpu).toFixed(3)}x (${Math.min(...ratios.cpu).toFixed(2)}–${Math.max(...ratios.cpu).toFixed(2)})`,
  );
  console.log(
    `  metrics (pg_loss, kl_loss, grad_norm, entropy_loss) of each pair: worst relative difference ${worst.toExponential(1)}`,
  );
}

void main();
