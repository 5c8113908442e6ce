/**
 * `model.lora_configs` as Trinity's grpo_lora_gsm8k example sets it: the run trains only an adapter of the written
 * rank and alpha on the modules `target_modules` names (PEFT's regular expression over module names), saves it as
 * PEFT files in each checkpoint's `lora_adapter/`, and the checkpoint's model files hold the frozen base weights with
 * the adapter merged in (W + alpha/r · A B, checked here in float64 from the files) — every other weight untouched.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { initBackend } from '../../../../runtime/engine/backend';
import { runJob } from '../../../../runtime/rft/run/job/job';
import { readCheckpointDir, readSafetensorsFile, toFloat32 } from '../../../../runtime/engine/weights/safetensors';
import { GRPO_STAGE, header, tinyJob, topLevel } from './helpers';

before(async () => {
  await initBackend({ prefer: 'wasm' });
});

const RANK = 4;
const ALPHA = 8;

describe('LoRA (model.lora_configs)', () => {
  test('trains a rank-4, alpha-8 adapter on q_proj and v_proj only, saved as PEFT files beside the merged weights', async () => {
    const job = tinyJob(11);
    const yaml = (header(job, 'lora') + topLevel(GRPO_STAGE))
      .replace(
        '  max_model_len: 64\n',
        `  max_model_len: 64\n  lora_configs:\n  - name: lora\n    lora_rank: ${RANK}\n    lora_alpha: ${ALPHA}\n    target_modules: '.*\\.(q_proj|v_proj)'\n`,
      )
      .replace('total_steps: 4', 'total_steps: 2')
      .replace(/\nexplorer:[\s\S]*?eval_interval: 2\n/, '\n')
      .replace('default_reward_fn_type: math_boxed_reward', 'default_reward_fn_type: format_reward')
      .replace(
        'format: {prompt_key: question, response_key: answer}\n',
        "format: {prompt_key: question, response_key: answer}\n      reward_fn_args: {pattern: '.*1.*'}\n      rollout_args: {temperature: 1.5}\n",
      );
    const logs: string[] = [];
    const r = await runJob(job.write('lora.yaml', yaml), { backend: 'wasm', log: (_, m) => logs.push(m) });
    assert.equal(r.status, 'finished', r.error);
    const ckpt = join(job.dir, 'checkpoints', 'tests', 'lora', 'global_step_2');

    const config = JSON.parse(readFileSync(join(ckpt, 'lora_adapter', 'adapter_config.json'), 'utf8'));
    assert.equal(config.peft_type, 'LORA');
    assert.equal(config.r, RANK);
    assert.equal(config.lora_alpha, ALPHA);
    assert.equal(config.target_modules, '.*\\.(q_proj|v_proj)');
    const adapter = readSafetensorsFile(join(ckpt, 'lora_adapter', 'adapter_model.safetensors')).tensors;
    assert.deepEqual([...adapter.keys()].sort(), [
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
      'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight',
      'base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight',
      'base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight',
    ]);
    assert.ok(
      logs.some((m) => m.includes(`rank-${RANK} adapter (alpha ${ALPHA}) on 2 linear layers`)),
      logs.join('\n'),
    );

    const base = readCheckpointDir(job.modelDir);
    const saved = readCheckpointDir(ckpt);
    for (const [name, t] of base) {
      const module = name.replace(/\.weight$/, '');
      const a = adapter.get(`base_model.model.${module}.lora_A.weight`);
      if (!a) {
        assert.deepEqual(toFloat32(saved.get(name)!), toFloat32(t), `${name} is frozen`);
        continue;
      }
      // PyTorch layouts: W [out, in], A [r, in], B [out, r]; merged W' = W + (alpha / r) · B A.
      const b = adapter.get(`base_model.model.${module}.lora_B.weight`)!;
      const [out, inDim] = t.shape;
      const W = toFloat32(t);
      const A = toFloat32(a);
      const B = toFloat32(b);
      assert.ok(
        B.some((x) => x !== 0),
        `${module}: lora_B trained away from its zero start`,
      );
      const merged = toFloat32(saved.get(name)!);
      let worst = 0;
      for (let o = 0; o < out; o++)
        for (let i = 0; i < inDim; i++) {
          let delta = 0;
          for (let k = 0; k < RANK; k++) delta += B[o * RANK + k] * A[k * inDim + i];
          const want = W[o * inDim + i] + (ALPHA / RANK) * delta;
          worst = Math.max(worst, Math.abs(merged[o * inDim + i] - want));
        }
      assert.ok(worst < 1e-6, `${name}: merged weights off by ${worst}`);
    }
  });
});
