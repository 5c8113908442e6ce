/**
 * Agents through the real CLI (dist/cli.js run, both mode) on a tiny byte-level model:
 * - Trinity's frozen_lake_workflow under GRPO on an SQL experience buffer, SIGKILLed after its first checkpoint and
 *   run again: it resumes from the last checkpoint and trains every step once; monitor/rollouts.jsonl and the SQL
 *   buffer keep each episode's messages, per-turn rewards and action mask (1 on sampled tokens only).
 * - The plugin example examples/agents-plugin (a step-wise FrozenLake agent: RewardPropagation through ctx.agents,
 *   env_state_hash and step_reward in info) under `multi_step_grpo` (step_wise_grpo) with `sync_offset: 1`, so the
 *   plugin runs in the explorer's worker thread: one experience per model call, eid.step set, actual_env_steps.
 * - An evaluation's episodes (an eval taskset at temperature 0) recorded in monitor/eval-rollouts.jsonl, from the
 *   explorer's worker thread.
 * The model's head is tilted towards <|im_end|>, so its answers are short (and random: every reward is 0).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { RolloutSample, RuntimeEvent } from '../../../../runtime/protocol';
import {
  INVALID_ACTION,
  parseFrozenLakeAction,
} from '../../../../runtime/rft/environments/frozen-lake/frozen-lake-game';
import { IM_END, saveByteChatModel } from '../../../helpers/byte-chat-model';
import { killAll, start } from './cli-process';
import { tinyJob, type TinyJob } from './helpers';

const ROOT = resolve(__dirname, '..', '..', '..', '..');

after(killAll);

/** A byte-level Qwen2 whose residual stream carries a constant in dimension 0 that the head reads as <|im_end|>. */
function saveShortAnswerModel(dir: string): void {
  const V = 259;
  const D = 16;
  let s = 12345;
  const small = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s / 2 ** 32 - 0.5) * 0.04;
  };
  const embed = new Float32Array(V * D).map((_, i) => (i % D === 0 ? 3 : small()));
  const head = new Float32Array(D * V).map(() => small());
  head[IM_END] = 1.2;
  saveByteChatModel(dir, 3, {
    maxPositions: 4096,
    set: { 'model.embed_tokens.weight': embed, 'lm_head.weight': head },
  });
}

let job: TinyJob;

before(() => {
  job = tinyJob(21);
  saveShortAnswerModel(join(job.dir, 'lake-model'));
  const rows = [0, 1, 2].map((i) => JSON.stringify({ seed: 10 + i, size: 3, p: 0.8, index: i, uid: `lake-${i}` }));
  writeFileSync(join(job.dir, 'data', 'lake.jsonl'), rows.join('\n') + '\n');
});

function config(name: string, body: string, modelLines = '  max_model_len: 4096\n'): string {
  return job.write(
    `${name}.yaml`,
    `# trinity-version: main
project: tests
name: ${name}
checkpoint_root_dir: ${job.dir}/checkpoints
model:
  model_path: lake-model
  max_response_tokens: 16
${modelLines}cluster:
  node_num: 1
  gpu_per_node: 2
mode: both
${body}trainer:
  save_interval: 1
  trainer_config:
    actor_rollout_ref:
      actor:
        ppo_micro_batch_size_per_gpu: 1
`,
  );
}

/**
 * GRPO of 2 episodes a map, one map of data/lake.jsonl a step, on frozen_lake_workflow; `algorithm`, `explorerInput`
 * and `buffer` add lines to those sections, `rest` sections after them.
 */
function lakeGrpo(o: {
  steps: number;
  agentMaxSteps?: number;
  algorithm?: string;
  explorerInput?: string;
  buffer?: string;
  rest?: string;
}): string {
  return `algorithm:
  algorithm_type: grpo
  repeat_times: 2
${o.algorithm ?? ''}buffer:
  batch_size: 1
  total_steps: ${o.steps}
  explorer_input:
    taskset:
      name: lake
      storage_type: file
      path: data/lake.jsonl
      workflow_args: {agent_max_steps: ${o.agentMaxSteps ?? 2}}
${o.explorerInput ?? ''}    default_workflow_type: frozen_lake_workflow
${o.buffer ?? ''}${o.rest ?? ''}`;
}

const trainerSteps = (events: RuntimeEvent[]): number[] =>
  events.flatMap((e) => (e.type === 'metrics' && e.role === 'trainer' ? [e.step] : []));

function rolloutLines(project: string, name: string): { step: number; samples: RolloutSample[] }[] {
  return readFileSync(join(job.dir, 'checkpoints', project, name, 'monitor', 'rollouts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { step: number; samples: RolloutSample[] });
}

describe('agents through the CLI', () => {
  test('frozen_lake_workflow, GRPO in both mode: killed, resumed, every step trained once; records keep the episodes', async () => {
    const steps = 2;
    const path = config(
      'lake',
      lakeGrpo({
        steps,
        algorithm: '  optimizer:\n    lr: 1e-3\n',
        buffer: `  trainer_input:
    experience_buffer:
      name: episodes
      storage_type: sql
      path: sqlite:///lake.db
`,
      }),
    );
    const first = start(path);
    // Killed once step 1 is checkpointed; the explorer may be writing step 2's episodes by then.
    await first.waitFor((e) => e.type === 'checkpoint' && e.step >= 1);
    first.kill('SIGKILL');
    assert.equal((await first.exit).signal, 'SIGKILL');
    const jobDir = join(job.dir, 'checkpoints', 'tests', 'lake');
    const saved = Number(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8'));

    const second = start(path);
    const { code } = await second.exit;
    assert.equal(code, 0, second.stderr().slice(-2000));
    assert.deepEqual(
      trainerSteps(second.events),
      Array.from({ length: steps - saved }, (_, i) => saved + 1 + i),
    );
    const explorer = second.events.filter((e) => e.type === 'metrics' && e.role === 'explorer');
    assert.ok(explorer.length > 0);
    for (const e of explorer)
      if (e.type === 'metrics')
        assert.ok('rollout/env_steps/mean' in e.values && 'rollout/test_score/mean' in e.values);

    const sample = rolloutLines('tests', 'lake').at(-1)!.samples[0];
    assert.equal(sample.messages![0].role, 'system');
    assert.match(sample.messages![1].content, /^Current Observation \(0\): \n/);
    const turns = sample.messages!.filter((m) => m.role === 'assistant').length;
    assert.equal(sample.turnRewards!.length, turns);
    assert.equal(sample.actionMask!.length, sample.responseTokens!.length);
    assert.ok(sample.actionMask!.includes(0) || turns === 1, 'template tokens between turns are masked out');
    // The record names the turns whose answer is Trinity's invalid action (random bytes: no ```Up``` block).
    for (const s of rolloutLines('tests', 'lake').flatMap((l) => l.samples)) {
      const answers = s.messages!.filter((m) => m.role === 'assistant');
      const invalid = answers.flatMap((m, i) => (parseFrozenLakeAction(m.content) === INVALID_ACTION ? [i] : []));
      assert.deepEqual(s.invalidActions, invalid);
      assert.ok(invalid.length > 0);
    }

    const db = new Database(join(job.dir, 'lake.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT experience FROM episodes').all() as { experience: string }[];
      assert.equal(rows.length, steps * 2, 'two episodes a step, each one experience, none written twice');
      for (const { experience } of rows) {
        const r = JSON.parse(experience) as {
          messages: { role: string }[];
          action_mask: number[];
          turn_rewards: number[];
          tokens: number[];
          prompt_length: number;
          info: Record<string, unknown>;
        };
        // Trinity's keys: the workflow's (workflow.py @8b7fce3) and the runner's (workflow_runner.py @1d7fae4).
        assert.deepEqual(Object.keys(r.info).sort(), [
          'env_done',
          'env_steps',
          'model_version',
          'model_version_drift',
          'task_index',
          'test_score',
          'use_count',
        ]);
        assert.equal(r.info.use_count, 0);
        const turnsHere = r.messages.filter((m) => m.role === 'assistant').length;
        assert.equal(r.turn_rewards.length, turnsHere);
        assert.equal(r.action_mask.length, r.tokens.length - r.prompt_length);
        // Each turn's sampled ids end on <|im_end|> or at the token limit; a masked-in <|im_end|> closes a turn.
        const endsOfTurns = r.action_mask.filter((m, i) => m === 1 && r.tokens[r.prompt_length + i] === IM_END).length;
        assert.ok(endsOfTurns <= turnsHere);
      }
    } finally {
      db.close();
    }
  });

  test("an evaluation's episodes are recorded per eval taskset (monitor/eval-rollouts.jsonl), apart from the explorer's, also from the explorer's worker", async () => {
    const path = config(
      'lake-eval',
      lakeGrpo({
        steps: 1,
        explorerInput: `    eval_tasksets:
      - name: lake-held-out
        storage_type: file
        path: data/lake.jsonl
        workflow_args: {agent_max_steps: 2}
        rollout_args: {temperature: 0.0}
`,
        rest: `explorer:
  eval_on_startup: true
  eval_interval: 1
synchronizer:
  sync_offset: 1
`,
      }),
    );
    const run = start(path);
    const { code } = await run.exit;
    assert.equal(code, 0, run.stderr().slice(-2000));
    const monitor = join(job.dir, 'checkpoints', 'tests', 'lake-eval', 'monitor');
    const evals = readFileSync(join(monitor, 'eval-rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step: number; role: string; eval: string; samples: RolloutSample[] });
    // On startup (step 0) and after the one step; each of the taskset's 3 tasks once (repeat_times 1 for eval).
    assert.deepEqual(
      evals.map((l) => [l.step, l.role, l.eval, l.samples.length]),
      [
        [0, 'explorer', 'lake-held-out', 3],
        [1, 'explorer', 'lake-held-out', 3],
      ],
    );
    for (const s of evals.flatMap((l) => l.samples)) {
      assert.equal(s.messages?.[0].role, 'system');
      assert.ok(s.messages!.some((m) => m.role === 'assistant'));
      assert.equal(s.metrics?.test_score, s.reward);
      assert.equal(s.responseTokens?.length, s.actionMask?.length);
    }
    // The event stream says the same, marked as the evaluation's; the explorer's own records stay in rollouts.jsonl.
    const evalEvents = run.events.flatMap((e) => (e.type === 'rollouts' && e.eval ? [[e.step, e.eval]] : []));
    assert.deepEqual(evalEvents, [
      [0, { taskset: 'lake-held-out', role: 'explorer' }],
      [1, { taskset: 'lake-held-out', role: 'explorer' }],
    ]);
    assert.deepEqual(
      rolloutLines('tests', 'lake-eval').map((l) => [l.step, l.samples.length]),
      [[1, 2]],
    );
  });

  test('frozen_lake_workflow under fully_async (Trinity 0.6): the explorer never waits, every step trained once', async () => {
    const steps = 3;
    const path = config(
      'lake-async',
      lakeGrpo({ steps, rest: 'synchronizer:\n  sync_style: fully_async\n  sync_interval: 1\n' }),
    );
    const run = start(path);
    const { code } = await run.exit;
    assert.equal(code, 0, run.stderr().slice(-2000));
    assert.ok(
      run.events.some((e) => e.type === 'log' && e.message.startsWith('fully_async:')),
      'the run went fully asynchronous',
    );
    assert.ok(run.events.some((e) => e.type === 'log' && e.message.startsWith('the explorer runs in a worker thread')));
    assert.deepEqual(trainerSteps(run.events), [1, 2, 3]);
    const explorer = run.events.flatMap((e) =>
      e.type === 'metrics' && e.role === 'explorer' && 'rollout/env_steps/mean' in e.values ? [e.values] : [],
    );
    assert.equal(explorer.length, steps);
    for (const v of explorer) assert.ok(v['rollout/env_steps/max'] <= 2 && v['rollout/test_score/mean'] >= 0);
    const episodes = rolloutLines('tests', 'lake-async').flatMap((l) => l.samples);
    assert.equal(episodes.length, steps * 2);
    for (const e of episodes) {
      assert.match(e.messages![1].content, /^Current Observation \(0\): \n/);
      assert.equal(e.actionMask!.length, e.responseTokens!.length);
    }
  });

  test("the config's max_model_len, not the model's 4096 positions, bounds an episode: vLLM's refusal fails the run", async () => {
    // The first prompt is 1319 tokens; its answer (≤ 16) fits 1400, the next user message (~170 more) does not. With
    // prompt truncation on (the default) Trinity answers that turn with its fixed text instead and never asks vLLM.
    const path = config(
      'lake-len',
      lakeGrpo({ steps: 1, agentMaxSteps: 3, rest: 'explorer:\n  max_retry_times: 0\n' }),
      '  max_model_len: 1400\n  enable_prompt_truncation: false\n',
    );
    const run = start(path);
    const { code } = await run.exit;
    assert.notEqual(code, 0, 'no episode fits max_model_len, so nothing is trained');
    const said = run.events.flatMap((e) => (e.type === 'log' || e.type === 'done' ? [JSON.stringify(e)] : []));
    assert.ok(
      said.some((l) => /The decoder prompt \(length \d+\) is longer than the maximum model length of 1400\./.test(l)),
      said.join('\n').slice(-2000),
    );
    assert.deepEqual(trainerSteps(run.events), []);
  });

  test('the step-wise FrozenLake plugin example in the explorer worker (sync_offset 1) under multi_step_grpo: one experience per call, eid.step, actual_env_steps', async () => {
    const example = join(ROOT, 'examples', 'agents-plugin');
    const run = start(join(example, 'step-wise-lake.trinity.yaml'), {
      TRINITY_PLUGIN_DIRS: join(example, 'plugins'),
      TRINITY_MODEL_PATH: join(job.dir, 'lake-model'),
      TRINITY_CHECKPOINT_ROOT_DIR: join(job.dir, 'checkpoints'),
    });
    const { code } = await run.exit;
    assert.equal(code, 0, run.stderr().slice(-2000));
    assert.ok(
      run.events.some((e) => e.type === 'log' && e.message.includes('the explorer runs in a worker thread')),
      'the plugin ran in the worker',
    );
    // The plugin reads its rows' own keys, never ctx.task.taskDesc / truth: no warning about a prompt column.
    assert.deepEqual(
      run.events.filter((e) => e.type === 'log' && e.message.includes('TRN305')),
      [],
    );
    // Four experiences a step, two a training batch (batch_size × repeat_times): two trainer steps per explorer step.
    assert.deepEqual(trainerSteps(run.events), [1, 2, 3, 4]);
    // The progress the editor shows never says more steps than its total ("step 4/2": the total was an estimate of
    // one batch an explorer step, which the step-wise experiences outgrow).
    const progress = run.events.flatMap((e) => (e.type === 'progress' ? [e] : []));
    assert.ok(progress.length > 0);
    for (const e of progress)
      assert.ok(e.total === undefined || e.step <= e.total, `${e.role} step ${e.step}/${e.total}`);
    const explorer = run.events.find((e) => e.type === 'metrics' && e.role === 'explorer');
    assert.ok(explorer?.type === 'metrics');
    assert.equal(explorer.values['rollout/actual_env_steps/mean'], 2, 'two steps an episode (no move ends it early)');
    assert.equal(explorer.values['experience_pipeline/experience_count'], 4, 'two episodes × two calls');
    const samples = rolloutLines('trinity-workbench-examples', 'step-wise-lake')[0].samples;
    assert.deepEqual(samples.map((s) => `${s.run}/${s.step}`).sort(), ['0/0', '0/1', '1/0', '1/1']);
  });
});
