/**
 * LoRA adapters on frozen base weights, saved as PEFT does (`adapter_config.json` + `adapter_model.safetensors`,
 * keys `base_model.model.<module>.lora_A.weight` `[r, in]` and `lora_B.weight` `[out, r]`), so `peft` loads them.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CausalLM, Linear } from './transformer';
import { CheckpointError, readFloat32, writeDirAtomically } from './checkpoint';
import { readJsonDocument } from '../json-file';
import { Rng } from '../random';
import { readSafetensorsFile, toFloat32, writeSafetensors, type TensorToWrite } from '../weights/safetensors';

/**
 * Which linear layers, as PEFT matches `target_modules` / `exclude_modules` (peft/tuners/tuners_utils.py
 * `check_target_module_exists`): names matched against the last part of each layer's name (`q_proj`, `c_attn`), or
 * a regular expression that must match the whole module name (`model.layers.0.self_attn.q_proj`).
 */
export type ModuleMatch = readonly string[] | { regex: string };

export interface LoraSpec {
  rank: number;
  alpha: number;
  /** The adapted linear layers; `all-linear` is every linear layer of the blocks (the output head excluded). */
  targetModules: ModuleMatch | 'all-linear';
  /** Layers left without an adapter even when targeted. */
  excludeModules?: ModuleMatch;
  dropout: number;
}

export class LoraError extends Error {}

/** Adds zero-effect adapters (B = 0; A as PEFT initialises it, uniform ±1/√in) to every targeted linear layer. */
export function addLora(model: CausalLM, spec: LoraSpec, seed = 0): string[] {
  if (!Number.isInteger(spec.rank) || spec.rank <= 0)
    throw new LoraError(`LoRA rank must be a positive integer, got ${spec.rank}`);
  if (model.adapters.size) throw new LoraError('the model already has LoRA adapters');
  const targets = targetedLinears(model, spec);
  const rng = new Rng(seed);
  for (const l of targets) {
    const [inDim, outDim] = l.w.shape;
    const bound = 1 / Math.sqrt(inDim);
    const a = Float32Array.from({ length: inDim * spec.rank }, () => (2 * rng.uniform() - 1) * bound);
    model.adapters.set(l.name, {
      a: tf.variable(tf.tensor2d(a, [inDim, spec.rank]), true),
      b: tf.variable(tf.zeros([spec.rank, outDim]), true),
      scale: spec.alpha / spec.rank,
      dropout: spec.dropout,
    });
  }
  return targets.map((l) => l.name);
}

function matches(name: string, m: ModuleMatch): boolean {
  if ('regex' in m) return new RegExp(`^(?:${m.regex})$`).test(name);
  return m.some((t) => name === t || name.endsWith(`.${t}`));
}

function targetedLinears(model: CausalLM, spec: LoraSpec): Linear[] {
  const kept = (ls: Linear[]): Linear[] =>
    spec.excludeModules ? ls.filter((l) => !matches(l.name, spec.excludeModules!)) : ls;
  const targets = spec.targetModules;
  if (targets === 'all-linear') return kept(model.linears);
  if ('regex' in targets) {
    const found = kept(model.linears.filter((l) => matches(l.name, targets)));
    if (!found.length)
      throw new LoraError(
        `target_modules ${targets.regex} matches no linear layer of this ${model.config.family} model`,
      );
    return found;
  }
  const wanted = new Set(targets);
  const found = model.linears.filter((l) => wanted.has(l.name.slice(l.name.lastIndexOf('.') + 1)));
  const names = new Set(found.map((l) => l.name.slice(l.name.lastIndexOf('.') + 1)));
  const unknown = [...wanted].filter((t) => !names.has(t));
  if (unknown.length) {
    const available = [...new Set(model.linears.map((l) => l.name.slice(l.name.lastIndexOf('.') + 1)))].join(', ');
    throw new LoraError(
      `target_modules ${unknown.join(', ')} match no linear layer of this ${model.config.family} model (it has ${available})`,
    );
  }
  return kept(found);
}

/** Writes the adapters as a PEFT adapter directory (atomically). */
export async function saveLora(model: CausalLM, dir: string, spec: LoraSpec, baseModel = ''): Promise<void> {
  writeDirAtomically(dir, await loraFiles(model, spec, baseModel));
}

/** A PEFT adapter directory's files (`adapter_config.json`, `adapter_model.safetensors`) for the model's adapters. */
export async function loraFiles(
  model: CausalLM,
  spec: LoraSpec,
  baseModel = '',
): Promise<Record<string, string | Uint8Array>> {
  if (!model.adapters.size) throw new LoraError('the model has no LoRA adapters to save');
  const tensors: Record<string, TensorToWrite> = {};
  // PyTorch's nn.Linear layout: [out, in], the transpose of ours.
  const asLinear = async (v: tf.Variable): Promise<TensorToWrite> => ({
    dtype: 'F32',
    shape: [...v.shape].reverse(),
    values: await readFloat32(v, true),
  });
  for (const [name, ad] of model.adapters) {
    tensors[`base_model.model.${name}.lora_A.weight`] = await asLinear(ad.a);
    tensors[`base_model.model.${name}.lora_B.weight`] = await asLinear(ad.b);
  }
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: spec.rank,
    lora_alpha: spec.alpha,
    lora_dropout: spec.dropout,
    target_modules: peftModules(spec.targetModules),
    ...(spec.excludeModules ? { exclude_modules: peftModules(spec.excludeModules) } : {}),
    bias: 'none',
    // GPT-2's Conv1D keeps weights [in, out]; PEFT needs to know to transpose its delta.
    fan_in_fan_out: model.config.family === 'gpt2',
    inference_mode: true,
    use_rslora: false,
  };
  return {
    'adapter_config.json': `${JSON.stringify(config, null, 2)}\n`,
    'adapter_model.safetensors': writeSafetensors(tensors, { format: 'pt' }),
  };
}

/** A module match as PEFT's config holds it: a list of names, or the regular expression as a string. */
function peftModules(m: ModuleMatch | 'all-linear'): string | string[] {
  if (m === 'all-linear') return m;
  return 'regex' in m ? m.regex : [...m];
}

const fromPeft = (v: unknown): ModuleMatch | undefined =>
  typeof v === 'string' ? { regex: v } : Array.isArray(v) ? (v as string[]) : undefined;

/** Loads a PEFT LoRA adapter directory onto `model` (which must have none yet). */
export function loadLora(model: CausalLM, dir: string): LoraSpec {
  const cfgPath = join(dir, 'adapter_config.json');
  const cfg = readJsonDocument(cfgPath, CheckpointError).value;
  if (cfg.peft_type !== 'LORA')
    throw new LoraError(`${cfgPath}: peft_type ${JSON.stringify(cfg.peft_type)} is not LORA`);
  const rank = Number(cfg.r);
  const alpha = Number(cfg.lora_alpha ?? rank);
  const scale = cfg.use_rslora === true ? alpha / Math.sqrt(rank) : alpha / rank;
  const spec: LoraSpec = {
    rank,
    alpha,
    dropout: Number(cfg.lora_dropout ?? 0),
    targetModules: cfg.target_modules === 'all-linear' ? 'all-linear' : (fromPeft(cfg.target_modules) ?? []),
    ...(fromPeft(cfg.exclude_modules) ? { excludeModules: fromPeft(cfg.exclude_modules) } : {}),
  };
  const weightsPath = join(dir, 'adapter_model.safetensors');
  if (!existsSync(weightsPath)) throw new LoraError(`${weightsPath}: file not found`);
  const file = readSafetensorsFile(weightsPath);
  const byName = new Map(model.linears.map((l) => [l.name, l]));
  const pairs = new Map<string, { a?: Float32Array; b?: Float32Array; aShape?: number[]; bShape?: number[] }>();
  for (const [key, t] of file.tensors) {
    const m = /^base_model\.model\.(.+)\.lora_([AB])(?:\.default)?\.weight$/.exec(key);
    if (!m) throw new LoraError(`${weightsPath}: tensor ${key} is not a LoRA A/B weight`);
    const entry = pairs.get(m[1]) ?? {};
    if (m[2] === 'A') [entry.a, entry.aShape] = [toFloat32(t), t.shape];
    else [entry.b, entry.bShape] = [toFloat32(t), t.shape];
    pairs.set(m[1], entry);
  }
  if (model.adapters.size) throw new LoraError('the model already has LoRA adapters');
  for (const name of pairs.keys())
    if (!byName.has(name))
      throw new LoraError(`${weightsPath}: adapter for ${name}, which this ${model.config.family} model does not have`);
  // In the model's layer order, whatever the file's: an optimizer's state follows the adapters' order.
  for (const l of model.linears) {
    const name = l.name;
    const p = pairs.get(name);
    if (!p) continue;
    const [inDim, outDim] = l.w.shape;
    if (!p.a || !p.b) throw new LoraError(`${weightsPath}: ${name} needs both lora_A and lora_B`);
    if (p.aShape!.join() !== `${rank},${inDim}` || p.bShape!.join() !== `${outDim},${rank}`) {
      throw new LoraError(
        `${weightsPath}: ${name} has lora_A [${p.aShape}] / lora_B [${p.bShape}], expected [${rank},${inDim}] / [${outDim},${rank}]`,
      );
    }
    model.adapters.set(name, {
      a: tf.variable(
        tf.tidy(() => tf.transpose(tf.tensor2d(p.a!, [rank, inDim]))),
        true,
      ),
      b: tf.variable(
        tf.tidy(() => tf.transpose(tf.tensor2d(p.b!, [outDim, rank]))),
        true,
      ),
      scale,
      dropout: spec.dropout,
    });
  }
  return spec;
}

/** Folds every adapter into its base weight (W += scale · A B) and removes the adapters. */
export function mergeLora(model: CausalLM): void {
  const byName = new Map(model.linears.map((l) => [l.name, l]));
  for (const [name, ad] of model.adapters) {
    const l = byName.get(name)!;
    tf.tidy(() => l.w.assign(tf.add(l.w, tf.mul(tf.matMul(ad.a, ad.b), ad.scale))));
    ad.a.dispose();
    ad.b.dispose();
  }
  model.adapters.clear();
}
