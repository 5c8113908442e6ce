/**
 * Hugging Face model directories <-> CausalLM: config.json, model.safetensors (or shards), generation_config.json.
 * Saving writes the same format (so `transformers` opens it) into a temporary directory renamed into place, so a
 * reader never sees half a checkpoint.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseModelConfig, type ModelConfig } from './config';
import { canonicalName, paramSpecs, type ParamSpec } from './params';
import { CausalLM } from './transformer';
import { generationEosIds, readJsonDocument } from '../json-file';
import { writeFileNamed } from '../named-write';
import { Rng } from '../random';
import { readCheckpointDir, toFloat32, writeSafetensors, type TensorToWrite } from '../weights/safetensors';

export class CheckpointError extends Error {}

export interface GenerationDefaults {
  eosTokenIds: number[];
  temperature?: number;
  topP?: number;
  topK?: number;
}

export function loadGenerationDefaults(dir: string, config: ModelConfig): GenerationDefaults {
  const path = join(dir, 'generation_config.json');
  if (!existsSync(path)) return { eosTokenIds: config.eosTokenIds };
  const g = readJsonDocument(path, CheckpointError);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  return {
    eosTokenIds: generationEosIds(g, CheckpointError) ?? config.eosTokenIds,
    temperature: num(g.value.temperature),
    topP: num(g.value.top_p),
    topK: num(g.value.top_k),
  };
}

/** Loads the weights of a model directory into variables (f16/bf16 widened to f32; nn.Linear transposed). */
export function loadModel(dir: string): CausalLM {
  const configPath = join(dir, 'config.json');
  const config = parseModelConfig(readJsonDocument(configPath, CheckpointError).value, configPath);
  let tensors;
  try {
    tensors = readCheckpointDir(dir);
  } catch (e) {
    throw new CheckpointError(`${dir}: ${(e as Error).message}`);
  }
  const specs = new Map(paramSpecs(config).map((s) => [s.name, s]));
  const params = new Map<string, tf.Variable>();
  const unexpected: string[] = [];
  try {
    for (const [fileName, t] of tensors) {
      const name = canonicalName(config, fileName);
      if (name === undefined) continue;
      const spec = specs.get(name);
      if (!spec) {
        // Tied models sometimes carry a copy of the embedding as lm_head.weight.
        if (name === 'lm_head.weight' && config.tieEmbeddings) continue;
        unexpected.push(fileName);
        continue;
      }
      const fileShape = spec.transposed ? [...spec.shape].reverse() : spec.shape;
      if (t.shape.join(',') !== fileShape.join(',')) {
        throw new CheckpointError(
          `${dir}: tensor ${fileName} has shape [${t.shape}], config.json implies [${fileShape}]`,
        );
      }
      params.set(
        name,
        tf.tidy(() => {
          const raw = tf.tensor(toFloat32(t), t.shape, 'float32');
          return tf.variable(spec.transposed ? tf.transpose(raw) : raw, true);
        }),
      );
    }
    if (unexpected.length) {
      const shown = unexpected.slice(0, 5).join(', ');
      throw new CheckpointError(
        `${dir}: ${unexpected.length} tensors do not belong to a ${config.family} model of this config.json: ${shown}${unexpected.length > 5 ? ', …' : ''}`,
      );
    }
    const missing = [...specs.keys()].filter((n) => !params.has(n));
    if (missing.length) {
      throw new CheckpointError(
        `${dir}: missing ${missing.length} tensors: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
      );
    }
  } catch (e) {
    for (const v of params.values()) v.dispose();
    throw e;
  }
  return new CausalLM(config, params);
}

/** A freshly initialised model (normal(0, initializer_range) weights, unit norms, zero biases), seeded. */
export function initModel(config: ModelConfig, seed: number): CausalLM {
  const rng = new Rng(seed);
  const params = new Map<string, tf.Variable>();
  for (const spec of paramSpecs(config)) {
    const init = tf.tensor(initValues(spec, rng), spec.shape, 'float32');
    params.set(spec.name, tf.variable(init, true));
    init.dispose(); // the variable holds its own reference to the data; this one would keep it alive past dispose()
  }
  return new CausalLM(config, params);
}

function initValues(spec: ParamSpec, rng: Rng): Float32Array {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  if (spec.init === 'ones') out.fill(1);
  else if (spec.init === 'normal') for (let i = 0; i < n; i++) out[i] = rng.normal() * (spec.std ?? 0.02);
  return out;
}

export interface SaveOptions {
  dtype?: TensorToWrite['dtype'];
  /** Extra files written beside the weights: name -> contents. */
  files?: Record<string, string | Uint8Array>;
  /** Saved into the same directory (tokenizer.json, tokenizer_config.json, …), inside the same atomic swap. */
  tokenizer?: { save(dir: string): void };
  /** Writes more into the directory before it is swapped in (e.g. a critic in a subdirectory). */
  extra?: (dir: string) => void;
  generation?: GenerationDefaults;
}

/**
 * Writes `dir` as a Hugging Face model directory. The files go to a sibling temp directory first, which then
 * replaces `dir` in one rename. The weights are read back asynchronously (webgpu has no synchronous read in Node).
 */
export async function saveModel(model: CausalLM, dir: string, opts: SaveOptions = {}): Promise<void> {
  writeDirAtomically(dir, await modelFiles(model, opts), (tmp) => {
    opts.tokenizer?.save(tmp);
    opts.extra?.(tmp);
  });
}

/** The files of a model directory (config, generation config, weights, `opts.files`); tokenizer and `extra` aside. */
export async function modelFiles(
  model: CausalLM,
  opts: Omit<SaveOptions, 'tokenizer' | 'extra'> = {},
): Promise<Record<string, string | Uint8Array>> {
  const dtype = opts.dtype ?? 'F32';
  const tensors: Record<string, TensorToWrite> = {};
  for (const spec of model.specs) {
    const v = model.params.get(spec.name)!;
    // A weight with a LoRA adapter is written merged: the directory holds what the model computes.
    const merged = model.mergedWeight(v);
    const values = await readFloat32(merged ?? v, spec.transposed === true);
    merged?.dispose();
    tensors[spec.name] = { dtype, shape: spec.transposed ? [...spec.shape].reverse() : spec.shape, values };
  }
  return directoryFiles(model.config, tensors, opts);
}

/**
 * The files of a freshly initialised model (what {@link initModel} with this seed holds), made on the host: no
 * tensor, no backend. `set` replaces named weights (in memory layout) before writing.
 */
export function initialModelFiles(
  config: ModelConfig,
  seed: number,
  opts: Omit<SaveOptions, 'tokenizer' | 'extra'> & { set?: Record<string, Float32Array> } = {},
): Record<string, string | Uint8Array> {
  const dtype = opts.dtype ?? 'F32';
  const rng = new Rng(seed);
  const tensors: Record<string, TensorToWrite> = {};
  for (const spec of paramSpecs(config)) {
    const drawn = initValues(spec, rng);
    const values = opts.set?.[spec.name] ?? drawn;
    if (values.length !== drawn.length)
      throw new Error(`${spec.name}: ${values.length} values given, the weight has ${drawn.length}`);
    const [rows, cols] = spec.shape;
    tensors[spec.name] = spec.transposed
      ? { dtype, shape: [cols, rows], values: transpose2d(values, rows, cols) }
      : { dtype, shape: spec.shape, values };
  }
  return directoryFiles(config, tensors, opts);
}

/** Writes a freshly initialised model directory (see {@link initialModelFiles}), atomically. */
export function saveInitialModel(
  config: ModelConfig,
  seed: number,
  dir: string,
  opts: SaveOptions & { set?: Record<string, Float32Array> } = {},
): void {
  writeDirAtomically(dir, initialModelFiles(config, seed, opts), (tmp) => {
    opts.tokenizer?.save(tmp);
    opts.extra?.(tmp);
  });
}

function transpose2d(x: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(x.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = x[r * cols + c];
  return out;
}

function directoryFiles(
  modelConfig: ModelConfig,
  tensors: Record<string, TensorToWrite>,
  opts: Omit<SaveOptions, 'tokenizer' | 'extra'>,
): Record<string, string | Uint8Array> {
  const dtype = opts.dtype ?? 'F32';
  const model = { config: modelConfig };
  const torchDtype = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' }[dtype];
  const config = { ...model.config.raw, torch_dtype: torchDtype };
  const generation: Record<string, unknown> = {
    _from_model_config: true,
    eos_token_id: unwrap(opts.generation?.eosTokenIds ?? model.config.eosTokenIds),
  };
  if (model.config.bosTokenId !== undefined) generation.bos_token_id = model.config.bosTokenId;
  if (opts.generation?.temperature !== undefined) generation.temperature = opts.generation.temperature;
  if (opts.generation?.topP !== undefined) generation.top_p = opts.generation.topP;
  if (opts.generation?.topK !== undefined) generation.top_k = opts.generation.topK;
  return {
    'config.json': `${JSON.stringify(config, null, 2)}\n`,
    'generation_config.json': `${JSON.stringify(generation, null, 2)}\n`,
    'model.safetensors': writeSafetensors(tensors, { format: 'pt' }),
    ...opts.files,
  };
}

function unwrap(ids: number[]): number | number[] {
  return ids.length === 1 ? ids[0] : ids;
}

/**
 * Writes every file into `<dir>.tmp-<pid>`, then swaps it in for `dir` (the old one removed only after). A write
 * that fails removes the temporary directory (a full disk gets its space back) and throws naming the file.
 */
export function writeDirAtomically(
  dir: string,
  files: Record<string, string | Uint8Array>,
  fill?: (tmpDir: string) => void,
): void {
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true });
  const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  try {
    for (const [name, data] of Object.entries(files)) writeFileNamed(join(tmp, name), data);
    fill?.(tmp);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const old = join(parent, `.${basename(dir)}.old-${process.pid}`);
  if (existsSync(dir)) renameSync(dir, old);
  renameSync(tmp, dir);
  rmSync(old, { recursive: true, force: true });
}

/** Writes `files` into `dir` (created; inside a directory that is itself swapped in atomically). */
export function writeDirFiles(dir: string, files: Record<string, string | Uint8Array>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, data] of Object.entries(files)) writeFileNamed(join(dir, name), data);
}

/** A float32 tensor's values (transposed first when asked), read asynchronously. */
export async function readFloat32(t: tf.Tensor, transpose = false): Promise<Float32Array> {
  if (!transpose) return (await t.data()) as Float32Array;
  const tt = tf.transpose(t);
  try {
    return (await tt.data()) as Float32Array;
  } finally {
    tt.dispose();
  }
}
