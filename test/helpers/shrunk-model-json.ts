/**
 * The config.json a user shrank Trinity's FrozenLake example to: Qwen2, 2 layers, 64 wide, 4 heads, a byte-level
 * vocabulary, 16,384 positions. Its trainer pass over 4 rows of thousands of tokens cannot fit the wasm heap.
 */
export const SHRUNK_MODEL_JSON = {
  model_type: 'qwen2',
  hidden_size: 64,
  intermediate_size: 128,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  vocab_size: 260,
  max_position_embeddings: 16384,
  tie_word_embeddings: true,
} as const;

/** Qwen2.5-0.5B-Instruct's published shape (its config.json on the Hugging Face hub): 494M parameters. */
export const QWEN25_05B_JSON = {
  model_type: 'qwen2',
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  vocab_size: 151936,
  max_position_embeddings: 32768,
  tie_word_embeddings: true,
} as const;
