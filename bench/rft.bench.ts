/**
 * `npm run bench:rft`: the GRPO loop of the local runtime on one config, synchronous (sync_offset 0: explorer and
 * trainer take turns) against one-step off-policy (sync_offset 1: the explorer's worker thread samples while the
 * trainer trains) and fully asynchronous (`sync_style: fully_async`, 2 batches in flight: the explorer never waits
 * for the trainer), as steps/s and tokens/s and their ratios; and one GRPO iteration in PyTorch CPU on the same model,
 * batch and loss (bench/rft_torch.py, Debian's python3-torch on OpenBLAS: the peers of bench/torch-peers.ts, at the
 * thread counts of BENCH_TORCH_THREADS, default 2,1), as ms per iteration and ratios.
 *
 * It prints where one iteration's milliseconds go, ours (the runtime's phase times: runtime/rft/monitor/phase-times.ts)
 * beside PyTorch's, in wall and in CPU time (bench/rft-phases.ts); then, per loop and PyTorch thread count, PyTorch's
 * iteration over ours in each interleaved round (min and median), and issue 36's targets against PyTorch at its best
 * thread count: taking turns ≥ 1.0x in the median, overlapped ≥ 1.5x in the median and ≥ 1.3x in the worst round.
 *
 * Ours is timed from the end of trainer step 1 to the end of the last (iterations 2..N: the run's setup and its first,
 * cold step excluded, as PyTorch's first iteration is); `secondsFromExplorerStep1` keeps the window used before,
 * which counted trainer step 1 (several seconds of first-use warm-up) against N-1 iterations.
 *
 * The machine is shared, so the sides run interleaved: BENCH_RFT_ROUNDS rounds (default 3) of [sync_offset 0,
 * sync_offset 1, fully_async, each PyTorch peer at each thread count], the order reversed every other round; medians
 * per side.
 * The load average is recorded at the start and the end. Knobs: BENCH_RFT_STEPS (default 12), BENCH_RFT_ROUNDS,
 * BENCH_TORCH_THREADS, BENCH_PYTHON, BENCH_TORCH_BLAS_DIRS, BENCH_RFT_OUT (default bench/results/rft.json),
 * BENCH_RFT_BEFORE=1 (adds the taking-turns and overlapped loops with the trainer scoring every column,
 * TRINITY_WORKBENCH_SCORE_TAIL=0: the trainer before it scored the response columns only, in the same rounds).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { initBackend } from '../runtime/engine/backend';
import { initModel, saveModel } from '../runtime/engine/lm/checkpoint';
import { parameterCount } from '../runtime/engine/lm/params';
import { SCORE_TAIL_ENV } from '../runtime/engine/logprobs';
import type { RuntimeEvent } from '../runtime/protocol';
import { runJob } from '../runtime/rft/run/job/job';
import { enablePhaseTimes, sumPhaseTimes, takePhaseTimes, type PhaseTimes } from '../runtime/rft/monitor/phase-times';
import { perIteration, phaseTable } from './rft-phases';
import { rftBenchModel } from './rft-model';
import { findPython, peerSpecs, type PeerSpec } from './torch-peers';

const STEPS = Number(process.env.BENCH_RFT_STEPS ?? 12);
const ROUNDS = Math.max(1, Number(process.env.BENCH_RFT_ROUNDS ?? 3));
const TORCH_THREADS = (process.env.BENCH_TORCH_THREADS ?? '2,1')
  .split(',')
  .map(Number)
  .filter((x) => Number.isInteger(x) && x > 0);
/** Issue 36's targets against PyTorch at its best thread count: the median over rounds, and the worst round. */
const GOALS: readonly { kind: LoopKind; median: number; worst?: number }[] = [
  { kind: 'sync', median: 1.0 },
  { kind: 'overlap', median: 1.5, worst: 1.3 },
];
const PROMPTS = 8;
const GROUP = 8;
const NEW_TOKENS = 12;

interface LoopResult {
  /** From the first trainer step's metrics to the last's: trainer steps 2..N, warm-up excluded (as PyTorch's). */
  seconds: number;
  trainerSteps: number;
  tokens: number;
  /** The window before this bench excluded warm-up: from the first explorer step's metrics (trainer step 1 inside). */
  secondsFromExplorerStep1: number;
  /** CPU time (both threads) per iteration over the same window, ms. */
  cpuMsPerIteration: number;
  /** The runtime's phase times over the same window (both threads'). */
  phases: PhaseTimes;
}

let runs = 0;

/** Our loops: how explorer and trainer are ordered (the `synchronizer` section each runs with). */
const LOOPS = {
  sync: { label: 'runtime, sync_offset 0 (take turns)', short: 'offset 0', synchronizer: '{sync_offset: 0}' },
  overlap: { label: 'runtime, sync_offset 1 (overlap)', short: 'offset 1', synchronizer: '{sync_offset: 1}' },
  fullyAsync: {
    label: 'runtime, fully_async (2 in flight)',
    short: 'fully_async',
    synchronizer: '{sync_style: fully_async}',
  },
  /** BENCH_RFT_BEFORE=1: these two loops with the trainer scoring every column (as before the scored tail). */
  syncAllColumns: {
    label: 'runtime, sync_offset 0, every column',
    short: 'offset 0, all cols',
    synchronizer: '{sync_offset: 0}',
  },
  overlapAllColumns: {
    label: 'runtime, sync_offset 1, every column',
    short: 'offset 1, all cols',
    synchronizer: '{sync_offset: 1}',
  },
} as const;
type LoopKind = keyof typeof LOOPS;
const BEFORE = process.env.BENCH_RFT_BEFORE === '1';
/** The loops this run measures. */
const KINDS: LoopKind[] = [
  'sync',
  'overlap',
  'fullyAsync',
  ...(BEFORE ? (['syncAllColumns', 'overlapAllColumns'] as const) : []),
];
/** What a loop sets in the environment while it runs. */
const LOOP_ENV: Partial<Record<LoopKind, Record<string, string>>> = {
  syncAllColumns: { [SCORE_TAIL_ENV]: '0' },
  overlapAllColumns: { [SCORE_TAIL_ENV]: '0' },
};

async function loop(dir: string, kind: LoopKind): Promise<LoopResult> {
  // A fresh job name per run: a second run of the same job would resume from the first one's final checkpoint.
  const name = `${kind}-run${++runs}`;
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `# trinity-version: main
project: bench
name: ${name}
checkpoint_root_dir: ${dir}/checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: ${NEW_TOKENS}
  max_model_len: 64
cluster: {node_num: 1, gpu_per_node: 2}
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: ${GROUP}
  optimizer: {lr: 5e-4}
buffer:
  batch_size: ${PROMPTS}
  total_steps: ${STEPS}
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
synchronizer: ${LOOPS[kind].synchronizer}
trainer:
  save_interval: 1000
`,
  );
  let explorer1 = 0;
  let first = 0;
  let last = 0;
  let tokens = 0;
  let trainerSteps = 0;
  takePhaseTimes();
  let phases: PhaseTimes = {};
  // CPU time of the process (both threads), µs: less at the mercy of other processes than the wall time.
  let cpuFirst = 0;
  let cpuLast = 0;
  const events = (e: RuntimeEvent): void => {
    if (e.type !== 'metrics') return;
    if (e.role === 'explorer' && e.step === 1) explorer1 = Date.now();
    if (e.role !== 'trainer') return;
    // Iterations 2..N: from the end of trainer step 1 (setup and the first, cold step excluded, as rft_torch.py
    // excludes its first iteration) to the end of the last; in between, N-1 explorer and trainer steps.
    last = Date.now();
    const sinceLast = takePhaseTimes();
    const cpu = process.cpuUsage();
    if (e.step === 1) {
      first = last;
      cpuFirst = cpu.user + cpu.system;
    } else if (first) {
      cpuLast = cpu.user + cpu.system;
      phases = sumPhaseTimes(phases, sinceLast);
      trainerSteps++;
      tokens += (e.values['response_length/mean'] + e.values['prompt_length/mean']) * PROMPTS * GROUP;
    }
  };
  const env = LOOP_ENV[kind] ?? {};
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let r: Awaited<ReturnType<typeof runJob>>;
  try {
    r = await runJob(config, { backend: 'wasm', events, seed: 1 });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  if (r.status !== 'finished') throw new Error(`${name}: ${r.error}`);
  return {
    seconds: (last - first) / 1000,
    cpuMsPerIteration: (cpuLast - cpuFirst) / 1000 / trainerSteps,
    trainerSteps,
    tokens,
    secondsFromExplorerStep1: (last - explorer1) / 1000,
    phases,
  };
}

interface TorchRun {
  /** Median of its timed iterations (the first is warm-up), ms. */
  medianMs: number;
  /** CPU time of its process per timed iteration (median), ms. */
  cpuMs: number;
  /** Means over its timed iterations, ms (the per-phase tables add up in means): wall and CPU, whole and per phase. */
  meanMs: number;
  meanCpuMs: number;
  phaseMs: Record<string, number>;
  phaseCpuMs: Record<string, number>;
  torchVersion: string;
  blasLib: string;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** One fresh PyTorch process: 1 warm-up and 5 timed GRPO iterations. */
function torchIteration(py: string, peer: PeerSpec, modelDir: string, inputs: string, threads: number): TorchRun {
  const path = inputs.replace(/\.json$/, `.${threads}.json`);
  writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(inputs, 'utf8')) as object), threads }));
  const r = spawnSync(py, [join(__dirname, 'rft_torch.py'), modelDir, path], { encoding: 'utf8', env: peer.env });
  if (r.status !== 0) throw new Error(`rft_torch.py (${peer.label}, ${threads} threads) failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    iteration_ms: number[];
    phase_ms: Record<string, number[]>;
    phase_cpu_ms: Record<string, number[]>;
    cpu_ms: number[];
    torch_version: string;
    blas_lib: string;
  };
  return {
    medianMs: median(out.iteration_ms),
    cpuMs: median(out.cpu_ms),
    meanMs: mean(out.iteration_ms),
    meanCpuMs: mean(out.cpu_ms),
    phaseMs: Object.fromEntries(Object.entries(out.phase_ms).map(([k, v]) => [k, mean(v)])),
    phaseCpuMs: Object.fromEntries(Object.entries(out.phase_cpu_ms).map(([k, v]) => [k, mean(v)])),
    torchVersion: out.torch_version,
    blasLib: out.blas_lib,
  };
}

const perStep = (l: Pick<LoopResult, 'seconds' | 'trainerSteps'>): number => (l.seconds * 1000) / l.trainerSteps;
const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);

async function main(): Promise<void> {
  enablePhaseTimes();
  await initBackend({ prefer: 'wasm' });
  const loadStart = load();
  const dir = mkdtempSync(join(tmpdir(), 'twb-bench-rft-'));
  const { tokenizer, cfg } = rftBenchModel();
  const model = initModel(cfg, 1);
  await saveModel(model, join(dir, 'model'), { tokenizer });
  model.dispose();
  const rows: string[] = [];
  for (let a = 0; a < 10; a++)
    for (let b = 0; b < 10; b++) rows.push(JSON.stringify({ question: `${a}+${b}`, answer: String(a + b) }));
  writeFileSync(join(dir, 'data.jsonl'), `${rows.join('\n')}\n`);
  process.stderr.write(
    `model: qwen2, ${parameterCount(cfg)} parameters; ${STEPS} GRPO steps of ${PROMPTS} prompts × ${GROUP} samples, ${NEW_TOKENS} new tokens; ${ROUNDS} interleaved rounds; load ${loadStart.join(' ')}\n`,
  );

  const py = findPython();
  const peers = py ? peerSpecs() : [];
  if (!py) process.stderr.write('PyTorch not found (apt-get install python3-torch): the PyTorch columns are skipped\n');
  const inputs = join(dir, 'torch-inputs.json');
  const prompt = tokenizer.encode(
    tokenizer.applyChatTemplate([{ role: 'user', content: '3+4' }], { addGenerationPrompt: true }),
    { addSpecialTokens: false },
  );
  writeFileSync(
    inputs,
    JSON.stringify({
      prompts: Array.from({ length: PROMPTS }, () => prompt),
      group: GROUP,
      new_tokens: NEW_TOKENS,
      iterations: 5,
      lr: 5e-4,
    }),
  );

  const ours: Record<LoopKind, LoopResult[]> = {
    sync: [],
    overlap: [],
    fullyAsync: [],
    syncAllColumns: [],
    overlapAllColumns: [],
  };
  const torch = new Map<string, TorchRun[]>();
  const key = (p: PeerSpec, th: number): string => `${p.id}@${th}`;
  const jobs: (() => Promise<void>)[] = [
    ...KINDS.map((kind) => async () => {
      const r = await loop(dir, kind);
      ours[kind].push(r);
      process.stderr.write(`  ${LOOPS[kind].label}: ${perStep(r).toFixed(0)} ms/iteration\n`);
    }),
    ...peers.flatMap((p) =>
      TORCH_THREADS.map((th) => async () => {
        const r = torchIteration(py!, p, join(dir, 'model'), inputs, th);
        torch.set(key(p, th), [...(torch.get(key(p, th)) ?? []), r]);
        process.stderr.write(`  ${p.id} ${th} threads: ${r.medianMs.toFixed(0)} ms/iteration\n`);
      }),
    ),
  ];
  for (let round = 0; round < ROUNDS; round++) {
    process.stderr.write(`round ${round + 1} of ${ROUNDS} (load ${load().join(' ')})\n`);
    for (const j of round % 2 === 0 ? jobs : [...jobs].reverse()) await j();
  }
  const loadEnd = load();

  const syncMs = median(ours.sync.map(perStep));
  const overlapMs = median(ours.overlap.map(perStep));
  const fullyAsyncMs = median(ours.fullyAsync.map(perStep));
  const tokensPerSec = (ls: LoopResult[]): number => median(ls.map((l) => l.tokens / l.seconds));
  const table = [['loop', 'steps/s', 'tokens/s', 'ms/iteration', 'CPU ms/iteration', 'vs sync_offset 0']];
  for (const kind of KINDS) {
    const ms = median(ours[kind].map(perStep));
    table.push([
      LOOPS[kind].label,
      (1000 / ms).toFixed(2),
      tokensPerSec(ours[kind]).toFixed(0),
      ms.toFixed(0),
      median(ours[kind].map((l) => l.cpuMsPerIteration)).toFixed(0),
      `${(syncMs / ms).toFixed(2)}x`,
    ]);
  }
  const kinds = KINDS;
  // Per round: PyTorch's iteration over ours, both measured in that round (so under the same load).
  const roundRatios = (kind: LoopKind, runs: TorchRun[]): number[] =>
    runs.map((r, i) => r.medianMs / perStep(ours[kind][i]));
  const peerResults = peers.map((p) => {
    const byThreads = TORCH_THREADS.map((th) => {
      const runs = torch.get(key(p, th))!;
      const ms = median(runs.map((r) => r.medianMs));
      table.push([
        `${p.label}, ${th} thread${th === 1 ? '' : 's'}, one iteration`,
        (1000 / ms).toFixed(2),
        '',
        ms.toFixed(0),
        median(runs.map((r) => r.cpuMs)).toFixed(0),
        `overlap ${(ms / overlapMs).toFixed(2)}x, fully_async ${(ms / fullyAsyncMs).toFixed(2)}x, sync ${(ms / syncMs).toFixed(2)}x of it`,
      ]);
      const ratios = Object.fromEntries(
        kinds.map((kind) => {
          const rs = roundRatios(kind, runs);
          return [kind, { rounds: rs, min: Math.min(...rs), median: median(rs) }];
        }),
      ) as Record<LoopKind, { rounds: number[]; min: number; median: number }>;
      return { threads: th, iterationMs: runs.map((r) => r.medianMs), medianMs: ms, ratios };
    });
    const first = torch.get(key(p, TORCH_THREADS[0]))![0];
    // PyTorch at its best: the thread count with the fastest median iteration.
    const best = byThreads.reduce((a, b) => (b.medianMs < a.medianMs ? b : a));
    const goals = GOALS.map((g) => {
      const r = best.ratios[g.kind];
      const met = r.median >= g.median && r.min >= (g.worst ?? 0);
      return { kind: g.kind, target: { median: g.median, worst: g.worst }, bestThreads: best.threads, ...r, met };
    });
    return {
      id: p.id,
      label: p.label,
      torchVersion: first.torchVersion,
      blasLib: first.blasLib,
      openblas: /openblas/i.test(first.blasLib),
      ompWaitPolicy: p.env.OMP_WAIT_POLICY,
      threads: byThreads,
      goals,
    };
  });
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join('  ')}\n`);

  const phaseColumns = kinds.map((kind) => {
    const steps = ours[kind].reduce((a, r) => a + r.trainerSteps, 0);
    return {
      title: LOOPS[kind].short,
      perIteration: perIteration(ours[kind].map((r) => ({ phases: r.phases, iterations: r.trainerSteps }))),
      iterationMs: (ours[kind].reduce((a, r) => a + r.seconds, 0) * 1000) / steps,
      iterationCpuMs: ours[kind].reduce((a, r) => a + r.cpuMsPerIteration * r.trainerSteps, 0) / steps,
      explorerInThread: kind === 'sync' || kind === 'syncAllColumns',
    };
  });
  const torchColumns = peers.flatMap((p) =>
    TORCH_THREADS.map((th) => {
      const runs = torch.get(key(p, th))!;
      const means = (of: (r: TorchRun) => Record<string, number>): Record<string, number> =>
        Object.fromEntries(Object.keys(of(runs[0])).map((ph) => [ph, mean(runs.map((r) => of(r)[ph]))]));
      return {
        title: `${p.id} ${th}t`,
        phaseMs: means((r) => r.phaseMs),
        phaseCpuMs: means((r) => r.phaseCpuMs),
        iterationMs: mean(runs.map((r) => r.meanMs)),
        iterationCpuMs: mean(runs.map((r) => r.meanCpuMs)),
      };
    }),
  );
  process.stdout.write(
    `\nWhere one iteration's milliseconds go: means over every timed iteration of every round (ours: the phases' totals / trainer steps 2..N; an indented part is in the total above it)\n`,
  );
  for (const line of phaseTable(phaseColumns, torchColumns, 'wall')) process.stdout.write(`${line}\n`);
  process.stdout.write(
    `\nThe same in CPU time (the process's, all its threads: a phase's own where one thread computes, so taking turns and PyTorch only)\n`,
  );
  const inThread = phaseColumns.filter((c) => c.explorerInThread);
  for (const line of phaseTable(inThread, torchColumns, 'cpu')) process.stdout.write(`${line}\n`);

  for (const p of peerResults) {
    const which = p.openblas ? "OpenBLAS, the issue's peer" : "NOT OpenBLAS: not the issue's peer";
    process.stdout.write(
      `\nPyTorch's iteration / ours, per interleaved round (min / median of ${ROUNDS}), ${p.label} (${which}):\n`,
    );
    for (const kind of kinds) {
      const cells = p.threads.map(
        (t) =>
          `${t.threads} thread${t.threads === 1 ? '' : 's'}: ${t.ratios[kind].min.toFixed(2)}x / ${t.ratios[kind].median.toFixed(2)}x`,
      );
      process.stdout.write(`  ${LOOPS[kind].label.padEnd(36)} ${cells.join('   ')}\n`);
    }
    for (const g of p.goals) {
      const worst = g.target.worst === undefined ? '' : `, ≥ ${g.target.worst}x in the worst round`;
      process.stdout.write(
        `Goal (issue 36: ${LOOPS[g.kind].label} ≥ ${g.target.median}x PyTorch at its best thread count, ${g.bestThreads}, in the median${worst}): ${g.median.toFixed(2)}x median, ${g.min.toFixed(2)}x worst: ${g.met ? 'met' : 'NOT met'}.\n`,
      );
    }
  }
  process.stdout.write(`load average (1, 5, 15 min): start ${loadStart.join(' ')}, end ${loadEnd.join(' ')}\n`);
  const out = process.env.BENCH_RFT_OUT ?? join(__dirname, 'results', 'rft.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        params: parameterCount(cfg),
        steps: STEPS,
        prompts: PROMPTS,
        group: GROUP,
        newTokens: NEW_TOKENS,
        rounds: ROUNDS,
        loadAverage: { start: loadStart, end: loadEnd },
        goal: `issue 36: PyTorch's iteration at its best thread count / ours, per round: sync_offset 0 >= 1.0 in the median; sync_offset 1 >= 1.5 in the median and >= 1.3 in the worst round (peers[].goals; peers[].openblas says whether that peer is the issue's OpenBLAS torch)`,
        sync: { iterationMs: ours.sync.map(perStep), medianMs: syncMs, runs: ours.sync },
        overlap: { iterationMs: ours.overlap.map(perStep), medianMs: overlapMs, runs: ours.overlap },
        fullyAsync: { iterationMs: ours.fullyAsync.map(perStep), medianMs: fullyAsyncMs, runs: ours.fullyAsync },
        ...(BEFORE
          ? {
              syncAllColumns: {
                iterationMs: ours.syncAllColumns.map(perStep),
                medianMs: median(ours.syncAllColumns.map(perStep)),
                runs: ours.syncAllColumns,
              },
              overlapAllColumns: {
                iterationMs: ours.overlapAllColumns.map(perStep),
                medianMs: median(ours.overlapAllColumns.map(perStep)),
                runs: ours.overlapAllColumns,
              },
            }
          : {}),
        overlapSpeedup: syncMs / overlapMs,
        fullyAsyncSpeedup: syncMs / fullyAsyncMs,
        peers: peerResults,
      },
      null,
      2,
    )}\n`,
  );
  process.exit(0);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.stack ?? e.message}\n`);
  process.exit(1);
});
