/** The benches' RL model: qwen2, 4 layers, hidden 128 (bench:rft and bench:rft-eval, bench:agent). */
import { newModelConfigJson, parseModelConfig, type ModelConfig } from '../runtime/engine/lm/config';
import { buildCharTokenizer, tokenizerFromJson, type TextTokenizer } from '../runtime/engine/tokenizer';

export function benchQwen2Config(tokenizer: TextTokenizer, maxPositions: number): ModelConfig {
  return parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: 4,
      hidden: 128,
      heads: 4,
      vocabSize: tokenizer.vocabSize,
      maxPositions,
      eosTokenIds: [...tokenizer.eosTokenIds],
    }),
  );
}

/** bench:rft's: a character tokenizer for sums, 64 positions. */
export function rftBenchModel(): { tokenizer: TextTokenizer; cfg: ModelConfig } {
  const tokenizer = tokenizerFromJson(buildCharTokenizer('0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz'));
  return { tokenizer, cfg: benchQwen2Config(tokenizer, 64) };
}
