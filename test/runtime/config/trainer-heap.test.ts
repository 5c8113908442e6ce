/**
 * The local trainer pass against the wasm heap: the estimate (local-memory/trainer-pass-bytes.ts) against the peak
 * the engine really reaches on small real passes (wasm backend, tfjs' own byte count watched at every tensor), where
 * the activations dominate and where the parameters' training state does (with a reference model and PPO's critic
 * beside the actor), and the check built on it: TRN323 refuses, before any work, Trinity's own FrozenLake example
 * shrunk to a tiny model (the pass a user saw run out of the heap after minutes of exploring), naming the file, line
 * and keys, and a model whose training state alone cannot fit (Qwen2.5-0.5B's shape), offering LoRA; a pass that
 * fits is not refused; nothing is said where runs do not go to the local runtime.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { engineMemory, initBackend, resetPeakMemory, watchPeakMemory } from '../../../runtime/engine/backend';
import { initModel } from '../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../runtime/engine/lm/config';
import { RftTrainer } from '../../../runtime/rft/trainer/train-step';
import type { Experience } from '../../../runtime/rft/experience';
import { shapeFromHfConfig, type ModelShape } from '../../../runtime/config/gpu-memory/model-shape';
import { trainerPassBytes } from '../../../runtime/config/local-memory/trainer-pass-bytes';
import { checkConfig } from '../../../runtime/config/check-config';
import { readModelConfigJson } from '../../../runtime/engine/lm/config-json-cache';
import { ConfigRejected, loadRunnableConfig } from '../../../runtime/rft/run/job/job-config';
import { klTrainerOptions } from '../../helpers/kl-batch';
import { withValueHead } from '../../../runtime/engine/lm/value-head';
import type { CriticSetup } from '../../../runtime/rft/trainer/train-step';
import { causalLmParams } from '../../../runtime/config/gpu-memory/model-shape';
import { corpusDir } from '../../helpers/corpus';
import { QWEN25_05B_JSON, SHRUNK_MODEL_JSON } from '../../helpers/shrunk-model-json';

interface Pass {
  layers: number;
  hidden: number;
  heads: number;
  vocabSize: number;
  intermediate: number;
  rows: number;
  tokens: number;
  micro?: number;
}

function shapeOf(json: unknown): ModelShape {
  const s = shapeFromHfConfig(json, 'test');
  if ('problem' in s) throw new Error(s.problem);
  return s.shape;
}

interface Held {
  /** A k2 KL loss against a reference model. */
  reference?: boolean;
  /** PPO's critic (GAE advantages in the trainer) on the actor's shape. */
  critic?: boolean;
}

/** The peak tensor bytes of one real training step of `p` (PPO loss, all rows or `micro` at once). */
async function measuredPeak(p: Pass, held: Held = {}): Promise<{ peak: number; json: unknown }> {
  const json = newModelConfigJson({ family: 'qwen2', kvHeads: 2, maxPositions: 1024, eosTokenIds: [1], ...p });
  // What earlier tests left allocated is not this step's.
  const base = engineMemory().allocatedBytes;
  const model = initModel(parseModelConfig(json), 1);
  const reference = held.reference ? initModel(parseModelConfig(json), 2) : model;
  const opts = { ...klTrainerOptions(1e-3), microBatchSize: p.micro };
  opts.algorithm = {
    ...opts.algorithm,
    klLossFn: held.reference ? 'k2' : 'none',
    useReference: held.reference === true,
    ...(held.critic ? { trainerAdvantageFn: 'ppo', trainerAdvantageFnArgs: null } : {}),
  };
  const critic: CriticSetup | undefined = held.critic
    ? {
        model: withValueHead(initModel(parseModelConfig(json), 3), 3),
        schedule: opts.schedule,
        betas: [0.9, 0.999],
        weightDecay: 0,
        gradClip: 1,
        ppoEpochs: 1,
        microBatchSize: p.micro,
        cliprangeValue: 0.5,
        lossAggMode: 'token-mean',
        warmupSteps: 0,
        klPenaltyFn: 'none',
        klPenaltyFnArgs: null,
      }
    : undefined;
  const trainer = new RftTrainer(model, () => reference, opts, critic);
  const R = p.tokens - 16;
  const exps: Experience[] = Array.from({ length: p.rows }, (_, i) => ({
    eid: { batch: 1, task: 0, run: i, step: 0, suffix: String(i) },
    tokens: Array.from({ length: p.tokens }, (_, t) => 2 + ((t * 7 + i) % (p.vocabSize - 2))),
    promptLength: 16,
    logprobs: Array<number>(R).fill(-1),
    reward: i % 2,
    ...(critic ? {} : { advantages: Array<number>(R).fill(i % 2 ? 1 : -1) }),
  }));
  resetPeakMemory();
  await trainer.trainStep(exps);
  const peak = engineMemory().peakAllocatedBytes - base;
  trainer.dispose(); // the optimizers' state and the reference model it loaded
  model.dispose();
  critic?.model.dispose();
  return { peak, json };
}

describe('the estimate follows the peak the engine reaches (wasm)', () => {
  before(async () => {
    await initBackend({ prefer: 'wasm' });
    watchPeakMemory();
  });
  // Other shapes than most of the calibration's: 3 layers, 2 heads, a larger vocabulary, micro-batches.
  const CASES: Pass[] = [
    { layers: 2, hidden: 64, heads: 4, vocabSize: 256, intermediate: 128, rows: 2, tokens: 256 },
    { layers: 3, hidden: 32, heads: 2, vocabSize: 512, intermediate: 96, rows: 2, tokens: 192 },
    { layers: 1, hidden: 64, heads: 8, vocabSize: 300, intermediate: 256, rows: 4, tokens: 160, micro: 2 },
  ];
  for (const c of CASES) {
    test(`${c.layers} layers × ${c.heads} heads, ${c.micro ?? c.rows} of ${c.rows} rows × ${c.tokens} tokens: within −5%…+8%`, async () => {
      const { peak, json } = await measuredPeak(c);
      const est = trainerPassBytes(shapeOf(json), {
        rows: c.micro ?? c.rows,
        tokens: c.tokens,
        responseTokens: c.tokens - 16,
        accumulates: c.micro !== undefined,
      }).total;
      const ratio = est / peak;
      assert.ok(ratio >= 0.95 && ratio <= 1.08, `estimate ${est} vs measured ${peak} (×${ratio.toFixed(3)})`);
    });
  }
  // Few short rows on a wider model: the parameters' training state (and the optimizer update's) is the peak.
  const WIDE: Pass = { layers: 2, hidden: 256, heads: 4, vocabSize: 4096, intermediate: 1024, rows: 2, tokens: 20 };
  const HELD: [string, Pass, Held][] = [
    ['the whole batch at once', WIDE, {}],
    ['micro-batches of 1', { ...WIDE, micro: 1 }, {}],
    ['with a reference model', WIDE, { reference: true }],
    ["with PPO's critic and a reference model", WIDE, { reference: true, critic: true }],
  ];
  for (const [name, c, held] of HELD) {
    test(`the training state of a wider model, ${name}: within −5%…+8%`, async () => {
      const { peak, json } = await measuredPeak(c, held);
      const shape = shapeOf(json);
      const est = trainerPassBytes(shape, {
        rows: c.micro ?? c.rows,
        tokens: c.tokens,
        responseTokens: c.tokens - 16,
        accumulates: c.micro !== undefined,
        reference: held.reference,
        criticParams: held.critic ? causalLmParams(shape) : undefined,
      });
      assert.ok(est.update > 2 * est.activations, "the parameters' training state dominates here");
      const ratio = est.total / peak;
      assert.ok(ratio >= 0.95 && ratio <= 1.08, `estimate ${est.total} vs measured ${peak} (×${ratio.toFixed(3)})`);
    });
  }
});

/** A model folder with the shape the user shrank FrozenLake's example to (2 layers, 64 wide, byte-level, 16,384 positions). */
function tinyModelDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'twb-heap-'));
  mkdirSync(join(dir, 'model'));
  writeFileSync(join(dir, 'model', 'config.json'), JSON.stringify(SHRUNK_MODEL_JSON));
  writeFileSync(join(dir, 'tasks.jsonl'), '{"seed": 1, "size": 4, "p": 0.8}\n');
  return dir;
}

/** Trinity's examples/grpo_frozen_lake config with batch_size 2 and repeat_times 2, then `edit`. */
function frozenLake(dir: string, edit: (y: string) => string = (y) => y): string {
  const y = readFileSync(join(corpusDir(), 'trinity-configs/main/examples/grpo_frozen_lake/frozen_lake.yaml'), 'utf8')
    .replace('repeat_times: 8', 'repeat_times: 2')
    .replace('batch_size: 64', 'batch_size: 2')
    .replace('${oc.env:TRINITY_MODEL_PATH,Qwen/Qwen2.5-3B-Instruct}', join(dir, 'model'))
    .replace(/\$\{oc\.env:TRINITY_TASKSET_PATH\}/g, join(dir, 'tasks.jsonl'));
  return edit(y);
}

async function heapFindings(yaml: string, localRuns: boolean) {
  const r = await checkConfig(yaml, {
    env: {},
    host: { baseDirs: [tmpdir()], env: {}, modelConfig: readModelConfigJson, localRuns },
    datasets: false,
  });
  return r.diagnostics.filter((d) => d.code === 'TRN323' || d.code === 'TRN324');
}

const lineOf = (yaml: string, text: string): number => yaml.split('\n').findIndex((l) => l.includes(text)) + 1;

describe('TRN323: a trainer pass that cannot fit the heap is refused before any work', () => {
  const dir = tinyModelDir();

  test('run refuses the shrunk FrozenLake example, naming the file, the lines, the estimate and what to lower', async () => {
    const yaml = frozenLake(dir);
    const path = join(dir, 'frozen_lake.yaml');
    writeFileSync(path, yaml);
    const began = Date.now();
    await assert.rejects(
      loadRunnableConfig(path, { backend: 'wasm' }, () => undefined),
      (e: Error) => {
        assert.ok(e instanceof ConfigRejected, String(e));
        const line = lineOf(yaml, 'max_model_len: 14436');
        assert.ok(e.message.includes(`${path}:${line}:`), e.message);
        assert.match(e.message, /TRN323 The local trainer differentiates 4 rows at once/);
        assert.match(e.message, new RegExp(`\`buffer\\.batch_size\` \\(line ${lineOf(yaml, 'batch_size: 2')}\\)`));
        assert.match(e.message, /up to 14436 tokens/);
        assert.match(
          e.message,
          /about \d+\.\d\d GiB of tensors .* heap must grow to \d+\.\d\d–\d+\.\d\d GiB; it holds 4\.00 GiB at most/,
        );
        assert.match(e.message, /ppo_micro_batch_size_per_gpu` to 1 and keep a row within \d+ tokens/);
        assert.match(e.message, /lower `model\.max_model_len` so a row stays within \d+ tokens/);
        return true;
      },
    );
    assert.ok(Date.now() - began < 20_000);
    // On webgpu the tensors live in GPU buffers, not the wasm heap: not refused for it.
    const { configs } = await loadRunnableConfig(path, { backend: 'webgpu' }, () => undefined);
    assert.equal(configs.length, 1);
  });

  test('the pass the message suggests fits: no finding; the same config for Trinity: no finding', async () => {
    const fits = frozenLake(dir, (y) =>
      y
        .replace('max_model_len: 14436', 'max_model_len: 1536')
        .replace('max_response_tokens: 10240', 'max_response_tokens: 1024'),
    );
    assert.deepEqual(await heapFindings(fits, true), []);
    assert.deepEqual(await heapFindings(frozenLake(dir), false), [], 'not where runs go to Trinity');
  });

  test('a model whose training state alone cannot fit is refused at its path, and LoRA is offered', async () => {
    const qwen = mkdtempSync(join(tmpdir(), 'twb-heap-qwen-'));
    writeFileSync(join(qwen, 'config.json'), JSON.stringify(QWEN25_05B_JSON));
    // No KL loss: no reference model beside the policy; the explorer one step ahead, in its own thread and heap.
    const short = (y: string) =>
      y
        .replace('kl_loss_fn_args:\n    kl_coef: 0.0\n', 'kl_loss_fn: none\n')
        .replace('  sync_interval: 1\n', '  sync_interval: 1\n  sync_offset: 1\n')
        .replace(join(dir, 'model'), qwen)
        .replace('max_model_len: 14436', 'max_model_len: 1536')
        .replace('max_response_tokens: 10240', 'max_response_tokens: 1024');
    const yaml = frozenLake(dir, short);
    const [f] = await heapFindings(yaml, true);
    assert.equal(f?.code, 'TRN323', JSON.stringify(f));
    assert.equal(yaml.slice(f.range[0], f.range[1]).startsWith('model_path'), true, 'at model.model_path');
    assert.match(f.message, /the weights, AdamW's moments and gradients of 494\.0M parameters/);
    assert.match(f.message, /Even one short row does not fit beside the model's training state: train LoRA adapters/);
    // Taking turns with the trainer, the explorer's own copy of the weights is in the same heap: LoRA no longer fits.
    const [t] = await heapFindings(yaml.replace('  sync_offset: 1\n', ''), true);
    assert.match(t.message, /the explorer's copy of the weights \(it shares the trainer's thread\)/);
    assert.match(t.message, /Even one short row does not fit: run it on Trinity-RFT/);
    // With LoRA the frozen weights fit; the rows of 1,536 tokens over a 151,936-word vocabulary still do not.
    const lora = frozenLake(dir, (y) =>
      short(y).replace('model:\n', 'model:\n  lora_configs:\n    - name: lora\n      lora_rank: 16\n'),
    );
    const [l] = await heapFindings(lora, true);
    assert.equal(l?.code, 'TRN323', JSON.stringify(l));
    assert.match(l.message, /the frozen weights of 494\.0M parameters/);
    assert.match(l.message, /lower `model\.max_model_len` so a row stays within \d+ tokens/);
  });

  test("SFT rows are the dataset's: a pass at max_model_len that may not fit is a warning, not a refusal", async () => {
    // The agent demo's SFT stage (examples/frozen-lake/demo) on its 2-layer, 987-token model, 16 conversations a step,
    // with max_model_len 1,536 (the demo's 1,280 is now within the limit): its rows are a few hundred tokens, and it
    // runs; it must not be refused.
    const sft = mkdtempSync(join(tmpdir(), 'twb-heap-sft-'));
    mkdirSync(join(sft, 'model'));
    const shape = { num_key_value_heads: 4, intermediate_size: 168, vocab_size: 987, max_position_embeddings: 1536 };
    writeFileSync(join(sft, 'model', 'config.json'), JSON.stringify({ ...SHRUNK_MODEL_JSON, ...shape }));
    const yaml = [
      'mode: train',
      'algorithm:',
      '  algorithm_type: sft',
      'model:',
      `  model_path: ${join(sft, 'model')}`,
      '  max_model_len: 1536',
      'buffer:',
      '  total_steps: 10',
      '  train_batch_size: 16',
      '  trainer_input:',
      '    experience_buffer:',
      '      name: sft',
      '      storage_type: file',
      '      path: sft.jsonl',
      '      format:',
      '        prompt_type: messages',
      '',
    ].join('\n');
    const [w] = await heapFindings(yaml, true);
    assert.equal(w?.code, 'TRN324', JSON.stringify(w));
    assert.match(w.message, /Its rows are the dataset's, each up to that length: should a batch's longest reach it/);
  });

  test('a micro-batch size is what the trainer holds: the finding moves to it, and a pass near the limit is a warning', async () => {
    const withMicro = (n: number, len: number) =>
      frozenLake(dir, (y) =>
        y
          .replace('max_model_len: 14436', `max_model_len: ${len}`)
          .replace('max_response_tokens: 10240', 'max_response_tokens: 1024')
          .replace('      actor:\n', `      actor:\n        ppo_micro_batch_size_per_gpu: ${n}\n`),
      );
    const near = withMicro(2, 3072);
    const [w] = await heapFindings(near, true);
    assert.equal(w?.code, 'TRN324', JSON.stringify(w));
    assert.match(w.message, /differentiates 2 rows at once/);
    assert.equal(near.slice(w.range[0], w.range[1]).startsWith('ppo_micro_batch_size_per_gpu'), true);
    assert.deepEqual(await heapFindings(withMicro(1, 3072), true), []);
  });
});
