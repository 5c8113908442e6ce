/**
 * `trinity-workbench run --backend webgpu` through the bundled dist/cli.js, as a user runs it: a tiny SFT and a tiny
 * GRPO config on a model `model create` made, on Dawn (SwiftShader's Vulkan driver here; a GPU where there is one).
 * Each finishes, logs its loss finite and saves a checkpoint; Dawn reports no validation error (an invalid pipeline
 * does not throw: its output is silently stale). The SFT run is deterministic, so its losses and gradient norms must
 * equal the wasm run's. `generate --backend webgpu` at temperature 0 gives the same tokens as on wasm.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import { runNodeChild } from '../helpers/node-child';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
const ALPHABET = '0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz';
const root = mkdtempSync(join(tmpdir(), 'twb-webgpu-run-'));
const xdg = join(root, 'xdg');

/** Runs dist/cli.js with `args` (asynchronously: the runs a test compares, webgpu and wasm, take both cores at once). */
async function cli(args: string[]) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? xdg,
    VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD,
  };
  const r = await runNodeChild([CLI, ...args], {
    cwd: root,
    env,
    timeoutMs: 120_000,
  });
  // A run stopped by the time limit gets SIGTERM and exits 1 after its current step: say so, not just "exited 1".
  return {
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr + (r.timedOut ? '\n(the test stopped it: timed out after 120 s)' : ''),
  };
}

interface MetricsLine {
  role: string;
  step: number;
  values: Record<string, number>;
}

function metrics(name: string): MetricsLine[] {
  const p = join(root, 'checkpoints', 'tests', name, 'monitor', 'metrics.jsonl');
  assert.ok(existsSync(p), `${p} was not written`);
  return readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as MetricsLine);
}

/** Runs `config` on `backend`; fails with the run's stderr when it does not finish, or when Dawn complained. */
async function runConfig(config: string, backend: 'webgpu' | 'wasm'): Promise<string> {
  const r = await cli(['run', '--config', config, '--backend', backend]);
  if (
    backend === 'webgpu' &&
    r.code !== 0 &&
    /webgpu/i.test(r.stderr) &&
    /adapter|not available|did not start|unavailable/i.test(r.stderr)
  ) {
    assert.fail(
      `webgpu could not start (needs libvulkan1 and a Vulkan driver; Debian's chromium ships ${SWIFTSHADER_ICD}):\n${r.stderr.slice(-2000)}`,
    );
  }
  assert.equal(r.code, 0, `run --backend ${backend} ${config} exited ${r.code}:\n${r.stderr.slice(-3000)}`);
  // Dawn prints its validation errors on stdout.
  assert.doesNotMatch(
    r.stdout + r.stderr,
    /validation:|Invalid ComputePipeline|exceeds the maximum/,
    'Dawn reported a validation error',
  );
  return r.stderr;
}

function header(name: string): string {
  return `project: tests
name: ${name}
checkpoint_root_dir: ${join(root, 'checkpoints')}
model:
  model_path: model
  max_prompt_tokens: 8
  max_response_tokens: 3
  max_model_len: 32
cluster: {node_num: 1, gpu_per_node: 2}
`;
}

before(async () => {
  mkdirSync(xdg, { recursive: true });
  // doctor does not need the model: both at once.
  const [made, doctor] = await Promise.all([
    cli([
      'model',
      'create',
      '--arch',
      'qwen2',
      '--layers',
      '1',
      '--hidden',
      '16',
      '--heads',
      '4',
      '--kv-heads',
      '2',
      '--max-positions',
      '32',
      '--vocab',
      `char:${ALPHABET}`,
      '--seed',
      '3',
      '--out',
      join(root, 'model'),
    ]),
    cli(['doctor']),
  ]);
  assert.equal(made.code, 0, made.stderr);
  mkdirSync(join(root, 'data'));
  const sums = Array.from({ length: 8 }, (_, i) => ({
    question: `${i}+1`,
    answer: String(i + 1),
  }));
  const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  writeFileSync(join(root, 'data', 'train.jsonl'), lines(sums));
  writeFileSync(
    join(root, 'data', 'sft.jsonl'),
    lines(
      sums.map((s) => ({
        question: s.question,
        answer: `\\boxed{${s.answer}}`,
      })),
    ),
  );
  // Fail here, plainly, when webgpu cannot start: doctor lists the backends it probed.
  assert.match(
    doctor.stdout + doctor.stderr,
    /webgpu\s+available/,
    `webgpu is not available (needs libvulkan1 and a Vulkan driver, e.g. ${SWIFTSHADER_ICD}); doctor said:\n${doctor.stdout}${doctor.stderr}`,
  );
});

describe('generate --backend webgpu (dist/cli.js)', () => {
  test('greedy tokens equal the wasm ones, and the log-probs agree', async () => {
    const gen = async (backend: string) => {
      const r = await cli([
        'generate',
        '--model',
        join(root, 'model'),
        '--prompt',
        '3+4',
        '--prompt',
        'abc',
        '--max-new-tokens',
        '6',
        '--min-new-tokens',
        '6',
        '--temperature',
        '0',
        '--backend',
        backend,
        '--json',
      ]);
      assert.equal(r.code, 0, `generate --backend ${backend} exited ${r.code}:\n${r.stderr.slice(-2000)}`);
      assert.doesNotMatch(r.stdout + r.stderr, /validation:|Invalid ComputePipeline/, 'Dawn reported an error');
      return JSON.parse(r.stdout) as {
        backend: string;
        completions: { tokens: number[]; logprobs: number[] }[];
      };
    };
    const [gpu, cpu] = await Promise.all([gen('webgpu'), gen('wasm')]);
    assert.equal(gpu.backend, 'webgpu');
    assert.equal(cpu.backend, 'wasm');
    assert.deepEqual(
      gpu.completions.map((c) => c.tokens),
      cpu.completions.map((c) => c.tokens),
    );
    assert.ok(gpu.completions.every((c) => c.tokens.length === 6));
    gpu.completions.forEach((c, i) =>
      c.logprobs.forEach((l, j) => {
        const w = cpu.completions[i].logprobs[j];
        assert.ok(Math.abs(l - w) <= 1e-4 * Math.max(1, Math.abs(w)), `prompt ${i} token ${j}: webgpu ${l}, wasm ${w}`);
      }),
    );
  });
});

describe('run --backend webgpu (dist/cli.js)', () => {
  test('SFT: two steps finish, equal wasm losses and gradient norms, and save a checkpoint', async () => {
    const sft = (name: string) =>
      writeAndReturn(
        `${name}.yaml`,
        `${header(name)}mode: train
algorithm:
  algorithm_type: sft
  optimizer: {lr: 1e-3}
buffer:
  total_steps: 2
  train_batch_size: 2
  trainer_input:
    experience_buffer:
      name: demos
      storage_type: file
      path: data/sft.jsonl
      format: {prompt_type: plaintext, prompt_key: question, response_key: answer}
trainer:
  save_interval: 2
`,
      );
    const [stderr] = await Promise.all([runConfig(sft('sft-webgpu'), 'webgpu'), runConfig(sft('sft-wasm'), 'wasm')]);
    assert.match(stderr, /tfjs backend: webgpu/);
    const gpu = metrics('sft-webgpu').filter((l) => l.role === 'trainer');
    const cpu = metrics('sft-wasm').filter((l) => l.role === 'trainer');
    assert.equal(gpu.length, 2);
    for (let i = 0; i < 2; i++) {
      for (const k of ['actor/sft_loss', 'actor/grad_norm']) {
        const [g, c] = [gpu[i].values[k], cpu[i].values[k]];
        assert.ok(Number.isFinite(g), `step ${i + 1} ${k} = ${g}`);
        // float32 on both; different reduction orders: 1e-4 relative.
        assert.ok(Math.abs(g - c) <= 1e-4 * Math.abs(c), `step ${i + 1} ${k}: webgpu ${g}, wasm ${c}`);
      }
    }
    // veRL's perf/ memory metrics on both: the peak of live tensors holds at least the weights, their gradients and
    // AdamW's two moments (4× the float32 weights: the model file's size, near enough); webgpu's reserved figure is
    // its GPU buffers, never less than those in use; wasm's is its heap (16 MiB at the start, it only grows).
    const weightBytes = statSync(join(root, 'model', 'model.safetensors')).size;
    const GIB = 2 ** 30;
    for (const [name, lines] of [
      ['webgpu', gpu],
      ['wasm', cpu],
    ] as const) {
      for (const l of lines) {
        const v = l.values;
        const say = `${name} step ${l.step}: ${JSON.stringify(v)}`;
        assert.ok(v['perf/max_memory_allocated_gb'] * GIB >= 4 * weightBytes * 0.95, say);
        assert.ok(v['perf/max_memory_allocated_gb'] < 0.5, say);
        assert.ok(v['perf/max_memory_reserved_gb'] >= v['perf/max_memory_allocated_gb'], say);
        assert.ok(v['perf/cpu_memory_used_gb'] > 0 && v['perf/cpu_memory_used_gb'] * GIB <= totalmem(), say);
        assert.ok(v['perf/max_rss_gb'] * GIB > 30 * 2 ** 20 && v['perf/max_rss_gb'] * GIB <= totalmem(), say);
      }
      assert.ok(lines[1].values['perf/max_memory_allocated_gb'] >= lines[0].values['perf/max_memory_allocated_gb']);
    }
    assert.ok(cpu[0].values['perf/max_memory_reserved_gb'] * GIB >= 16 * 2 ** 20, 'the wasm heap');
    const ckpt = join(root, 'checkpoints', 'tests', 'sft-webgpu', 'global_step_2');
    for (const f of ['model.safetensors', 'optimizer.safetensors', 'config.json'])
      assert.ok(existsSync(join(ckpt, f)), `${ckpt}/${f}`);
  });

  test('GRPO: explore and train one step with a finite actor/pg_loss, and save a checkpoint', async () => {
    const config = writeAndReturn(
      'grpo.yaml',
      `${header('grpo')}mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: 2
  optimizer: {lr: 1e-3}
buffer:
  batch_size: 2
  total_steps: 1
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data/train.jsonl
      format: {prompt_key: question, response_key: answer}
      reward_fn_args: {pattern: '.*1.*'}
      rollout_args: {temperature: 1.5}
    default_workflow_type: simple_workflow
    default_reward_fn_type: format_reward
trainer:
  save_interval: 1
`,
    );
    await runConfig(config, 'webgpu');
    const trainer = metrics('grpo').filter((l) => l.role === 'trainer');
    assert.equal(trainer.length, 1);
    for (const k of ['actor/pg_loss', 'actor/grad_norm'])
      assert.ok(Number.isFinite(trainer[0].values[k]), `${k} = ${trainer[0].values[k]}`);
    for (const k of ['perf/max_memory_allocated_gb', 'perf/max_memory_reserved_gb', 'perf/cpu_memory_used_gb'])
      assert.ok(trainer[0].values[k] > 0, `${k} = ${trainer[0].values[k]}`);
    assert.ok(
      metrics('grpo').some((l) => l.role === 'explorer'),
      'no explorer metrics',
    );
    assert.ok(existsSync(join(root, 'checkpoints', 'tests', 'grpo', 'global_step_1', 'model.safetensors')));
  });
});

function writeAndReturn(name: string, text: string): string {
  const p = join(root, name);
  writeFileSync(p, text);
  return p;
}
