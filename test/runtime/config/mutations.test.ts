/**
 * Seeded mistakes in real Trinity configs: each must be reported at its own line, with its code and a message
 * that names the key and the fix. The unmutated files check clean (corpus.test.ts), so every finding here is
 * caused by the mutation.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ConfigDiagnostic } from '../../../runtime/config/diagnostics';
import { lineColumn } from '../../../runtime/config/load/load-config';
import type { Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import { corpusDir, TRINITY_ENV } from '../../helpers/corpus';

interface Mutation {
  name: string;
  release: Release;
  file: string;
  /** Replace the first occurrence of `find` (which must exist) with `replace`. */
  find: string;
  replace: string;
  env?: Record<string, string | undefined>;
  expect: { line: number; code: string; severity?: string; message: RegExp };
}

const GSM8K = 'examples/grpo_gsm8k/gsm8k.yaml';

const MUTATIONS: Mutation[] = [
  {
    name: 'misspelled key gets a did-you-mean',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_time: 8',
    expect: {
      line: 6,
      code: 'TRN010',
      message: /Unknown key `repeat_time` under `algorithm`.*Did you mean `repeat_times`\?/,
    },
  },
  {
    name: 'misspelled nested key',
    release: 'main',
    file: GSM8K,
    find: '        prompt_key:',
    replace: '        promt_key:',
    expect: { line: 27, code: 'TRN010', message: /`promt_key`.*Did you mean `prompt_key`\?/ },
  },
  {
    name: 'key from a later release',
    release: 'v0.3.1',
    file: GSM8K,
    find: 'algorithm:\n',
    replace: 'algorithm:\n  loss_agg_mode: token-mean\n',
    expect: { line: 5, code: 'TRN011', message: /`loss_agg_mode`.*added in Trinity v0\.4\.0/ },
  },
  {
    name: 'wrong enum value',
    release: 'main',
    file: GSM8K,
    find: "  sync_method: 'nccl'",
    replace: "  sync_method: 'ncll'",
    expect: {
      line: 57,
      code: 'TRN022',
      message: /`synchronizer\.sync_method`.*`ncll` is not a valid SyncMethod.*Did you mean `nccl`\?/,
    },
  },
  {
    name: 'unknown algorithm type',
    release: 'main',
    file: GSM8K,
    find: '  algorithm_type: grpo',
    replace: '  algorithm_type: grop',
    expect: { line: 5, code: 'TRN201', message: /Invalid algorithm_type `grop`.*Did you mean `grpo`\?/ },
  },
  {
    name: 'wrong type (string for an integer)',
    release: 'main',
    file: GSM8K,
    find: '  batch_size: 96',
    replace: '  batch_size: lots',
    expect: { line: 18, code: 'TRN020', message: /`buffer\.batch_size`: expected an integer, got the string `lots`/ },
  },
  {
    name: 'float literal for an integer',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 8.0',
    expect: { line: 6, code: 'TRN020', message: /`algorithm\.repeat_times`: expected an integer/ },
  },
  {
    name: 'mapping where a number belongs',
    release: 'main',
    file: GSM8K,
    find: '  sync_interval: 1',
    replace: '  sync_interval: {every: 1}',
    expect: { line: 58, code: 'TRN020', message: /`synchronizer\.sync_interval` must be an integer, not a mapping/ },
  },
  {
    name: 'batch size not divisible by the trainer GPUs',
    release: 'main',
    file: GSM8K,
    find: '  gpu_per_node: 2',
    replace: '  gpu_per_node: 6',
    // 6 GPUs - 1 rollout engine = 5 trainer GPUs; 96 x 8 = 768 experiences do not divide by 5.
    expect: {
      line: 18,
      code: 'TRN221',
      message: /batch size \(768\) must be divisible by the number of GPUs \(5\).*a `batch_size` of 100 gives 800/,
    },
  },
  {
    name: 'batch size not divisible (v0.4.0 rule)',
    release: 'v0.4.0',
    file: GSM8K,
    // This release's example has 8 GPUs and 2 rollout engines; 3 engines leave 5 trainer GPUs.
    find: '    engine_num: 2',
    replace: '    engine_num: 3',
    expect: { line: 18, code: 'TRN221', message: /batch_size \(768\) must be divisible by \(5\)/ },
  },
  {
    name: 'prompt + response over max_model_len',
    release: 'main',
    file: GSM8K,
    find: '  max_response_tokens: 1024',
    replace: '  max_response_tokens: 1024\n  max_prompt_tokens: 1536',
    expect: { line: 13, code: 'TRN210', message: /\(1536 \+ 1024\) exceeds `max_model_len` \(2048\)/ },
  },
  {
    name: 'not enough GPUs for the trainer',
    release: 'main',
    file: GSM8K,
    find: '    engine_num: 1',
    replace: '    engine_num: 2',
    expect: {
      line: 50,
      code: 'TRN220',
      message: /Not enough GPUs for trainer\. Explorer requires 2 GPUs, but total available GPUs are 2/,
    },
  },
  {
    name: 'DPO in both mode',
    release: 'main',
    file: GSM8K,
    find: '  algorithm_type: grpo',
    replace: '  algorithm_type: dpo',
    expect: { line: 5, code: 'TRN205', message: /DPO does not support `both` mode.*`mode: train`/ },
  },
  {
    name: 'interpolation to a missing key',
    release: 'main',
    file: GSM8K,
    find: '  max_response_tokens: 1024',
    replace: '  max_response_tokens: ${model.max_respons_tokens}',
    expect: { line: 11, code: 'TRN101', message: /max_respons_tokens/ },
  },
  {
    name: 'interpolation into trainer_config that is not written',
    release: 'main',
    file: GSM8K,
    find: '  save_interval: 100',
    replace: '  save_interval: ${trainer.trainer_config.trainer.save_freq}',
    expect: {
      line: 62,
      code: 'TRN105',
      message: /`trainer\.trainer_config` is free-form.*Write `trainer\.save_freq` under `trainer\.trainer_config`/,
    },
  },
  {
    name: 'unset environment variable without default',
    release: 'main',
    file: GSM8K,
    find: '${oc.env:TRINITY_MODEL_PATH,Qwen/Qwen2.5-1.5B-Instruct}',
    replace: '${oc.env:MY_MODEL}',
    expect: { line: 10, code: 'TRN102', message: /MY_MODEL/ },
  },
  {
    name: 'interpolation cycle',
    release: 'main',
    file: GSM8K,
    find: '  max_model_len: 2048',
    replace: '  max_model_len: ${model.max_prompt_tokens}\n  max_prompt_tokens: ${model.max_model_len}',
    expect: {
      line: 12,
      code: 'TRN103',
      message:
        /Recursive interpolation detected: model\.max_model_len -> model\.max_prompt_tokens -> model\.max_model_len/,
    },
  },
  {
    name: 'partial policy_loss_fn_args',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 8\n  policy_loss_fn: gspo\n  policy_loss_fn_args:\n    clip_range_high: 0.0004',
    expect: { line: 8, code: 'TRN301', message: /`algorithm\.policy_loss_fn_args`.*lacks `clip_range_low`/ },
  },
  {
    name: 'unknown argument of an algorithm function',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 8\n  advantage_fn_args:\n    epsilom: 0.000001',
    expect: { line: 8, code: 'TRN302', message: /`epsilom` is not an argument of `grpo`.*Did you mean `epsilon`\?/ },
  },
  {
    name: 'group-relative advantage with one rollout per task',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 1',
    expect: {
      line: 6,
      code: 'TRN303',
      severity: 'warning',
      message: /`grpo` advantages.*`algorithm\.repeat_times` is 1/,
    },
  },
  {
    name: 'unknown workflow',
    release: 'main',
    file: GSM8K,
    find: "    default_workflow_type: 'math_workflow'",
    replace: "    default_workflow_type: 'math_workfow'",
    expect: {
      line: 40,
      code: 'TRN307',
      message: /`math_workfow` is not a registered workflow.*Did you mean `math_workflow`\?/,
    },
  },
  {
    name: 'deprecated key',
    release: 'main',
    file: GSM8K,
    find: '  runner_per_model: 8',
    replace: '  runner_num: 8',
    expect: {
      line: 48,
      code: 'TRN012',
      severity: 'warning',
      message: /`explorer\.runner_num` is deprecated; use `explorer\.runner_per_model`/,
    },
  },
  {
    name: 'key removed in this release, with its replacement',
    release: 'v0.4.0',
    file: GSM8K,
    find: '  runner_per_model: 8',
    replace: '  runner_per_model: 8\n  api_port: 8010',
    expect: { line: 49, code: 'TRN011', message: /`api_port`.*not in Trinity v0\.4\.0.*Use `proxy_port` instead/ },
  },
  {
    name: 'eval_interval rounded to the sync interval',
    release: 'main',
    file: GSM8K,
    find: '  sync_interval: 1',
    replace: '  sync_interval: 8',
    expect: {
      line: 47,
      code: 'TRN232',
      severity: 'warning',
      message: /`eval_interval` \(50\) is not a multiple of `sync_interval` \(8\); Trinity rounds it to 48/,
    },
  },
  {
    name: 'unknown key inside the veRL trainer config',
    release: 'main',
    file: GSM8K,
    find: '  ulysses_sequence_parallel_size: 1',
    replace:
      '  ulysses_sequence_parallel_size: 1\n  trainer_config:\n    actor_rollout_ref:\n      actor:\n        ppo_epoch: 2',
    expect: { line: 70, code: 'TRN010', message: /`ppo_epoch`.*Did you mean `ppo_epochs`\?.*veRL trainer config/ },
  },
  {
    name: 'adaptive KL without its target',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 8\n  kl_loss_fn_args:\n    adaptive: true\n    kl_coef: 0.001',
    expect: {
      line: 8,
      code: 'TRN308',
      message: /Target KL and horizon must be provided for adaptive KL: add `target_kl` and `horizon`/,
    },
  },
  {
    name: 'mix without its expert dataset',
    release: 'main',
    file: GSM8K,
    find: '  algorithm_type: grpo',
    replace: '  algorithm_type: mix',
    expect: {
      line: 5,
      code: 'TRN309',
      message: /`sft_dataset` is not found in `buffer\.trainer_input\.auxiliary_buffers`/,
    },
  },
  {
    name: 'explorer-side algorithm with a trainer-side advantage',
    release: 'main',
    file: GSM8K,
    find: '  repeat_times: 8',
    replace: '  repeat_times: 8\n  advantage_fn: reinforceplusplus',
    expect: {
      line: 7,
      code: 'TRN310',
      message:
        /AdvantageFn `reinforceplusplus` can only be computed in the trainer, but `grpo` computes advantages on the explorer side/,
    },
  },
  {
    name: 'SFT without a save interval (v0.5.0+ copies it into sync_interval)',
    release: 'main',
    file: 'examples/sft_mot/sft.yaml',
    find: '  save_interval: 10\n',
    replace: '',
    expect: {
      line: 31,
      code: 'TRN231',
      message: /`sync_interval` must be positive: for sft Trinity main copies it from `trainer\.save_interval` \(0\)/,
    },
  },
];

function mutate(text: string, m: Mutation): string {
  const i = text.indexOf(m.find);
  assert.ok(i >= 0, `mutation "${m.name}": \`${m.find}\` not found in ${m.file}`);
  return text.slice(0, i) + m.replace + text.slice(i + m.find.length);
}

function show(d: ConfigDiagnostic, text: string): string {
  const lines = text.slice(0, d.range[0]).split('\n').length;
  return `${lines}: ${d.severity} ${d.code} ${d.message}`;
}

describe('seeded mistakes in corpus configs', () => {
  for (const m of MUTATIONS) {
    test(m.name, async () => {
      const text = mutate(readFileSync(join(corpusDir(), 'trinity-configs', m.release, m.file), 'utf8'), m);
      const result = await checkConfig(text, { release: m.release, env: m.env ?? TRINITY_ENV, datasets: false });
      const hit = result.diagnostics.find(
        (d) =>
          d.code === m.expect.code &&
          lineColumn(result.loaded.source, d.range[0]).line === m.expect.line &&
          m.expect.message.test(d.message),
      );
      assert.ok(
        hit,
        `expected ${m.expect.code} at line ${m.expect.line} matching ${m.expect.message}; got:\n${result.diagnostics.map((d) => show(d, text)).join('\n')}`,
      );
      assert.equal(hit.severity, m.expect.severity ?? 'error');
    });
  }
});
