/**
 * Writes the logits-parity fixtures: small checkpoints made by the project's own code (`initModel` with a fixed
 * seed, then perturbed, then `saveModel`) under test/fixtures/engine/parity/<name>/, plus inputs.json (the token ids
 * both sides run), then regenerates the PyTorch reference logits with bench/torch_reference.py.
 *
 *   npx tsx bench/make-parity-fixtures.ts [outDir] [--no-reference]
 *
 * `initModel` draws weights with std 0.02, zero biases and unit norm weights: at that scale every attention score is
 * ~0 (uniform attention, so RoPE and masking barely matter) and biases/norm weights are not exercised at all. The
 * fixtures therefore rescale every matrix to std gain/√fan_in (q/k larger, so attention is sharp), give every bias
 * small random values and move every norm weight away from 1. The draws come from the project's seeded Rng, so a
 * rerun writes the same bytes.
 *
 * saveModel replaces each model directory whole, which drops its reference-logits.json; that is why this script runs
 * the Python reference at the end (skip with --no-reference, then run `python3 bench/torch_reference.py <outDir>`).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { newModelConfigJson, parseModelConfig, type NewModelSpec } from '../runtime/engine/lm/config';
import { initModel, saveModel } from '../runtime/engine/lm/checkpoint';
import type { CausalLM } from '../runtime/engine/lm/transformer';
import { Rng } from '../runtime/engine/random';

export const PARITY_DIR = 'test/fixtures/engine/parity';
export const VOCAB = 61;

interface FixtureSpec {
  name: string;
  seed: number;
  spec: NewModelSpec;
  /** Keys merged into config.json after newModelConfigJson (what NewModelSpec has no field for). */
  extra?: Record<string, unknown>;
}

export const FIXTURES: FixtureSpec[] = [
  {
    // GPT-2: LayerNorm with bias, learned positions, fused c_attn Conv1D [in, out], gelu_new, tied head.
    name: 'gpt2',
    seed: 101,
    spec: { family: 'gpt2', layers: 2, hidden: 32, heads: 4, vocabSize: VOCAB, maxPositions: 32, eosTokenIds: [0] },
  },
  {
    // Qwen2: q/k/v biases, GQA (4 query heads on 2 kv heads), SwiGLU, RMSNorm, RoPE θ=1e6, separate lm_head.
    name: 'qwen2',
    seed: 202,
    spec: {
      family: 'qwen2',
      layers: 2,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      intermediate: 48,
      vocabSize: VOCAB,
      maxPositions: 32,
      tieEmbeddings: false,
      eosTokenIds: [0],
    },
  },
  {
    // Qwen3: per-head q/k RMSNorm before RoPE, tied head, and head_dim (16) ≠ hidden/heads (8) as in the real
    // Qwen3 models, so q_proj is [64 ← 32] and o_proj [32 ← 64].
    name: 'qwen3',
    seed: 303,
    spec: {
      family: 'qwen3',
      layers: 2,
      hidden: 32,
      heads: 4,
      kvHeads: 2,
      intermediate: 48,
      vocabSize: VOCAB,
      maxPositions: 32,
      tieEmbeddings: true,
      eosTokenIds: [0],
    },
    extra: { head_dim: 16 },
  },
  {
    // Llama with Llama 3 rope scaling, θ=5e5, head_dim 16 (8 frequencies, wavelengths 2π·θ^(i/8) = 6.3, 32, 167, …).
    // original_max_position_embeddings 64 with factors 1/4 puts the band edges at wavelengths 16 and 64, so the
    // fixture covers all three branches of the scaling: kept (6.3), smoothed (32) and divided by `factor` (≥167).
    // (With original_max_position_embeddings 16 the "kept" branch could not occur: 16/4 < 2π, the shortest wavelength.)
    name: 'llama3',
    seed: 404,
    spec: {
      family: 'llama',
      layers: 2,
      hidden: 32,
      heads: 2,
      kvHeads: 1,
      intermediate: 48,
      vocabSize: VOCAB,
      maxPositions: 32,
      tieEmbeddings: false,
      eosTokenIds: [0],
      ropeTheta: 500000,
    },
    extra: {
      rope_scaling: {
        rope_type: 'llama3',
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 64,
      },
    },
  },
];

/** Token ids both implementations run: BATCH rows of SEQ tokens. */
export const BATCH = 2;
export const SEQ = 12;

/** Rescales, biases and norm weights as described at the top of this file. */
function perturb(model: CausalLM, rng: Rng): void {
  for (const spec of model.specs) {
    const v = model.params.get(spec.name)!;
    const values = v.dataSync() as Float32Array;
    const out = new Float32Array(values.length);
    const isEmbedding = /(wte|embed_tokens)\.weight$/.test(spec.name);
    const isPositions = /wpe\.weight$/.test(spec.name);
    if (spec.init === 'normal') {
      // shape is [in, out] in memory for both Conv1D and (transposed) nn.Linear; embeddings are [rows, hidden].
      const gain = /(q_proj|k_proj|c_attn)\.weight$/.test(spec.name) ? 1.5 : 1;
      const target = isEmbedding ? 1 : isPositions ? 0.5 : gain / Math.sqrt(spec.shape[0]);
      const scale = target / (spec.std ?? 0.02);
      for (let i = 0; i < values.length; i++) out[i] = values[i] * scale;
    } else if (spec.init === 'zeros') {
      for (let i = 0; i < values.length; i++) out[i] = 0.2 * rng.normal();
    } else {
      for (let i = 0; i < values.length; i++) out[i] = 1 + 0.25 * rng.normal();
    }
    v.assign(tf.tensor(out, v.shape, 'float32'));
  }
}

export async function writeFixture(f: FixtureSpec, outDir: string): Promise<string> {
  const raw = { ...newModelConfigJson(f.spec), ...f.extra };
  const config = parseModelConfig(raw);
  const model = initModel(config, f.seed);
  try {
    perturb(model, new Rng(f.seed * 7919 + 1));
    const dir = join(outDir, f.name);
    await saveModel(model, dir);
    return dir;
  } finally {
    model.dispose();
  }
}

export function makeInputs(): number[][] {
  const rng = new Rng(20240611);
  return Array.from({ length: BATCH }, () => Array.from({ length: SEQ }, () => Math.floor(rng.uniform() * VOCAB)));
}

/** A Python 3 that imports torch: $PYTHON, else python3 on PATH, else Debian's /usr/bin/python3. */
function torchPython(): string | undefined {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p);
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import torch'], { stdio: 'ignore' });
    if (r.status === 0) return py;
  }
  return undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const noReference = args.includes('--no-reference');
  const outDir = resolve(args.find((a) => !a.startsWith('--')) ?? PARITY_DIR);
  await tf.setBackend('cpu');
  mkdirSync(outDir, { recursive: true });
  for (const f of FIXTURES) {
    const dir = await writeFixture(f, outDir);
    const bytes = statSync(join(dir, 'model.safetensors')).size;
    console.log(`${f.name}: ${dir} (model.safetensors ${(bytes / 1024).toFixed(1)} KiB)`);
  }
  const rows = makeInputs().map((r) => `    ${JSON.stringify(r)}`);
  const note = 'token ids run by bench/torch_reference.py and test/runtime/engine/parity.test.ts';
  writeFileSync(
    join(outDir, 'inputs.json'),
    `{\n  "note": ${JSON.stringify(note)},\n  "vocab_size": ${VOCAB},\n  "input_ids": [\n${rows.join(',\n')}\n  ]\n}\n`,
  );
  if (noReference) {
    console.log(`reference logits not regenerated: run python3 bench/torch_reference.py ${outDir}`);
    return;
  }
  const py = torchPython();
  if (!py) {
    console.error(
      `no Python with torch found (tried $PYTHON, python3, /usr/bin/python3): run bench/torch_reference.py ${outDir} with one`,
    );
    process.exit(1);
  }
  const script = join(__dirname, 'torch_reference.py');
  if (!existsSync(script)) throw new Error(`${script} not found`);
  const r = spawnSync(py, [script, outDir], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
