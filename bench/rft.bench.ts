/**
 * `npm run bench:rft`: the GRPO loop of the local runtime on one config, synchronous (sync_offset 0: explorer and
 * trainer take turns) against one-step off-policy (sync_offset 1: the explorer's worker thread samples while the
 * trainer trains), as steps/s and tokens/s and their ratio; and one GRPO iteration in PyTorch CPU on the same model,
 * batch and loss (bench/rft_torch.py, Debian's python3-torch), as ms per iteration and a ratio.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../runtime/engine/backend';
import { initModel, saveModel } from '../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../runtime/engine/lm/config';
import { parameterCount } from '../runtime/engine/lm/params';
import { buildCharTokenizer, tokenizerFromJson } from '../runtime/engine/tokenizer';
import type { RuntimeEvent } from '../runtime/protocol';
import { runJob } from '../runtime/rft/run/job';

const STEPS = Number(process.env.BENCH_RFT_STEPS ?? 12);
const PROMPTS = 8;
const GROUP = 8;
const NEW_TOKENS = 12;

interface LoopResult {
  seconds: number;
  trainerSteps: number;
  tokens: number;
}

function python(): string | undefined {
  for (const p of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(p, ['-c', 'import torch'], { encoding: 'utf8' });
    if (r.status === 0) return p;
  }
  return undefined;
}

async function loop(dir: string, offset: number): Promise<LoopResult> {
  const name = `offset${offset}`;
  const config = join(dir, `${name}.yaml`);
  writeFileSync(
    config,
    `# trinity-version: main
project: bench
name: ${name}
checkpoint_root_dir: ${dir}/checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: ${NEW_TOKENS}
  max_model_len: 64
cluster: {node_num: 1, gpu_per_node: 2}
mode: both
algorithm:
  algorithm_type: grpo
  repeat_times: ${GROUP}
  optimizer: {lr: 5e-4}
buffer:
  batch_size: ${PROMPTS}
  total_steps: ${STEPS}
  explorer_input:
    taskset:
      name: sums
      storage_type: file
      path: data.jsonl
      format: {prompt_key: question, response_key: answer}
    default_workflow_type: simple_workflow
    default_reward_fn_type: math_boxed_reward
synchronizer:
  sync_offset: ${offset}
trainer:
  save_interval: 1000
`,
  );
  let first = 0;
  let last = 0;
  let tokens = 0;
  let trainerSteps = 0;
  const events = (e: RuntimeEvent): void => {
    if (e.type !== 'metrics') return;
    // Time from the end of the first explorer step (setup and the cold start excluded) to the last trainer step.
    if (e.role === 'explorer' && e.step === 1) first = Date.now();
    if (e.role === 'trainer') {
      last = Date.now();
      if (first && e.step > 1) {
        trainerSteps++;
        tokens += (e.values['response_length/mean'] + e.values['prompt_length/mean']) * PROMPTS * GROUP;
      }
    }
  };
  const r = await runJob(config, { backend: 'wasm', events, seed: 1 });
  if (r.status !== 'finished') throw new Error(`${name}: ${r.error}`);
  return { seconds: (last - first) / 1000, trainerSteps, tokens };
}

async function main(): Promise<void> {
  await initBackend({ prefer: 'wasm' });
  const dir = mkdtempSync(join(tmpdir(), 'twb-bench-rft-'));
  const tokenizer = tokenizerFromJson(buildCharTokenizer('0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz'));
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 4,
      hidden: 128,
      heads: 4,
      vocabSize: tokenizer.vocabSize,
      maxPositions: 64,
      eosTokenIds: [...tokenizer.eosTokenIds],
    }),
  );
  const model = initModel(cfg, 1);
  await saveModel(model, join(dir, 'model'), { tokenizer });
  model.dispose();
  const rows: string[] = [];
  for (let a = 0; a < 10; a++)
    for (let b = 0; b < 10; b++) rows.push(JSON.stringify({ question: `${a}+${b}`, answer: String(a + b) }));
  writeFileSync(join(dir, 'data.jsonl'), `${rows.join('\n')}\n`);
  process.stderr.write(
    `model: qwen2, ${parameterCount(cfg)} parameters; ${STEPS} GRPO steps of ${PROMPTS} prompts × ${GROUP} samples, ${NEW_TOKENS} new tokens\n`,
  );

  const sync = await loop(dir, 0);
  process.stderr.write(`sync_offset 0: ${sync.seconds.toFixed(1)} s\n`);
  const overlap = await loop(dir, 1);
  process.stderr.write(`sync_offset 1: ${overlap.seconds.toFixed(1)} s\n`);

  let torchMs: number | undefined;
  let torchVersion = '';
  const py = python();
  if (py) {
    const prompt = tokenizer.encode(
      tokenizer.applyChatTemplate([{ role: 'user', content: '3+4' }], { addGenerationPrompt: true }),
      { addSpecialTokens: false },
    );
    const inputs = join(dir, 'torch-inputs.json');
    writeFileSync(
      inputs,
      JSON.stringify({
        prompts: Array.from({ length: PROMPTS }, () => prompt),
        group: GROUP,
        new_tokens: NEW_TOKENS,
        iterations: 5,
        lr: 5e-4,
        threads: 2,
      }),
    );
    const r = spawnSync(py, [join(__dirname, 'rft_torch.py'), join(dir, 'model'), inputs], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`rft_torch.py failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { iteration_ms: number[]; torch_version: string };
    const sorted = [...out.iteration_ms].sort((a, b) => a - b);
    torchMs = sorted[Math.floor(sorted.length / 2)];
    torchVersion = out.torch_version;
  } else {
    process.stderr.write('PyTorch not found (apt-get install python3-torch): the PyTorch column is skipped\n');
  }

  const perStep = (l: LoopResult) => (l.seconds * 1000) / l.trainerSteps;
  const table = [
    ['loop', 'steps/s', 'tokens/s', 'ms/iteration', 'vs sync_offset 0'],
    [
      'runtime, sync_offset 0 (take turns)',
      (sync.trainerSteps / sync.seconds).toFixed(2),
      (sync.tokens / sync.seconds).toFixed(0),
      perStep(sync).toFixed(0),
      '1.00x',
    ],
    [
      'runtime, sync_offset 1 (overlap)',
      (overlap.trainerSteps / overlap.seconds).toFixed(2),
      (overlap.tokens / overlap.seconds).toFixed(0),
      perStep(overlap).toFixed(0),
      `${(perStep(sync) / perStep(overlap)).toFixed(2)}x`,
    ],
  ];
  if (torchMs !== undefined)
    table.push([
      `PyTorch ${torchVersion} CPU, one iteration`,
      (1000 / torchMs).toFixed(2),
      '',
      torchMs.toFixed(0),
      `runtime/PyTorch ${(torchMs / perStep(sync)).toFixed(2)}x`,
    ]);
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join('  ')}\n`);
  mkdirSync(join(__dirname, 'results'), { recursive: true });
  writeFileSync(
    join(__dirname, 'results', 'rft.json'),
    `${JSON.stringify({ date: new Date().toISOString(), params: parameterCount(cfg), steps: STEPS, prompts: PROMPTS, group: GROUP, newTokens: NEW_TOKENS, sync, overlap, overlapSpeedup: perStep(sync) / perStep(overlap), torchMs, torchVersion }, null, 2)}\n`,
  );
  process.exit(0);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.stack ?? e.message}\n`);
  process.exit(1);
});
