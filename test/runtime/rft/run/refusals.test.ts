/**
 * `dist/cli.js run` refuses, before any work, a config that names a registry entry Trinity-RFT has and this runtime
 * lacks: it exits non-zero within seconds, names the entry, the names that run locally and how to run it for real,
 * and writes no checkpoint directory. One case per refused registry kind (workflow, reward function, experience
 * operator, and a dotted class path; every sample strategy runs), and one per main setting the runtime would not
 * honour (refused-settings.ts: per-side sync intervals, recomputed old log-probs, rollout correction, router replay);
 * then, in process, the features that need a Trinity deployment and the algorithm types it has no class of.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { checkConfig } from '../../../../runtime/config/check-config';
import { LOCAL_REGISTRIES, localRefusals } from '../../../../runtime/rft/refusals/refusals';
import { generateLocalRegistries } from '../../../../runtime/rft/refusals/implemented-registries-gen';
import { refusedListMarkdown, withRefusedList } from '../../../../runtime/rft/refusals/refusals-doc';
import { REFUSED_SETTINGS } from '../../../../runtime/rft/refusals/refused-settings';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';
import { killAll, start } from './cli-process';
import { runJob } from '../../../../runtime/rft/run/job/job';
import type { RuntimeEvent } from '../../../../runtime/protocol';

after(killAll);

let job: TinyJob;
before(async () => {
  await initBackend({ prefer: 'wasm' });
  job = tinyJob(3);
});

interface Case {
  kind: keyof typeof LOCAL_REGISTRIES;
  name: string;
  release?: string;
  edit: (yaml: string) => string;
  key: string;
  /** What the refusal says the entry needs. */
  needs?: RegExp;
}

const CASES: Case[] = [
  {
    kind: 'workflow',
    name: 'math_rm_workflow',
    edit: (y) => y.replace('default_workflow_type: simple_workflow', 'default_workflow_type: math_rm_workflow'),
    key: 'default_workflow_type',
  },
  {
    kind: 'workflow',
    name: 'alfworld_workflow',
    edit: (y) => y.replace('default_workflow_type: simple_workflow', 'default_workflow_type: alfworld_workflow'),
    key: 'default_workflow_type',
    needs: /\(it needs the ALFWorld environment \(the alfworld and textworld Python packages/,
  },
  {
    kind: 'workflow',
    name: 'my_pkg.workflows.MyWorkflow',
    edit: (y) =>
      y.replace('default_workflow_type: simple_workflow', 'default_workflow_type: my_pkg.workflows.MyWorkflow'),
    key: 'default_workflow_type',
  },
  {
    kind: 'reward_fn',
    name: 'rm_gallery_reward',
    release: 'v0.5.2',
    edit: (y) => y.replace('default_reward_fn_type: math_boxed_reward', 'default_reward_fn_type: rm_gallery_reward'),
    key: 'default_reward_fn_type',
  },
  {
    kind: 'experience_operator',
    name: 'data_juicer',
    edit: (y) =>
      `${y}data_processor:\n  experience_pipeline:\n    operators:\n      - name: data_juicer\n        args: {}\n`,
    key: 'name',
  },
];

describe('run refuses registry entries the local runtime lacks', () => {
  for (const c of CASES) {
    test(`${c.kind} ${c.name}`, async () => {
      const name = `refuse-${c.kind}-${c.name.replace(/\W/g, '-')}`;
      let yaml = c.edit(header(job, name) + topLevel(GRPO_STAGE));
      if (c.release) yaml = yaml.replace('# trinity-version: main', `# trinity-version: ${c.release}`);
      assert.ok(yaml.includes(c.name), 'the edit applied');
      const config = job.write(`${name}.yaml`, yaml);
      const began = Date.now();
      const run = start(config);
      const { code } = await run.exit;
      const took = Date.now() - began;
      const err = run.stderr();
      assert.equal(code, 1, err);
      assert.ok(took < 30_000, `refused after ${took} ms`);
      assert.match(err, new RegExp(`\`${c.name.replace(/\./g, '\\.')}\` runs on Trinity-RFT only`));
      for (const local of LOCAL_REGISTRIES[c.kind]) assert.ok(err.includes(`\`${local}\``), `names ${local}`);
      assert.match(err, /trinityWorkbench\.runWith: trinity/);
      if (c.needs) assert.match(err, c.needs);
      // file:line of the key that names it
      const line = yaml.split('\n').findIndex((l) => l.includes(`${c.key}: ${c.name}`)) + 1;
      assert.ok(err.includes(`${config}:${line}:`), `points at line ${line}: ${err}`);
      assert.deepEqual(run.events.at(-1)?.type, 'done');
      assert.equal(
        run.events.some((e) => e.type === 'run' || e.type === 'metrics'),
        false,
        'no run started',
      );
      assert.equal(existsSync(join(job.dir, 'checkpoints', 'tests', name)), false, 'no job dir');
    });
  }

  test('the committed table is what the registries implement now', () => {
    const committed = readFileSync(
      join(__dirname, '..', '..', '..', '..', 'runtime', 'rft', 'refusals', 'implemented-registries.generated.ts'),
      'utf8',
    );
    assert.equal(committed, generateLocalRegistries());
  });

  test("docs/runtime.md's refused list is the one the refusal tables generate, naming each refused setting", () => {
    const doc = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'runtime.md'), 'utf8');
    assert.equal(doc, withRefusedList(doc), 'stale: run `npm run gen`');
    for (const s of REFUSED_SETTINGS) assert.ok(doc.includes(s.doc), s.path);
    assert.match(refusedListMarkdown(), /experience operator: `data_juicer`/);
  });

  test('a config with only local entries is not refused by this check', async () => {
    const r = await checkConfig(header(job, 'ok') + topLevel(GRPO_STAGE), { datasets: false });
    assert.deepEqual(localRefusals(r), []);
  });
});

interface SettingCase {
  key: string;
  /** The written line that the refusal points at. */
  line: string;
  edit: (yaml: string) => string;
  says: RegExp;
}

const withoutEvals = (y: string) => y.replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '');

const SETTINGS: SettingCase[] = [
  {
    key: 'synchronizer.explorer_sync_interval',
    line: 'explorer_sync_interval: 2',
    edit: (y) => `${y}synchronizer:\n  explorer_sync_interval: 2\n`,
    says: /separate `explorer_sync_interval` \(2\) runs on Trinity-RFT only; the local runtime syncs both sides every `sync_interval` \(1\)/,
  },
  {
    key: 'algorithm.bypass_old_logprobs',
    line: 'bypass_old_logprobs: false',
    edit: (y) => y.replace('repeat_times: 4', 'repeat_times: 4\n  bypass_old_logprobs: false'),
    says: /recomputing the old log-probs in the trainer runs on Trinity-RFT only/,
  },
  {
    key: 'algorithm.rollout_correction',
    line: 'rollout_correction:',
    edit: (y) => y.replace('repeat_times: 4', 'repeat_times: 4\n  rollout_correction: {rollout_is: token}'),
    says: /rollout correction .* runs on Trinity-RFT only/,
  },
  {
    key: 'algorithm.enable_router_replay',
    line: 'enable_router_replay: true',
    edit: (y) => y.replace('repeat_times: 4', 'repeat_times: 4\n  enable_router_replay: true'),
    says: /router replay runs on Trinity-RFT only/,
  },
  // An auxiliary model's engine settings, refused as the rollout model's are (issue 38): the second entry's.
  {
    key: 'explorer.auxiliary_models.1.repetition_penalty',
    line: 'repetition_penalty: 1.3',
    edit: (y) =>
      y
        .replace('gpu_per_node: 2', 'gpu_per_node: 4')
        .replace(
          'explorer:\n',
          'explorer:\n  auxiliary_models:\n    - model_path: model\n    - model_path: model\n      repetition_penalty: 1.3\n',
        ),
    says: /`explorer\.auxiliary_models\.1\.repetition_penalty`: a repetition penalty of 1\.3 would reshape every sampling distribution/,
  },
  {
    key: 'explorer.auxiliary_models.0.external_model_config.enable',
    line: 'enable: true',
    edit: (y) =>
      y
        .replace('gpu_per_node: 2', 'gpu_per_node: 4')
        .replace(
          'explorer:\n',
          'explorer:\n  auxiliary_models:\n    - name: judge\n      model_path: model\n      external_model_config:\n        enable: true\n        model_name: qwen3-max\n',
        ),
    says: /the workflows would call the external model `qwen3-max` at the OpenAI-compatible service in `\$OPENAI_BASE_URL`/,
  },
  // A pipeline input store at a database server (issue 38): refused before any work, not at the explorer's set-up.
  {
    key: 'data_processor.experience_pipeline.input_save_path',
    line: 'input_save_path: postgresql://u@db/trinity',
    edit: (y) =>
      `${y}data_processor:\n  experience_pipeline:\n    save_input: true\n    input_save_path: postgresql://u@db/trinity\n`,
    says: /the experience pipeline would keep its input in the PostgreSQL database `postgresql:\/\/u@db\/trinity`; the local runtime opens SQLite databases only/,
  },
];

describe('run refuses main settings the local runtime would not honour', () => {
  for (const c of SETTINGS) {
    test(c.key, async () => {
      const name = `refuse-${c.key.replace(/\W/g, '-')}`;
      const yaml = c.edit(header(job, name) + topLevel(GRPO_STAGE));
      assert.ok(yaml.includes(c.line), 'the edit applied');
      const checked = await checkConfig(yaml, { datasets: false });
      assert.deepEqual(
        checked.diagnostics.filter((d) => d.severity === 'error'),
        [],
        'valid on main',
      );
      const config = job.write(`${name}.yaml`, yaml);
      const run = start(config);
      const { code } = await run.exit;
      const err = run.stderr();
      assert.equal(code, 1, err);
      assert.match(err, c.says);
      assert.match(err, /trinityWorkbench\.runWith: trinity/);
      const line = yaml.split('\n').findIndex((l) => l.includes(c.line)) + 1;
      assert.ok(err.includes(`${config}:${line}:`), `points at line ${line}: ${err}`);
      assert.equal(
        run.events.some((e) => e.type === 'run' || e.type === 'metrics'),
        false,
        'no run started',
      );
      assert.equal(existsSync(join(job.dir, 'checkpoints', 'tests', name)), false, 'no job dir');
    });
  }

  test('the values the runtime honours pass: fully_async with staleness control, per-side intervals equal to sync_interval, bypass on, no correction', async () => {
    const yaml = withoutEvals(header(job, 'ok-settings') + topLevel(GRPO_STAGE))
      .replace(
        'repeat_times: 4',
        'repeat_times: 4\n  bypass_old_logprobs: true\n  rollout_correction: null\n  enable_router_replay: false\n  sample_strategy: staleness_control',
      )
      .concat(
        'synchronizer:\n  sync_style: fully_async\n  sync_interval: 1\n  explorer_sync_interval: 1\n  trainer_sync_interval: 1\n',
      );
    const r = await checkConfig(yaml, { datasets: false });
    assert.deepEqual(
      r.diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    assert.deepEqual(localRefusals(r), []);
  });
});

/**
 * Features that need a Trinity deployment (Data-Juicer pipelines, the Tinker service, an external engine) and
 * algorithm types whose class is not modelled (m2po, cpt): `runJob` refuses them before any work with the words the
 * editor shows (TRN312 is localRefusals' message). In process: the refusal needs no backend.
 */
const FEATURES: SettingCase[] = [
  {
    key: 'explorer.max_repeat_times_per_runner',
    line: 'max_repeat_times_per_runner: 3',
    edit: (y) => y.replace('eval_on_startup: true', 'eval_on_startup: true\n  max_repeat_times_per_runner: 3'),
    says: /`explorer\.max_repeat_times_per_runner`: splitting each task's 4 runs into sub-tasks of 3 \(each on its own runner, with its own timeout and retries\) runs on Trinity-RFT only/,
  },
  {
    key: 'buffer.trainer_input.experience_buffer.path',
    line: 'path: mysql://u@db/trinity',
    edit: (y) =>
      y.replace(
        'buffer:\n  batch_size: 4\n',
        'buffer:\n  batch_size: 4\n  trainer_input:\n    experience_buffer:\n      name: exp\n      storage_type: sql\n      path: mysql://u@db/trinity\n',
      ),
    says: /this buffer's rows would live in the MySQL database `mysql:\/\/u@db\/trinity`; the local runtime opens SQLite databases only/,
  },
  {
    key: 'data_processor.task_pipeline',
    line: 'task_pipeline:',
    edit: (y) =>
      `${y.replace('path: data/train.jsonl', 'path: data/piped.jsonl')}data_processor:\n  task_pipeline:\n    operators:\n      - name: llm_difficulty_score_filter\n        args: {min_score: 0.0}\n    inputs: [data/train.jsonl]\n`,
    says: /the task pipeline would run the Data-Juicer operators `llm_difficulty_score_filter` over `data\/train\.jsonl` and write the result to `sums` \(`data\/piped\.jsonl`\) before any exploring; Data-Juicer runs on Trinity-RFT only/,
  },
  {
    key: 'data_processor.experience_pipeline.inputs',
    line: 'inputs:',
    edit: (y) =>
      `${y}data_processor:\n  experience_pipeline:\n    inputs:\n      extra:\n        name: extra\n        storage_type: file\n        path: data/sft.jsonl\n`,
    says: /the experience pipeline would also read the buffers `extra`/,
  },
  {
    key: 'model.tinker.enable',
    line: 'enable: true',
    edit: (y) => y.replace('  max_model_len: 64\n', '  max_model_len: 64\n  tinker:\n    enable: true\n'),
    says: /training and sampling would run on the Tinker service .*; the local runtime would train the local model instead/,
  },
  {
    key: 'model.external_model.enable',
    line: 'enable: true',
    // Trinity runs an external model in bench mode only.
    edit: (y) =>
      y
        .replace(
          '  max_model_len: 64\n',
          '  max_model_len: 64\n  external_model:\n    enable: true\n    model_name: qwen3-max\n',
        )
        .replace('mode: both', 'mode: bench'),
    says: /the rollouts would come from the external model `qwen3-max` at the OpenAI-compatible service in `\$OPENAI_BASE_URL`/,
  },
  {
    key: 'model.repetition_penalty',
    line: 'repetition_penalty: 1.2',
    edit: (y) => y.replace('  max_model_len: 64\n', '  max_model_len: 64\n  repetition_penalty: 1.2\n'),
    says: /a repetition penalty of 1\.2 would reshape every sampling distribution .*; the local sampler applies none/,
  },
  {
    key: 'explorer.rollout_model.ignore_eos',
    line: 'ignore_eos: true',
    edit: (y) => y.replace('explorer:\n', 'explorer:\n  rollout_model:\n    ignore_eos: true\n'),
    says: /vLLM would sample past the end-of-sequence token/,
  },
  {
    key: 'model.rope_theta',
    line: 'rope_theta: 500000',
    edit: (y) => y.replace('  max_model_len: 64\n', '  max_model_len: 64\n  rope_theta: 500000\n'),
    says: /a `rope_theta` would override the model's own/,
  },
  {
    key: 'algorithm.optimizer.optimizer_type',
    line: 'optimizer_type: sgd',
    edit: (y) => y.replace('lr: 1e-3', 'lr: 1e-3\n    optimizer_type: sgd'),
    says: /the trainer would step with `sgd`; the local trainer runs AdamW/,
  },
  ...(['m2po', 'cpt'] as const).map(
    (type): SettingCase => ({
      key: `algorithm.algorithm_type ${type}`,
      line: `algorithm_type: ${type}`,
      edit: (y) => y.replace('algorithm_type: grpo', `algorithm_type: ${type}`),
      says: new RegExp(`\`algorithm\\.algorithm_type\`: the algorithm \`${type}\` runs on Trinity-RFT only`),
    }),
  ),
];

describe('run refuses features that need Trinity-RFT, in the words of the editor', () => {
  test('max_repeat_times_per_runner at least every repeat_times splits nothing (one sub-task per task): not refused', async () => {
    const base = header(job, 'whole-tasks') + topLevel(GRPO_STAGE);
    for (const v of [4, 8]) {
      const yaml = base.replace('eval_on_startup: true', `eval_on_startup: true\n  max_repeat_times_per_runner: ${v}`);
      const r = await checkConfig(yaml, { datasets: false });
      assert.deepEqual(localRefusals(r), [], `${v}`);
      assert.ok(!r.diagnostics.some((d) => d.message.includes('max_repeat_times_per_runner')), `${v}`);
    }
  });

  for (const c of FEATURES) {
    test(c.key, async () => {
      const name = `refuse-${c.key.replace(/\W/g, '-')}`;
      const yaml = c.edit(header(job, name) + topLevel(GRPO_STAGE));
      assert.ok(yaml.includes(c.line), 'the edit applied');
      const checked = await checkConfig(yaml, { datasets: false });
      assert.deepEqual(
        checked.diagnostics.filter((d) => d.severity === 'error'),
        [],
        'valid on main',
      );
      const editor = localRefusals(checked).filter((r) => c.says.test(r.message));
      assert.equal(
        editor.length,
        1,
        localRefusals(checked)
          .map((r) => r.message)
          .join('\n'),
      );
      const config = job.write(`${name}.yaml`, yaml);
      const events: RuntimeEvent[] = [];
      const r = await runJob(config, { backend: 'wasm', events: (e) => events.push(e) });
      assert.equal(r.status, 'failed');
      assert.ok(r.error?.includes(editor[0].message), `the same words as the editor: ${r.error}`);
      assert.match(r.error!, /trinityWorkbench\.runWith: trinity/);
      const line = yaml.split('\n').findIndex((l) => l.includes(c.line)) + 1;
      assert.ok(r.error!.includes(`${config}:${line}:`), `points at line ${line}: ${r.error}`);
      assert.equal(
        events.some((e) => e.type === 'run' || e.type === 'metrics'),
        false,
        'no run started',
      );
      assert.equal(existsSync(join(job.dir, 'checkpoints', 'tests', name)), false, 'no job dir');
    });
  }
});
