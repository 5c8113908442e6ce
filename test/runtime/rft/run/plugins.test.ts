/** Plugin directories: a JavaScript reward function used by a config, known to the checker and logged as a metric. */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

describe('runtime plugins', () => {
  test('a reward from --plugin-dir is registered, accepted by the checker and scores rollouts', async () => {
    const job = tinyJob(14);
    const plugins = join(job.dir, 'plugins');
    mkdirSync(plugins);
    writeFileSync(
      join(plugins, 'length.mjs'),
      `export const rewards = {
  length_bonus: (args) => ({ response }) => ({ length_bonus: Math.min(1, response.length / (args.scale ?? 10)) }),
};
`,
    );
    const stage = topLevel(GRPO_STAGE)
      .replace('default_reward_fn_type: math_boxed_reward', 'default_reward_fn_type: length_bonus')
      .replace(/\nexplorer:[\s\S]*?eval_interval: 2\n/, '\n');
    const config = job.write('plugin.yaml', header(job, 'plugin') + stage.replace('total_steps: 4', 'total_steps: 1'));

    const without = await runJob(config, { backend: 'wasm' });
    assert.equal(without.status, 'failed');
    assert.match(without.error!, /length_bonus/);

    const logs: string[] = [];
    const r = await runJob(config, { backend: 'wasm', pluginDirs: [plugins], log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'finished', r.error);
    assert.ok(logs.some((l) => l.includes('length.mjs loaded')));
    const explorer = readFileSync(join(r.stages[0].jobDir, 'monitor', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; values: Record<string, number> })
      .find((l) => l.role === 'explorer' && 'rollout/length_bonus/mean' in l.values);
    assert.ok(explorer && explorer.values['rollout/length_bonus/mean'] > 0);
  });

  test('a plugin that fails to load is named', async () => {
    const job = tinyJob(15);
    const plugins = join(job.dir, 'bad-plugins');
    mkdirSync(plugins);
    writeFileSync(join(plugins, 'broken.mjs'), 'export const rewards = { x: 1 };\n');
    const config = job.write('p.yaml', header(job, 'p') + topLevel(GRPO_STAGE));
    const r = await runJob(config, { backend: 'wasm', pluginDirs: [plugins] });
    assert.equal(r.status, 'failed');
    assert.match(r.error!, /broken\.mjs: rewards\.x is not a function/);
  });
});
