/**
 * A critic: a causal LM backbone with a scalar value head on every position, as veRL builds it from
 * `AutoModelForTokenClassification(num_labels=1)` (the head is `score`: weight [1, hidden], bias [1]). Saved as the
 * backbone's Hugging Face directory plus `value_head.safetensors` holding `score.weight` and `score.bias`.
 */
import * as tf from '@tensorflow/tfjs-core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CausalLM, ForwardOptions } from './transformer';
import { Rng } from '../random';
import { mm } from '../ops';
import { loadModel, modelFiles, readFloat32, writeDirAtomically, type SaveOptions } from './checkpoint';
import { readSafetensorsFile, toFloat32, writeSafetensors } from '../weights/safetensors';

export class ValueModel {
  constructor(
    readonly backbone: CausalLM,
    /** `[hidden, 1]` (the transpose of HF's `score.weight`). */
    readonly weight: tf.Variable,
    readonly bias: tf.Variable,
  ) {}

  /** Values `[B, T]` for token ids `[B, T]`. */
  values(ids: tf.Tensor2D, opts: ForwardOptions = {}): tf.Tensor2D {
    const { hidden } = this.backbone.forward(ids, opts);
    const [B, T, D] = hidden.shape;
    const v = tf.add(mm(tf.reshape(hidden, [B * T, D]) as tf.Tensor2D, this.weight as tf.Tensor2D), this.bias);
    return tf.reshape(v, [B, T]) as tf.Tensor2D;
  }

  variables(): tf.Variable[] {
    return [...this.backbone.trainableVariables(), this.weight, this.bias];
  }

  dispose(): void {
    this.backbone.dispose();
    this.weight.dispose();
    this.bias.dispose();
  }
}

/** A new value head (normal(0, initializer_range) weight, zero bias) on `backbone`. */
export function withValueHead(backbone: CausalLM, seed: number): ValueModel {
  const D = backbone.config.hidden;
  const rng = new Rng(seed);
  const w = Float32Array.from({ length: D }, () => rng.normal() * backbone.config.initializerRange);
  return new ValueModel(backbone, tf.variable(tf.tensor2d(w, [D, 1]), true), tf.variable(tf.zeros([1]), true));
}

const HEAD_FILE = 'value_head.safetensors';

/** Loads a critic saved by `saveValueModel`, or a plain causal LM directory with a fresh head. */
export function loadValueModel(dir: string, seed: number): ValueModel {
  const backbone = loadModel(dir);
  const path = join(dir, HEAD_FILE);
  if (!existsSync(path)) return withValueHead(backbone, seed);
  const file = readSafetensorsFile(path);
  const w = file.tensors.get('score.weight');
  const b = file.tensors.get('score.bias');
  if (!w || !b || w.shape.join() !== `1,${backbone.config.hidden}`) {
    backbone.dispose();
    throw new Error(`${path}: expected score.weight [1, ${backbone.config.hidden}] and score.bias [1]`);
  }
  return new ValueModel(
    backbone,
    tf.variable(tf.tensor2d(toFloat32(w), [backbone.config.hidden, 1]), true),
    tf.variable(tf.tensor1d(toFloat32(b)), true),
  );
}

export async function saveValueModel(critic: ValueModel, dir: string, opts: SaveOptions = {}): Promise<void> {
  writeDirAtomically(
    dir,
    await valueModelFiles(critic, opts),
    opts.tokenizer || opts.extra
      ? (tmp) => {
          opts.tokenizer?.save(tmp);
          opts.extra?.(tmp);
        }
      : undefined,
  );
}

/** The critic's directory as files: its backbone's model files plus the value head. */
export async function valueModelFiles(
  critic: ValueModel,
  opts: Omit<SaveOptions, 'tokenizer' | 'extra'> = {},
): Promise<Record<string, string | Uint8Array>> {
  const head = {
    'score.weight': {
      dtype: 'F32' as const,
      shape: [1, critic.backbone.config.hidden],
      values: await readFloat32(critic.weight),
    },
    'score.bias': { dtype: 'F32' as const, shape: [1], values: await readFloat32(critic.bias) },
  };
  return modelFiles(critic.backbone, {
    ...opts,
    files: { ...opts.files, [HEAD_FILE]: writeSafetensors(head, { format: 'pt' }) },
  });
}
