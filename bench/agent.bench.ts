/**
 * `npm run bench:agent`: one explorer step of Trinity's `frozen_lake_workflow` (64 episodes of 10 turns on 4×4 maps)
 * on bench:rft's model shape (Qwen2, 4 layers, hidden 128; the byte tokenizer and ChatML, so any text is tokenizable),
 * as episode tokens/s (every token of every finished episode: prompt, turns, template and environment) and ms per
 * explorer step, three ways in one run:
 * (a) ours: the episodes at once, their turns batched into one engine call, each turn continuing its episode's KV
 *     cache (TurnBatcher, engine/continued-generation.ts);
 * (b) ours, recomputing: one episode after another, each turn prefilling the whole history again
 *     (`RolloutModel.complete`, the path before issue 31). It is measured on BENCH_AGENT_B_EPISODES episodes (default
 *     8; 64 would take many minutes) and its step time scaled to 64 (its tokens/s is its own);
 * (c) PyTorch (bench/agent_torch.py, Debian's python3-torch: the peers of bench/torch-peers.ts at 2 threads) on the
 *     same model: all 64 episodes batched, `past_key_values` kept across turns (the prefix never recomputed), each
 *     turn's environment and template tokens those of (a)'s episodes (so it does the same work: the same prefill and
 *     the same number of sampled tokens per turn, sampling its own). On BENCH_AGENT_C_EPISODES of them (default 8,
 *     as one batch; its eager attention over 64 rows of 3 K tokens takes most of an hour on this machine), its
 *     step time scaled to 64.
 * (d) the explorer's step (Explorer.explore, frozen_lake_workflow with the same turn cap) on BENCH_AGENT_D_TASKS tasks
 *     (default 4) × BENCH_AGENT_D_REPEATS episodes (default 2) at `runner_per_model` = their count, two ways: the
 *     step's tasks at once, their episodes' turns in one batch (after issue 31's last part), against its tasks one
 *     after another, a batch at most `repeat_times` wide (before: each task its own explore call here).
 * Each way is timed in wall time and in its process's CPU time (ours: process.cpuUsage; PyTorch: process_time, all
 * its threads): on a machine whose load is many times its cores, the CPU figures are the steadier comparison.
 *
 * The untrained model never writes a valid action nor its stop token, so every episode runs its 10 turns and each
 * turn is capped at BENCH_AGENT_TURN_TOKENS (default 16) sampled tokens (Trinity lets a turn take what is left of
 * the episode's budget; a trained agent answers in a few tokens).
 *
 * Targets (issue 31 §5): (a) ≥ 3x (b) and (a) ≥ 1.0x (c). The machine is shared: the load average is recorded beside
 * the figures. Knobs: BENCH_AGENT_EPISODES (64), BENCH_AGENT_TURNS (10), BENCH_AGENT_TURN_TOKENS,
 * BENCH_AGENT_B_EPISODES, BENCH_AGENT_D_TASKS, BENCH_AGENT_D_REPEATS, BENCH_AGENT_WAYS (abcd: which ways run), BENCH_AGENT_ROUNDS (1), BENCH_TORCH_THREADS (2), BENCH_PYTHON, BENCH_AGENT_OUT (default
 * bench/results/agent.json).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { initBackend } from '../runtime/engine/backend';
import { saveInitialModel } from '../runtime/engine/lm/checkpoint';
import { parameterCount } from '../runtime/engine/lm/params';
import { loadPretrained, type Pretrained } from '../runtime/engine/pretrained';
import { buildByteTokenizer, tokenizerFromJson } from '../runtime/engine/tokenizer';
import type { Experience } from '../runtime/rft/experience';
import { ExperiencePipeline } from '../runtime/rft/explorer/experience-pipeline';
import type { ExplorerTask } from '../runtime/rft/explorer/explore-step';
import { frozenLakeWorkflow } from '../runtime/rft/workflows/frozen-lake';
import { registerWorkflow } from '../runtime/rft/workflows/registry';
import { TurnBatcher } from '../runtime/rft/workflows/multi-turn/batched-turns';
import { completionTurnSampler, type TurnSampler } from '../runtime/rft/workflows/multi-turn/turn-sampler';
import { explorerWithoutRewards, rolloutModelOf, workflowTask } from '../test/helpers/byte-chat-model';
import { benchQwen2Config } from './rft-model';
import { findPython, peerSpecs } from './torch-peers';

const env = (key: string, fallback: number): number => Number(process.env[key] ?? fallback);
const EPISODES = env('BENCH_AGENT_EPISODES', 64);
const TURNS = env('BENCH_AGENT_TURNS', 10);
const TURN_TOKENS = env('BENCH_AGENT_TURN_TOKENS', 16);
const B_EPISODES = Math.min(EPISODES, env('BENCH_AGENT_B_EPISODES', 8));
const C_EPISODES = Math.min(EPISODES, env('BENCH_AGENT_C_EPISODES', 8));
const ROUNDS = Math.max(1, env('BENCH_AGENT_ROUNDS', 1));
const TORCH_THREADS = env('BENCH_TORCH_THREADS', 2);
const D_TASKS = env('BENCH_AGENT_D_TASKS', 4);
const D_REPEATS = env('BENCH_AGENT_D_REPEATS', 2);
const WAYS = process.env.BENCH_AGENT_WAYS ?? 'abcd';
const TARGETS = { vsRecompute: 3, vsTorch: 1 };

/** What PyTorch replays of one of (a)'s episodes: per turn, the tokens fed before it and how many it sampled. */
interface ReplayTurn {
  glue: number[];
  sample: number;
}

interface StepResult {
  ms: number;
  /** This process's CPU time over the step (user + system): the work, less the shared machine's queueing. */
  cpuMs: number;
  episodes: number;
  tokens: number;
  turns: number;
}

const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Each turn capped at TURN_TOKENS, and (when `record` is given) its context and sampled ids written down. */
function capped(inner: TurnSampler, record?: ReplayTurn[]): TurnSampler {
  let fed = 0;
  return {
    async sampleTurn(context, args) {
      const turn = await inner.sampleTurn(context, { ...args, max_tokens: Math.min(args.max_tokens!, TURN_TOKENS) });
      record?.push({ glue: context.slice(fed), sample: turn.ids.length });
      fed = context.length + turn.ids.length;
      return turn;
    },
    close: () => inner.close(),
  };
}

async function step(
  p: Pretrained,
  episodes: number,
  mode: 'batched' | 'recompute',
  replay?: ReplayTurn[][],
): Promise<StepResult> {
  const model = rolloutModelOf(p, { maxResponseTokens: 10240 }, 1);
  const batcher = new TurnBatcher(model);
  const workflow = (i: number) => {
    const record = replay ? (replay[i] = []) : undefined;
    return frozenLakeWorkflow({
      model,
      task: workflowTask({
        raw: { seed: i, size: 4, p: 0.8 },
        rolloutArgs: { temperature: 1 },
        workflowArgs: { agent_max_steps: TURNS },
      }),
      repeatTimes: 1,
      runIdBase: i,
      createReward: () => {
        throw new Error('no reward function');
      },
      auxiliaryModels: [],
      turnSampler: () => capped(mode === 'batched' ? batcher.open() : completionTurnSampler(model), record),
    });
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  let exps: Experience[];
  if (mode === 'batched') {
    exps = (await Promise.all(Array.from({ length: episodes }, (_, i) => workflow(i).run()))).flat();
  } else {
    exps = [];
    for (let i = 0; i < episodes; i++) exps.push(...(await workflow(i).run()));
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  batcher.dispose();
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    episodes,
    tokens: exps.reduce((a, e) => a + e.tokens.length, 0),
    turns: exps.reduce((a, e) => a + (e.turnRewards?.length ?? 0), 0),
  };
}

/** frozen_lake_workflow with each turn capped as in (a), its turns through the explorer's sampler. */
registerWorkflow('bench_capped_frozen_lake', (ctx) => {
  const wf = frozenLakeWorkflow({ ...ctx, turnSampler: () => capped(ctx.turnSampler!()) });
  return { repeatable: wf.repeatable, concurrentRuns: wf.concurrentRuns, run: () => wf.run() };
});

/** (d): one explorer step, its tasks at once or one after another. */
async function explorerStep(p: Pretrained, together: boolean): Promise<StepResult> {
  const model = rolloutModelOf(p, { maxResponseTokens: 10240 }, 1);
  const explorer = explorerWithoutRewards(model, D_TASKS * D_REPEATS);
  const tasks: ExplorerTask[] = Array.from({ length: D_TASKS }, (_, i) => ({
    ...workflowTask({
      raw: { seed: i, size: 4, p: 0.8 },
      rolloutArgs: { temperature: 1 },
      workflowArgs: { agent_max_steps: TURNS },
    }),
    workflow: 'bench_capped_frozen_lake',
    repeatTimes: D_REPEATS,
  }));
  const pipeline = new ExperiencePipeline([], undefined, 'main');
  const started = performance.now();
  const cpu = process.cpuUsage();
  const exps: Experience[] = [];
  if (together) exps.push(...(await explorer.explore(1, tasks, pipeline)).experiences);
  else for (const t of tasks) exps.push(...(await explorer.explore(1, [t], pipeline)).experiences);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    episodes: exps.length,
    tokens: exps.reduce((a, e) => a + e.tokens.length, 0),
    turns: exps.reduce((a, e) => a + (e.turnRewards?.length ?? 0), 0),
  };
}

interface TorchResult {
  ms: number;
  cpu_ms: number;
  tokens: number;
  torch_version: string;
  blas_lib: string;
}

function torchStep(py: string, modelDir: string, inputs: string, peerEnv: NodeJS.ProcessEnv): TorchResult {
  const r = spawnSync(py, [join(__dirname, 'agent_torch.py'), modelDir, inputs], {
    encoding: 'utf8',
    env: peerEnv,
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`agent_torch.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as TorchResult;
}

async function main(): Promise<void> {
  await initBackend({ prefer: 'wasm' });
  const loadStart = load();
  const dir = mkdtempSync(join(tmpdir(), 'twb-bench-agent-'));
  const tokenizer = tokenizerFromJson(buildByteTokenizer());
  const cfg = benchQwen2Config(tokenizer, 8192);
  const modelDir = join(dir, 'model');
  saveInitialModel(cfg, 1, modelDir, { tokenizer });
  const p = loadPretrained(modelDir);
  process.stderr.write(
    `model: qwen2, ${parameterCount(cfg)} parameters; ${EPISODES} FrozenLake episodes × ${TURNS} turns of ≤ ${TURN_TOKENS} tokens; (b) on ${B_EPISODES}; load ${loadStart.join(' ')}\n`,
  );
  await step(p, Math.min(4, EPISODES), 'batched'); // warm-up (excluded)

  const py = WAYS.includes('c') ? findPython() : undefined;
  const peer = py ? peerSpecs()[0] : undefined;
  if (WAYS.includes('c') && !py)
    process.stderr.write('PyTorch not found (apt-get install python3-torch): (c) is skipped\n');
  const a: StepResult[] = [];
  const b: StepResult[] = [];
  const c: TorchResult[] = [];
  const d: { together: StepResult; oneByOne: StepResult }[] = [];
  const loads: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    loads.push(load());
    process.stderr.write(`round ${round + 1} of ${ROUNDS} (load ${loads[round].join(' ')})\n`);
    if (WAYS.includes('d')) {
      const oneByOne = await explorerStep(p, false);
      const together = await explorerStep(p, true);
      d.push({ together, oneByOne });
      process.stderr.write(
        `  (d) explorer step, ${D_TASKS} tasks × ${D_REPEATS}: at once ${together.ms.toFixed(0)} ms (${together.cpuMs.toFixed(0)} CPU ms), one after another ${oneByOne.ms.toFixed(0)} ms (${oneByOne.cpuMs.toFixed(0)} CPU ms)\n`,
      );
    }
    if (!WAYS.includes('a')) continue;
    const replay: ReplayTurn[][] = [];
    a.push(await step(p, EPISODES, 'batched', replay));
    process.stderr.write(
      `  (a) batched + cache: ${a[round].ms.toFixed(0)} ms/step (${a[round].cpuMs.toFixed(0)} CPU ms)\n`,
    );
    if (WAYS.includes('b')) {
      b.push(await step(p, B_EPISODES, 'recompute'));
      process.stderr.write(
        `  (b) recompute, one at a time: ${b[round].ms.toFixed(0)} ms (${b[round].cpuMs.toFixed(0)} CPU ms) for ${B_EPISODES} episodes\n`,
      );
    }
    if (py && peer) {
      const inputs = join(dir, `torch-inputs-${round}.json`);
      const episodes = replay.slice(0, C_EPISODES);
      writeFileSync(inputs, JSON.stringify({ episodes, threads: TORCH_THREADS, temperature: 1, seed: round }));
      c.push(torchStep(py, modelDir, inputs, peer.env));
      process.stderr.write(
        `  (c) PyTorch: ${c[round].ms.toFixed(0)} ms (${c[round].cpu_ms.toFixed(0)} CPU ms) for ${C_EPISODES} episodes\n`,
      );
    }
  }
  const loadEnd = load();
  const stepWays = d.length ? explorerStepSummary(d) : null;
  if (!a.length || !b.length) {
    process.stdout.write(
      `load average (1, 5, 15 min): start ${loadStart.join(' ')}, end ${loadEnd.join(' ')} (a shared machine)\n`,
    );
    writeResults({
      date: new Date().toISOString(),
      loadAverage: { start: loadStart, rounds: loads, end: loadEnd },
      explorerStep: stepWays,
    });
    return;
  }

  /** A way's medians: episode tokens per wall and per CPU second, and ms per step of EPISODES episodes. */
  const summary = (runs: { ms: number; cpuMs: number; tokens: number; episodes: number }[]) => ({
    tokensPerSecond: median(runs.map((r) => (r.tokens * 1000) / r.ms)),
    tokensPerCpuSecond: median(runs.map((r) => (r.tokens * 1000) / r.cpuMs)),
    msPerStep: median(runs.map((r) => (r.ms * EPISODES) / r.episodes)),
    runs,
  });
  const sa = summary(a);
  const sb = summary(b);
  const sc = c.length
    ? summary(c.map((r) => ({ ms: r.ms, cpuMs: r.cpu_ms, tokens: r.tokens, episodes: C_EPISODES })))
    : undefined;
  const ratio = (x: typeof sa) => ({
    wall: sa.tokensPerSecond / x.tokensPerSecond,
    cpu: sa.tokensPerCpuSecond / x.tokensPerCpuSecond,
  });
  const vsB = ratio(sb);
  const vsC = sc ? ratio(sc) : undefined;
  const line = (label: string, x: typeof sa, vs?: { wall: number; cpu: number }): string[] => [
    label,
    x.tokensPerSecond.toFixed(0),
    x.tokensPerCpuSecond.toFixed(0),
    x.msPerStep.toFixed(0),
    vs ? `${vs.wall.toFixed(2)}x, ${vs.cpu.toFixed(2)}x` : '',
  ];
  const rows = [
    ['way', 'episode tokens/s', 'tokens/CPU s', 'ms per explorer step', '(a) vs it: wall, CPU'],
    line('(a) ours: batched turns, KV cache kept', sa),
    line(`(b) ours: recompute, one episode at a time (${B_EPISODES} measured, step scaled)`, sb, vsB),
  ];
  if (sc && vsC)
    rows.push(
      line(
        `(c) PyTorch ${c[0].torch_version}, ${TORCH_THREADS} threads, batched, past_key_values kept (${C_EPISODES} measured, step scaled)`,
        sc,
        vsC,
      ),
    );
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) process.stdout.write(`${r.map((x, i) => x.padEnd(widths[i])).join('  ')}\n`);
  const verdict = (x: { wall: number; cpu: number }, target: number) =>
    `${x.wall.toFixed(2)}x wall (${x.wall >= target ? 'met' : 'NOT met'}), ${x.cpu.toFixed(2)}x CPU`;
  process.stdout.write(
    `Targets (issue 31 §5): (a) ≥ ${TARGETS.vsRecompute}x (b): ${verdict(vsB, TARGETS.vsRecompute)}; ` +
      (vsC === undefined
        ? '(c) not run.\n'
        : `(a) ≥ ${TARGETS.vsTorch}x (c): ${verdict(vsC, TARGETS.vsTorch)} (PyTorch's BLAS: ${c[0].blas_lib}).\n`),
  );
  process.stdout.write(
    `load average (1, 5, 15 min): start ${loadStart.join(' ')}, end ${loadEnd.join(' ')} (a shared machine)\n`,
  );
  writeResults({
    date: new Date().toISOString(),
    params: parameterCount(cfg),
    episodes: EPISODES,
    turns: TURNS,
    turnTokens: TURN_TOKENS,
    recomputeEpisodes: B_EPISODES,
    torchEpisodes: C_EPISODES,
    rounds: ROUNDS,
    torchThreads: TORCH_THREADS,
    loadAverage: { start: loadStart, rounds: loads, end: loadEnd },
    batched: sa,
    recompute: sb,
    torch: sc ? { ...sc, runs: c } : null,
    ratios: { batchedVsRecompute: vsB, batchedVsTorch: vsC ?? null },
    targets: TARGETS,
    explorerStep: stepWays,
  });
}

/** (d)'s medians and the ratio of one task after another to the tasks at once (ms per step, wall and CPU). */
function explorerStepSummary(d: { together: StepResult; oneByOne: StepResult }[]) {
  const ratio = {
    wall: median(d.map((r) => r.oneByOne.ms / r.together.ms)),
    cpu: median(d.map((r) => r.oneByOne.cpuMs / r.together.cpuMs)),
  };
  const ms = (pick: (r: (typeof d)[number]) => StepResult) => median(d.map((r) => pick(r).ms)).toFixed(0);
  process.stdout.write(
    `(d) explorer step of ${D_TASKS} tasks × ${D_REPEATS} episodes, runner_per_model ${D_TASKS * D_REPEATS}: ` +
      `tasks at once ${ms((r) => r.together)} ms, one after another ${ms((r) => r.oneByOne)} ms; ` +
      `at once is ${ratio.wall.toFixed(2)}x faster in wall time, ${ratio.cpu.toFixed(2)}x in CPU time\n`,
  );
  return { tasks: D_TASKS, repeats: D_REPEATS, runs: d, speedup: ratio };
}

function writeResults(results: Record<string, unknown>): void {
  const out = process.env.BENCH_AGENT_OUT ?? join(__dirname, 'results', 'agent.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
