/**
 * `npm run bench:rft-eval`: one evaluation of an eval-heavy config on bench:rft's model (qwen2, 4 layers, hidden
 * 128; wasm with the OpenBLAS addon): two eval tasksets of 48 tasks each, 4 greedy runs a task (`temperature: 0`,
 * 12 new tokens), Trinity's simple_workflow and math_boxed_reward. `explorer.runner_per_model: 1` runs the tasks one
 * after another, as every evaluation did before issue 36; 8 (the default) runs them at once, their calls batched
 * into engine calls (Explorer.evaluate). The two run interleaved, BENCH_RFT_EVAL_ROUNDS rounds (default 5, the first
 * a warm-up left out), the order reversed every other round; it prints the median wall and CPU ms of the process
 * (every thread), the engine calls, the load average at the start and the end, and checks that both give the same
 * eval metrics.
 */
import { loadavg } from 'node:os';
import { initBackend } from '../runtime/engine/backend';
import { initModel } from '../runtime/engine/lm/checkpoint';
import { Explorer, type EvalTaskset } from '../runtime/rft/explorer/explore-step';
import { enablePhaseTimes, takePhaseTimes } from '../runtime/rft/monitor/phase-times';
import { RolloutModel } from '../runtime/rft/models/rollout-model';
import { createReward } from '../runtime/rft/rewards';
import { ROLLOUT_LIMITS } from '../test/helpers/byte-chat-model';
import { rftBenchModel } from './rft-model';

const ROUNDS = Math.max(2, Number(process.env.BENCH_RFT_EVAL_ROUNDS ?? 5));
const TASKS_PER_SET = 48;
const REPEAT = 4;
const NEW_TOKENS = 12;

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const backend = await initBackend({ prefer: 'wasm' });
  const { tokenizer, cfg } = rftBenchModel();
  const model = initModel(cfg, 1);
  const limits = { ...ROLLOUT_LIMITS, maxPromptTokens: 32, maxResponseTokens: NEW_TOKENS };
  const sets: EvalTaskset[] = ['sums-a', 'sums-b'].map((name, s) => ({
    name,
    tasks: Array.from({ length: TASKS_PER_SET }, (_, i) => {
      const [a, b] = [(i + s * TASKS_PER_SET) % 10, Math.floor((i + s * TASKS_PER_SET) / 10)];
      return {
        raw: { question: `${a}+${b}`, answer: String(a + b) },
        taskDesc: `${a}+${b}`,
        truth: String(a + b),
        systemPrompt: null,
        replyPrefix: null,
        rolloutArgs: { temperature: 0 },
        workflowArgs: {},
        rewardFnArgs: {},
        rewardFn: 'math_boxed_reward',
        isEval: true,
        workflow: 'simple_workflow',
        repeatTimes: REPEAT,
      };
    }),
  }));
  enablePhaseTimes();
  const evaluate = async (runners: number) => {
    const explorer = new Explorer(new RolloutModel(model, tokenizer, limits, 1, tokenizer.eosTokenIds), {
      maxRetryTimes: 0,
      createReward: (name, args) => createReward(name, args, { release: 'main' }),
      samplesPerStep: 0,
      log: () => {},
      release: 'main',
      runnersPerModel: runners,
    });
    takePhaseTimes();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const { metrics } = await explorer.evaluate(sets, 0);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const calls = takePhaseTimes()['explorer: sampling (generate)']?.calls ?? 0;
    const values = Object.entries(metrics).filter(([k]) => !k.includes('time'));
    return { wall, cpu: (used.user + used.system) / 1000, calls, values: JSON.stringify(values) };
  };

  const loadStart = load();
  process.stdout.write(
    `eval: ${sets.length} tasksets × ${TASKS_PER_SET} tasks × ${REPEAT} greedy runs, ${NEW_TOKENS} new tokens; backend ${backend.name}${backend.accelerators?.length ? ` + ${backend.accelerators.join(', ')}` : ''}; ${ROUNDS} interleaved rounds (the first a warm-up); load ${loadStart}\n`,
  );
  const got: Record<number, { wall: number[]; cpu: number[]; calls: number; values: string }> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const runners of r % 2 === 0 ? [1, 8] : [8, 1]) {
      const m = await evaluate(runners);
      process.stdout.write(
        `round ${r + 1} runner_per_model ${runners}: ${m.wall.toFixed(0)} wall ms, ${m.cpu.toFixed(0)} CPU ms, ${m.calls} engine calls\n`,
      );
      const g = (got[runners] ??= { wall: [], cpu: [], calls: m.calls, values: m.values });
      if (g.values !== m.values)
        throw new Error(`runner_per_model ${runners}: the eval metrics changed between rounds`);
      if (r === 0) continue;
      g.wall.push(m.wall);
      g.cpu.push(m.cpu);
    }
  }
  if (got[1].values !== got[8].values) throw new Error('the eval metrics differ between the two');
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  for (const runners of [1, 8])
    process.stdout.write(
      `runner_per_model ${runners}: median ${median(got[runners].wall).toFixed(0)} wall ms, ${median(got[runners].cpu).toFixed(0)} CPU ms, ${got[runners].calls} engine calls\n`,
    );
  process.stdout.write(
    `at once over one after another: ${(median(got[1].wall) / median(got[8].wall)).toFixed(2)}x wall, ${(median(got[1].cpu) / median(got[8].cpu)).toFixed(2)}x CPU; the same eval metrics; load ${loadStart} → ${load()}\n`,
  );
}

void main();
