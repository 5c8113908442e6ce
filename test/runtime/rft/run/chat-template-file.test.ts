/**
 * `model.chat_template_path`: Trinity reads the file into `model.custom_chat_template` at launch (config_validator.py,
 * f3c8dec), and the rollout model and the tasksets' formats take it from there. A real run formats its prompts with
 * the file's template; before, the key was read by nothing and the tokenizer's own template was used.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import type { RuntimeEvent } from '../../../../runtime/protocol';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

// Only characters of the tiny model's alphabet.
const TEMPLATE = "{% for m in messages %}sum {{ m['content'] }} is {% endfor %}";

describe('model.chat_template_path', () => {
  test("a run's prompts are formatted with the template in the file", async () => {
    const job = tinyJob(44);
    job.write('sum.jinja', TEMPLATE);
    const yaml =
      header(job, 'template').replace(
        '  max_model_len: 64\n',
        '  max_model_len: 64\n  chat_template_path: sum.jinja\n',
      ) +
      topLevel(GRPO_STAGE)
        .replace('total_steps: 4', 'total_steps: 1')
        .replace('eval_on_startup: true', 'eval_on_startup: false')
        .replace(/ {4}eval_tasksets:\n(?: {6}.*\n)+/, '');
    assert.ok(yaml.includes('chat_template_path: sum.jinja'), 'the edit applied');
    const events: RuntimeEvent[] = [];
    const r = await runJob(job.write('template.yaml', yaml), { backend: 'wasm', events: (e) => events.push(e) });
    assert.equal(r.status, 'finished', r.error);
    const prompts = events.flatMap((e) => (e.type === 'rollouts' ? e.samples.map((s) => s.prompt) : []));
    assert.ok(prompts.length > 0, 'rollouts were reported');
    for (const p of prompts) assert.match(p, /^sum \d\+\d is $/, p);
  });
});
