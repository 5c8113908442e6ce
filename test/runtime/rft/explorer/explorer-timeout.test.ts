/**
 * `explorer.max_timeout` as Trinity's scheduler applies it (trinity/explorer/scheduler.py `run_with_retry`): an
 * attempt past its timeout is abandoned (here: generation stops at the next decode step), retried up to
 * `max_retry_times`, and a task whose attempts all failed is still a finished task whose only metric is its task time.
 * Per attempt: `max_timeout` up to v0.3.2, `max_timeout × (max_retry_times + 1)` from v0.4.0 (`dynamic_timeout()`).
 * The rest of the scheduler's say over a step: `dynamic_timeout`'s warm-up by release, `over_rollout` (the step goes
 * on once enough tasks are back), and main's partly failed tasks (`return_partial_tasks`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../../runtime/engine/backend';
import { generate, GenerationStoppedError } from '../../../../runtime/engine/sampling';
import { initModel } from '../../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../../runtime/engine/lm/config';
import type { CausalLM } from '../../../../runtime/engine/lm/transformer';
import { buildCharTokenizer, tokenizerFromJson, type TextTokenizer } from '../../../../runtime/engine/tokenizer';
import type { Release } from '../../../../runtime/config/releases';
import type { Experience } from '../../../../runtime/rft/experience';
import { Explorer, type ExplorerOptions, type ExplorerTask } from '../../../../runtime/rft/explorer/explore-step';
import { ExperiencePipeline } from '../../../../runtime/rft/explorer/experience-pipeline';
import { RolloutModel } from '../../../../runtime/rft/models/rollout-model';
import { createReward } from '../../../../runtime/rft/rewards';
import { registerWorkflow } from '../../../../runtime/rft/workflows/registry';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { decodePause, flagSet, sharedStopFlag, StepAbandoned, stopPoint } from '../../../../runtime/rft/stop-point';
import { GRPO_STAGE, header, tinyJob, topLevel } from '../run/helpers';

let model: CausalLM;
let tokenizer: TextTokenizer;

function rollout(seed = 7): RolloutModel {
  const limits = {
    maxPromptTokens: 64,
    maxResponseTokens: 8,
    minResponseTokens: 0,
    enablePromptTruncation: false,
    temperature: 1,
    topP: 1,
    topK: -1,
    enableThinking: null,
  };
  return new RolloutModel(model, tokenizer, limits, seed, tokenizer.eosTokenIds);
}

function task(question: string, workflow = 'simple_workflow', repeatTimes = 2): ExplorerTask {
  return {
    raw: { question, answer: '7' },
    taskDesc: question,
    truth: '7',
    systemPrompt: null,
    replyPrefix: null,
    rolloutArgs: {},
    workflowArgs: {},
    rewardFnArgs: {},
    rewardFn: 'math_boxed_reward',
    isEval: false,
    workflow,
    repeatTimes,
  };
}

interface Logged {
  level: string;
  message: string;
}

function explorer(
  opts: Partial<ExplorerOptions> & { release?: Release },
  logs: Logged[] = [],
  m = rollout(),
): Explorer {
  return new Explorer(m, {
    maxRetryTimes: 2,
    createReward: (name, args) => createReward(name, args, { release: opts.release ?? 'main' }),
    samplesPerStep: 0,
    log: (level, message) => logs.push({ level, message }),
    ...opts,
  });
}

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/** A run that generates nothing: one experience with accuracy 1. */
const fakeExperience = (): Experience => ({
  eid: { batch: '', task: '', run: 0, step: 0, suffix: 'x' },
  tokens: [1, 2],
  promptLength: 1,
  reward: 1,
  metrics: { accuracy: 1 },
});

before(async () => {
  await initBackend({ prefer: 'wasm' });
  tokenizer = tokenizerFromJson(buildCharTokenizer('0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz'));
  model = initModel(
    parseModelConfig(
      newModelConfigJson({
        family: 'qwen2',
        layers: 1,
        hidden: 32,
        heads: 4,
        kvHeads: 2,
        vocabSize: tokenizer.vocabSize,
        maxPositions: 256,
        eosTokenIds: [...tokenizer.eosTokenIds],
      }),
    ),
    3,
  );
  // Generates until its deadline stops it: only the engine's GenerationStoppedError can end this workflow.
  registerWorkflow('test_generate_forever', (ctx) => ({
    repeatable: true,
    run: async () => {
      for (;;) await ctx.model.chat([{ role: 'user', content: ctx.task.taskDesc ?? '' }]);
    },
  }));
  registerWorkflow('test_busy_200ms', () => ({
    repeatable: true,
    run: () => {
      busy(200);
      return [fakeExperience()];
    },
  }));
  registerWorkflow('test_busy_100ms', () => ({
    repeatable: true,
    run: () => {
      busy(100);
      return [fakeExperience()];
    },
  }));
});

describe('generate: the shouldStop hook', () => {
  test('checked once per decode step; stopping throws GenerationStoppedError and frees every tensor', async () => {
    const prompt = tokenizer.encode('1+2');
    await generate(model, [prompt], { maxNewTokens: 2, seed: 1 }); // first call: the backend's lazily made constants
    const before = tf.memory().numTensors;
    let asked = 0;
    await assert.rejects(
      () => generate(model, [prompt], { maxNewTokens: 8, minNewTokens: 8, seed: 1, shouldStop: () => ++asked > 3 }),
      (e: unknown) => e instanceof GenerationStoppedError && /after 3 decode step/.test((e as Error).message),
    );
    assert.equal(asked, 4);
    assert.equal(tf.memory().numTensors, before);
    const full = await generate(model, [prompt], {
      maxNewTokens: 8,
      minNewTokens: 8,
      seed: 1,
      shouldStop: () => false,
    });
    assert.equal(full[0].tokens.length, 8);
  });
});

describe('a generation in the main thread pauses for events (stop-point.ts decodePause)', () => {
  test('a stop set by an event handler (as SIGTERM’s) ends a long generation at its next decode step', async () => {
    const prompt = tokenizer.encode('1+2');
    const ctl = new AbortController();
    const flag = sharedStopFlag(ctl.signal);
    // The handler runs only when the event loop turns: without the pauses the whole generation ran first.
    setTimeout(() => ctl.abort(), 20);
    let steps = 0;
    await assert.rejects(
      generate(
        model,
        Array.from({ length: 16 }, () => prompt),
        {
          maxNewTokens: 200,
          minNewTokens: 200,
          seed: 1,
          shouldStop: () => (steps++, flagSet(flag)),
          pause: decodePause(5),
        },
      ),
      GenerationStoppedError,
    );
    assert.ok(steps < 200, `stopped after ${steps} decode steps of 200`);
  });
});

describe('explorer.max_timeout', () => {
  test('a timeout that cannot be met: every attempt times out, the tasks count as finished with their task time only', async () => {
    const logs: Logged[] = [];
    const ex = explorer({ release: 'main', timeout: { maxTimeout: 0 } }, logs);
    const out = await ex.explore(1, [task('3+4'), task('5+2')], new ExperiencePipeline([], undefined, 'main'));
    assert.equal(out.experiences.length, 0);
    const m = out.metrics;
    assert.equal(m['rollout/finished_task_count'], 2);
    assert.equal(m['experience_pipeline/experience_count'], 0);
    for (const s of ['mean', 'max', 'min'])
      assert.ok(m[`rollout/time/task_execution/${s}`] >= 0, `rollout/time/task_execution/${s}`);
    assert.ok(
      !Object.keys(m).some((k) => k.startsWith('rollout/accuracy') || k.startsWith('rollout/time/run_execution')),
      Object.keys(m).join(', '),
    );
    const timeouts = logs.filter(
      (l) => l.level === 'error' && /^Timeout when running task [01] of batch 1 at attempt [123] /.test(l.message),
    );
    assert.equal(timeouts.length, 6, JSON.stringify(logs));
    assert.equal(logs.filter((l) => l.level === 'warning' && /failed after 3 attempt\(s\)/.test(l.message)).length, 2);

    const { metrics: ev } = await ex.evaluate([{ name: 'sums', tasks: [task('3+4'), task('5+2')] }], 0);
    assert.equal(ev['eval/sums/finished_task_count'], 2);
    assert.ok(ev['eval/sums/time/task_execution'] >= 0);
    assert.ok(ev['time/eval'] >= 0);
    assert.ok(!Object.keys(ev).some((k) => k.includes('accuracy')), Object.keys(ev).join(', '));
  });

  test('v0.3.2 names the failed task’s time task_run_time and logs no finished_task_count', async () => {
    const out = await explorer({ release: 'v0.3.2', maxRetryTimes: 0, timeout: { maxTimeout: 0 } }).explore(
      1,
      [task('3+4')],
      new ExperiencePipeline([], undefined, 'v0.3.2'),
    );
    assert.deepEqual(
      Object.keys(out.metrics)
        .filter((k) => k.startsWith('rollout/'))
        .sort(),
      ['rollout/model_version', 'rollout/task_run_time/max', 'rollout/task_run_time/mean', 'rollout/task_run_time/min'],
    );
  });

  test('nothing hangs: a workflow that would generate forever is stopped at its deadline, each attempt', async () => {
    const logs: Logged[] = [];
    const started = performance.now();
    const out = await explorer({ release: 'v0.3.2', maxRetryTimes: 1, timeout: { maxTimeout: 0.3 } }, logs).explore(
      1,
      [task('3+4', 'test_generate_forever')],
      new ExperiencePipeline([], undefined, 'v0.3.2'),
    );
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds >= 0.6 && seconds < 30, `took ${seconds} s`);
    assert.equal(out.experiences.length, 0);
    assert.equal(
      logs.filter(
        (l) =>
          l.level === 'error' &&
          /^Timeout when running task 0 of batch 1 at attempt [12] \(timeout 0.3 s\)/.test(l.message),
      ).length,
      2,
    );
  });

  test('each attempt may take max_timeout up to v0.3.2, max_timeout × (max_retry_times + 1) from v0.4.0', async () => {
    // 200 ms of work against max_timeout 0.15 s and 9 retries: v0.3.2 allows 0.15 s per attempt (never enough: the
    // work takes at least 200 ms), v0.4.0+ 1.5 s (7x the work, so a loaded machine does not make it time out).
    const opts = { maxRetryTimes: 9, timeout: { maxTimeout: 0.15 } };
    const old = await explorer({ ...opts, release: 'v0.3.2' }).explore(
      1,
      [task('3+4', 'test_busy_200ms')],
      new ExperiencePipeline([], undefined, 'v0.3.2'),
    );
    assert.equal(old.experiences.length, 0);
    for (const release of ['v0.4.0', 'main'] as const) {
      const out = await explorer({ ...opts, release }).explore(
        1,
        [task('3+4', 'test_busy_200ms')],
        new ExperiencePipeline([], undefined, release),
      );
      assert.equal(out.experiences.length, 1, release);
      assert.equal(out.metrics['rollout/accuracy/mean'], 1);
    }
  });

  test('dynamic_timeout: once batch_size training tasks finished, an attempt may take their mean time × ratio at most', async () => {
    const logs: Logged[] = [];
    const ex = explorer(
      {
        release: 'main',
        maxRetryTimes: 0,
        timeout: { maxTimeout: 100, dynamic: { enable: true, ratio: 0.1 }, batchSize: 1 },
      },
      logs,
    );
    const pipeline = new ExperiencePipeline([], undefined, 'main');
    assert.equal((await ex.explore(1, [task('3+4', 'test_busy_100ms')], pipeline)).experiences.length, 1);
    // now the timeout is ≈ 0.1 × (≥ 0.1 s), shorter than the same 100 ms of work
    assert.equal((await ex.explore(2, [task('3+4', 'test_busy_100ms')], pipeline)).experiences.length, 0);
    assert.equal(
      logs.filter((l) => l.level === 'error' && /^Timeout when running task 0 of batch 2 at attempt 1/.test(l.message))
        .length,
      1,
    );
  });

  test('dynamic_timeout warms up after batch_size tasks up to v0.5.2, after warmup_min_steps whole steps on main', async () => {
    // Two tasks per step; batch_size 2 warms v0.5.2 after step 1, main's warmup_min_steps 2 only after step 2.
    const kept = async (release: Release): Promise<number[]> => {
      const ex = explorer({
        release,
        maxRetryTimes: 0,
        timeout: { maxTimeout: 100, dynamic: { enable: true, ratio: 0.1, warmup_min_steps: 2 }, batchSize: 2 },
      });
      const pipeline = new ExperiencePipeline([], undefined, release);
      const out: number[] = [];
      for (const step of [1, 2, 3]) {
        const tasks = [task('3+4', 'test_busy_100ms'), task('5+2', 'test_busy_100ms')];
        out.push((await ex.explore(step, tasks, pipeline)).experiences.length);
      }
      return out;
    };
    assert.deepEqual(await kept('v0.5.2'), [2, 0, 0]);
    assert.deepEqual(await kept('main'), [2, 2, 0]);
  });

  test('a generous timeout changes nothing: same experiences and metric names as without one', async () => {
    const tasks = [task('3+4'), task('5+2', 'simple_workflow', 3)];
    const plain = await explorer({ release: 'main' }, [], rollout(11)).explore(
      1,
      tasks,
      new ExperiencePipeline([], undefined, 'main'),
    );
    const logs: Logged[] = [];
    const timed = await explorer({ release: 'main', timeout: { maxTimeout: 1800 } }, logs, rollout(11)).explore(
      1,
      tasks,
      new ExperiencePipeline([], undefined, 'main'),
    );
    assert.deepEqual(logs, []);
    const view = (exps: Experience[]) =>
      exps.map((e) => ({
        tokens: e.tokens,
        logprobs: e.logprobs,
        reward: e.reward,
        metrics: e.metrics,
        eid: { ...e.eid, suffix: '' },
      }));
    assert.equal(timed.experiences.length, 5);
    assert.deepEqual(view(timed.experiences), view(plain.experiences));
    assert.deepEqual(Object.keys(timed.metrics).sort(), Object.keys(plain.metrics).sort());
    assert.equal(timed.metrics['rollout/finished_task_count'], 2);
    assert.equal(timed.metrics['rollout/accuracy/mean'], plain.metrics['rollout/accuracy/mean']);
  });

  test('from the config: a run with explorer.max_timeout 0 reports every eval task failed (bench mode)', async () => {
    const job = tinyJob(5);
    const stage = topLevel(GRPO_STAGE)
      .replace('mode: both', 'mode: bench')
      .replace('explorer:\n', 'explorer:\n  max_timeout: 0\n  max_retry_times: 1\n');
    const logs: Logged[] = [];
    const r = await runJob(job.write('timeout.yaml', header(job, 'timeout') + stage), {
      backend: 'wasm',
      log: (level, message) => logs.push({ level, message }),
    });
    assert.equal(r.status, 'finished', r.error);
    const lines = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { values: Record<string, number> });
    const bench = lines.find((l) => 'bench/sums-eval/finished_task_count' in l.values)!.values;
    assert.equal(bench['bench/sums-eval/finished_task_count'], 8);
    assert.ok(bench['bench/sums-eval/time/task_execution'] >= 0);
    assert.ok(!Object.keys(bench).some((k) => k.includes('accuracy')), Object.keys(bench).join(', '));
    // 8 tasks × 2 attempts (max_retry_times 1)
    assert.equal(
      logs.filter((l) => l.level === 'error' && l.message.startsWith('Timeout when running task')).length,
      16,
    );
  });
});

describe('a stop inside an explorer step (the run is stopping: stop-point.ts)', () => {
  test('noticed before the next task: the step is given up whole, no task retried or logged as failed', async () => {
    const logs: Logged[] = [];
    let stopping = false;
    let ran = 0;
    // The signal comes while the second task runs.
    registerWorkflow('test_stop_during_second', () => ({
      repeatable: true,
      run: () => {
        if (++ran === 2) stopping = true;
        return [fakeExperience()];
      },
    }));
    const ex = explorer({ stop: stopPoint(() => stopping) }, logs);
    const tasks = [0, 1, 2, 3].map((i) => task(`${i}+1`, 'test_stop_during_second'));
    await assert.rejects(ex.explore(1, tasks, new ExperiencePipeline([], undefined, 'main')), StepAbandoned);
    assert.equal(ran, 2, 'no task starts after the stop');
    assert.deepEqual(logs, []);
  });

  test('with runner_per_model 2, each run asks when it gets its runner: a stop during the first starts no other', async () => {
    const logs: Logged[] = [];
    const m = rollout();
    let stopping = false;
    m.stopping = () => stopping;
    let ran = 0;
    registerWorkflow('test_stop_during_first', () => ({
      repeatable: true,
      run: () => {
        ran++;
        stopping = true;
        return [fakeExperience()];
      },
    }));
    const ex = explorer({ stop: stopPoint(() => stopping), runnersPerModel: 2 }, logs, m);
    const tasks = [0, 1, 2, 3].map((i) => task(`${i}+1`, 'test_stop_during_first', 1));
    await assert.rejects(ex.explore(1, tasks, new ExperiencePipeline([], undefined, 'main')), StepAbandoned);
    assert.equal(ran, 1, 'no run starts after the stop, though the second had its runner already');
    assert.deepEqual(logs, []);
  });

  test('a step given up ends with all its tasks: none runs on after it, into a model the run then frees', async () => {
    const m = rollout();
    let stopping = false;
    m.stopping = () => stopping;
    let slowEnded = false;
    registerWorkflow('test_slow_50ms', () => ({
      repeatable: true,
      concurrentRuns: true,
      run: async () => {
        await new Promise((r) => setTimeout(r, 50));
        slowEnded = true;
        return [fakeExperience()];
      },
    }));
    // The stop comes inside the other task (as a stop point in its turn throws).
    registerWorkflow('test_stop_here', () => ({
      repeatable: true,
      concurrentRuns: true,
      run: () => {
        stopping = true;
        throw new StepAbandoned();
      },
    }));
    const ex = explorer({ runnersPerModel: 2 }, [], m);
    const tasks = [task('1+1', 'test_slow_50ms', 1), task('2+2', 'test_stop_here', 1)];
    await assert.rejects(ex.explore(1, tasks, new ExperiencePipeline([], undefined, 'main')), StepAbandoned);
    assert.ok(slowEnded, 'the slow task had ended when the step was given up');
  });

  test('a generation in progress ends at its next decode step and gives the step up, not a timed-out attempt', async () => {
    const logs: Logged[] = [];
    const m = rollout();
    // Set by the worker's stop flag between two decode steps: here after the fifth.
    let decodeSteps = 0;
    m.stopping = () => ++decodeSteps > 5;
    const started = performance.now();
    // Without the stop the attempt would run to its 1 s timeout, three times.
    const ex = explorer({ release: 'main', timeout: { maxTimeout: 1 } }, logs, m);
    await assert.rejects(
      ex.explore(1, [task('3+4', 'test_generate_forever')], new ExperiencePipeline([], undefined, 'main')),
      StepAbandoned,
    );
    assert.ok(performance.now() - started < 900, `took ${performance.now() - started} ms`);
    assert.deepEqual(logs, []);
  });
});

describe('explorer.over_rollout: a training step goes on once enough tasks are back', () => {
  const fourTasks = (workflow: string) => ['1+6', '2+5', '3+4', '4+3'].map((q) => task(q, workflow, 1));

  test('wait_after_min 0: the step ends as the second of four tasks is back; the rest are dropped', async () => {
    const logs: Logged[] = [];
    const ex = explorer({ release: 'main', overRollout: { minWaitNum: 2, waitAfterMinS: 0 } }, logs);
    const out = await ex.explore(1, fourTasks('test_busy_100ms'), new ExperiencePipeline([], undefined, 'main'));
    assert.equal(out.metrics['rollout/finished_task_count'], 2);
    assert.deepEqual(
      out.experiences.map((e) => e.eid.task),
      [0, 1],
    );
    assert.ok(logs.some((l) => l.message === 'over_rollout: step 1 goes on with 2 of 4 tasks (2 dropped)'));
  });

  test('tasks back within wait_after_min of the second are kept (every one here)', async () => {
    const ex = explorer({ release: 'main', overRollout: { minWaitNum: 2, waitAfterMinS: 30 } });
    const out = await ex.explore(1, fourTasks('test_busy_100ms'), new ExperiencePipeline([], undefined, 'main'));
    assert.equal(out.metrics['rollout/finished_task_count'], 4);
  });

  test('a task still running when wait_after_min is up is cancelled, not waited for', async () => {
    const ex = explorer({ release: 'main', overRollout: { minWaitNum: 1, waitAfterMinS: 0.3 } });
    const started = performance.now();
    const out = await ex.explore(
      1,
      [task('1+6', 'test_busy_100ms', 1), task('2+5', 'test_generate_forever', 1), task('3+4', 'test_busy_100ms', 1)],
      new ExperiencePipeline([], undefined, 'main'),
    );
    assert.equal(out.metrics['rollout/finished_task_count'], 1);
    assert.ok(performance.now() - started < 20_000, 'the endless task was stopped');
  });
});

describe('main: a task whose runs partly failed keeps the runs that finished (return_partial_tasks)', () => {
  let inFlight = 0;
  let mostAtOnce = 0;
  before(() => {
    // A workflow that is not repeatable: the runner runs it once per run; odd runs fail.
    registerWorkflow('test_odd_runs_fail', (ctx) => ({
      repeatable: false,
      run: () => {
        if (ctx.runIdBase % 2 === 1) throw new Error(`run ${ctx.runIdBase} failed`);
        return [fakeExperience()];
      },
    }));
    // The same, its runs going four at once (explorer.runner_per_model 4); run 1 fails after run 2 has started.
    registerWorkflow('test_odd_runs_fail_at_once', (ctx) => ({
      repeatable: false,
      concurrentRuns: true,
      run: async () => {
        mostAtOnce = Math.max(mostAtOnce, ++inFlight);
        await new Promise((r) => setTimeout(r, 10 * (4 - ctx.runIdBase)));
        inFlight--;
        if (ctx.runIdBase % 2 === 1) throw new Error(`run ${ctx.runIdBase} failed`);
        return [fakeExperience()];
      },
    }));
  });
  const runs = async (release: Release, returnPartialTasks: boolean, logs: Logged[] = [], atOnce = false) => {
    const ex = explorer({ release, maxRetryTimes: 1, returnPartialTasks, runnersPerModel: 4 }, logs);
    const out = await ex.explore(
      1,
      [task('3+4', atOnce ? 'test_odd_runs_fail_at_once' : 'test_odd_runs_fail', 4)],
      new ExperiencePipeline([], undefined, release),
    );
    return out.experiences.map((e) => e.eid.run);
  };

  test('return_partial_tasks: every run is tried, the finished ones kept, and the task is not retried', async () => {
    const logs: Logged[] = [];
    assert.deepEqual(await runs('main', true, logs), [0, 2]);
    assert.equal(logs.filter((l) => l.level === 'error').length, 0, JSON.stringify(logs));
  });

  test('without it the runs stop at the first failure and the task is retried; the last attempt’s runs stay', async () => {
    const logs: Logged[] = [];
    assert.deepEqual(await runs('main', false, logs), [0]);
    assert.equal(
      logs.filter((l) => l.level === 'error' && /^some runs of task 0 of batch 1 failed: run 1 failed/.test(l.message))
        .length,
      2,
    );
  });

  test('up to v0.5.2 a failed run fails the whole task', async () => {
    assert.deepEqual(await runs('v0.5.2', true), []);
  });

  test('runs that go at once keep the same runs: those before the first failure, or every finished one', async () => {
    assert.deepEqual(await runs('main', true, [], true), [0, 2]);
    assert.equal(mostAtOnce, 4, 'the four runs went at once');
    const logs: Logged[] = [];
    assert.deepEqual(await runs('main', false, logs, true), [0]);
    assert.equal(logs.filter((l) => l.level === 'error' && /run 1 failed/.test(l.message)).length, 2);
    assert.deepEqual(await runs('v0.5.2', true, [], true), []);
  });
});

describe("runner_per_model: a step's tasks go at once, up to that many runs across them", () => {
  let inFlight = 0;
  let mostAtOnce = 0;
  let started: string[] = [];
  before(() => {
    registerWorkflow('test_runs_share_runners', (ctx) => ({
      repeatable: false,
      concurrentRuns: true,
      run: async () => {
        started.push(`${ctx.task.taskDesc}/${ctx.runIdBase}`);
        mostAtOnce = Math.max(mostAtOnce, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return [fakeExperience()];
      },
    }));
    // Repeatable: one call makes every run of the task (as model.generate with n), so it holds all the runners.
    registerWorkflow('test_repeatable_alone', (ctx) => ({
      repeatable: true,
      run: async () => {
        mostAtOnce = Math.max(mostAtOnce, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return Array.from({ length: ctx.repeatTimes }, fakeExperience);
      },
    }));
  });
  const step = async (workflow: string, runnersPerModel: number) => {
    inFlight = mostAtOnce = 0;
    started = [];
    const out = await explorer({ release: 'main', runnersPerModel }).explore(
      1,
      ['a', 'b', 'c'].map((q) => task(q, workflow, 2)),
      new ExperiencePipeline([], undefined, 'main'),
    );
    return out.experiences.map((e) => `${e.eid.task}/${e.eid.run}`);
  };

  test('six runs of three tasks on four runners: four at once, started in task and run order, kept in that order', async () => {
    const inOrder = ['0/0', '0/1', '1/0', '1/1', '2/0', '2/1'];
    assert.deepEqual(await step('test_runs_share_runners', 4), inOrder);
    assert.equal(mostAtOnce, 4, 'runs of different tasks went at once');
    assert.deepEqual(started, ['a/0', 'a/1', 'b/0', 'b/1', 'c/0', 'c/1']);
    assert.deepEqual(await step('test_runs_share_runners', 1), inOrder);
    assert.equal(mostAtOnce, 1, 'one runner: one run at a time');
  });

  test('a workflow whose runs cannot share the engine runs one task at a time', async () => {
    assert.deepEqual(await step('test_repeatable_alone', 4), ['0/0', '0/0', '1/0', '1/0', '2/0', '2/0']);
    assert.equal(mostAtOnce, 1);
  });

  test("an episode batched with others ends at its task's deadline; the others in its batch finish, and the late task is retried and fails as timed out", async () => {
    // Episodes through the step's TurnBatcher: task `slow` keeps asking for turns (for 6 s at most, so the test ends
    // without the fix too), task `fast` takes two turns and ends.
    registerWorkflow('test_turns_until_stopped', (ctx) => ({
      repeatable: false,
      concurrentRuns: true,
      run: async () => {
        const sampler = ctx.turnSampler!();
        try {
          const context = tokenizer.encode('1+6', { addSpecialTokens: false });
          const until = performance.now() + 6000;
          for (let turn = 0; ctx.task.taskDesc === 'slow' ? performance.now() < until : turn < 2; turn++) {
            const got = await sampler.sampleTurn(context, { max_tokens: 4 });
            assert.ok(got.ids.length > 0);
          }
          return [fakeExperience()];
        } finally {
          sampler.close();
        }
      },
    }));
    const logs: Logged[] = [];
    const started = performance.now();
    const out = await explorer(
      { release: 'v0.3.2', maxRetryTimes: 1, timeout: { maxTimeout: 0.4 }, runnersPerModel: 4 },
      logs,
    ).explore(
      1,
      [task('slow', 'test_turns_until_stopped'), task('fast', 'test_turns_until_stopped')],
      new ExperiencePipeline([], undefined, 'v0.3.2'),
    );
    const seconds = (performance.now() - started) / 1000;
    // Two attempts of 0.4 s each (the retry starts when the first ends), not the 6 s the slow episode asks for.
    assert.ok(seconds >= 0.8 && seconds < 3, `took ${seconds} s`);
    assert.deepEqual(
      out.experiences.map((e) => `${e.eid.task}/${e.eid.run}`),
      ['1/0', '1/1'],
      'the fast task finished with both its runs',
    );
    const timeouts = logs.filter(
      (l) => l.level === 'error' && /^Timeout when running task 0 of batch 1/.test(l.message),
    );
    assert.deepEqual(
      timeouts.map((l) => /at attempt (\d)/.exec(l.message)?.[1]),
      ['1', '2'],
      JSON.stringify(logs),
    );
    assert.ok(logs.some((l) => /task 0 of batch 1 failed after 2 attempt\(s\)/.test(l.message)));
    assert.ok(!logs.some((l) => /task 1 of batch 1/.test(l.message)), JSON.stringify(logs));
  });

  test('such a task keeps its deadline, and its clock starts when it gets the runners, not while it waits', async () => {
    const logs: Logged[] = [];
    const started = performance.now();
    await explorer(
      { release: 'v0.3.2', maxRetryTimes: 0, timeout: { maxTimeout: 0.3 }, runnersPerModel: 4 },
      logs,
    ).explore(
      1,
      [task('3+4', 'test_generate_forever'), task('1+6', 'test_generate_forever')],
      new ExperiencePipeline([], undefined, 'v0.3.2'),
    );
    const seconds = (performance.now() - started) / 1000;
    // Each stopped at 0.3 s of its own: the second does not lose its time to the first.
    assert.ok(seconds >= 0.6 && seconds < 30, `took ${seconds} s`);
    const timeouts = logs.filter(
      (l) => l.level === 'error' && /^Timeout when running task [01] of batch 1/.test(l.message),
    );
    assert.equal(timeouts.length, 2, JSON.stringify(logs));
  });
});
