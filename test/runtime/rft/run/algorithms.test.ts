/**
 * Every algorithm_type of Trinity main that the local runtime runs, two steps each on a tiny model: it finishes,
 * trains (finite losses and gradient norms), logs the policy loss's Trinity metrics, and its first step's loss,
 * KL and entropy terms are what Trinity's formulas give on the batch that step read (first-step.ts), with the
 * advantages the explorer stored equal to Trinity's formula. The distillation types (a teacher model) are in
 * distill.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { checkConfig } from '../../../../runtime/config/check-config';
import { metricNames } from '../../../../runtime/config/runs/metric-names';
import type { Config } from '../../../../runtime/config/types.generated';
import { firstTrainerStep } from './first-step';
import { GRPO_STAGE, header, tinyJob } from './helpers';

const RL_TYPES: [string, string][] = [
  ['grpo', 'pg_loss'],
  ['ppo', 'pg_loss'],
  ['gspo', 'pg_loss'],
  ['opmd', 'opmd_loss'],
  ['asymre', 'opmd_loss'],
  ['topr', 'topr_loss'],
  ['cispo', 'cispo_loss'],
  ['sapo', 'sapo_loss'],
  ['rec', 'pg_loss'],
  ['sppo', 'pg_loss'],
  ['raft', 'sft_loss'],
  ['rloo', 'pg_loss'],
  ['reinforceplusplus', 'pg_loss'],
  ['multi_step_grpo', 'pg_loss'],
  ['mix', 'usual/pg_loss'],
  ['mix_chord', 'usual/pg_loss'],
];

/**
 * The logged first-step metrics against first-step.ts' float64 values. The trainer computes in float32 from the
 * padded batch, the expectation from float32 log-probs of each sequence scored alone: log-probs near −4 differ by
 * a few 1e-7 between the two layouts, and so do the means over ~130 tokens built on them. The largest difference
 * measured over the 16 runs is 15% of this bound (mix's usual/pg_loss, 6.6e-7 on 0.129); the mis-wirings it caught
 * were 1e-3 to 1e-1 relative.
 */
const FIRST_STEP_TOL = { rtol: 2e-5, atol: 2e-6 };

/**
 * Arguments beyond the type's defaults, where the defaults would hide a mis-wiring from the first step's check:
 * raft names an explorer-side advantage (its default is the trainer-side ppo, which needs a critic it lacks); ppo's
 * GAE with γ = λ = 1 telescopes the critic's values past a response away; mix_chord's μ is constant without a
 * schedule, so the step it is given would not matter.
 */
const ALGORITHM_ARGS: Record<string, string> = {
  raft: '\n      advantage_fn: grpo',
  ppo: '\n      advantage_fn_args: {gamma: 0.9, lam: 0.95}',
  mix_chord:
    '\n      policy_loss_fn_args: {clip_range: 0.2, mu_warmup_steps: 2, mu_decay_steps: 2, mu_peak: 0.5, mu_valley: 0.1}',
};

/**
 * An untrained model never answers a sum right, so every reward would be 0 and every advantage (and gradient) too.
 * format_reward with a pattern some random outputs match ("contains a 1") gives the groups reward variance.
 */
function rlConfig(type: string, buffer = ''): string {
  let stage = GRPO_STAGE.replace('algorithm_type: grpo', `algorithm_type: ${type}${ALGORITHM_ARGS[type] ?? ''}`)
    .replace('total_steps: 4', 'total_steps: 2')
    .replace(/\n    explorer:[\s\S]*?eval_interval: 2\n/, '\n')
    .replace('default_reward_fn_type: math_boxed_reward', 'default_reward_fn_type: format_reward')
    .replace(
      'format: {prompt_key: question, response_key: answer}\n',
      "format: {prompt_key: question, response_key: answer}\n          reward_fn_args: {pattern: '.*1.*'}\n          rollout_args: {temperature: 1.5}\n",
    );
  const trainerInput = buffer
    ? `\n        experience_buffer: {name: exps, storage_type: sql, path: 'sqlite:///${buffer}'}`
    : '';
  if (type === 'mix' || type === 'mix_chord') {
    stage = stage.replace(
      '        default_reward_fn_type: format_reward\n',
      `        default_reward_fn_type: format_reward
      trainer_input:${trainerInput}
        auxiliary_buffers:
          sft_dataset:
            name: sft_dataset
            storage_type: file
            path: data/sft.jsonl
            format: {prompt_type: plaintext, prompt_key: question, response_key: answer}
`,
    );
  } else if (trainerInput) {
    stage = stage.replace(
      '        default_reward_fn_type: format_reward\n',
      `        default_reward_fn_type: format_reward\n      trainer_input:${trainerInput}\n`,
    );
  }
  return stage
    .split('\n')
    .map((l) => l.replace(/^ {4}/, ''))
    .join('\n');
}

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('algorithm types', () => {
  for (const [type, lossMetric] of RL_TYPES) {
    test(`${type}: two trainer steps with actor/${lossMetric}`, async () => {
      const job = tinyJob(11);
      const db = join(job.dir, 'experiences.db');
      const config = job.write(`${type}.yaml`, header(job, type) + rlConfig(type, db));
      const r = await runJob(config, { backend: 'wasm' });
      assert.equal(r.status, 'finished', r.error);
      const lines = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { role: string; values: Record<string, number> });
      const trainer = lines.filter((l) => l.role === 'trainer');
      // mix fills half of each batch with expert rows, so the explorer's two steps feed four trainer steps.
      assert.equal(trainer.length, type.startsWith('mix') ? 4 : 2);
      // Every actor metric the run logs is one the config model (runtime/config/runs/metric-names.ts) predicts.
      const checked = await checkConfig(readFileSync(config, 'utf8'));
      const predicted = new Set(metricNames(checked.runs[0].resolved, checked.loaded.release).trainer);
      const unpredicted = Object.keys(trainer[0].values).filter((k) => k.startsWith('actor/') && !predicted.has(k));
      assert.deepEqual(unpredicted, [], 'actor metrics metric-names.ts does not list');
      if (type === 'ppo') {
        // The critic is checkpointed with the actor: value head and optimizer state under critic/.
        for (const f of ['value_head.safetensors', 'optimizer.safetensors', 'model.safetensors'])
          assert.ok(existsSync(join(r.stages[0].jobDir, 'global_step_2', 'critic', f)), f);
        assert.ok(Number.isFinite(trainer[1].values['critic/vf_loss']));
      }
      // The first step against Trinity's formulas on the batch it read.
      const first = await firstTrainerStep({
        cfg: checked.runs[0].resolved as Config,
        db,
        table: 'exps',
        modelDir: job.modelDir,
        configDir: job.dir,
        seed: 42, // runJob's default: the critic's fresh value head
      });
      assert.deepEqual(first.advantageMismatches, [], 'stored advantages against the formula');
      const actorKeys = (m: object) =>
        Object.keys(m)
          .filter((k) => k.startsWith('actor/'))
          .sort();
      assert.deepEqual(
        actorKeys(trainer[0].values).filter((k) => k !== 'actor/grad_norm' && k !== 'actor/lr'),
        actorKeys(first.expected),
      );
      assert.ok(`actor/${lossMetric}` in first.expected);
      for (const [k, want] of Object.entries(first.expected)) {
        const got = trainer[0].values[k];
        assert.ok(
          Math.abs(got - want) <= FIRST_STEP_TOL.atol + FIRST_STEP_TOL.rtol * Math.abs(want),
          `${k}: logged ${got}, Trinity's formula ${want}`,
        );
      }
      for (const t of trainer) {
        assert.ok(
          Number.isFinite(t.values[`actor/${lossMetric}`]),
          `actor/${lossMetric} = ${t.values[`actor/${lossMetric}`]}`,
        );
        assert.ok(
          Number.isFinite(t.values['actor/grad_norm']) && t.values['actor/grad_norm'] > 0,
          `grad_norm ${t.values['actor/grad_norm']}`,
        );
      }
    });
  }

  test('dpo: trains on chosen/rejected pairs in train mode', async () => {
    const job = tinyJob(12);
    const pairs = Array.from({ length: 8 }, (_, i) => ({
      prompt: `${i}+1`,
      chosen: `\\boxed{${i + 1}}`,
      rejected: `\\boxed{${i + 2}}`,
    }));
    writeFileSync(join(job.dir, 'data', 'dpo.jsonl'), pairs.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const config = job.write(
      'dpo.yaml',
      `${header(job, 'dpo')}mode: train
algorithm:
  algorithm_type: dpo
buffer:
  total_steps: 2
  train_batch_size: 4
  trainer_input:
    experience_buffer:
      name: prefs
      storage_type: file
      path: data/dpo.jsonl
      format: {prompt_type: plaintext, prompt_key: prompt, chosen_key: chosen, rejected_key: rejected}
trainer:
  save_interval: 2
`,
    );
    const r = await runJob(config, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
    const trainer = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; values: Record<string, number> })
      .filter((l) => l.role === 'trainer');
    assert.equal(trainer.length, 2);
    // Both policy and reference start from the same weights: the first step's DPO loss is log 2.
    assert.ok(
      Math.abs(trainer[0].values['actor/dpo_loss'] - Math.log(2)) < 1e-4,
      `dpo_loss ${trainer[0].values['actor/dpo_loss']}`,
    );
  });
});

describe('reference model and explorer worker edge cases', () => {
  test('grpo without a KL loss runs without loading a reference model', async () => {
    const job = tinyJob(16);
    const config = job.write(
      'nokl.yaml',
      header(job, 'nokl') +
        rlConfig('grpo').replace('algorithm_type: grpo', 'algorithm_type: grpo\n  kl_loss_fn: none'),
    );
    const r = await runJob(config, { backend: 'wasm' });
    assert.equal(r.status, 'finished', r.error);
  });

  test('an explorer worker that cannot start fails the run instead of hanging', async () => {
    const job = tinyJob(17);
    // The checker reads only a dataset's first rows; line 60 breaks when the worker loads the taskset.
    const rows = Array.from({ length: 59 }, (_, i) =>
      JSON.stringify({ question: `${i % 10}+1`, answer: String((i % 10) + 1) }),
    );
    writeFileSync(join(job.dir, 'data', 'late-break.jsonl'), `${rows.join('\n')}\n{ not json\n`);
    const config = job.write(
      'badworker.yaml',
      header(job, 'badworker') +
        rlConfig('grpo').replace('path: data/train.jsonl', 'path: data/late-break.jsonl') +
        'synchronizer:\n  sync_offset: 1\n',
    );
    const logs: string[] = [];
    const r = await runJob(config, { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'failed');
    assert.match(r.error!, /late-break\.jsonl:60/);
  });
});
