/**
 * A step's single-turn tasks at once (explorer.runner_per_model > 1): their `chat` calls that arrive together go to
 * the engine as one batch (RolloutModel's SampleBatcher), each task getting its own rows back. On the real tiny chat
 * model (byte tokenizer, ChatML) and Trinity's simple_workflow: greedy rows equal one task after another token for
 * token (log-probs within 1e-4: float32 in a wider, padded batch), sampled rows repeat for a seed and equal the
 * sequential ones (each call's seed drawn in task order), calls with other sampling arguments go in their own batch,
 * a task the engine cannot take fails alone, and a task past its timeout is cut while the others in its batch keep
 * their rows. Evaluation (every eval taskset at once) and over-rollout steps go to the engine together too: eval
 * metrics equal one task after another, and over-rollout keeps the tasks back within `wait_after_min` of the
 * `min_wait_num`-th.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Pretrained } from '../../../../runtime/engine/pretrained';
import type { Experience } from '../../../../runtime/rft/experience';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import {
  Explorer,
  type EvalTaskset,
  type ExplorerOptions,
  type ExplorerTask,
} from '../../../../runtime/rft/explorer/explore-step';
import { enablePhaseTimes, takePhaseTimes } from '../../../../runtime/rft/monitor/phase-times';
import type { RolloutArgs } from '../../../../runtime/rft/models/rollout-model';
import { createReward } from '../../../../runtime/rft/rewards';
import { flagSet, flagStopPoint, sharedStopFlag } from '../../../../runtime/rft/stop-point';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadByteChatModel, rolloutModelOf, workflowTask } from '../../../helpers/byte-chat-model';

const LOGPROB_TOL = 1e-4;
const QUESTIONS = ['1+6', 'What is 12+30?', '2+5', 'Add 3 and 4, then say the sum.'];

let pretrained: Pretrained;

before(async () => {
  await initBackend({ prefer: 'wasm' });
  pretrained = loadByteChatModel(8, 2048);
  enablePhaseTimes();
});

function task(question: string, rolloutArgs: RolloutArgs, repeatTimes = 3): ExplorerTask {
  return {
    ...workflowTask({ raw: { question, answer: '7' }, taskDesc: question, truth: '7', rolloutArgs }),
    rewardFn: 'math_boxed_reward',
    workflow: 'simple_workflow',
    repeatTimes,
  };
}

interface Step {
  exps: Experience[];
  metrics: Record<string, number>;
  /** Engine calls the step's sampling made. */
  engineCalls: number;
  logs: string[];
}

/** With `stopFlag`, the run's stop points as explorer-side.ts sets them (here the main thread's: they yield). */
function explorerOf(
  runnersPerModel: number,
  { stopFlag, ...opts }: Partial<ExplorerOptions> & { stopFlag?: Int32Array },
  seed: number,
  logs: string[],
): Explorer {
  const model = rolloutModelOf(pretrained, { maxResponseTokens: 6 }, seed);
  if (stopFlag) {
    model.stopping = () => flagSet(stopFlag);
    opts.stop = flagStopPoint(stopFlag);
  }
  return new Explorer(model, {
    maxRetryTimes: 0,
    createReward: (name, args) => createReward(name, args, { release: 'main' }),
    samplesPerStep: 0,
    log: (level, message) => logs.push(`${level}: ${message}`),
    release: 'main',
    runnersPerModel,
    ...opts,
  });
}

async function step(
  tasks: readonly ExplorerTask[],
  runnersPerModel: number,
  opts: Partial<ExplorerOptions> & { stopFlag?: Int32Array } = {},
  seed = 5,
): Promise<Step> {
  const logs: string[] = [];
  const explorer = explorerOf(runnersPerModel, opts, seed, logs);
  takePhaseTimes();
  const out = await explorer.explore(1, tasks, new ExperiencePipeline([], undefined, 'main'));
  return {
    exps: out.experiences,
    metrics: out.metrics,
    engineCalls: takePhaseTimes()['explorer: sampling (generate)']?.calls ?? 0,
    logs,
  };
}

/** Each experience as task/run, its sampled ids and log-probs. */
const rows = (s: Step) =>
  s.exps.map((e) => ({ at: `${e.eid.task}/${e.eid.run}`, ids: e.tokens.slice(e.promptLength), lp: e.logprobs! }));

function assertSameRows(got: Step, want: Step): void {
  const [g, w] = [rows(got), rows(want)];
  assert.deepEqual(
    g.map((r) => `${r.at}: ${r.ids.join(' ')}`),
    w.map((r) => `${r.at}: ${r.ids.join(' ')}`),
  );
  g.forEach((r, i) =>
    r.lp.forEach((x, k) =>
      assert.ok(Math.abs(x - w[i].lp[k]) <= LOGPROB_TOL, `${r.at} token ${k}: ${x} against ${w[i].lp[k]}`),
    ),
  );
}

describe("runner_per_model: a step's single-turn tasks sampled as one batch", () => {
  test('greedy: four tasks of different prompt lengths in one engine call equal one task after another, token for token', async () => {
    const tasks = QUESTIONS.map((q) => task(q, { temperature: 0 }));
    const sequential = await step(tasks, 1);
    // With the stop points of a run (one before the step, one as each run gets its runner), as a run has them.
    const batched = await step(tasks, 8, { stopFlag: sharedStopFlag(new AbortController().signal) });
    assert.equal(sequential.engineCalls, 4);
    assert.equal(batched.engineCalls, 1, 'the four tasks went to the engine together');
    assert.equal(batched.exps.length, 12);
    assertSameRows(batched, sequential);
  });

  test('sampled: a seed repeats, each call seeded in task order as one after another; another seed differs', async () => {
    const tasks = QUESTIONS.map((q) => task(q, {}));
    const batched = await step(tasks, 8);
    assert.equal(batched.engineCalls, 1);
    assertSameRows(await step(tasks, 8), batched);
    assertSameRows(batched, await step(tasks, 1));
    assert.notDeepEqual(rows(await step(tasks, 8, {}, 6)), rows(batched));
  });

  test('other sampling arguments go in a batch of their own; each task keeps its own max_tokens and n', async () => {
    const tasks = [
      task(QUESTIONS[0], { max_tokens: 2 }),
      task(QUESTIONS[1], { temperature: 0.5 }),
      task(QUESTIONS[2], {}, 5),
      task(QUESTIONS[3], { temperature: 0.5, max_tokens: 4 }, 1),
    ];
    const batched = await step(tasks, 8);
    assert.equal(batched.engineCalls, 2, 'temperature 1 and temperature 0.5: two batches');
    assertSameRows(batched, await step(tasks, 1));
    const counts = [0, 1, 2, 3].map((t) => batched.exps.filter((e) => e.eid.task === t));
    assert.deepEqual(
      counts.map((c) => c.length),
      [3, 3, 5, 1],
    );
    assert.ok(counts[0].every((e) => e.tokens.length - e.promptLength <= 2));
  });

  test('a task the engine cannot take fails alone; the others in its batch keep their rows', async () => {
    // 2,100 bytes leave no room in the model's 2,048 positions.
    const tasks = QUESTIONS.map((q, i) => task(i === 1 ? 'x'.repeat(2100) : q, {}));
    const batched = await step(tasks, 8);
    assert.deepEqual([...new Set(batched.exps.map((e) => e.eid.task))], [0, 2, 3]);
    assert.ok(
      batched.logs.some((l) => /task 1 of batch 1 failed .*leaves no room in max_position_embeddings/.test(l)),
      batched.logs.join('\n'),
    );
    assertSameRows(batched, await step(tasks, 1));
  });

  test("a task past its timeout is cut from the batch; the others' rows come back as soon as they are done", async () => {
    // min_tokens is shared by the batch; task 0 asks for 1,500 tokens (a second or more), the others for 4.
    const tasks = QUESTIONS.map((q, i) => task(q, { min_tokens: 1500, max_tokens: i === 0 ? 1500 : 4 }, 2));
    const started = performance.now();
    const batched = await step(tasks, 8, { timeout: { maxTimeout: 0.4 } });
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds >= 0.4 && seconds < 1.5, `took ${seconds} s`);
    assert.equal(batched.engineCalls, 1);
    const slowest = batched.metrics['rollout/time/run_execution/max'];
    assert.ok(slowest < 0.2, `the short tasks took up to ${slowest} s: they waited for the long one`);
    assert.deepEqual([...new Set(batched.exps.map((e) => e.eid.task))], [1, 2, 3]);
    assert.ok(batched.exps.every((e) => e.tokens.length - e.promptLength === 4));
    assert.deepEqual(
      batched.logs.filter((l) => l.startsWith('error:')),
      ['error: Timeout when running task 0 of batch 1 at attempt 1 (timeout 0.4 s)'],
    );
    // The same rows as each of those tasks alone (their own seeds, drawn in task order).
    const alone = await step(tasks.slice(1), 1, {}, 6);
    assertSameRows(
      { ...batched, exps: batched.exps.map((e) => ({ ...e, eid: { ...e.eid, task: Number(e.eid.task) - 1 } })) },
      alone,
    );
  });
});

describe('evaluation and over-rollout go to the engine together', () => {
  // A score that follows the response text, so a row given to the wrong task or taskset shows in the metrics.
  const textScore = () => (input: { response: string }) => ({
    score: (input.response.charCodeAt(0) % 10) / 10 + input.response.length / 100,
  });
  const evalSets = (args: RolloutArgs): EvalTaskset[] => [
    { name: 'short', tasks: QUESTIONS.slice(0, 2).map((q) => task(q, args)) },
    { name: 'long', tasks: QUESTIONS.slice(2).map((q) => task(q, args, 4)) },
  ];

  async function evaluate(sets: readonly EvalTaskset[], runners: number, seed = 5) {
    const explorer = explorerOf(runners, { createReward: textScore }, seed, []);
    takePhaseTimes();
    const { metrics, samples } = await explorer.evaluate(sets, 3);
    const engineCalls = takePhaseTimes()['explorer: sampling (generate)']?.calls ?? 0;
    // Times differ from run to run; every other metric is compared exactly.
    return {
      metrics: Object.fromEntries(Object.entries(metrics).filter(([k]) => !k.includes('time'))),
      engineCalls,
      records: samples.map((s) => [s.taskset, s.samples.map((r) => [r.response, r.reward])]),
    };
  }

  test("greedy: every eval taskset's tasks in one engine call, the eval metrics those of one task after another", async () => {
    const sets = evalSets({ temperature: 0 });
    const sequential = await evaluate(sets, 1);
    const batched = await evaluate(sets, 8);
    assert.equal(sequential.engineCalls, 4);
    assert.equal(batched.engineCalls, 1, 'both tasksets went to the engine together');
    assert.deepEqual(batched.metrics, sequential.metrics);
    // The records kept of each taskset's runs (monitor/eval-rollouts.jsonl) are the same runs' either way.
    assert.deepEqual(batched.records, sequential.records);
    assert.deepEqual(
      batched.records.map(([name]) => name),
      sets.map((s) => s.name),
    );
    for (const k of ['eval/short/score/mean@3', 'eval/long/score/best@4', 'eval/long/finished_task_count'])
      assert.ok(k in batched.metrics, k);
  });

  test('sampled: a seeded eval repeats, and equals one task after another', async () => {
    const sets = evalSets({});
    const batched = await evaluate(sets, 8);
    assert.deepEqual((await evaluate(sets, 8)).metrics, batched.metrics);
    assert.deepEqual((await evaluate(sets, 1)).metrics, batched.metrics);
    assert.notDeepEqual((await evaluate(sets, 8, 6)).metrics, batched.metrics);
  });

  test('over_rollout: the tasks back within wait_after_min of the third count; the long one still decoding is cut', async () => {
    // Task 0 asks for 1,500 tokens (a second or more), the others for 4: three are back together, long before it.
    const tasks = QUESTIONS.map((q, i) => task(q, { min_tokens: 1500, max_tokens: i === 0 ? 1500 : 4 }, 2));
    const started = performance.now();
    const out = await step(tasks, 8, { overRollout: { minWaitNum: 3, waitAfterMinS: 0.2 } });
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds >= 0.2 && seconds < 1.5, `took ${seconds} s`);
    assert.equal(out.engineCalls, 1, 'the four tasks went to the engine together');
    assert.equal(out.metrics['rollout/finished_task_count'], 3);
    assert.deepEqual([...new Set(out.exps.map((e) => e.eid.task))], [1, 2, 3]);
    assert.ok(
      out.logs.includes('info: over_rollout: step 1 goes on with 3 of 4 tasks (1 dropped)'),
      out.logs.join('\n'),
    );
  });
});
