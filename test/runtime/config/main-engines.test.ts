/**
 * main's config fields and launch checks as read at Trinity-RFT f3c8dec (2026-06-25; MAIN_FIELDS_COMMIT): the
 * inference engine's data/pipeline parallel sizes and the GPU split they feed, multi-node engines and the SGLang /
 * vLLM rules for them, per-side sync intervals, the fully async style, the trainer check's modes and Megatron's
 * context parallel size, and the fields that exist on main only. Each case edits a real corpus config
 * (examples/grpo_gsm8k/gsm8k.yaml, clean on both releases) and is checked on main and on v0.5.2, where it differs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { lineColumn } from '../../../runtime/config/load/load-config';
import { MAIN_FIELDS_COMMIT, type Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import { corpusDir, TRINITY_ENV } from '../../helpers/corpus';

const GSM8K = 'examples/grpo_gsm8k/gsm8k.yaml';

function gsm8k(release: Release): string {
  return readFileSync(join(corpusDir(), 'trinity-configs', release, GSM8K), 'utf8');
}

function edit(text: string, ...pairs: [string, string][]): string {
  for (const [find, replace] of pairs) {
    assert.ok(text.includes(find), `the corpus file still contains ${JSON.stringify(find)}`);
    text = text.replace(find, replace);
  }
  return text;
}

async function check(text: string, release: Release) {
  const result = await checkConfig(text, { release, env: TRINITY_ENV, datasets: false });
  const diags = result.diagnostics.map((d) => ({
    code: d.code,
    severity: d.severity,
    line: lineColumn(result.loaded.source, d.range[0]).line,
    message: d.message,
  }));
  return { result, diags, errors: diags.filter((d) => d.severity === 'error') };
}

const lineOf = (text: string, needle: string): number => text.slice(0, text.indexOf(needle)).split('\n').length;

/** gsm8k on main with `trainer.trainer_config` set to `yaml` (its lines indented under it). */
const withTrainerConfig = (yaml: string): string =>
  edit(gsm8k('main'), [
    '  ulysses_sequence_parallel_size: 1\n',
    `  ulysses_sequence_parallel_size: 1\n  trainer_config:\n${yaml}`,
  ]);

/** The rollout model's engine_num / tensor_parallel_size lines replaced by `rollout`, on a cluster of `nodes` × `gpus`. */
function engines(release: Release, nodes: number, gpus: number, rollout: string): string {
  return edit(
    gsm8k(release),
    ['  node_num: 1\n  gpu_per_node: 2', `  node_num: ${nodes}\n  gpu_per_node: ${gpus}`],
    ['    engine_num: 1\n    tensor_parallel_size: 1\n', rollout],
  );
}

describe('inference engines on main: GPUs per engine = tensor × data × pipeline parallel', () => {
  test('the trainer gets what the explorer leaves: 12 GPUs − 2 engines × (2 × 2 × 1)', async () => {
    const text = engines('main', 1, 12, '    engine_num: 2\n    tensor_parallel_size: 2\n    data_parallel_size: 2\n');
    const { result, diags, errors } = await check(text, 'main');
    assert.deepEqual(errors, []);
    const split = diags.find((d) => d.code === 'TRN223' && /trainer gets/.test(d.message));
    assert.match(split?.message ?? '', /The trainer gets 4 GPUs \(12 total − 8 for the explorer\)/);
    const rollout = (result.runs[0].resolved.cluster as Record<string, unknown>).rollout_gpu_num;
    assert.equal(rollout, 8);
  });

  test('data_parallel_size and pipeline_parallel_size count: with 2 GPUs, tp 1 × dp 2 leaves the trainer none', async () => {
    const text = engines('main', 1, 2, '    tensor_parallel_size: 1\n    data_parallel_size: 2\n');
    const { errors } = await check(text, 'main');
    assert.deepEqual(
      errors.map((e) => e.code),
      ['TRN220'],
    );
    assert.match(errors[0].message, /Explorer requires 2 GPUs, but total available GPUs are 2/);
  });

  test('on v0.5.2 the same keys do not exist (unknown key), and the GPU split counts tensor parallel only', async () => {
    const text = engines('v0.5.2', 1, 2, '    tensor_parallel_size: 1\n    data_parallel_size: 2\n');
    const { errors } = await check(text, 'v0.5.2');
    assert.deepEqual(
      errors.map((e) => [e.code, e.line]),
      [['TRN011', lineOf(text, 'data_parallel_size: 2')]],
    );
  });

  test('an engine larger than a node must span whole nodes (TRN222 at tensor_parallel_size)', async () => {
    const text = engines('main', 4, 4, '    tensor_parallel_size: 6\n');
    const { errors } = await check(text, 'main');
    assert.deepEqual(
      errors.map((e) => [e.code, e.line]),
      [['TRN222', lineOf(text, 'tensor_parallel_size: 6')]],
    );
    assert.match(errors[0].message, /multiple of cluster\.gpu_per_node \(4\), but got gpu_per_engine=6/);
    // two whole nodes are fine: 8 GPUs of one engine on 4-GPU nodes, 8 left for the trainer
    const ok = engines('main', 4, 4, '    tensor_parallel_size: 8\n');
    assert.deepEqual((await check(ok, 'main')).errors, []);
  });

  test('vLLM has no data parallelism across nodes; SGLang needs tensor parallel divisible by data parallel', async () => {
    const vllm = engines('main', 4, 4, '    tensor_parallel_size: 4\n    data_parallel_size: 2\n');
    const v = await check(vllm, 'main');
    assert.deepEqual(
      v.errors.map((e) => [e.code, e.line]),
      [['TRN222', lineOf(vllm, 'data_parallel_size: 2')]],
    );
    assert.match(v.errors[0].message, /vLLM does not support data parallelism in multi-node setups/);

    const sglang = engines(
      'main',
      1,
      8,
      '    engine_type: sglang\n    tensor_parallel_size: 3\n    data_parallel_size: 2\n',
    );
    const s = await check(sglang, 'main');
    assert.deepEqual(
      s.errors.map((e) => [e.code, e.line]),
      [['TRN222', lineOf(sglang, 'data_parallel_size: 2')]],
    );
    assert.match(s.errors[0].message, /tensor_parallel_size=3 and data_parallel_size=2/);
    // SGLang may span nodes with data parallelism when tp divides by dp
    const sglangOk = engines(
      'main',
      4,
      4,
      '    engine_type: sglang\n    tensor_parallel_size: 4\n    data_parallel_size: 2\n',
    );
    assert.deepEqual((await check(sglangOk, 'main')).errors, []);
  });

  test('a parallel size below 1 is TRN024 at its value on main', async () => {
    for (const key of ['data_parallel_size', 'pipeline_parallel_size', 'tensor_parallel_size']) {
      const text = engines(
        'main',
        1,
        8,
        `    ${key === 'tensor_parallel_size' ? '' : 'tensor_parallel_size: 1\n    '}${key}: 0\n`,
      );
      const { errors } = await check(text, 'main');
      assert.deepEqual(
        errors.map((e) => [e.code, e.line]),
        [['TRN024', lineOf(text, `${key}: 0`)]],
        key,
      );
      assert.match(errors[0].message, /≥ 1/);
      assert.match(errors[0].message, /f3c8dec/);
    }
  });

  test('colocate on main counts all three sizes: pipeline_parallel_size 2 is refused', async () => {
    const text = edit(engines('main', 1, 1, '    tensor_parallel_size: 1\n    pipeline_parallel_size: 2\n'), [
      'name: "qwen2.5-1.5B-gsm8k"',
      'name: "qwen2.5-1.5B-gsm8k"\nmode: colocate',
    ]);
    const { errors } = await check(text, 'main');
    const layout = errors.find((e) => e.code === 'TRN222');
    assert.match(layout?.message ?? '', /gpu_per_engine` must be set to 1/);
  });
});

describe('synchronizer on main: per-side intervals, fully async', () => {
  test('explorer_sync_interval is what eval_interval is rounded to; trainer_sync_interval is only checked for > 0', async () => {
    const text = edit(gsm8k('main'), [
      '  sync_interval: 1\n',
      '  sync_interval: 1\n  explorer_sync_interval: 8\n  trainer_sync_interval: 4\n',
    ]);
    const { diags, errors } = await check(text, 'main');
    assert.deepEqual(errors, []);
    const rounded = diags.find((d) => d.code === 'TRN232');
    assert.equal(rounded?.line, lineOf(text, 'eval_interval: 50'));
    assert.match(rounded?.message ?? '', /not a multiple of `explorer_sync_interval` \(8\); Trinity rounds it to 48/);
  });

  test('0 per side is TRN024 (ZeroDivisionError in need_sync); unset is fine (sync_interval)', async () => {
    for (const side of ['explorer_sync_interval', 'trainer_sync_interval']) {
      const text = edit(gsm8k('main'), ['  sync_interval: 1\n', `  sync_interval: 1\n  ${side}: 0\n`]);
      const { errors } = await check(text, 'main');
      assert.deepEqual(
        errors.map((e) => [e.code, e.line]),
        [['TRN024', lineOf(text, `${side}: 0`)]],
        side,
      );
    }
  });

  test('fully_async is a sync style on main only, and takes no eval tasksets', async () => {
    const text = edit(gsm8k('main'), ["  sync_method: 'nccl'\n", "  sync_method: 'nccl'\n  sync_style: fully_async\n"]);
    const main = await check(text, 'main');
    assert.deepEqual(
      main.errors.map((e) => [e.code, e.line]),
      [['TRN256', lineOf(text, 'eval_tasksets:')]],
    );
    assert.match(main.errors[0].message, /Eval tasksets are not supported in fully asynchronous/);

    const noEval = text.replace(/ {4}eval_tasksets:\n(?: {4}[- ] .*\n)+/, '');
    assert.ok(!noEval.includes('eval_tasksets'));
    assert.deepEqual((await check(noEval, 'main')).errors, []);

    const old = edit(gsm8k('v0.5.2'), [
      "  sync_method: 'nccl'\n",
      "  sync_method: 'nccl'\n  sync_style: fully_async\n",
    ]);
    const v052 = await check(old, 'v0.5.2');
    assert.deepEqual(
      v052.errors.map((e) => e.line),
      [lineOf(old, 'sync_style: fully_async')],
    );
  });

  test('a fully async explorer needs max_inflight_batches ≥ 1 (IndexError below)', async () => {
    const text = edit(gsm8k('main'), ['  eval_interval: 50\n', '  eval_interval: 50\n  max_inflight_batches: 0\n']);
    const { errors } = await check(text, 'main');
    assert.deepEqual(
      errors.map((e) => [e.code, e.line]),
      [['TRN024', lineOf(text, 'max_inflight_batches: 0')]],
    );
  });
});

describe('trainer and root on main', () => {
  test('the Ray namespace takes the group: project/group/name, project/name without one', async () => {
    const withGroup = edit(gsm8k('main'), ['name: "qwen2.5-1.5B-gsm8k"', 'name: "qwen2.5-1.5B-gsm8k"\ngroup: g1']);
    const a = await check(withGroup, 'main');
    assert.equal(a.result.runs[0].resolved.ray_namespace, 'Trinity-RFT-gsm8k/g1/qwen2.5-1.5B-gsm8k');
    const b = await check(gsm8k('main'), 'main');
    assert.equal(b.result.runs[0].resolved.ray_namespace, 'Trinity-RFT-gsm8k/qwen2.5-1.5B-gsm8k');
  });

  test('an unset max_token_len_per_gpu is 2 × max_model_len / context parallel size under Megatron', async () => {
    const base = edit(
      gsm8k('main'),
      ['  max_token_len_per_gpu: 16384\n', ''],
      [
        "  trainer_type: 'verl'\n",
        "  trainer_type: 'verl'\n  trainer_strategy: megatron\n  megatron:\n    context_parallel_size: 4\n",
      ],
    );
    const { result, errors } = await check(base, 'main');
    assert.deepEqual(errors, []);
    const trainer = result.runs[0].resolved.trainer as Record<string, unknown>;
    assert.equal(trainer.max_token_len_per_gpu, Math.ceil((2 * 2048) / 4));
  });

  test('bench mode no longer checks the trainer on main: an invalid save_hf_checkpoint passes there only', async () => {
    const text = edit(
      gsm8k('main'),
      ['name: "qwen2.5-1.5B-gsm8k"', 'name: "qwen2.5-1.5B-gsm8k"\nmode: bench'],
      ['  save_interval: 100\n', '  save_interval: 100\n  save_hf_checkpoint: sometimes\n'],
    );
    assert.deepEqual(
      (await check(text, 'main')).errors.filter((e) => e.code === 'TRN270'),
      [],
    );
    const v052 = await check(text, 'v0.5.2');
    assert.deepEqual(
      v052.errors.filter((e) => e.code === 'TRN270').map((e) => e.line),
      [lineOf(text, 'save_hf_checkpoint: sometimes')],
    );
  });

  test('trainer_config on main: keys veRL 0.8 drops are warnings, unknown keys in what it keeps stay errors', async () => {
    const text = withTrainerConfig(
      '    trainer:\n      save_freqq: 1\n    actor_rollout_ref:\n      actor:\n        ppo_epoch: 2\n',
    );
    const { diags } = await check(text, 'main');
    const found = diags.filter((d) => d.code === 'TRN010').map((d) => [d.severity, d.line]);
    assert.deepEqual(found, [
      ['warning', lineOf(text, 'save_freqq')],
      ['error', lineOf(text, 'ppo_epoch:')],
    ]);
    assert.match(
      diags.find((d) => d.line === lineOf(text, 'save_freqq'))!.message,
      /veRL 0\.8 or later.*drops the rest/,
    );
    // v0.5.2 merges into veRL's schema whatever the veRL version: both are errors there
    const old = await check(text, 'v0.5.2');
    assert.deepEqual(
      old.diags.filter((d) => d.code === 'TRN010').map((d) => d.severity),
      ['error', 'error'],
    );
  });

  test("trainer_config on main: overrides of keys Trinity derives (veRL 0.8's FROZEN_KEYS) and the other strategy's engine section are dropped with a warning", async () => {
    const text = withTrainerConfig(
      '    actor_rollout_ref:\n      actor:\n        ppo_mini_batch_size: 16\n        ppo_epochs: 2\n        megatron:\n          tensor_model_parallel_size: 2\n      rollout:\n        n: 4\n    critic:\n      grad_clip: 0.5\n',
    );
    const { diags, errors } = await check(text, 'main');
    assert.deepEqual(errors, []);
    const dropped = diags.filter((d) => d.code === 'TRN271' && /FROZEN_KEYS|strips it/.test(d.message));
    assert.deepEqual(
      dropped.map((d) => [d.severity, d.line]),
      [
        ['warning', lineOf(text, 'ppo_mini_batch_size')],
        ['warning', lineOf(text, 'megatron:')],
        ['warning', lineOf(text, '        n: 4')],
        ['warning', lineOf(text, 'grad_clip: 0.5')],
      ],
    );
    assert.match(dropped[0].message, /`actor\.ppo_mini_batch_size` is ignored.*`buffer\.train_batch_size`/);
    assert.match(dropped[1].message, /Megatron engine.*trainer_strategy: fsdp/);
    // with Megatron it is the FSDP section that goes; a key Trinity does not derive (ppo_epochs) is merged either way
    const megatron = edit(
      text,
      ['trainer:\n', 'trainer:\n  trainer_strategy: megatron\n'],
      ['megatron:', 'fsdp_config:'],
    );
    const m = (await check(megatron, 'main')).diags.filter((d) => d.code === 'TRN271' && /strips it/.test(d.message));
    assert.deepEqual(
      m.map((d) => d.line),
      [lineOf(megatron, 'fsdp_config:')],
    );
    assert.ok(!diags.some((d) => d.line === lineOf(text, 'ppo_epochs')));
    // before main (and before veRL 0.8) Trinity merges the whole veRL config: none of these warnings
    const old = edit(text, ['        megatron:\n          tensor_model_parallel_size: 2\n', '']);
    assert.deepEqual(
      (await check(old, 'v0.5.2')).diags.filter((d) => /FROZEN_KEYS|strips it/.test(d.message)),
      [],
    );
  });

  test('a token budget written in trainer_config on main: veRL 0.8 ignores it, and only older veRL raises it to max_model_len', async () => {
    const text = withTrainerConfig('    actor_rollout_ref:\n      actor:\n        ppo_max_token_len_per_gpu: 100\n');
    const at = (await check(text, 'main')).diags.filter((d) => d.line === lineOf(text, 'ppo_max_token_len_per_gpu'));
    assert.equal(at.length, 2);
    assert.match(at[0].message, /^`actor\.ppo_max_token_len_per_gpu` is ignored: with veRL 0\.8/);
    assert.match(at[1].message, /^With veRL < 0\.8, actor\.ppo_max_token_len_per_gpu \(100\) is automatically set to/);
    const old = await check(text, 'v0.5.2');
    const budget = old.diags.find((d) => d.line === lineOf(text, 'ppo_max_token_len_per_gpu'))!;
    assert.match(budget.message, /^actor\.ppo_max_token_len_per_gpu \(100\) is automatically set to/);
  });

  test("optimizer_type on main with FSDP: Trinity's adam/adamw/sgd or a torch.optim class name, else TRN270 with did-you-mean", async () => {
    const base = gsm8k('main');
    const withName = (name: string, strategy = '') =>
      edit(
        base,
        ['    lr: 1e-5\n', `    lr: 1e-5\n    optimizer_type: ${name}\n`],
        ['trainer:\n', `trainer:\n${strategy}`],
      );
    const found = async (text: string, release: Release = 'main') =>
      (await check(text, release)).errors.filter((e) => e.code === 'TRN270').map((e) => [e.line, e.message]);
    for (const ok of ['adam', 'adamw', 'sgd', 'AdamW', 'RMSprop', 'NAdam'])
      assert.deepEqual(await found(withName(ok)), [], ok);
    const typo = withName('adamww');
    const [[line, message]] = await found(typo);
    assert.equal(line, lineOf(typo, 'optimizer_type'));
    assert.match(String(message), /torch\.optim.*Did you mean `adamw`\?/);
    assert.equal((await found(withName('ADAM'))).length, 1, 'the lookup is case-sensitive');
    // Megatron has its own names (and newer versions more of them); v0.5.2 is not checked
    assert.deepEqual(await found(withName('adamww', '  trainer_strategy: megatron\n')), []);
    assert.deepEqual(await found(withName('adamww').replace('# trinity-version: main', ''), 'v0.5.2'), []);
  });

  test('the fields main added are valid there and unknown on v0.5.2; MAIN_FIELDS_COMMIT names f3c8dec', async () => {
    assert.equal(MAIN_FIELDS_COMMIT, 'f3c8dec');
    const added = edit(
      gsm8k('main'),
      ['  repeat_times: 8\n', '  repeat_times: 8\n  enable_router_replay: false\n  bypass_old_logprobs: true\n'],
      ['  runner_per_model: 8\n', '  runner_per_model: 8\n  runner_prepare_concurrency: 4\n'],
      ['  grad_clip: 1.0\n', '  grad_clip: 1.0\n  critic_warmup: 0\n  param_offload: true\n'],
    );
    assert.deepEqual((await check(added, 'main')).errors, []);
    const v052 = await check(added, 'v0.5.2');
    assert.deepEqual(
      v052.errors.map((e) => [e.code, e.line]),
      [
        'enable_router_replay',
        'bypass_old_logprobs',
        'runner_prepare_concurrency',
        'critic_warmup',
        'param_offload',
      ].map((k) => ['TRN011', lineOf(added, `${k}:`)]),
    );
  });
});
