/**
 * Logits parity with PyTorch, as cases any backend runs: the committed checkpoints under test/fixtures/engine/parity/
 * (written by the project's own initModel + saveModel, see bench/make-parity-fixtures.ts) are loaded with loadModel on
 * the active tfjs backend and their logits compared with reference-logits.json, which bench/torch_reference.py
 * computed in float64 with an independent PyTorch implementation of the Hugging Face forward passes.
 * test/runtime/engine/parity.test.ts runs the cases on cpu, webgpu-parity.test.ts on webgpu.
 *
 * Models: gpt2 (LayerNorm, learned positions, fused Conv1D c_attn, gelu_new, tied head), qwen2 (q/k/v biases, GQA,
 * untied head), qwen3 (per-head q/k RMSNorm, head_dim ≠ hidden/heads, tied head), llama3 (Llama 3 rope_scaling with
 * all three frequency bands in play). Every bias is non-zero and every norm weight ≠ 1.
 *
 * Tolerance (the acceptance criterion "match PyTorch to 1e-4 relative"), per model over all B·T·V logits, on every
 * backend:
 *
 *     max |ours − ref|  ≤  1e-4 · max(1, max |ref|)
 *
 * i.e. 1e-4 relative to the reference logit scale, with an absolute floor of 1e-4 for models whose logits are all
 * below 1. The same bound is applied to the KV-cache paths (one token at a time, and prefill + chunk).
 *
 * Every read is an awaited data(), never dataSync(): webgpu cannot read synchronously in Node.
 *
 * Regenerate: `npx tsx bench/make-parity-fixtures.ts` (checkpoints + inputs, then runs the Python reference), or only
 * the references: `python3 bench/torch_reference.py test/fixtures/engine/parity`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel } from '../../runtime/engine/lm/checkpoint';
import { CausalLM, type KVCache } from '../../runtime/engine/lm/transformer';

const ROOT = join(__dirname, '../fixtures/engine/parity');
export const PARITY_MODELS = ['gpt2', 'qwen2', 'qwen3', 'llama3'] as const;
export type ParityModel = (typeof PARITY_MODELS)[number];
const RELATIVE_TOLERANCE = 1e-4;
const REGENERATE =
  'regenerate with `npx tsx bench/make-parity-fixtures.ts` (or `python3 bench/torch_reference.py test/fixtures/engine/parity` for the references only)';

export interface Reference {
  torch_version: string;
  model_type: string;
  model_safetensors_sha256: string;
  input_ids: number[][];
  shape: [number, number, number];
  logits: number[][][];
}

export function fixtureFile(...parts: string[]): string {
  const path = join(ROOT, ...parts);
  if (!existsSync(path)) assert.fail(`parity fixture missing: ${path}; ${REGENERATE}`);
  return path;
}

export function readInputs(): number[][] {
  const ids = (JSON.parse(readFileSync(fixtureFile('inputs.json'), 'utf8')) as { input_ids: number[][] }).input_ids;
  assert.ok(
    Array.isArray(ids) && ids.length > 0 && ids.every((r) => r.length === ids[0].length),
    'inputs.json: input_ids must be a non-empty rectangular [B][T] array',
  );
  return ids;
}

export function readReference(name: ParityModel): Reference {
  return JSON.parse(readFileSync(fixtureFile(name, 'reference-logits.json'), 'utf8')) as Reference;
}

export function loadParityModel(name: ParityModel): CausalLM {
  return loadModel(fixtureFile(name));
}

export interface Comparison {
  maxAbs: number;
  /** max |ours − ref| / max |ref|: the quantity held to 1e-4. */
  maxRelToScale: number;
  /** Per element, |ours − ref| / max(|ref|, 1e-3): reported, not asserted. */
  maxRelElement: number;
  bound: number;
  where: string;
}

/** Compares `ours` ([B, T, V], flat) with `ref[b][t0 + t][v]` for t in 0..T-1. */
export function compare(ours: Float32Array | number[], ref: number[][][], B: number, T: number, t0 = 0): Comparison {
  const V = ref[0][0].length;
  let refScale = 0;
  for (const row of ref) for (const tok of row) for (const x of tok) refScale = Math.max(refScale, Math.abs(x));
  let maxAbs = 0;
  let maxRelElement = 0;
  let where = '';
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let v = 0; v < V; v++) {
        const r = ref[b][t0 + t][v];
        const o = ours[(b * T + t) * V + v];
        const d = Math.abs(o - r);
        if (!(d <= maxAbs)) {
          maxAbs = Number.isNaN(d) ? Infinity : d;
          where = `[b=${b}, t=${t0 + t}, v=${v}] ours ${o} ref ${r}`;
        }
        maxRelElement = Math.max(maxRelElement, d / Math.max(Math.abs(r), 1e-3));
      }
    }
  }
  return {
    maxAbs,
    maxRelToScale: maxAbs / refScale,
    maxRelElement,
    bound: RELATIVE_TOLERANCE * Math.max(1, refScale),
    where,
  };
}

export function assertClose(name: string, what: string, c: Comparison): void {
  assert.ok(
    c.maxAbs <= c.bound,
    `${name} ${what}: max |ours − torch| = ${c.maxAbs.toExponential(3)} exceeds 1e-4 · max(1, max |ref|) = ${c.bound.toExponential(3)} at ${c.where}`,
  );
}

export function report(t: { diagnostic(msg: string): void }, name: string, what: string, c: Comparison): void {
  t.diagnostic(
    `[${tf.getBackend()}] ${name} ${what}: max abs ${c.maxAbs.toExponential(2)}, max abs / max|ref| ${c.maxRelToScale.toExponential(2)}, per-element |d|/max(|ref|,1e-3) ${c.maxRelElement.toExponential(2)} [not asserted] (bound ${c.bound.toExponential(2)})`,
  );
}

/** Logits of the whole sequences, [B, T, V] flat. */
export async function fullLogits(model: CausalLM, ids: number[][]): Promise<Float32Array> {
  const logits = tf.tidy(() => model.logits(model.forward(tf.tensor2d(ids, undefined, 'int32')).hidden));
  try {
    return (await logits.data()) as Float32Array;
  } finally {
    logits.dispose();
  }
}

/** Runs `ids` through the model in the given chunk lengths, carrying the KV cache; returns each chunk's logits. */
export async function incrementalLogits(
  model: CausalLM,
  ids: number[][],
  chunks: number[],
): Promise<{ t0: number; len: number; logits: Float32Array }[]> {
  const out: { t0: number; len: number; logits: Float32Array }[] = [];
  let cache: KVCache | undefined;
  let t0 = 0;
  try {
    for (const len of chunks) {
      const step = tf.tidy(() => {
        const chunk = tf.tensor2d(
          ids.map((r) => r.slice(t0, t0 + len)),
          undefined,
          'int32',
        );
        const r = model.forward(chunk, cache ? { cache } : {});
        const logits = model.logits(r.hidden);
        return { logits, keys: r.cache.keys, values: r.cache.values };
      });
      if (cache) for (const x of [...cache.keys, ...cache.values]) x.dispose();
      cache = { keys: step.keys, values: step.values };
      out.push({ t0, len, logits: (await step.logits.data()) as Float32Array });
      step.logits.dispose();
      t0 += len;
    }
  } finally {
    if (cache) for (const x of [...cache.keys, ...cache.values]) x.dispose();
  }
  return out;
}

export interface ParitySuiteOptions {
  /** Runs at the end of every test (webgpu: no synchronous read happened). */
  check?: () => void;
}

/**
 * Registers the parity tests for the active backend: the fixtures' integrity, full-sequence and KV-cache logits of
 * every model, and the negative controls (a feature turned off breaks the bound by far).
 */
export function describeLogitsParity(opts: ParitySuiteOptions = {}): void {
  const check = opts.check ?? (() => undefined);

  test('every fixture is present and its reference was computed from the committed checkpoint and inputs', () => {
    const inputs = readInputs();
    for (const name of PARITY_MODELS) {
      fixtureFile(name, 'config.json');
      const ref = readReference(name);
      const digest = createHash('sha256')
        .update(new Uint8Array(readFileSync(fixtureFile(name, 'model.safetensors'))))
        .digest('hex');
      assert.equal(
        ref.model_safetensors_sha256,
        digest,
        `${name}: reference-logits.json was computed from a different model.safetensors; ${REGENERATE}`,
      );
      assert.deepEqual(
        ref.input_ids,
        inputs,
        `${name}: reference-logits.json was computed for other input ids than inputs.json; ${REGENERATE}`,
      );
      assert.deepEqual(
        ref.shape,
        [inputs.length, inputs[0].length, ref.logits[0][0].length],
        `${name}: reference shape`,
      );
      // A reference with near-zero logits would make the tolerance meaningless.
      const scale = Math.max(...ref.logits.flat(2).map(Math.abs));
      assert.ok(
        scale > 1,
        `${name}: reference logits are all below 1 in magnitude (max ${scale}); the fixture does not exercise the model`,
      );
    }
  });

  for (const name of PARITY_MODELS) {
    describe(name, () => {
      let model: CausalLM | undefined;
      let ref: Reference;
      let ids: number[][];

      before(() => {
        ids = readInputs();
        ref = readReference(name);
        model = loadParityModel(name);
      });
      after(() => model?.dispose());

      test('full-sequence logits match the torch reference', async (t) => {
        const [B, T] = [ids.length, ids[0].length];
        const c = compare(await fullLogits(model!, ids), ref.logits, B, T);
        report(t, name, 'full', c);
        assertClose(name, 'full-sequence logits', c);
        check();
      });

      test('KV-cache decoding (one token at a time, and prefill 5 + chunk 7) matches the torch reference', async (t) => {
        const [B, T] = [ids.length, ids[0].length];
        for (const chunks of [Array.from({ length: T }, () => 1), [5, T - 5]]) {
          let worst: Comparison | undefined;
          for (const step of await incrementalLogits(model!, ids, chunks)) {
            const c = compare(step.logits, ref.logits, B, step.len, step.t0);
            assertClose(name, `KV-cache chunks [${chunks}] at t=${step.t0}..${step.t0 + step.len - 1}`, c);
            if (!worst || c.maxAbs > worst.maxAbs) worst = c;
          }
          report(t, name, `cache [${chunks.length === T ? '1×' + T : chunks.join('+')}]`, worst!);
        }
        check();
      });
    });
  }

  test('the tolerance is tight enough to see the features the fixtures exercise', async () => {
    // Turning off a feature the reference has must break parity by far more than the bound: Llama 3 rope scaling
    // (inv_freq as plain θ^(−2i/d)) and Qwen2's q/k/v biases.
    const ids = readInputs();
    const [B, T] = [ids.length, ids[0].length];
    const llama = loadParityModel('llama3');
    try {
      const unscaled = new CausalLM({ ...llama.config, ropeScaling: { type: 'default' } }, llama.params);
      const c = compare(await fullLogits(unscaled, ids), readReference('llama3').logits, B, T);
      assert.ok(c.maxAbs > 100 * c.bound, `llama3 without rope scaling differs by only ${c.maxAbs}`);
    } finally {
      llama.dispose();
    }
    const qwen2 = loadParityModel('qwen2');
    const zeros: tf.Variable[] = [];
    try {
      const params = new Map(qwen2.params);
      for (const [k, v] of params) {
        if (k.endsWith('_proj.bias')) {
          const z = tf.variable(tf.zerosLike(v));
          zeros.push(z);
          params.set(k, z);
        }
      }
      assert.ok(zeros.length > 0, 'qwen2 fixture has no q/k/v biases');
      const unbiased = new CausalLM(qwen2.config, params);
      const c = compare(await fullLogits(unbiased, ids), readReference('qwen2').logits, B, T);
      assert.ok(c.maxAbs > 100 * c.bound, `qwen2 without biases differs by only ${c.maxAbs}`);
    } finally {
      for (const z of zeros) z.dispose();
      qwen2.dispose();
    }
    check();
  });
}
