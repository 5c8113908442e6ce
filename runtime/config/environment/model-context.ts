/**
 * The longest context a local model directory supports, as vLLM derives it from its config.json (`_get_and_verify_max_len`
 * in vllm/config/model.py at 0052a5b): the smallest of the keys it looks at, `model_max_length` overriding them.
 * Rope scaling is not applied (the runtime's models have none); a folder without a readable config.json gives nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ModelContext {
  /** The config.json key the limit comes from. */
  key: string;
  length: number;
}

const KEYS = [
  'max_position_embeddings',
  'n_positions',
  'max_seq_len',
  'seq_length',
  'model_max_length',
  'max_target_positions',
  'max_sequence_length',
  'max_seq_length',
  'seq_len',
];

export function readModelContext(dir: string): ModelContext | undefined {
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!config || typeof config !== 'object') return undefined;
  const own = config.model_max_length;
  if (typeof own === 'number' && own > 0) return { key: 'model_max_length', length: own };
  let best: ModelContext | undefined;
  for (const key of KEYS) {
    const v = config[key];
    if (typeof v === 'number' && v > 0 && (!best || v < best.length)) best = { key, length: v };
  }
  return best;
}
