/**
 * `npm run bench:engine`: training and generation throughput of the local RL engine (tfjs on the backend
 * `initBackend` picks: wasm on a machine without tfjs-node or a GPU) next to PyTorch CPU running the same model, the
 * same batch and the same step in the same run (bench/engine_torch.py loads the safetensors this bench saves).
 *
 * For three Qwen2-style models (about 1 M, 3 M and 12 M parameters):
 * - training: one SFT-style step on B=8 sequences of T=64 predicted tokens (ids [8, 65]; mean token NLL via
 *   `scoreSequences`, backward, AdamW with global-norm clipping via `Trainer`) → tokens/s = B·T / median step time;
 *   on the OpenBLAS threads a train-only run gives its steps (blas-threads.ts: min(cores, 2)), the peak matmul too;
 * - generation: batch 8, 16-token prompts, 48 sampled tokens each with the KV cache (`generate`) → generated
 *   tokens/s = 8·48 / median run time (prefill included, as a rollout pays it);
 * - achieved training GFLOP/s ≈ (6·N + 12·L·T·d) · tokens / time (N = every parameter, the tied embedding once since it
 *   is also the output head; 12·L·T·d is attention's score and context matmuls, forward and backward), against
 *   the backend's measured peak (the best median float32 matmul GFLOP/s at 512³ and 1024³, measured before and
 *   after every model).
 * Ratios are ours / PyTorch (above 1: we are faster). A per-phase split (forward, backward, optimizer), a kernel
 * profile of one step and of one decode step, and every raw timing go to the JSON.
 *
 * Goal (issue 14): training ≥ 0.8x and generation ≥ 1.0x of PyTorch at 2 threads, at every size; one line per model
 * and peer says whether it is met (and whether that peer is on OpenBLAS, the issue's peer, or some other BLAS).
 *
 * Memory: peak RSS per model of both sides, and ours / PyTorch. Each model runs in a fresh Node process (this file,
 * re-run with BENCH_CHILD set), and each PyTorch peer in a fresh Python process per model, so each peak covers one
 * model: ours `process.resourceUsage().maxRSS` (ru_maxrss), PyTorch `resource.getrusage(RUSAGE_SELF).ru_maxrss`,
 * both read at process start (runtime and backend / torch imported, no model), after training (warm-up, timed steps;
 * ours also its profiled steps) and after generation, before each side's final peak-matmul measurement. BENCH_FRESH=0
 * runs every model in this one process instead: ours is then the high-water mark of everything run so far.
 *
 * Both sides are warmed up first (excluded) and timed interleaved, round by round with the order reversed every
 * other round, so background load on this shared machine falls on both alike; medians are reported.
 *
 * Peers: PyTorch as installed (Debian's python3-torch links libblas.so.3: OpenBLAS where libopenblas0-pthread is
 * installed, as on this machine and in CI, else the netlib reference BLAS, which is no fair peer: the goal line says
 * which one a peer loaded), plus PyTorch with every other OpenBLAS found in Debian's standard places (or the directories in
 * BENCH_TORCH_BLAS_DIRS, colon-separated, each holding a libblas.so.3) put first on its LD_LIBRARY_PATH. Each at the
 * thread counts in BENCH_TORCH_THREADS (default 2,1; the table's is the first) with OMP_WAIT_POLICY=PASSIVE unless set
 * (libgomp's spin-waiting makes a 2-thread torch many times slower whenever another process holds a core).
 *
 * Knobs: BENCH_MODELS=1m,3m,12m (subset; also tiny, 124m, 0.5b by name), the backend: $TRINITY_WORKBENCH_BACKEND,
 * BENCH_TORCH_DEVICE (default cpu; cuda puts the PyTorch peer on the GPU, torch >= 2.0), BENCH_SCALE=1 (multiplies timed step counts and peak-matmul repetitions), BENCH_PEAK=0 (skip the peak matmuls), BENCH_PYTHON (a python with
 * torch; default: the first of python3, /usr/bin/python3 that imports it), BENCH_OUT (default bench/results/engine.json),
 * BENCH_FRESH=0 (every model in one Node process).
 * Output: the tables on stdout, progress on stderr, everything in the JSON.
 */
import * as tf from '@tensorflow/tfjs-core';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BlasThreads, blasThreads, initBackend, type BackendInfo } from '../runtime/engine/backend';
import { generate } from '../runtime/engine/sampling';
import { scoreSequences } from '../runtime/engine/logprobs';
import { initModel, saveModel } from '../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type ModelConfig } from '../runtime/engine/lm/config';
import { parameterCount } from '../runtime/engine/lm/params';
import type { CausalLM } from '../runtime/engine/lm/transformer';
import { Rng } from '../runtime/engine/random';
import { AdamW } from '../runtime/engine/train/adamw';
import { Trainer } from '../runtime/engine/train/step';
import { findPython, peerSpecs, type PeerSpec } from './torch-peers';

const root = resolve(__dirname, '..');
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const TORCH_THREADS = (process.env.BENCH_TORCH_THREADS ?? '2,1')
  .split(',')
  .map(Number)
  .filter((x) => Number.isInteger(x) && x > 0);

const B = 8;
const T = 64;
const GEN_BATCH = 8;
const PROMPT = 16;
const NEW_TOKENS = 48;
const OPT = { lr: 1e-4, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0.01, clip: 1.0 };
/** Issue 14's targets: ours / PyTorch at this many threads, at every size. */
const GOAL = { threads: 2, train: 0.8, generate: 1.0 };

interface BenchModel {
  id: string;
  layers: number;
  hidden: number;
  heads: number;
  vocab: number;
  kvHeads?: number;
  intermediate?: number;
  /** Untimed warm-up rounds, timed training rounds, timed generation rounds (after one warm-up round). */
  warmup: number;
  steps: number;
  genReps: number;
}

const MODELS: BenchModel[] = [
  { id: '1m', layers: 4, hidden: 128, heads: 4, vocab: 512, warmup: 3, steps: 12, genReps: 5 },
  { id: '3m', layers: 4, hidden: 256, heads: 4, vocab: 512, warmup: 2, steps: 8, genReps: 4 },
  { id: '12m', layers: 6, hidden: 384, heads: 6, vocab: 4096, warmup: 1, steps: 5, genReps: 3 },
];

/** Run only when BENCH_MODELS names them (bench/gpu-check.sh): a dry-run size, GPT-2 small's and Qwen2.5-0.5B's shapes. */
const EXTRA_MODELS: BenchModel[] = [
  { id: 'tiny', layers: 1, hidden: 32, heads: 2, vocab: 64, warmup: 1, steps: 1, genReps: 1 },
  { id: '124m', layers: 12, hidden: 768, heads: 12, vocab: 50257, warmup: 1, steps: 5, genReps: 3 },
  {
    id: '0.5b',
    layers: 24,
    hidden: 896,
    heads: 14,
    kvHeads: 2,
    intermediate: 4864,
    vocab: 151936,
    warmup: 1,
    steps: 3,
    genReps: 2,
  },
];

const t0 = performance.now();

function progress(msg: string): void {
  const who = process.env.BENCH_CHILD ? ` ${process.env.BENCH_CHILD}` : '';
  process.stderr.write(`[bench:engine${who} ${((performance.now() - t0) / 1000).toFixed(0)}s] ${msg}\n`);
}

/** This process's peak RSS so far, MiB (ru_maxrss: KiB on Linux). */
function maxRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Peak RSS (MiB) of one side's process: at start (no model yet), after training, after generation (= its peak). */
interface RssPeaks {
  startupMiB: number;
  afterTrainMiB: number;
  peakMiB: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** 6·N + 12·L·T·d FLOPs per trained token (forward 2N + attention 4LTd, backward twice that). */
function trainFlopsPerToken(c: ModelConfig, n: number): number {
  return 6 * n + 12 * c.layers * T * c.hidden;
}

/** 2·N + 4·L·ctx·d FLOPs per generated token, at the mean context length of the run. */
function genFlopsPerToken(c: ModelConfig, n: number): number {
  return 2 * n + 4 * c.layers * (PROMPT + NEW_TOKENS / 2) * c.hidden;
}

/** Median GFLOP/s of an n³ float32 matmul on the active backend. */
async function matmulGflops(n: number, reps: number): Promise<number> {
  const a = tf.randomUniform([n, n], -1, 1, 'float32', 1) as tf.Tensor2D;
  const b = tf.randomUniform([n, n], -1, 1, 'float32', 2) as tf.Tensor2D;
  const once = async (): Promise<number> => {
    const s = performance.now();
    const c = tf.matMul(a, b);
    await c.data();
    const ms = performance.now() - s;
    c.dispose();
    return ms;
  };
  await once();
  await once();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) times.push(await once());
  const ms = median(times);
  a.dispose();
  b.dispose();
  return (2 * n ** 3) / (ms / 1000) / 1e9;
}

const peakSamples: Record<'512' | '1024', number[]> = { '512': [], '1024': [] };

/**
 * Our training step runs as a train-only run's does: on the OpenBLAS threads blas-threads.ts gives a training step
 * that nothing computes beside (min(cores, 2)); generation on 1, as the explorer's.
 */
const trainingBlas = new BlasThreads();

async function samplePeak(): Promise<void> {
  // BENCH_PEAK=0 skips it (a dry run on SwiftShader, where one 1024³ matmul takes half a minute).
  if (process.env.BENCH_PEAK === '0') return;
  // At the thread count our training step runs on (the peak it could reach).
  await trainingBlas.training('nothing', async () => {
    peakSamples['512'].push(await matmulGflops(512, Math.max(1, Math.round(15 * SCALE))));
    peakSamples['1024'].push(await matmulGflops(1024, Math.max(1, Math.round(7 * SCALE))));
  });
}

function peakGflops(): number {
  if (peakSamples['512'].length === 0) return NaN;
  return Math.max(...peakSamples['512'], ...peakSamples['1024']);
}

// ---------------------------------------------------------------------------------------------------------------
// Profiling our step

interface KernelStat {
  count: number;
  ms: number;
}

interface MatmulStat extends KernelStat {
  gflops: number;
}

interface MatmulCall {
  batch: number;
  m: number;
  k: number;
  n: number;
  transposeA: boolean;
  transposeB: boolean;
  ms: number;
}

interface PhaseProfile {
  /** Kernels dispatched (registered backend kernels only; customGrad scopes are not counted). */
  kernels: number;
  /** Sum of their times under tf.profile (which adds overhead of its own: compare shares, not totals). */
  kernelMs: number;
  byKernel: Record<string, KernelStat>;
}

interface Profile {
  forward: PhaseProfile;
  forwardBackward: PhaseProfile;
  optimizer: PhaseProfile;
  /** One generate() with 1 new token (prefill) and the extra kernels of one more token (one decode step). */
  prefillKernels: number;
  decodeStepKernels: number;
  /** BatchMatMul calls of one forward+backward, split by the wasm path they take (XNNPACK only for un-transposed, batch 1). */
  matmul: { fast: MatmulStat; slow: MatmulStat; slowByShape: Record<string, MatmulStat> };
}

/**
 * Wraps the active backend's BatchMatMul kernel to record every call's shape, flags and time while `fn` runs.
 * On wasm, calls with a transpose flag or a batch above 1 run on a scalar loop instead of XNNPACK.
 */
function recordMatmuls(fn: () => void): MatmulCall[] {
  const backendName = tf.getBackend();
  const original = tf.getKernel('BatchMatMul', backendName);
  if (!original) {
    fn();
    return [];
  }
  const calls: MatmulCall[] = [];
  tf.unregisterKernel('BatchMatMul', backendName);
  tf.registerKernel({
    ...original,
    kernelFunc: (args) => {
      const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const { transposeA, transposeB } = args.attrs as unknown as { transposeA: boolean; transposeB: boolean };
      const ra = a.shape.length;
      const rb = b.shape.length;
      const batch = Math.max(
        a.shape.slice(0, -2).reduce((x, y) => x * y, 1),
        b.shape.slice(0, -2).reduce((x, y) => x * y, 1),
      );
      const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
      const k = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
      const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
      const s = performance.now();
      const out = original.kernelFunc(args);
      calls.push({ batch, m, k, n, transposeA, transposeB, ms: performance.now() - s });
      return out;
    },
  });
  try {
    fn();
  } finally {
    tf.unregisterKernel('BatchMatMul', backendName);
    tf.registerKernel(original);
  }
  return calls;
}

async function profilePhase(fn: () => unknown): Promise<PhaseProfile> {
  const info = await tf.profile(async () => {
    await fn();
    return [] as unknown as tf.TensorContainer;
  });
  const backendName = tf.getBackend();
  const byKernel: Record<string, KernelStat> = {};
  let kernels = 0;
  let kernelMs = 0;
  for (const k of info.kernels) {
    if (!tf.getKernel(k.name, backendName)) continue;
    const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
    kernels++;
    kernelMs += ms;
    const s = (byKernel[k.name] ??= { count: 0, ms: 0 });
    s.count++;
    s.ms += ms;
  }
  return { kernels, kernelMs, byKernel };
}

/** Forward / backward / AdamW times (medians of 3; the same work as Trainer.step) and a kernel profile. */
async function profileOurs(
  model: CausalLM,
  prompts: number[][],
  lossFn: () => tf.Scalar,
  optimizer: AdamW,
): Promise<{ forwardMs: number; backwardMs: number; optimizerMs: number; profile: Profile }> {
  const vars = optimizer.variables as tf.Variable[];
  const fwd: number[] = [];
  const fb: number[] = [];
  const opt: number[] = [];
  for (let s = 0; s < 3; s++) {
    let start = performance.now();
    const loss = tf.tidy(lossFn);
    await loss.data();
    fwd.push(performance.now() - start);
    loss.dispose();
    start = performance.now();
    const { value, grads } = tf.variableGrads(lossFn, vars);
    await value.data();
    fb.push(performance.now() - start);
    value.dispose();
    start = performance.now();
    await optimizer.apply(
      vars.map((v) => grads[v.name]),
      OPT.lr,
    );
    opt.push(performance.now() - start);
  }

  const forward = await profilePhase(async () => {
    const loss = tf.tidy(lossFn);
    await loss.data();
    loss.dispose();
  });
  let pending: { value: tf.Scalar; grads: tf.NamedTensorMap } | undefined;
  const forwardBackward = await profilePhase(() => {
    pending = tf.variableGrads(lossFn, vars);
  });
  const optimizerProfile = await profilePhase(() =>
    optimizer.apply(
      vars.map((v) => pending!.grads[v.name]),
      OPT.lr,
    ),
  );
  pending!.value.dispose();
  const genKernels = async (maxNewTokens: number): Promise<number> =>
    (await profilePhase(() => generate(model, prompts, { maxNewTokens, temperature: 1, seed: 7, stopTokenIds: [] })))
      .kernels;
  const prefillKernels = await genKernels(1);
  const decodeStepKernels = (await genKernels(2)) - prefillKernels;

  const calls = recordMatmuls(() => {
    const { value, grads } = tf.variableGrads(lossFn, vars);
    value.dispose();
    tf.dispose(grads);
  });
  const stat = (cs: MatmulCall[]): MatmulStat => {
    const ms = cs.reduce((x, c) => x + c.ms, 0);
    const flops = cs.reduce((x, c) => x + 2 * c.batch * c.m * c.k * c.n, 0);
    return { count: cs.length, ms, gflops: ms > 0 ? flops / (ms / 1000) / 1e9 : 0 };
  };
  const slowCalls = calls.filter((c) => c.transposeA || c.transposeB || c.batch > 1);
  const slowByShape: Record<string, MatmulCall[]> = {};
  for (const c of slowCalls)
    (slowByShape[`[${c.batch}] ${c.m}x${c.k}x${c.n}${c.transposeA ? ' tA' : ''}${c.transposeB ? ' tB' : ''}`] ??=
      []).push(c);
  return {
    forwardMs: median(fwd),
    backwardMs: median(fb) - median(fwd),
    optimizerMs: median(opt),
    profile: {
      forward,
      forwardBackward,
      optimizer: optimizerProfile,
      prefillKernels,
      decodeStepKernels,
      matmul: {
        fast: stat(calls.filter((c) => !slowCalls.includes(c))),
        slow: stat(slowCalls),
        slowByShape: Object.fromEntries(Object.entries(slowByShape).map(([k, v]) => [k, stat(v)])),
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The PyTorch peers

/** One bench/engine_torch.py process: one JSON request per line, one JSON reply per line. */
class TorchPeer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;

  constructor(python: string, modelDir: string, inputsPath: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(python, [join(root, 'bench', 'engine_torch.py'), modelDir, inputsPath], { env });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => process.stderr.write(d));
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  async next<R>(): Promise<R> {
    const r = await this.lines.next();
    if (r.done) throw new Error('engine_torch.py exited early (its stderr is above)');
    const v = JSON.parse(r.value) as R & { error?: string };
    if (v.error) throw new Error(`engine_torch.py: ${v.error}`);
    return v;
  }

  async request<R>(req: Record<string, unknown>): Promise<R> {
    this.child.stdin.write(`${JSON.stringify(req)}\n`);
    return this.next<R>();
  }

  close(): void {
    this.child.stdin.end(`${JSON.stringify({ op: 'quit' })}\n`);
  }
}

interface TorchReady {
  torch_version: string;
  params: number;
  blas: string;
  blas_lib: string;
  default_threads: number;
  startup_rss_kb: number;
}

interface TorchRss {
  max_rss_kb: number;
  rss_kb: number | null;
}

interface GoalCheck {
  threads: number;
  train: { ratio: number; target: number; met: boolean };
  generate: { ratio: number; target: number; met: boolean };
}

interface TorchStep {
  ms: number;
  forward_ms: number;
  backward_ms: number;
  optimizer_ms: number;
  loss: number;
}

interface TorchSide {
  threads: number;
  train: {
    stepMs: number[];
    medianStepMs: number;
    tokPerSec: number;
    forwardMs: number;
    backwardMs: number;
    optimizerMs: number;
    gflops: number;
  };
  generate: { runMs: number[]; medianMs: number; tokPerSec: number; gflops: number };
}

interface PeerResult {
  label: string;
  torchVersion: string;
  blasLib: string;
  /** By thread count. */
  threads: Record<string, TorchSide>;
  /** Ours / this peer at the first thread count. */
  ratio: { train: number; generate: number };
  /** Ours / this peer's best thread count. */
  ratioToBest: { train: number; generate: number };
  initialLoss: number;
  matmulGflops: Record<string, number>;
  /** Whether the BLAS this torch loaded is OpenBLAS (the issue's peer). */
  openblas: boolean;
  /** Issue 14's targets against this peer at GOAL.threads; null when that thread count was not measured. */
  goal: GoalCheck | null;
  /** This peer's Python process (one per model): peak RSS. */
  rss: RssPeaks;
  /** Ours / this peer: peak RSS of the whole model's run, and the growth over each process's start. */
  rssRatio: { peak: number; overStartup: number };
}

/** Runs `jobs` in rounds, reversing their order every other round, so no side always runs first. */
async function interleaved(rounds: number, jobs: (() => Promise<void> | void)[]): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const j of r % 2 === 0 ? jobs : [...jobs].reverse()) await j();
  }
}

function randomIds(rng: Rng, rows: number, cols: number, vocab: number): number[][] {
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => rng.nextU32() % vocab));
}

// ---------------------------------------------------------------------------------------------------------------
// One model

interface Row {
  model: string;
  config: Record<string, unknown>;
  params: number;
  trainFlopsPerToken: number;
  ours: {
    train: {
      stepMs: number[];
      medianStepMs: number;
      tokPerSec: number;
      forwardMs: number;
      backwardMs: number;
      optimizerMs: number;
      gflops: number;
      pctOfPeak: number;
      initialLoss: number;
      /** OpenBLAS threads the step ran on (undefined without the addon). */
      blasThreads: number | undefined;
    };
    generate: { runMs: number[]; medianMs: number; tokPerSec: number; prefillMs: number; gflops: number };
    profile: Profile;
    /**
     * Tensors still registered after the training part, its inputs and its optimizer were disposed: the model's two
     * RoPE tables (built on first use, kept by design) and anything leaked.
     */
    tensorsLeaked: number;
    /** Our process's peak RSS; `rssScope` says what it covers. */
    rss: RssPeaks;
    rssScope: string;
  };
  peers: Record<string, PeerResult>;
}

async function benchModel(
  spec: BenchModel,
  python: string | undefined,
  work: string,
  peerList: PeerSpec[],
  threads: number[],
  oursStartupMiB: number,
  rssScope: string,
): Promise<Row> {
  const config = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: spec.layers,
      hidden: spec.hidden,
      heads: spec.heads,
      kvHeads: spec.kvHeads,
      intermediate: spec.intermediate,
      vocabSize: spec.vocab,
      maxPositions: 128,
      eosTokenIds: [0],
    }),
  );
  const n = parameterCount(config);
  progress(
    `model ${spec.id}: d${spec.hidden} L${spec.layers} H${spec.heads} V${spec.vocab} ff${config.intermediate}, ${fmt(n)} params`,
  );
  const model = initModel(config, 1234);
  const dir = join(work, spec.id);
  await saveModel(model, dir);
  const rng = new Rng(99);
  const trainIds = randomIds(rng, B, T + 1, spec.vocab);
  const prompts = randomIds(rng, GEN_BATCH, PROMPT, spec.vocab);
  const inputsPath = join(work, `${spec.id}.inputs.json`);
  const genParams = { maxNewTokens: NEW_TOKENS, temperature: 1, seed: 7, stopTokenIds: [] as number[] };
  writeFileSync(
    inputsPath,
    JSON.stringify({
      train_ids: trainIds,
      prompts,
      lr: OPT.lr,
      betas: OPT.betas,
      eps: OPT.eps,
      weight_decay: OPT.weightDecay,
      clip: OPT.clip,
      new_tokens: NEW_TOKENS,
      temperature: 1,
      seed: 7,
    }),
  );
  const peers = peerList.map((p) => ({ spec: p, proc: new TorchPeer(python!, dir, inputsPath, p.env) }));
  try {
    const ready = new Map<string, TorchReady>();
    for (const p of peers) {
      const r = await p.proc.next<TorchReady>();
      if (r.params !== n) throw new Error(`${p.spec.label} counted ${r.params} parameters, the engine ${n}`);
      ready.set(p.spec.id, r);
    }
    type Stats = { train: TorchStep[]; trainMs: number[]; genMs: number[] };
    const key = (id: string, th: number): string => `${id}@${th}`;
    const torch = new Map<string, Stats>();
    for (const p of peers)
      for (const th of threads) torch.set(key(p.spec.id, th), { train: [], trainMs: [], genMs: [] });

    // ---- training: every side takes its first step from the same saved weights (same initial loss) ----
    const tensorsBefore = tf.memory().numTensors;
    const ids = tf.tensor2d(trainIds, [B, T + 1], 'int32');
    const lossFn = (): tf.Scalar => tf.neg(tf.mean(scoreSequences(model, ids).logprobs)) as tf.Scalar;
    const optimizer = new AdamW(model.trainableVariables(), {
      betas: OPT.betas,
      eps: OPT.eps,
      weightDecay: OPT.weightDecay,
      clipGradNorm: OPT.clip,
    });
    const trainer = new Trainer(optimizer, { lr: OPT.lr, style: 'constant', warmupSteps: 0, totalSteps: 1_000_000 });
    const ours = {
      trainMs: [] as number[],
      genMs: [] as number[],
      losses: [] as number[],
      blasThreads: undefined as number | undefined,
    };
    let timing = false;
    const oursStep = async (): Promise<void> => {
      const s = performance.now();
      const r = await trainingBlas.training('nothing', () => {
        ours.blasThreads = blasThreads();
        return trainer.step([lossFn]);
      });
      const ms = performance.now() - s;
      ours.losses.push(r.loss);
      if (timing) ours.trainMs.push(ms);
    };
    const torchJobs = (op: 'train' | 'gen') =>
      peers.flatMap((p) =>
        threads.map((th) => async (): Promise<void> => {
          const st = torch.get(key(p.spec.id, th))!;
          if (op === 'train') {
            const r = await p.proc.request<TorchStep>({ op, threads: th });
            st.train.push(r);
            if (timing) st.trainMs.push(r.ms);
          } else {
            const r = await p.proc.request<{ ms: number; tokens: number }>({ op, threads: th });
            if (r.tokens !== GEN_BATCH * NEW_TOKENS) throw new Error(`${p.spec.label} generated ${r.tokens} tokens`);
            if (timing) st.genMs.push(r.ms);
          }
        }),
      );
    const trainJobs = [oursStep, ...torchJobs('train')];
    await interleaved(spec.warmup, trainJobs);
    timing = true;
    const steps = Math.max(3, Math.round(spec.steps * SCALE));
    await interleaved(steps, trainJobs);
    const sideList = (pick: (s: Stats) => number[]): string =>
      peers
        .flatMap((p) =>
          threads.map((th) => `${p.spec.id} ${th}thr ${median(pick(torch.get(key(p.spec.id, th))!)).toFixed(0)}`),
        )
        .join(', ');
    progress(
      `  train ms/step, median of ${steps}: ours ${median(ours.trainMs).toFixed(0)}; ${sideList((s) => s.trainMs)}`,
    );
    const phases = await trainingBlas.training('nothing', () => profileOurs(model, prompts, lossFn, optimizer));
    optimizer.dispose();
    ids.dispose();
    const tensorsLeaked = tf.memory().numTensors - tensorsBefore;
    const oursAfterTrainMiB = maxRssMiB();
    const torchAfterTrain = new Map<string, TorchRss>();
    for (const p of peers) torchAfterTrain.set(p.spec.id, await p.proc.request<TorchRss>({ op: 'rss' }));

    // ---- generation: sampled at temperature 1, no stop tokens, so every row produces all NEW_TOKENS ----
    timing = false;
    const oursGen = async (): Promise<void> => {
      const s = performance.now();
      const out = await generate(model, prompts, genParams);
      const ms = performance.now() - s;
      const total = out.reduce((x, c) => x + c.tokens.length, 0);
      if (total !== GEN_BATCH * NEW_TOKENS)
        throw new Error(`generate produced ${total} tokens, expected ${GEN_BATCH * NEW_TOKENS}`);
      if (timing) ours.genMs.push(ms);
    };
    const genJobs = [oursGen, ...torchJobs('gen')];
    await interleaved(1, genJobs);
    timing = true;
    const genReps = Math.max(2, Math.round(spec.genReps * SCALE));
    await interleaved(genReps, genJobs);
    const prefills: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = performance.now();
      await generate(model, prompts, { ...genParams, maxNewTokens: 1 });
      prefills.push(performance.now() - s);
    }
    const prefillMs = median(prefills);
    const oursRss: RssPeaks = { startupMiB: oursStartupMiB, afterTrainMiB: oursAfterTrainMiB, peakMiB: maxRssMiB() };
    const torchRss = new Map<string, RssPeaks>();
    for (const p of peers) {
      const end = await p.proc.request<TorchRss>({ op: 'rss' });
      torchRss.set(p.spec.id, {
        startupMiB: ready.get(p.spec.id)!.startup_rss_kb / 1024,
        afterTrainMiB: torchAfterTrain.get(p.spec.id)!.max_rss_kb / 1024,
        peakMiB: end.max_rss_kb / 1024,
      });
    }
    progress(
      `  peak RSS MiB: ours ${oursRss.peakMiB.toFixed(0)} (start ${oursRss.startupMiB.toFixed(0)}); ${peers.map((p) => `${p.spec.id} ${torchRss.get(p.spec.id)!.peakMiB.toFixed(0)} (start ${torchRss.get(p.spec.id)!.startupMiB.toFixed(0)})`).join(', ')}`,
    );
    progress(
      `  generate ms per ${GEN_BATCH}×${NEW_TOKENS}, median of ${genReps}: ours ${median(ours.genMs).toFixed(0)}; ${sideList((s) => s.genMs)}`,
    );

    const flopsTok = trainFlopsPerToken(config, n);
    const genFlopsTok = genFlopsPerToken(config, n);
    const oursTrainTok = (B * T) / (median(ours.trainMs) / 1000);
    const oursGenTok = (GEN_BATCH * NEW_TOKENS) / (median(ours.genMs) / 1000);
    const peerResults: Record<string, PeerResult> = {};
    for (const p of peers) {
      const sides: Record<string, TorchSide> = {};
      for (const th of threads) {
        const st = torch.get(key(p.spec.id, th))!;
        const timed = st.train.slice(spec.warmup);
        const trainTok = (B * T) / (median(st.trainMs) / 1000);
        const genTok = (GEN_BATCH * NEW_TOKENS) / (median(st.genMs) / 1000);
        sides[`${th}`] = {
          threads: th,
          train: {
            stepMs: st.trainMs,
            medianStepMs: median(st.trainMs),
            tokPerSec: trainTok,
            forwardMs: median(timed.map((x) => x.forward_ms)),
            backwardMs: median(timed.map((x) => x.backward_ms)),
            optimizerMs: median(timed.map((x) => x.optimizer_ms)),
            gflops: (flopsTok * trainTok) / 1e9,
          },
          generate: {
            runMs: st.genMs,
            medianMs: median(st.genMs),
            tokPerSec: genTok,
            gflops: (genFlopsTok * genTok) / 1e9,
          },
        };
      }
      const first = sides[`${threads[0]}`];
      const all = Object.values(sides);
      const r = ready.get(p.spec.id)!;
      const atGoal = sides[`${GOAL.threads}`];
      const goal: GoalCheck | null = atGoal
        ? {
            threads: GOAL.threads,
            train: {
              ratio: oursTrainTok / atGoal.train.tokPerSec,
              target: GOAL.train,
              met: oursTrainTok / atGoal.train.tokPerSec >= GOAL.train,
            },
            generate: {
              ratio: oursGenTok / atGoal.generate.tokPerSec,
              target: GOAL.generate,
              met: oursGenTok / atGoal.generate.tokPerSec >= GOAL.generate,
            },
          }
        : null;
      const rss = torchRss.get(p.spec.id)!;
      peerResults[p.spec.id] = {
        label: p.spec.label,
        torchVersion: r.torch_version,
        blasLib: r.blas_lib,
        threads: sides,
        ratio: { train: oursTrainTok / first.train.tokPerSec, generate: oursGenTok / first.generate.tokPerSec },
        ratioToBest: {
          train: oursTrainTok / Math.max(...all.map((x) => x.train.tokPerSec)),
          generate: oursGenTok / Math.max(...all.map((x) => x.generate.tokPerSec)),
        },
        initialLoss: torch.get(key(p.spec.id, threads[0]))!.train[0].loss,
        matmulGflops: await p.proc.request<Record<string, number>>({ op: 'peak', threads: threads[0] }),
        openblas: /openblas/i.test(r.blas_lib),
        goal,
        rss,
        rssRatio: {
          peak: oursRss.peakMiB / rss.peakMiB,
          overStartup: (oursRss.peakMiB - oursRss.startupMiB) / (rss.peakMiB - rss.startupMiB),
        },
      };
    }
    progress(
      `  initial loss: ours ${ours.losses[0].toFixed(5)}; ${peers.map((p) => `${p.spec.id} ${peerResults[p.spec.id].initialLoss.toFixed(5)}`).join(', ')}`,
    );
    await samplePeak();
    return {
      model: spec.id,
      config: {
        hidden: spec.hidden,
        layers: spec.layers,
        heads: spec.heads,
        headDim: config.headDim,
        vocab: spec.vocab,
        intermediate: config.intermediate,
        tiedEmbeddings: config.tieEmbeddings,
      },
      params: n,
      trainFlopsPerToken: flopsTok,
      ours: {
        train: {
          stepMs: ours.trainMs,
          medianStepMs: median(ours.trainMs),
          tokPerSec: oursTrainTok,
          forwardMs: phases.forwardMs,
          backwardMs: phases.backwardMs,
          optimizerMs: phases.optimizerMs,
          gflops: (flopsTok * oursTrainTok) / 1e9,
          pctOfPeak: 0, // filled in once every peak sample is in
          initialLoss: ours.losses[0],
          blasThreads: ours.blasThreads,
        },
        generate: {
          runMs: ours.genMs,
          medianMs: median(ours.genMs),
          tokPerSec: oursGenTok,
          prefillMs,
          gflops: (genFlopsTok * oursGenTok) / 1e9,
        },
        profile: phases.profile,
        tensorsLeaked,
        rss: oursRss,
        rssScope,
      },
      peers: peerResults,
    };
  } finally {
    for (const p of peers) p.proc.close();
    model.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------------

function report(rows: Row[], backend: BackendInfo, peerList: PeerSpec[], threads: number[]): string {
  const th0 = `${threads[0]}`;
  const peak = peakGflops();
  const lines = [
    `engine benchmark: B=${B} T=${T} training step (mean token NLL, backward, AdamW with clip ${OPT.clip}); generation batch ${GEN_BATCH}, prompt ${PROMPT}, ${NEW_TOKENS} new tokens (KV cache); interleaved timings, medians`,
    `ours: tfjs ${tf.version_core} on ${backend.name} (${backend.threads ?? '?'} thread${backend.threads === 1 ? '' : 's'}${backend.accelerators?.length ? `, matmuls on ${backend.accelerators.join(', ')}` : ''}${rows[0]?.ours.train.blasThreads ? `; training on ${rows[0].ours.train.blasThreads} OpenBLAS thread${rows[0].ours.train.blasThreads === 1 ? '' : 's'}, generation on 1` : ''}); backend peak ${peak.toFixed(1)} GFLOP/s (best f32 matmul median: 512³ ${Math.max(...peakSamples['512']).toFixed(1)}, 1024³ ${Math.max(...peakSamples['1024']).toFixed(1)})`,
    `training GFLOP/s = (6·N + 12·L·T·d) · tokens/s, T = ${T}; ratios are ours / PyTorch (above 1: we are faster)`,
  ];
  for (const p of peerList) {
    const any = rows[0]?.peers[p.id];
    if (!any) continue;
    lines.push(
      '',
      `vs ${p.label}: torch ${any.torchVersion}, ${th0} threads (BLAS: ${any.blasLib}; its own 512³/1024³ matmul: ${fmt(any.matmulGflops['512'], 1)}/${fmt(any.matmulGflops['1024'], 1)} GFLOP/s)`,
      '',
      '| model | params | ours train tok/s | torch train tok/s | ratio | ours gen tok/s | torch gen tok/s | ratio | ours train GFLOP/s | % of backend peak |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map((r) => {
        const t = r.peers[p.id].threads[th0];
        return `| ${r.model} | ${fmt(r.params)} | ${fmt(r.ours.train.tokPerSec)} | ${fmt(t.train.tokPerSec)} | ${r.peers[p.id].ratio.train.toFixed(2)}x | ${fmt(r.ours.generate.tokPerSec)} | ${fmt(t.generate.tokPerSec)} | ${r.peers[p.id].ratio.generate.toFixed(2)}x | ${r.ours.train.gflops.toFixed(1)} | ${r.ours.train.pctOfPeak.toFixed(0)}% |`;
      }),
      `  at its best thread count (of ${threads.join(', ')}): ${rows.map((r) => `${r.model} train ${r.peers[p.id].ratioToBest.train.toFixed(2)}x, gen ${r.peers[p.id].ratioToBest.generate.toFixed(2)}x`).join('; ')}`,
    );
  }
  if (peerList.length === 0) {
    lines.push(
      '',
      'no PyTorch peer (no python with torch): the engine alone',
      '',
      '| model | params | ours train tok/s | ours gen tok/s | ours train GFLOP/s | % of backend peak |',
      '|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.model} | ${fmt(r.params)} | ${fmt(r.ours.train.tokPerSec)} | ${fmt(r.ours.generate.tokPerSec)} | ${r.ours.train.gflops.toFixed(1)} | ${r.ours.train.pctOfPeak.toFixed(0)}% |`,
      ),
    );
  }
  lines.push('', 'Where our training step goes (medians of 3 split steps; kernel counts from tf.profile):');
  const native = backend.accelerators?.includes('openblas-matmul') ?? false;
  for (const r of rows) {
    const pr = r.ours.profile;
    lines.push(
      `  ${r.model}: step ${r.ours.train.medianStepMs.toFixed(0)} ms ≈ forward ${r.ours.train.forwardMs.toFixed(0)} + backward ${r.ours.train.backwardMs.toFixed(0)} + AdamW ${r.ours.train.optimizerMs.toFixed(0)} ms; ` +
        `${pr.forwardBackward.kernels + pr.optimizer.kernels} kernels (fwd+bwd ${pr.forwardBackward.kernels}, AdamW ${pr.optimizer.kernels}); ` +
        `BatchMatMul ${native ? 'transposed/batched (OpenBLAS)' : 'slow path'} ${pr.matmul.slow.ms.toFixed(0)} ms (${pr.matmul.slow.count} calls, ${pr.matmul.slow.gflops.toFixed(1)} GFLOP/s), ${native ? 'plain 2-D (OpenBLAS)' : 'XNNPACK'} ${pr.matmul.fast.ms.toFixed(0)} ms (${pr.matmul.fast.count} calls, ${pr.matmul.fast.gflops.toFixed(1)} GFLOP/s); ` +
        `decode step ${pr.decodeStepKernels} kernels; initial loss ${r.ours.train.initialLoss.toFixed(4)}${
          peerList.length
            ? ` (torch ${Object.values(r.peers)
                .map((x) => x.initialLoss.toFixed(4))
                .join(', ')})`
            : ''
        }`,
    );
  }
  lines.push(
    '',
    `Peak RSS, MiB (${rows[0]?.ours.rssScope ?? ''}; PyTorch: a fresh Python process per model and peer): at start (no model) / after training / peak (after generation)`,
    '',
    `| model | ours | ${peerList
      .filter((p) => rows[0]?.peers[p.id])
      .map((p) => `${p.id} | ours/${p.id} peak | ours/${p.id} growth over start`)
      .join(' | ')} |`,
    `|---|---|${peerList
      .filter((p) => rows[0]?.peers[p.id])
      .map(() => '---|---|---|')
      .join('')}`,
    ...rows.map((r) => {
      const f = (m: RssPeaks): string =>
        `${m.startupMiB.toFixed(0)} / ${m.afterTrainMiB.toFixed(0)} / ${m.peakMiB.toFixed(0)}`;
      const cells = peerList
        .filter((p) => r.peers[p.id])
        .map(
          (p) =>
            `${f(r.peers[p.id].rss)} | ${r.peers[p.id].rssRatio.peak.toFixed(2)}x | ${r.peers[p.id].rssRatio.overStartup.toFixed(2)}x`,
        );
      return `| ${r.model} | ${f(r.ours.rss)} | ${cells.join(' | ')} |`;
    }),
    '',
  );
  for (const p of peerList) {
    if (!rows[0]?.peers[p.id]) continue;
    const blas = rows[0].peers[p.id].openblas ? "OpenBLAS, the issue's peer" : "NOT OpenBLAS: not the issue's peer";
    for (const r of rows) {
      const g = r.peers[p.id].goal;
      const verdict = (x: { ratio: number; target: number; met: boolean }): string =>
        `${x.ratio.toFixed(2)}x ${x.met ? '≥' : '<'} ${x.target.toFixed(1)}x ${x.met ? 'met' : 'NOT met'}`;
      lines.push(
        g
          ? `Goal ${r.model} (issue 14: training ≥ ${GOAL.train}x, generation ≥ ${GOAL.generate.toFixed(1)}x of PyTorch at ${GOAL.threads} threads) vs ${p.label} (${blas}): training ${verdict(g.train)}; generation ${verdict(g.generate)}.`
          : `Goal ${r.model} (issue 14, at ${GOAL.threads} threads) vs ${p.label}: not measured (BENCH_TORCH_THREADS has no ${GOAL.threads}).`,
      );
    }
  }
  return lines.join('\n');
}

/** What a child process (one model, BENCH_CHILD) hands back to the parent. */
interface ChildResult {
  row: Row;
  backend: BackendInfo;
  peakSamples: Record<'512' | '1024', number[]>;
}

/** Runs one model in a fresh Node process (this file with BENCH_CHILD=id), so its peak RSS covers that model alone. */
async function benchModelInChild(spec: BenchModel, work: string): Promise<ChildResult> {
  const out = join(work, `${spec.id}.child.json`);
  const child = spawn(process.execPath, [...process.execArgv, __filename], {
    env: { ...process.env, BENCH_CHILD: spec.id, BENCH_CHILD_OUT: out },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const forward = (sig: NodeJS.Signals): void => {
    child.kill(sig);
  };
  process.once('SIGTERM', forward);
  process.once('SIGINT', forward);
  try {
    const code = await new Promise<number | null>((res, rej) => {
      child.on('error', rej);
      child.on('exit', (c) => res(c));
    });
    if (code !== 0) throw new Error(`bench:engine child for ${spec.id} exited with ${code} (its stderr is above)`);
  } finally {
    process.removeListener('SIGTERM', forward);
    process.removeListener('SIGINT', forward);
  }
  return JSON.parse(readFileSync(out, 'utf8')) as ChildResult;
}

function selectedModels(): BenchModel[] {
  const wanted = (process.env.BENCH_MODELS ?? MODELS.map((m) => m.id).join(','))
    .split(',')
    .map((s) => s.trim().toLowerCase());
  const models = [...MODELS, ...EXTRA_MODELS].filter((m) => wanted.includes(m.id));
  if (models.length === 0)
    throw new Error(
      `BENCH_MODELS: none of ${wanted.join(', ')} is one of ${[...MODELS, ...EXTRA_MODELS].map((m) => m.id).join(', ')}`,
    );
  return models;
}

const FRESH_SCOPE = 'ours: a fresh Node process per model';
const SHARED_SCOPE =
  'ours: every model in one Node process (BENCH_FRESH=0), so a high-water mark of the models before it too';

/** BENCH_CHILD: one model in this process; the result goes to BENCH_CHILD_OUT for the parent. */
async function childMain(id: string, out: string): Promise<void> {
  const spec = [...MODELS, ...EXTRA_MODELS].find((m) => m.id === id);
  if (!spec) throw new Error(`BENCH_CHILD: no model ${id}`);
  const backend = await initBackend({ log: (m) => progress(m) });
  const startup = maxRssMiB();
  const python = findPython();
  const peerList = python ? peerSpecs() : [];
  await samplePeak();
  const work = mkdtempSync(join(tmpdir(), 'bench-engine-'));
  try {
    const row = await benchModel(spec, python, work, peerList, TORCH_THREADS, startup, FRESH_SCOPE);
    const result: ChildResult = { row, backend, peakSamples };
    writeFileSync(out, JSON.stringify(result));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_CHILD) return childMain(process.env.BENCH_CHILD, process.env.BENCH_CHILD_OUT ?? '');
  const models = selectedModels();
  if (TORCH_THREADS.length === 0) throw new Error('BENCH_TORCH_THREADS: no positive thread count');
  const fresh = process.env.BENCH_FRESH !== '0';
  const python = findPython();
  if (!python)
    progress(
      'WARNING: no python with torch (python3, /usr/bin/python3; set BENCH_PYTHON): measuring the engine alone, no ratios',
    );
  const peerList = python ? peerSpecs() : [];
  let backend: BackendInfo | undefined;
  if (!fresh) {
    backend = await initBackend({ log: (m) => progress(m) });
    await samplePeak();
    progress(
      `backend matmul: 512³ ${peakSamples['512'][0]?.toFixed(1) ?? 'not measured'}, 1024³ ${peakSamples['1024'][0]?.toFixed(1) ?? 'not measured'} GFLOP/s`,
    );
  }
  progress(
    `peers (${python}, ${TORCH_THREADS.join(' and ')} threads): ${peerList.map((p) => p.label).join('; ')}; ${fresh ? FRESH_SCOPE : SHARED_SCOPE}`,
  );

  const work = mkdtempSync(join(tmpdir(), 'bench-engine-'));
  const rows: Row[] = [];
  try {
    for (const spec of models) {
      if (fresh) {
        const r = await benchModelInChild(spec, work);
        backend ??= r.backend;
        for (const k of ['512', '1024'] as const) peakSamples[k].push(...r.peakSamples[k]);
        rows.push(r.row);
      } else {
        rows.push(await benchModel(spec, python, work, peerList, TORCH_THREADS, maxRssMiB(), SHARED_SCOPE));
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!backend) throw new Error('no model ran');
  progress(`ours: ${backend.name}, ${backend.threads ?? '?'} thread(s)`);
  const peak = peakGflops();
  for (const r of rows) r.ours.train.pctOfPeak = (100 * r.ours.train.gflops) / peak;
  console.log(report(rows, backend, peerList, TORCH_THREADS));
  const outPath = resolve(process.env.BENCH_OUT ?? join(root, 'bench', 'results', 'engine.json'));
  mkdirSync(dirname(outPath), { recursive: true });
  const result = {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memGB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: process.platform,
      loadAvgAtEnd: loadavg(),
    },
    backend: { ...backend, tfjs: tf.version_core, matmulGflopsSamples: peakSamples, peakGflops: peak },
    peers: peerList.map((p) => ({
      id: p.id,
      label: p.label,
      ldLibraryPath: p.env.LD_LIBRARY_PATH ?? null,
      ompWaitPolicy: p.env.OMP_WAIT_POLICY,
    })),
    python,
    settings: {
      batch: B,
      seq: T,
      genBatch: GEN_BATCH,
      prompt: PROMPT,
      newTokens: NEW_TOKENS,
      optimizer: OPT,
      torchThreads: TORCH_THREADS,
      scale: SCALE,
    },
    formulas: {
      trainFlopsPerToken: `6*N + 12*L*T*d (N = all parameters, tied embedding counted once; T = ${T})`,
      genFlopsPerToken: `2*N + 4*L*ctx*d (ctx = ${PROMPT} + ${NEW_TOKENS}/2)`,
      peak: 'the best median float32 matmul GFLOP/s at 512^3 and 1024^3 on the active backend, sampled before and after every model',
      ratio: `ours / a peer at ${TORCH_THREADS[0]} threads; ratioToBest: ours / the peer at its best of ${TORCH_THREADS.join(', ')} threads`,
      goal: `issue 14: ours / a peer at ${GOAL.threads} threads, training >= ${GOAL.train}, generation >= ${GOAL.generate} (peers[id].goal; peers[id].openblas says whether that peer is the issue's OpenBLAS torch)`,
      rss: `peak RSS in MiB (ru_maxrss) of each side's process at start (no model), after training, after generation (peakMiB); ${fresh ? FRESH_SCOPE : SHARED_SCOPE}; PyTorch: one Python process per model and peer; rssRatio.peak = ours / peer peak, overStartup = (peak - start) ours / peer`,
    },
    goal: GOAL,
    models: rows,
    wallSeconds: (performance.now() - t0) / 1000,
  };
  writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
  progress(`wrote ${outPath}; total ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
