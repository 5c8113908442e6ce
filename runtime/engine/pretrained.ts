/** A model directory (or hub id in the local HF cache) loaded whole: weights, tokenizer, generation defaults. */
import { loadGenerationDefaults, loadModel, type GenerationDefaults } from './lm/checkpoint';
import { resolveModelPath } from './lm/hub';
import type { CausalLM } from './lm/transformer';
import { loadTokenizer, type TextTokenizer } from './tokenizer';

export interface Pretrained {
  dir: string;
  model: CausalLM;
  tokenizer: TextTokenizer;
  generation: GenerationDefaults;
}

export function loadPretrained(pathOrId: string, opts: { baseDir?: string } = {}): Pretrained {
  const dir = resolveModelPath(pathOrId, opts);
  const tokenizer = loadTokenizer(dir);
  const model = loadModel(dir);
  const generation = loadGenerationDefaults(dir, model.config);
  if (tokenizer.vocabSize > model.config.vocabSize) {
    model.dispose();
    throw new Error(
      `${dir}: the tokenizer has ${tokenizer.vocabSize} tokens but the model's vocab_size is ${model.config.vocabSize}`,
    );
  }
  return { dir, model, tokenizer, generation };
}

/** Stop ids for sampling: generation_config's and the tokenizer's EOS ids together. */
export function stopTokenIds(p: Pretrained): number[] {
  return [...new Set([...p.generation.eosTokenIds, ...p.tokenizer.eosTokenIds])];
}
