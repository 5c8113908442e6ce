/**
 * The GPU memory checks against hand computations: Trinity's GPUMemoryValidator (trinity/common/config_validator.py,
 * v0.5.0 fdfdc7b .. main) transcribed below line by line in float64, on seven configs (0.5B / 7B / 32B, FSDP and
 * FSDP2, offloading on and off, with and without a critic, entropy on and off, fused kernels, expandable segments,
 * gradient checkpointing off), with the threshold decision and Trinity's suggestion lines; parameter counts against
 * the model cards' published totals; vLLM's KV cache arithmetic; a model's config.json read from a local directory.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import type { Release } from '../../../runtime/config/releases';
import { checkConfig } from '../../../runtime/config/check-config';
import type { CheckHost } from '../../../runtime/config/check/check-context';
import { parseGpu, type GpuSpec } from '../../../runtime/config/gpu-memory/gpu-cards';
import { publishedShape } from '../../../runtime/config/gpu-memory/published-shapes';
import { baseModelParams, causalLmParams } from '../../../runtime/config/gpu-memory/model-shape';
import type { TrainerMemory } from '../../../runtime/config/gpu-memory/report';
import { readModelConfigJson } from '../../../runtime/engine/lm/config-json-cache';
import { corpusConfigs } from '../../helpers/corpus';

const H100 = parseGpu('H100-80G') as GpuSpec;
const H100_BYTES = 79.11 * 1024 ** 3;

// ---- Hand computation: Trinity's formulas, transcribed from the Python (not from runtime/config/gpu-memory). ----

interface Fsdp {
  fsdp_size: number;
  reshard_after_forward: boolean;
  optimizer_offload: boolean;
  offload_policy: boolean;
  dtype: string;
}

/** `_calc_params_memory_and_dtype_coeff` -> [running, idle, optim_step, dtype_coeff]. */
function calcParams(p: number, strategy: string, f: Fsdp): [number, number, number, number] {
  const dtype_coeff = f.dtype.includes('16') ? 1 : 2;
  const fsdp_size = f.fsdp_size;
  if (strategy === 'fsdp2' && f.offload_policy) return [0, 0, 0, dtype_coeff];
  let model_params_memory = 2 * dtype_coeff * p;
  if (f.reshard_after_forward) model_params_memory /= fsdp_size;
  const optim_params_memory = (12 * p + 2 * dtype_coeff * p) / fsdp_size;
  let running = model_params_memory + optim_params_memory;
  if (strategy === 'fsdp' && fsdp_size === 1) running += 2 * dtype_coeff * p;
  let idle = 0;
  if (strategy === 'fsdp') {
    if (!f.optimizer_offload) idle += (12 * p) / fsdp_size;
    else if (fsdp_size === 1) running += 2 * dtype_coeff * p;
  } else if (!f.offload_policy) idle += (12 * p) / fsdp_size;
  return [running, idle, (4 * dtype_coeff * p) / fsdp_size, dtype_coeff];
}

/** `_calc_fsdp_activation_memory`. */
function calcActivation(h: number, layers: number, vocab: number, tokens: number, kind: string, c: number): number {
  const hidden_state_memory = 2 * tokens * h * (layers + 4);
  let logits_memory: number;
  if (kind === 'fusion') logits_memory = vocab * 20480;
  else if (kind.startsWith('normal')) logits_memory = (kind === 'normal-with-entropy' ? 8 : 10) * tokens * vocab;
  else logits_memory = 0;
  const back_memory = 4 * vocab * h + 80 * tokens * h;
  return (hidden_state_memory + Math.max(logits_memory, back_memory)) * c;
}

/** `_check_max_memory_in_fsdp_training`'s total and the suggestion lines it appends. */
function checkModule(o: {
  module: string;
  modelName: string;
  h: number;
  layers: number;
  vocab: number;
  tokens: number;
  kind: string;
  strategy: string;
  fsdp: Fsdp;
  gc: boolean;
  world: number;
  paramsMemory: number;
  optimStep: number;
  c: number;
  threshold: number;
  envFlag: boolean;
  suggestions: string[];
}): number {
  const total = o.paramsMemory + Math.max(calcActivation(o.h, o.layers, o.vocab, o.tokens, o.kind, o.c), o.optimStep);
  const s = o.suggestions;
  if (o.gc) {
    if (total > o.threshold) {
      if (s.length > 0) s.push('');
      s.push(
        `${o.module[0].toUpperCase()}${o.module.slice(1)} model '${o.modelName}' may exceed GPU memory!`,
        `Estimated: ${(total / 1024 ** 2).toFixed(1)} MB > Limit: ${(o.threshold / 1024 ** 2).toFixed(1)} MB`,
        '',
        'Suggested fixes:',
      );
      if (!o.envFlag)
        s.push(
          '• Set environment variable `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`',
          '  before launching your training job to reduce memory fragmentation.',
        );
      if (o.strategy === 'fsdp')
        s.push(
          `• Set \`fsdp_config.offload_policy=true\` in ${o.module} config and`,
          '  set `trainer.trainer_strategy=fsdp2` to reduce memory usage.',
        );
      if (o.strategy === 'fsdp2' && !o.fsdp.offload_policy)
        s.push(
          `• Set \`fsdp_config.offload_policy=true\` in ${o.module} config`,
          '  to reduce parameters memory usage.',
        );
      if (o.fsdp.fsdp_size !== o.world)
        s.push(
          `• Set \`fsdp_config.fsdp_size\` in ${o.module} config to match the number of trainer GPUs`,
          `  (currently set to ${o.fsdp.fsdp_size}).`,
        );
      s.push(
        '• Consider reducing `trainer.max_token_len_per_gpu` to lower activation memory.',
        '• Increase `ulysses_sequence_parallel_size` to split sequence across more GPUs.',
      );
    }
  } else {
    if (s.length > 0) s.push('');
    s.push(
      `Gradient checkpointing in ${o.module} is DISABLED.`,
      'Memory usage will be MUCH higher than enabling gradient checkpointing.',
      'Consider enabling it or verifying GPU capacity manually.',
    );
  }
  return total;
}

// ---- Parameter counts of the bare AutoModel (no LM head), written out per model. ----

/** Qwen2 layer: q/k/v with bias, o without, SwiGLU, two RMSNorms. */
const qwen2Layer = (h: number, heads: number, kv: number, d: number, inter: number) =>
  h * heads * d + heads * d + 2 * (h * kv * d + kv * d) + heads * d * h + 3 * h * inter + 2 * h;
const QWEN25_05B = 151936 * 896 + 24 * qwen2Layer(896, 14, 2, 64, 4864) + 896;
const QWEN25_7B = 152064 * 3584 + 28 * qwen2Layer(3584, 28, 4, 128, 18944) + 3584;
const QWEN25_32B = 152064 * 5120 + 64 * qwen2Layer(5120, 40, 8, 128, 27648) + 5120;

describe('parameter counts', () => {
  test('the bare model and the causal LM match the model cards (Qwen2.5: total and non-embedding)', () => {
    const s05 = publishedShape('Qwen/Qwen2.5-0.5B-Instruct')!;
    const s7 = publishedShape('Qwen/Qwen2.5-7B-Instruct')!;
    const s32 = publishedShape('Qwen/Qwen2.5-32B-Instruct')!;
    assert.equal(baseModelParams(s05), QWEN25_05B);
    assert.equal(baseModelParams(s7), QWEN25_7B);
    assert.equal(baseModelParams(s32), QWEN25_32B);
    // Model cards: 0.49B (0.36B non-embedding) and 7.61B (6.53B); tied embeddings for 0.5B only. Qwen2.5-32B's card
    // rounds to 32.5B (31.0B); its safetensors hold 32.8B, which the Hub shows as the model size.
    assert.equal((causalLmParams(s05) / 1e9).toFixed(2), '0.49');
    assert.equal(((QWEN25_05B - 151936 * 896) / 1e9).toFixed(2), '0.36');
    assert.equal((causalLmParams(s7) / 1e9).toFixed(2), '7.62');
    assert.equal(((QWEN25_7B - 152064 * 3584) / 1e9).toFixed(2), '6.53');
    assert.equal((causalLmParams(s32) / 1e9).toFixed(1), '32.8');
  });

  test('Qwen3 and Llama 3 shapes give the published totals (Qwen3-8B 8.2B, Llama-3.1-8B 8.03B)', () => {
    assert.equal((causalLmParams(publishedShape('Qwen/Qwen3-8B')!) / 1e9).toFixed(1), '8.2');
    assert.equal((causalLmParams(publishedShape('meta-llama/Llama-3.1-8B-Instruct')!) / 1e9).toFixed(2), '8.03');
    assert.equal(publishedShape('LLM-Research/Llama-3.2-3B-Instruct')?.numLayers, 28);
    assert.equal(publishedShape('Qwen/Qwen1.5-7B-Chat'), undefined);
  });
});

// ---- The configs. ----

interface Case {
  name: string;
  release: Release;
  yaml: string;
  env?: Record<string, string>;
  /** The hand computation: per module [peak bytes], and Trinity's suggestion lines. */
  expect: () => { peaks: Record<string, number>; suggestions: string[] };
}

/** A `both`-mode config on `nodes` × `gpus` GPUs with `engines` rollout engines of tensor parallel `tp`. */
function config(o: {
  model: string;
  algorithm: string;
  maxModelLen: number;
  nodes: number;
  gpus: number;
  engines: number;
  tp?: number;
  batch: number;
  trainer?: string;
  top?: string;
}): string {
  return `mode: both
${o.top ?? ''}algorithm:
  algorithm_type: ${o.algorithm}
  repeat_times: 8
model:
  model_path: ${o.model}
  max_model_len: ${o.maxModelLen}
cluster:
  node_num: ${o.nodes}
  gpu_per_node: ${o.gpus}
explorer:
  rollout_model:
    engine_num: ${o.engines}
    tensor_parallel_size: ${o.tp ?? 1}
buffer:
  batch_size: ${o.batch}
  explorer_input:
    taskset:
      path: data/gsm8k
trainer:
  save_interval: 100
${o.trainer ?? ''}`;
}

const FSDP_DEFAULT = (world: number): Fsdp => ({
  fsdp_size: world,
  reshard_after_forward: true,
  optimizer_offload: false,
  offload_policy: false,
  dtype: 'bfloat16',
});

/** One module's hand computation (Trinity's fsdp_memory_check for an actor and an optional critic). */
function trinity(o: {
  modelName: string;
  params: number;
  h: number;
  layers: number;
  vocab: number;
  strategy: string;
  world: number;
  actor: Fsdp;
  critic?: Fsdp;
  tokens: number;
  criticTokens?: number;
  kind: string;
  gc?: { actor: boolean; critic: boolean };
  envFlag?: boolean;
}): { peaks: Record<string, number>; suggestions: string[] } {
  const threshold = (o.envFlag ? 0.9 : 0.8) * H100_BYTES;
  const [aRun, aIdle, aStep, aC] = calcParams(o.params, o.strategy, o.actor);
  const [cRun, cIdle, cStep, cC] = o.critic ? calcParams(o.params, o.strategy, o.critic) : [0, 0, 0, 1];
  const suggestions: string[] = [];
  const common = { modelName: o.modelName, h: o.h, layers: o.layers, vocab: o.vocab, strategy: o.strategy };
  const peaks: Record<string, number> = {};
  peaks.actor = checkModule({
    ...common,
    module: 'actor',
    tokens: o.tokens,
    kind: o.kind,
    fsdp: o.actor,
    gc: o.gc?.actor ?? true,
    world: o.world,
    paramsMemory: aRun + cIdle,
    optimStep: aStep,
    c: aC,
    threshold,
    envFlag: !!o.envFlag,
    suggestions,
  });
  if (o.critic)
    peaks.critic = checkModule({
      ...common,
      module: 'critic',
      tokens: o.criticTokens ?? o.tokens,
      kind: 'none',
      fsdp: o.critic,
      gc: o.gc?.critic ?? true,
      world: o.world,
      paramsMemory: cRun + aIdle,
      optimStep: cStep,
      c: cC,
      threshold,
      envFlag: !!o.envFlag,
      suggestions,
    });
  if (suggestions.length > 0)
    suggestions.push('', 'To bypass this check, set `ignore_validator_suggestions: true` in config.');
  return { peaks, suggestions };
}

const Q05 = { modelName: 'Qwen2.5-0.5B-Instruct', params: QWEN25_05B, h: 896, layers: 24, vocab: 151936 };
const Q7 = { modelName: 'Qwen2.5-7B-Instruct', params: QWEN25_7B, h: 3584, layers: 28, vocab: 152064 };
const Q32 = { modelName: 'Qwen2.5-32B-Instruct', params: QWEN25_32B, h: 5120, layers: 64, vocab: 152064 };

/** Qwen2.5-32B on two nodes of 8 GPUs, two rollout engines of tensor parallel 4: the trainer has 8, with the actor's
 * `fsdp_config` key `key` set to `value`. */
const config32B = (o: { algorithm: string; maxModelLen: number }, key: string, value: unknown) =>
  config({
    model: 'Qwen/Qwen2.5-32B-Instruct',
    nodes: 2,
    gpus: 8,
    engines: 2,
    tp: 4,
    batch: 8,
    trainer: `  trainer_config:\n    actor_rollout_ref:\n      actor:\n        fsdp_config:\n          ${key}: ${value}\n`,
    ...o,
  });

/** Qwen2.5-7B on one node of 8 GPUs, 4 of them rollout engines: the trainer has 4. */
const config7B = (o: { algorithm: string; maxModelLen: number; trainer?: string }) =>
  config({ model: 'Qwen/Qwen2.5-7B-Instruct', nodes: 1, gpus: 8, engines: 4, batch: 4, ...o });

const CASES: Case[] = [
  {
    // v0.5.2: FSDP1 by default; one trainer GPU (fsdp_size 1 adds Trinity's observed copy); GRPO has entropy.
    name: '0.5B, FSDP, one trainer GPU, no critic, entropy on: within the limit',
    release: 'v0.5.2',
    yaml: config({
      model: 'Qwen/Qwen2.5-0.5B-Instruct',
      algorithm: 'grpo',
      maxModelLen: 4096,
      nodes: 1,
      gpus: 2,
      engines: 1,
      batch: 4,
    }),
    expect: () =>
      trinity({
        ...Q05,
        strategy: 'fsdp',
        world: 1,
        actor: FSDP_DEFAULT(1),
        tokens: 8192,
        kind: 'normal-with-entropy',
      }),
  },
  {
    // main: FSDP2 by default; PPO trains a critic, whose idle optimizer states sit beside the actor's.
    name: '7B, FSDP2, four trainer GPUs, with critic, entropy on',
    release: 'main',
    yaml: config7B({ algorithm: 'ppo', maxModelLen: 8192 }),
    expect: () =>
      trinity({
        ...Q7,
        strategy: 'fsdp2',
        world: 4,
        actor: FSDP_DEFAULT(4),
        critic: FSDP_DEFAULT(4),
        tokens: 16384,
        kind: 'normal-with-entropy',
      }),
  },
  {
    // main: `trainer.offload_policy` reaches the FSDP2 engine; entropy off.
    name: '7B, FSDP2 with the offload policy, entropy off: parameters cost nothing on the GPU',
    release: 'main',
    yaml: config7B({ algorithm: 'grpo', maxModelLen: 16384, trainer: '  offload_policy: true\n' }).replace(
      '  repeat_times: 8\n',
      '  repeat_times: 8\n  entropy_loss_fn: none\n',
    ),
    expect: () =>
      trinity({
        ...Q7,
        strategy: 'fsdp2',
        world: 4,
        actor: { ...FSDP_DEFAULT(4), offload_policy: true },
        tokens: 32768,
        kind: 'normal-without-entropy',
      }),
  },
  {
    // v0.5.2: FSDP1 over 8 trainer GPUs with optimizer offload; entropy off; over Trinity's limit.
    name: '32B, FSDP, optimizer offload, eight trainer GPUs, entropy off: over the limit',
    release: 'v0.5.2',
    yaml: config32B({ algorithm: 'grpo', maxModelLen: 8192 }, 'optimizer_offload', true).replace(
      '  repeat_times: 8\n',
      '  repeat_times: 8\n  entropy_loss_fn: none\n',
    ),
    expect: () =>
      trinity({
        ...Q32,
        strategy: 'fsdp',
        world: 8,
        actor: { ...FSDP_DEFAULT(8), optimizer_offload: true },
        tokens: 16384,
        kind: 'normal-without-entropy',
      }),
  },
  {
    // main: FSDP2, a critic, fsdp_size 4 of 8 GPUs (Trinity suggests matching the GPU count).
    name: '32B, FSDP2, fsdp_size 4 of 8, with critic: far over the limit',
    release: 'main',
    yaml: config32B({ algorithm: 'ppo', maxModelLen: 4096 }, 'fsdp_size', 4),
    expect: () =>
      trinity({
        ...Q32,
        strategy: 'fsdp2',
        world: 8,
        actor: { ...FSDP_DEFAULT(8), fsdp_size: 4 },
        critic: FSDP_DEFAULT(8),
        tokens: 8192,
        kind: 'normal-with-entropy',
      }),
  },
  {
    // v0.5.0: the token floor is 2 × max_model_len; fused kernels; expandable segments raise the limit to 90 %.
    name: '7B, FSDP, fused kernels, expandable segments (90 % limit), v0.5.0',
    release: 'v0.5.0',
    env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' },
    yaml: config7B({
      algorithm: 'grpo',
      maxModelLen: 8192,
      trainer: '  trainer_config:\n    actor_rollout_ref:\n      model:\n        use_fused_kernels: true\n',
    }),
    expect: () =>
      trinity({
        ...Q7,
        strategy: 'fsdp',
        world: 4,
        actor: FSDP_DEFAULT(4),
        tokens: 16384,
        kind: 'fusion',
        envFlag: true,
      }),
  },
  {
    // Gradient checkpointing off for the critic: Trinity cannot estimate it and always warns.
    name: '0.5B, FSDP2, critic without gradient checkpointing',
    release: 'main',
    yaml: config({
      model: 'Qwen/Qwen2.5-0.5B-Instruct',
      algorithm: 'ppo',
      maxModelLen: 2048,
      nodes: 1,
      gpus: 4,
      engines: 2,
      batch: 2,
      trainer: '  trainer_config:\n    critic:\n      model:\n        enable_gradient_checkpointing: false\n',
    }),
    expect: () =>
      trinity({
        ...Q05,
        strategy: 'fsdp2',
        world: 2,
        actor: FSDP_DEFAULT(2),
        critic: FSDP_DEFAULT(2),
        tokens: 4096,
        kind: 'normal-with-entropy',
        gc: { actor: true, critic: false },
      }),
  },
];

async function checked(
  yaml: string,
  release: Release,
  env: Record<string, string> = {},
  host: Partial<CheckHost> = {},
) {
  const result = await checkConfig(yaml, { release, env, datasets: false, host: { env, gpu: H100, ...host } });
  return { result, memory: result.runs[0].gpuMemory! };
}

describe("Trinity's trainer estimate equals the hand computation", () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const { result, memory } = await checked(c.yaml, c.release, c.env);
      assert.equal(memory.trainer.status, 'estimated', JSON.stringify(memory.trainer));
      const t = memory.trainer as TrainerMemory;
      const want = c.expect();
      assert.deepEqual(
        t.modules.map((m) => m.module),
        Object.keys(want.peaks),
      );
      for (const m of t.modules) {
        const w = want.peaks[m.module];
        assert.ok(Math.abs(m.peak - w) <= 1e-9 * w, `${m.module}: ${m.peak} != ${w}`);
      }
      assert.deepEqual(t.suggestions, want.suggestions);
      // The decision: a warning (over Trinity's limit) or an error (over the whole GPU) per module that gets lines.
      const codes = result.diagnostics.filter((d) => d.code === 'TRN273' || d.code === 'TRN274').map((d) => d.code);
      const expected = t.modules
        .filter((m) => !m.gradientCheckpointing || m.peak > t.limit.bytes)
        .map((m) => (m.gradientCheckpointing && m.peak > H100_BYTES ? 'TRN274' : 'TRN273'));
      assert.deepEqual(codes.sort(), expected.sort());
      assert.equal(want.suggestions.length > 0, codes.length > 0);
    });
  }

  test('the cases cover both decisions and both strategies', () => {
    const names = CASES.map((c) => c.name).join(' ');
    assert.match(names, /within the limit/);
    assert.match(names, /over the limit/);
    assert.match(names, /FSDP2/);
    assert.match(names, /FSDP,/);
  });

  test('ignore_validator_suggestions: the estimate is shown, Trinity reports nothing', async () => {
    const over = CASES.find((c) => c.name.startsWith('32B, FSDP2'))!;
    const { result, memory } = await checked(`ignore_validator_suggestions: true\n${over.yaml}`, 'main');
    assert.equal(memory.trainer.status, 'estimated');
    assert.equal((memory.trainer as TrainerMemory).checked, false);
    assert.deepEqual(
      result.diagnostics.filter((d) => d.code === 'TRN273' || d.code === 'TRN274'),
      [],
    );
  });

  test('releases without the check, other modes and Megatron get no trainer estimate, and say why', async () => {
    const base = CASES[1].yaml;
    const v04 = (await checked(base, 'v0.4.0')).memory.trainer;
    assert.deepEqual(v04, {
      status: 'skipped',
      reason: 'Trinity v0.4.0 has no GPU memory check (its GPUMemoryValidator came with v0.5.0)',
    });
    const megatron = (
      await checked(
        base.replace('  save_interval: 100\n', '  save_interval: 100\n  trainer_strategy: megatron\n'),
        'main',
      )
    ).memory.trainer;
    assert.equal(megatron.status, 'skipped');
    const unknown = (await checked(base.replace('Qwen/Qwen2.5-7B-Instruct', 'my-org/my-model'), 'main')).memory.trainer;
    assert.match(unknown.status === 'skipped' ? unknown.reason : '', /needs the model's config\.json/);
  });

  test("the quick fixes are Trinity's suggestions as edits, and lowering the token budget brings the peak under the limit", async () => {
    const c = CASES.find((x) => x.name.startsWith('32B, FSDP,'))!;
    const { result, memory } = await checked(c.yaml, c.release);
    const d = result.diagnostics.find((x) => x.code === 'TRN273' || x.code === 'TRN274')!;
    const titles = d.data?.fixes?.map((f) => f.title) ?? [];
    assert.ok(titles.includes('Use FSDP2 with its CPU offload policy'), titles.join(' | '));
    const budget = d.data!.fixes!.find((f) => f.title.startsWith('Lower the token budget'));
    if (budget) {
      const tokens = Number(budget.set[0].value);
      const t = memory.trainer as TrainerMemory;
      const lowered = await checked(
        c.yaml.replace('  save_interval: 100\n', `  save_interval: 100\n  max_token_len_per_gpu: ${tokens}\n`),
        c.release,
      );
      const peak = (lowered.memory.trainer as TrainerMemory).modules[0].peak;
      assert.ok(peak <= t.limit.bytes, `${peak} > ${t.limit.bytes}`);
    }
  });
});

describe("vLLM's budget per rollout engine", () => {
  test('weights, KV bytes per token and the sequences that fit, by hand', async () => {
    const { memory } = await checked(CASES[1].yaml, 'main');
    const e = memory.engines.find((x) => x.engine === 'rollout_model');
    assert.ok(e && e.status === 'estimated');
    const weights = (QWEN25_7B + 152064 * 3584) * 2; // untied head, bf16, tensor parallel 1
    const perToken = 2 * 28 * 4 * 128 * 2; // K and V × layers × KV heads × head dim × 2 bytes
    const budget = 0.9 * H100_BYTES;
    assert.equal(e.estimate.weights, weights);
    assert.equal(e.estimate.kvBytesPerToken, perToken);
    assert.equal(e.estimate.sequencesAtMost, Math.floor((budget - weights) / (8192 * perToken)));
  });

  test('a model too large for one GPU: vLLM would refuse to start (TRN314), with a tensor-parallel fix', async () => {
    const yaml = config({
      model: 'Qwen/Qwen2.5-72B-Instruct',
      algorithm: 'grpo',
      maxModelLen: 4096,
      nodes: 1,
      gpus: 8,
      engines: 1,
      batch: 7,
    });
    const { result } = await checked(yaml, 'main');
    const d = result.diagnostics.find((x) => x.code === 'TRN314');
    assert.ok(d, 'TRN314');
    assert.match(d.message, /No available memory for the cache blocks/);
    assert.deepEqual(d.data?.fixes?.[0].set, [
      { path: ['explorer', 'rollout_model', 'tensor_parallel_size'], value: 2 },
    ]);
  });
});

describe("the model's shape from its config.json", () => {
  test('a local model directory is read (and changes are seen), instead of the published table', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpu-memory-'));
    const model = join(dir, 'my-model');
    mkdirSync(model);
    const cfg = {
      model_type: 'qwen2',
      hidden_size: 896,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      intermediate_size: 4864,
      vocab_size: 151936,
      tie_word_embeddings: true,
    };
    writeFileSync(join(model, 'config.json'), JSON.stringify(cfg));
    const host = { baseDirs: [dir], modelConfig: readModelConfigJson };
    const yaml = CASES[0].yaml.replace('Qwen/Qwen2.5-0.5B-Instruct', 'my-model');
    const a = await checked(yaml, 'v0.5.2', {}, host);
    const t = a.memory.trainer as TrainerMemory;
    assert.equal(t.status, 'estimated');
    assert.equal(t.modules[0].params, QWEN25_05B);
    assert.equal(t.shapeSource, join(model, 'config.json'));
    writeFileSync(join(model, 'config.json'), JSON.stringify({ ...cfg, num_hidden_layers: 12 }));
    const future = new Date(Date.now() + 5000);
    utimesSync(join(model, 'config.json'), future, future);
    const b = await checked(yaml, 'v0.5.2', {}, host);
    assert.ok((b.memory.trainer as TrainerMemory).modules[0].params < QWEN25_05B);
  });

  test('GPU names and sizes', () => {
    assert.equal((parseGpu('h200') as GpuSpec).name, 'H200-141G');
    assert.equal((parseGpu(48) as GpuSpec).bytes, 48 * 1024 ** 3);
    assert.match((parseGpu('V100') as { problem: string }).problem, /unknown GPU `V100`/);
  });
});

/** Examples whose README names their hardware (Trinity main 10796ed); the others are checked on the default H100-80G. */
const STATED_HARDWARE: Record<string, string> = {
  'examples/agentscope_websearch/agentscopev1_websearch_agent.yaml': 'H20-96G', // "8 hours on 8 H20 GPUs"
  'examples/grpo_toolcall/toolace.yaml': 'H20-96G', // "3 hours on 8 H20 GPUs"
  'examples/learn_to_ask/train.yaml': 'H20-96G', // "≥32 H20 (or equivalent) GPUs"
  'examples/mix_chord/mix_chord.yaml': 'H20-96G', // "3 hours to run on 8 H20 GPUs"
  'examples/mix_chord/mix_chord_toolace.yaml': 'H20-96G',
};

test("main's corpus: the estimate runs wherever the model's shape is known, with no error on the stated hardware", async () => {
  const configs = corpusConfigs('main');
  let estimated = 0;
  for (const { rel, abs } of configs) {
    const gpu = parseGpu(STATED_HARDWARE[rel] ?? 'H100-80G') as GpuSpec;
    const result = await checkConfig(readFileSync(abs, 'utf8'), {
      release: 'main',
      env: {},
      datasets: false,
      host: { env: {}, gpu, baseDirs: [dirname(abs)] },
    });
    for (const run of result.runs) {
      const t = run.gpuMemory?.trainer;
      if (t?.status === 'estimated') estimated++;
      else if (t && /^Trinity checks|FSDP|Tinker|no `model_path`/.test(t.reason) === false)
        // Skipped for a reason other than mode, strategy, Tinker or a missing path: only an unknown shape.
        assert.match(t.reason, /config\.json|vision-language|model_type/, `${rel}: ${t.reason}`);
    }
    const errors = result.diagnostics.filter(
      (d) => (d.code === 'TRN274' || d.code === 'TRN314') && d.severity === 'error',
    );
    assert.deepEqual(
      errors.map((d) => d.message),
      [],
      `${rel} on ${gpu.name}`,
    );
  }
  assert.ok(estimated >= 45, `only ${estimated} of ${configs.length} corpus configs estimated`);
});
