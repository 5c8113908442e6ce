/**
 * `dist/cli.js run` refuses, before any work, a config that names a registry entry Trinity-RFT has and this runtime
 * lacks: it exits non-zero within seconds, names the entry, the names that run locally and how to run it for real,
 * and writes no checkpoint directory. One case per refused registry kind (workflow, reward function, experience
 * operator, sample strategy, and a dotted class path).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { checkConfig } from '../../../../runtime/config/validate';
import { LOCAL_REGISTRIES, localRefusals } from '../../../../runtime/rft/local-support';
import { generateLocalRegistries } from '../../../../runtime/rft/local-registries-gen';
import { GRPO_STAGE, header, tinyJob, topLevel, type TinyJob } from './helpers';
import { killAll, start } from './cli-process';

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
}

const CASES: Case[] = [
  {
    kind: 'workflow',
    name: 'tool_call_workflow',
    edit: (y) => y.replace('default_workflow_type: simple_workflow', 'default_workflow_type: tool_call_workflow'),
    key: 'default_workflow_type',
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
  {
    kind: 'sample_strategy',
    name: 'staleness_control',
    edit: (y) => y.replace('algorithm_type: grpo', 'algorithm_type: grpo\n  sample_strategy: staleness_control'),
    key: 'sample_strategy',
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
      join(__dirname, '..', '..', '..', '..', 'runtime', 'rft', 'local-registries.generated.ts'),
      'utf8',
    );
    assert.equal(committed, generateLocalRegistries());
  });

  test('a config with only local entries is not refused by this check', async () => {
    const r = await checkConfig(header(job, 'ok') + topLevel(GRPO_STAGE), { datasets: false });
    assert.deepEqual(localRefusals(r), []);
  });
});
