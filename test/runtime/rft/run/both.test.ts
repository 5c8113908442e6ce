/**
 * The runtime end to end on a tiny model, in process: GRPO in `both` mode (metric names, on-policy ratios, eval,
 * checkpoints), SFT in `train` mode, and stages handing the checkpoint over.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../../../runtime/engine/backend';
import { loadModel } from '../../../../runtime/engine/lm/checkpoint';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { GRPO_STAGE, header, sftStage, tinyJob, topLevel } from './helpers';

interface MetricsLine {
  role: string;
  step: number;
  values: Record<string, number>;
}

const readMetrics = (jobDir: string): MetricsLine[] =>
  readFileSync(join(jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as MetricsLine);

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('mode both (GRPO)', () => {
  const events: RuntimeEvent[] = [];
  let result: Awaited<ReturnType<typeof runJob>>;
  let config: string;
  let jobDir: string;

  before(async () => {
    await initBackend({ prefer: 'wasm' });
    const job = tinyJob(3);
    config = job.write('grpo.yaml', header(job, 'grpo') + topLevel(GRPO_STAGE));
    jobDir = join(job.dir, 'checkpoints', 'tests', 'grpo');
    result = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
  });

  test('finishes, with the event stream opened by run and closed by done', () => {
    assert.equal(result.status, 'finished', result.error);
    assert.equal(events[0].type, 'run');
    assert.deepEqual(events[events.length - 1], { type: 'done', status: 'finished' });
    assert.ok(events.some((e) => e.type === 'rollouts'));
  });

  test('logs Trinity metric names, each of them one the config model predicts', async () => {
    const lines = readMetrics(jobDir);
    const trainer = lines.filter((l) => l.role === 'trainer');
    const explorer = lines.filter((l) => l.role === 'explorer');
    assert.deepEqual(
      trainer.map((l) => l.step),
      [1, 2, 3, 4],
    );
    const checked = await checkConfig(readFileSync(config, 'utf8'));
    const predicted = metricNames(checked.runs[0].resolved, checked.loaded.release);
    for (const k of [
      'actor/pg_loss',
      'actor/pg_clipfrac',
      'actor/ppo_kl',
      'actor/kl_loss',
      'actor/grad_norm',
      'actor/lr',
      'response_length/mean',
      'critic/advantages/mean',
    ]) {
      assert.ok(k in trainer[0].values, `trainer logs ${k}`);
      assert.ok(predicted.trainer.includes(k), `metric-names.ts predicts ${k}`);
    }
    const rollout = explorer.find((l) => 'rollout/accuracy/mean' in l.values)!;
    for (const k of [
      'rollout/model_version',
      'rollout/accuracy/mean',
      'rollout/time/run_execution/mean',
      'experience_pipeline/experience_count',
      'experience_pipeline/group_advantages/reward_mean/mean',
    ]) {
      assert.ok(k in rollout.values, `explorer logs ${k}`);
      assert.ok(predicted.explorer.includes(k), `metric-names.ts predicts ${k}`);
    }
    assert.equal(rollout.values['experience_pipeline/experience_count'], 16);
    const evalSteps = explorer.filter((l) => 'eval/sums-eval/accuracy/mean@1' in l.values).map((l) => l.step);
    assert.deepEqual(evalSteps, [0, 2, 4]);
  });

  test('on-policy: the trainer recomputes exactly the rollout log-probs (ppo_kl ≈ 0, nothing clipped) on step 1', () => {
    const first = readMetrics(jobDir).find((l) => l.role === 'trainer')!;
    assert.ok(Math.abs(first.values['actor/ppo_kl']) < 1e-4, `ppo_kl ${first.values['actor/ppo_kl']}`);
    assert.equal(first.values['actor/pg_clipfrac'], 0);
  });

  test('on-policy after every sync: the explorer holds exactly the trainer’s weights (ppo_kl ≈ 0 at each step)', async () => {
    // An entropy bonus and a large learning rate move the weights at every step (the random model's rewards are all 0,
    // so GRPO's advantages give no gradient): rollouts on anything but the trained weights would show in ppo_kl.
    const job = tinyJob(6);
    const body = topLevel(GRPO_STAGE)
      .replace('lr: 1e-3', 'lr: 5e-2')
      .replace(/^( *)repeat_times: 4$/m, '$1repeat_times: 4\n$1entropy_loss_fn_args: {entropy_coef: 0.5}')
      .replace('total_steps: 4', 'total_steps: 3')
      .replace('eval_on_startup: true', 'eval_on_startup: false')
      .replace('eval_interval: 2', 'eval_interval: 100');
    const r = await runJob(job.write('synced.yaml', header(job, 'synced') + body), { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const trainer = readMetrics(r.stages[0].jobDir).filter((l) => l.role === 'trainer');
    assert.equal(trainer.length, 3);
    assert.ok(trainer[2].values['actor/entropy_loss'] !== trainer[0].values['actor/entropy_loss']);
    for (const l of trainer)
      assert.ok(Math.abs(l.values['actor/ppo_kl']) < 1e-5, `step ${l.step}: ppo_kl ${l.values['actor/ppo_kl']}`);
  });

  test('explorer steps after the first use the weights of the previous trainer step (sync_interval 1)', () => {
    const versions = readMetrics(jobDir)
      .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
      .map((l) => l.values['rollout/model_version']);
    assert.deepEqual(versions, [0, 1, 2, 3]);
  });

  test('checkpoints every save_interval steps in Hugging Face format, with the pointer file', () => {
    assert.ok(existsSync(join(jobDir, 'global_step_2', 'model.safetensors')));
    assert.ok(existsSync(join(jobDir, 'global_step_4', 'tokenizer.json')));
    assert.equal(readFileSync(join(jobDir, 'latest_checkpointed_iteration.txt'), 'utf8').trim(), '4');
    const m = loadModel(join(jobDir, 'global_step_4'));
    assert.equal(m.config.family, 'qwen2');
    m.dispose();
    assert.ok(existsSync(join(jobDir, 'monitor', 'tensorboard', 'trainer')));
  });
});

describe('stages (SFT warm-up, then GRPO)', () => {
  test('the GRPO stage starts from the SFT stage checkpoint, and SFT lowers its loss', async () => {
    const job = tinyJob(4);
    const sft = sftStage('sft', { steps: 12, batch: 8, saveInterval: 12 });
    const config = job.write(
      'stages.yaml',
      `${header(job, 'staged')}stages:${sft}  - stage_name: grpo${GRPO_STAGE.replace(/^\n {4}/, '\n    ')}`,
    );
    const events: RuntimeEvent[] = [];
    const r = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
    assert.equal(r.status, 'finished', r.error);
    // `time` counts from the run's start in every stage: the GRPO stage's first metrics come after the SFT's last.
    const times = events.flatMap((e) => (e.type === 'metrics' ? [e.time] : []));
    assert.ok(
      times.every((t, i) => i === 0 || t >= times[i - 1]),
      `metrics times go back: ${times.join(', ')}`,
    );
    assert.deepEqual(
      r.stages.map((s) => [s.name, s.mode]),
      [
        ['sft', 'train'],
        ['grpo', 'both'],
      ],
    );
    const sftLines = readMetrics(r.stages[0].jobDir).filter((l) => l.role === 'trainer');
    assert.equal(sftLines.length, 12);
    assert.ok(sftLines[11].values['actor/sft_loss'] < sftLines[0].values['actor/sft_loss'] * 0.8);
    // SFT data carries no reward: no `critic/score` (Trinity's SFT steps log none; an all-zero one was pinned as the
    // reward card). The GRPO stage's rollouts are scored, and its trainer logs it.
    for (const l of sftLines)
      assert.deepEqual(
        Object.keys(l.values).filter((k) => k.startsWith('critic/score')),
        [],
        `SFT step ${l.step}`,
      );
    const grpoLines = readMetrics(r.stages[1].jobDir).filter((l) => l.role === 'trainer');
    assert.ok(grpoLines.length > 0 && grpoLines.every((l) => Number.isFinite(l.values['critic/score/mean'])));
    // Eval at GRPO step 0 runs the SFT checkpoint: a fresh copy of it must score the same.
    const sftCkpt = r.stages[0].result.lastCheckpoint!;
    assert.ok(sftCkpt.endsWith('global_step_12'));
    const weights = loadModel(sftCkpt);
    const base = loadModel(job.modelDir);
    const diff = tf.tidy(() => tf.max(tf.abs(tf.sub(weights.variables()[1], base.variables()[1]))).dataSync()[0]);
    assert.ok(diff > 0, 'the SFT checkpoint differs from the base model');
    weights.dispose();
    base.dispose();
  });
});

describe('config errors', () => {
  test('a config with errors does not start; the message names file, line and key', async () => {
    const job = tinyJob(5);
    const config = job.write(
      'bad.yaml',
      header(job, 'bad') + topLevel(GRPO_STAGE).replace('batch_size: 4', 'batch_size: 4\n  batch_sise: 3'),
    );
    const events: RuntimeEvent[] = [];
    const r = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
    assert.equal(r.status, 'failed');
    assert.match(
      r.error!,
      new RegExp(`${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+ TRN\\d+ .*batch_sise`),
    );
    assert.equal(events[events.length - 1].type, 'done');
  });
});

describe('one-step off-policy (sync_offset 1)', () => {
  for (const thread of ['1', '0']) {
    test(`explorer step k runs on trainer step k − 2's weights, ${thread === '1' ? 'in a worker thread' : 'in this thread'}`, async () => {
      await initBackend({ prefer: 'wasm' });
      const job = tinyJob(8);
      const config = job.write(
        'offset.yaml',
        header(job, 'offset') + topLevel(GRPO_STAGE) + 'synchronizer:\n  sync_offset: 1\n',
      );
      process.env.TRINITY_WORKBENCH_EXPLORER_THREAD = thread;
      try {
        const logs: string[] = [];
        const r = await runJob(config, { backend: 'wasm', log: (_, m) => logs.push(m) });
        assert.equal(r.status, 'finished', r.error);
        assert.ok(
          logs.includes(
            thread === '1'
              ? 'the explorer runs in a worker thread, overlapping the trainer'
              : 'the explorer and trainer take turns in one thread',
          ),
          logs.join('\n'),
        );
        // The OpenBLAS threads of its training steps (blas-threads.ts), logged once: 1 beside the worker, else 2.
        const blas = logs.filter((m) => m.startsWith('BLAS threads:'));
        const alone = availableParallelism() > 1 ? 'BLAS threads: 2 (train only)' : /^BLAS threads: 1 \(train only/;
        if (thread === '1') assert.deepEqual(blas, ['BLAS threads: 1 (explorer and trainer overlap)']);
        else if (typeof alone === 'string') assert.deepEqual(blas, [alone]);
        else assert.match(blas.join('\n'), alone);
        const lines = readMetrics(r.stages[0].jobDir);
        const versions = lines
          .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
          .map((l) => l.values['rollout/model_version']);
        assert.deepEqual(versions, [0, 0, 1, 2]);
        assert.deepEqual(
          lines.filter((l) => l.role === 'trainer').map((l) => l.step),
          [1, 2, 3, 4],
        );
        assert.ok(lines.some((l) => 'eval/sums-eval/accuracy/mean@1' in l.values && l.step === 4));
      } finally {
        delete process.env.TRINITY_WORKBENCH_EXPLORER_THREAD;
      }
    });
  }
  test('the worker’s reference log-probs give the KL loss the trainer computes itself, and spare its model', async () => {
    // In a worker the explorer scores its experiences with the reference model and the trainer takes those values
    // (never loading its own copy); in this thread the trainer loads the reference at its first step and runs the
    // forward itself. Trainer step 2 trains on the same rollouts (explorer step 2, version 0 weights) with policies
    // one step apart only in OpenBLAS rounding (1 vs 2 threads). An entropy bonus and a large learning rate move the
    // policy away from the reference (the random model's rewards are all 0, so GRPO's advantages give no gradient)
    // until the KL loss is well above rounding.
    await initBackend({ prefer: 'wasm' });
    const kl: Record<string, number> = {};
    for (const thread of ['1', '0']) {
      const job = tinyJob(8);
      const body = topLevel(GRPO_STAGE)
        .replace('lr: 1e-3', 'lr: 5e-2')
        .replace(/^( *)repeat_times: 4$/m, '$1repeat_times: 4\n$1entropy_loss_fn_args: {entropy_coef: 0.5}')
        .replace('total_steps: 4', 'total_steps: 2')
        .replace('eval_on_startup: true', 'eval_on_startup: false');
      const config = job.write('kl.yaml', header(job, `kl${thread}`) + body + 'synchronizer:\n  sync_offset: 1\n');
      process.env.TRINITY_WORKBENCH_EXPLORER_THREAD = thread;
      try {
        const logs: string[] = [];
        const r = await runJob(config, { backend: 'wasm', log: (_, m) => logs.push(m) });
        assert.equal(r.status, 'finished', r.error);
        const loads = logs.filter((m) => m.startsWith('the trainer loads the reference model')).length;
        assert.equal(loads, thread === '1' ? 0 : 1, logs.join('\n'));
        const step2 = readMetrics(r.stages[0].jobDir).find((l) => l.role === 'trainer' && l.step === 2)!;
        kl[thread] = step2.values['actor/kl_loss'];
      } finally {
        delete process.env.TRINITY_WORKBENCH_EXPLORER_THREAD;
      }
    }
    assert.ok(kl['0'] > 1e-6, `kl_loss ${kl['0']}`);
    assert.ok(Math.abs(kl['1'] - kl['0']) <= 1e-3 * kl['0'], `kl_loss worker ${kl['1']} vs in-thread ${kl['0']}`);
  });
});

describe('resuming mode both', () => {
  test('experiences explored before a checkpoint but not yet trained on are trained on after the resume, none twice', async () => {
    // 16 experiences per explorer step, 8 per trainer step: the checkpoint after trainer step 3 is taken with the
    // second half of explorer step 2's experiences still waiting.
    const job = tinyJob(9);
    const body = topLevel(GRPO_STAGE)
      .replace('total_steps: 4', 'total_steps: 6\n  train_batch_size: 8')
      .replace('save_interval: 2', 'save_interval: 1')
      .replace('eval_interval: 2', 'eval_interval: 100')
      .replace('eval_on_startup: true', 'eval_on_startup: false');
    const config = job.write('resume.yaml', header(job, 'resume') + body);
    const stop = new AbortController();
    const first: RuntimeEvent[] = [];
    const r1 = await runJob(config, {
      backend: 'wasm',
      signal: stop.signal,
      events: (e) => {
        first.push(e);
        if (e.type === 'checkpoint' && e.step === 3) stop.abort();
      },
    });
    assert.equal(r1.status, 'stopped', r1.error);
    const jobDir = r1.stages[0].jobDir;
    const state = JSON.parse(readFileSync(join(jobDir, 'global_step_3', 'trainer_state.json'), 'utf8')) as {
      extra: { explorerStep: number };
    };
    assert.equal(state.extra.explorerStep, 2);
    const items = readFileSync(join(jobDir, 'global_step_3', 'pending_experiences.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown[]);
    assert.equal(items.flat().length, 8, 'the half of explorer step 2 the trainer had not read');

    const second: RuntimeEvent[] = [];
    const logs: string[] = [];
    const r2 = await runJob(config, { backend: 'wasm', events: (e) => second.push(e), log: (_, m) => logs.push(m) });
    assert.equal(r2.status, 'finished', r2.error);
    const steps = (events: RuntimeEvent[], role: string): number[] =>
      events.flatMap((e) =>
        e.type === 'metrics' && e.role === role && (role !== 'explorer' || 'rollout/model_version' in e.values)
          ? [e.step]
          : [],
      );
    assert.deepEqual(steps(second, 'explorer'), [3, 4, 5, 6], 'the explorer continues after its last finished step');
    // 6 explorer steps × 16 experiences = 12 trainer steps of 8: none lost, none trained twice.
    assert.deepEqual(steps(second, 'trainer'), [4, 5, 6, 7, 8, 9, 10, 11, 12]);
    assert.ok(
      logs.some((m) => m.includes('8 experience(s) not yet trained on')),
      logs.join('\n'),
    );
    loadModel(join(jobDir, 'global_step_12')).dispose();
  });

  test('a resumed run’s reference is the initial weights, not the checkpoint it resumes from', async () => {
    // The trainer loads its reference at its first step after the resume, when the policy holds the checkpoint's
    // trained weights: trainer step 3's KL loss must be the uninterrupted run's (a reference loaded from the
    // checkpoint gives 0). Greedy rollouts make step 3's batch the same in both runs (a resumed explorer's sampling
    // does not continue the uninterrupted run's random stream); the two agree exactly here, within 1e-3 relative is
    // asked. The entropy bonus and learning rate move the policy as in the KL test above.
    const body = topLevel(GRPO_STAGE)
      .replace('lr: 1e-3', 'lr: 5e-2')
      .replace(/^( *)repeat_times: 4$/m, '$1repeat_times: 4\n$1entropy_loss_fn_args: {entropy_coef: 0.5}')
      .replace('total_steps: 4', 'total_steps: 3')
      .replace('save_interval: 2', 'save_interval: 1')
      .replace('eval_interval: 2', 'eval_interval: 100')
      .replace('eval_on_startup: true', 'eval_on_startup: false')
      .replace(/(path: data\/train.jsonl\n( *)format: .*\n)/, '$1$2rollout_args: {temperature: 0.0}\n');
    const klAt3 = (r: Awaited<ReturnType<typeof runJob>>): number =>
      readMetrics(r.stages[0].jobDir).find((l) => l.role === 'trainer' && l.step === 3)!.values['actor/kl_loss'];
    const whole = tinyJob(8);
    const straight = await runJob(whole.write('kl.yaml', header(whole, 'kl') + body), { backend: 'wasm' });
    assert.equal(straight.status, 'finished', straight.error);

    const job = tinyJob(8);
    const config = job.write('kl.yaml', header(job, 'kl') + body);
    const stop = new AbortController();
    const r1 = await runJob(config, {
      backend: 'wasm',
      signal: stop.signal,
      events: (e) => {
        if (e.type === 'checkpoint' && e.step === 2) stop.abort();
      },
    });
    assert.equal(r1.status, 'stopped', r1.error);
    const logs: string[] = [];
    const r2 = await runJob(config, { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r2.status, 'finished', r2.error);
    assert.ok(
      logs.some((m) => m.startsWith('resumed from')),
      logs.join('\n'),
    );
    assert.equal(logs.filter((m) => m.startsWith('the trainer loads the reference model')).length, 1);
    const [expected, resumed] = [klAt3(straight), klAt3(r2)];
    assert.ok(expected > 1e-6, `kl_loss ${expected}`);
    assert.ok(
      Math.abs(resumed - expected) <= 1e-3 * expected,
      `kl_loss resumed ${resumed} vs uninterrupted ${expected}`,
    );
  });
});

describe('sync styles', () => {
  // sync_interval 2: explorer steps 2 and 4 are sync points. Fixed waits there for trainer step k; explorer-driven
  // takes what the trainer has (it trains on step k − 1's experiences while the explorer runs step k).
  for (const [style, versions] of [
    ['fixed', [0, 0, 2, 2]],
    ['trainer_driven', [0, 0, 2, 2]],
    ['explorer_driven', [0, 0, 1, 1]],
  ] as const) {
    test(`${style}: explorer steps 1–4 run on trainer versions ${versions.join(', ')}`, async () => {
      const job = tinyJob(10);
      const body = topLevel(GRPO_STAGE)
        .replace('eval_interval: 2', 'eval_interval: 100')
        .replace('eval_on_startup: true', 'eval_on_startup: false');
      const config = job.write(
        'style.yaml',
        header(job, 'style') + body + `synchronizer:\n  sync_interval: 2\n  sync_style: ${style}\n`,
      );
      const r = await runJob(config, { backend: 'wasm' });
      assert.equal(r.status, 'finished', r.error);
      const lines = readMetrics(r.stages[0].jobDir);
      assert.deepEqual(
        lines
          .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
          .map((l) => l.values['rollout/model_version']),
        versions,
      );
      assert.deepEqual(
        lines.filter((l) => l.role === 'trainer').map((l) => l.step),
        [1, 2, 3, 4],
      );
    });
  }
});

describe('the experience queue in mode both', () => {
  test('a replay buffer with reuse serves experiences again: more trainer steps than explorer steps produced data for', async () => {
    const job = tinyJob(12);
    const body = topLevel(GRPO_STAGE)
      .replace('total_steps: 4', 'total_steps: 3')
      .replace('eval_interval: 2', 'eval_interval: 100')
      .replace('eval_on_startup: true', 'eval_on_startup: false')
      .replace('save_interval: 2', 'save_interval: 0\n  total_steps: 6')
      .replace(
        '    default_reward_fn_type: math_boxed_reward',
        '    default_reward_fn_type: math_boxed_reward\n  trainer_input:\n    experience_buffer:\n      name: replayed\n      storage_type: queue\n      replay_buffer:\n        enable: true\n        priority_fn: linear_decay\n        reuse_cooldown_time: 0',
      );
    const config = job.write('replay.yaml', header(job, 'replay') + body);
    const r = await runJob(config, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const lines = readMetrics(r.stages[0].jobDir);
    assert.deepEqual(
      lines.filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values).map((l) => l.step),
      [1, 2, 3],
    );
    // 3 explorer steps hold 3 batches; the trainer's 6 steps reuse them (each read puts the batch back).
    assert.deepEqual(
      lines.filter((l) => l.role === 'trainer').map((l) => l.step),
      [1, 2, 3, 4, 5, 6],
    );
  });

  test("without replay, the trainer stops when the explorer steps' experiences are used up", async () => {
    const job = tinyJob(12);
    const body = topLevel(GRPO_STAGE)
      .replace('total_steps: 4', 'total_steps: 3')
      .replace('eval_interval: 2', 'eval_interval: 100')
      .replace('eval_on_startup: true', 'eval_on_startup: false')
      .replace('save_interval: 2', 'save_interval: 0\n  total_steps: 6');
    const config = job.write('noreplay.yaml', header(job, 'noreplay') + body);
    const r = await runJob(config, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    assert.deepEqual(
      readMetrics(r.stages[0].jobDir)
        .filter((l) => l.role === 'trainer')
        .map((l) => l.step),
      [1, 2, 3],
    );
  });
});

describe('mode colocate', () => {
  test("runs as both (Trinity's launcher maps it so), explorer and trainer taking turns, with memory sync", async () => {
    const job = tinyJob(13);
    const body = topLevel(GRPO_STAGE)
      .replace('mode: both', 'mode: colocate')
      .replace('eval_interval: 2', 'eval_interval: 100');
    const config = job.write(
      'colocate.yaml',
      header(job, 'colocate').replace('gpu_per_node: 2', 'gpu_per_node: 1') +
        body +
        'synchronizer:\n  sync_offset: 1\n',
    );
    const logs: string[] = [];
    const r = await runJob(config, { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'finished', r.error);
    assert.ok(logs.includes('the explorer and trainer take turns in one thread'), logs.join('\n'));
    const lines = readMetrics(r.stages[0].jobDir);
    assert.deepEqual(
      lines
        .filter((l) => l.role === 'explorer' && 'rollout/model_version' in l.values)
        .map((l) => l.values['rollout/model_version']),
      [0, 0, 1, 2],
    );
    assert.deepEqual(
      lines.filter((l) => l.role === 'trainer').map((l) => l.step),
      [1, 2, 3, 4],
    );
  });
});
