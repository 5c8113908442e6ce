/**
 * A job's checkpoints, in Trinity's layout: `<job dir>/global_step_N/` (a Hugging Face model directory plus the
 * trainer's optimizer state) and `<job dir>/latest_checkpointed_iteration.txt`. Each checkpoint is written to a temp
 * directory with its manifest last (manifest.ts), flushed to disk, renamed into place, and the pointer file is
 * replaced only after, so a kill or a machine crash at any moment leaves the previous checkpoint valid and pointed
 * to. A failed write names the checkpoint and the file, and leaves nothing behind.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { loadModel, saveModel } from '../../engine/lm/checkpoint';
import type { CausalLM } from '../../engine/lm/transformer';
import type { TextTokenizer } from '../../engine/tokenizer';
import type { AdamWState } from '../../engine/train/adamw';
import { readSafetensorsFile, toFloat32, writeSafetensors, type TensorToWrite } from '../../engine/weights/safetensors';
import { withIoAsync } from '../io-failure';
import { checkpointProblem, POINTER_FILE } from './checkpoint-choice';
import { fsyncPath, replaceFileDurably } from './durable-files';
import { writeManifest } from './manifest';

export const LATEST_FILE = POINTER_FILE;

export function checkpointDir(jobDir: string, step: number): string {
  return join(jobDir, `global_step_${step}`);
}

export interface TrainerCheckpointState {
  step: number;
  /** Whatever else the run needs to resume (explorer position, buffer position, stage). */
  extra: Record<string, unknown>;
}

export async function saveCheckpoint(
  jobDir: string,
  step: number,
  model: CausalLM,
  tokenizer: TextTokenizer,
  optimizer: AdamWState | undefined,
  state: TrainerCheckpointState,
  /** Writes more into the checkpoint before it is swapped in (PPO's critic goes to `critic/`). */
  extra?: (dir: string) => void,
): Promise<string> {
  const dir = checkpointDir(jobDir, step);
  const files: Record<string, string | Uint8Array> = { 'trainer_state.json': `${JSON.stringify(state, null, 2)}\n` };
  if (optimizer) files['optimizer.safetensors'] = encodeOptimizer(optimizer);
  await withIoAsync(`checkpoint write (global_step_${step})`, dir, async () => {
    await saveModel(model, dir, {
      tokenizer,
      files,
      extra: (tmp) => {
        extra?.(tmp);
        writeManifest(tmp, step);
      },
    });
    fsyncPath(jobDir); // the rename into place
    replaceFileDurably(join(jobDir, LATEST_FILE), `${step}\n`);
  });
  return dir;
}

/** The newest complete checkpoint: the pointer file's step when its directory exists, else none. */
export function latestCheckpoint(jobDir: string): { step: number; dir: string } | undefined {
  const pointer = join(jobDir, LATEST_FILE);
  if (!existsSync(pointer)) return undefined;
  const step = Number(readFileSync(pointer, 'utf8').trim());
  const dir = checkpointDir(jobDir, step);
  if (!Number.isInteger(step) || !existsSync(join(dir, 'trainer_state.json'))) return undefined;
  return { step, dir };
}

/**
 * Hands the job's newest checkpoint to `apply` when it is newer than `version`; returns its step, or undefined when
 * there is none newer or it could not be read (pruned or replaced while being read: the next look finds the newer one).
 */
export function applyNewerCheckpoint(
  jobDir: string,
  version: number,
  apply: (saved: CausalLM, step: number) => void,
  warn: (message: string) => void,
): number | undefined {
  const latest = latestCheckpoint(jobDir);
  if (!latest || latest.step <= version) return undefined;
  const problem = checkpointProblem(latest.dir);
  if (problem !== undefined) {
    warnOnce(latest.dir, () => warn(`${latest.dir} is damaged and not loaded: ${problem}`));
    return undefined;
  }
  let saved: CausalLM;
  try {
    saved = loadModel(latest.dir);
  } catch (e) {
    warn(`could not load ${latest.dir}: ${(e as Error).message}`);
    return undefined;
  }
  try {
    apply(saved, latest.step);
  } finally {
    saved.dispose();
  }
  return latest.step;
}

const warned = new Set<string>();
/** Warns about a damaged checkpoint once per process (the explorer looks for a newer one every poll). */
function warnOnce(dir: string, warn: () => void): void {
  if (warned.has(dir)) return;
  warned.add(dir);
  warn();
}

/** Every `global_step_N` directory, oldest first. */
export function listCheckpoints(jobDir: string): { step: number; dir: string }[] {
  if (!existsSync(jobDir)) return [];
  return readdirSync(jobDir)
    .map((n) => /^global_step_(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ step: Number(m[1]), dir: join(jobDir, m[0]) }))
    .filter((c) => existsSync(join(c.dir, 'config.json')))
    .sort((a, b) => a.step - b.step);
}

/** Removes all but the newest `keep` checkpoints (trainer.max_checkpoints_to_keep). */
export function pruneCheckpoints(jobDir: string, keep: number | null): void {
  if (!keep || keep <= 0) return;
  const all = listCheckpoints(jobDir);
  for (const c of all.slice(0, Math.max(0, all.length - keep))) rmSync(c.dir, { recursive: true, force: true });
}

export function readTrainerState(dir: string): TrainerCheckpointState {
  return JSON.parse(readFileSync(join(dir, 'trainer_state.json'), 'utf8')) as TrainerCheckpointState;
}

export function readOptimizerState(dir: string): AdamWState | undefined {
  const path = join(dir, 'optimizer.safetensors');
  if (!existsSync(path)) return undefined;
  const file = readSafetensorsFile(path);
  const step = Number(file.metadata.step);
  const n = Number(file.metadata.tensors);
  const get = (name: string): Float32Array => {
    const t = file.tensors.get(name);
    if (!t) throw new Error(`${path}: missing ${name}`);
    return toFloat32(t);
  };
  return {
    step,
    m: Array.from({ length: n }, (_, i) => get(`m.${i}`)),
    v: Array.from({ length: n }, (_, i) => get(`v.${i}`)),
  };
}

export function encodeOptimizer(s: AdamWState): Uint8Array {
  const tensors: Record<string, TensorToWrite> = {};
  s.m.forEach((m, i) => (tensors[`m.${i}`] = { dtype: 'F32', shape: [m.length], values: m }));
  s.v.forEach((v, i) => (tensors[`v.${i}`] = { dtype: 'F32', shape: [v.length], values: v }));
  return writeSafetensors(tensors, { step: String(s.step), tensors: String(s.m.length) });
}

/** Copies every weight of `from` into `to` (same architecture): the local `memory` weight sync. */
export function copyWeights(from: CausalLM, to: CausalLM): void {
  const src = from.variables();
  const dst = to.variables();
  if (src.length !== dst.length) throw new Error('copyWeights: models differ in architecture');
  tf.tidy(() => dst.forEach((v, i) => v.assign(src[i])));
}
