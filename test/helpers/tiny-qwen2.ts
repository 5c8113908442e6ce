/** The smallest Qwen2 model config the engine and trainer tests build: one layer, grouped-query attention. */
import {
  newModelConfigJson,
  parseModelConfig,
  type ModelConfig,
  type NewModelSpec,
} from '../../runtime/engine/lm/config';

/** A fresh config on every call; `overrides` replace fields of the spec before it is parsed. */
export function tinyQwen2Config(overrides: Partial<Omit<NewModelSpec, 'family'>> = {}): ModelConfig {
  return parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 1,
      hidden: 16,
      heads: 4,
      kvHeads: 2,
      vocabSize: 16,
      maxPositions: 16,
      eosTokenIds: [1],
      ...overrides,
    }),
  );
}
