/**
 * A decoder model's shape as the memory estimates need it, from a Hugging Face `config.json` (pure), and the
 * parameter counts that follow from it: the bare `AutoModel` (what Trinity's GPUMemoryValidator counts) and the
 * causal LM with its head (what vLLM loads).
 */

export interface ModelShape {
  modelType: string;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  vocabSize: number;
  tieWordEmbeddings: boolean;
  /** Bias on the q/k/v projections (Qwen2 always; Llama and Qwen3 with `attention_bias`). */
  qkvBias: boolean;
  /** Bias on the output projection (Llama and Qwen3 with `attention_bias`). */
  oBias: boolean;
  /** Bias on gate/up/down (Llama's `mlp_bias`). */
  mlpBias: boolean;
  /** Qwen3's per-head RMSNorm on q and k. */
  qkNorm: boolean;
  /** `torch_dtype` as written, for vLLM's `dtype: auto`. */
  torchDtype?: string;
  /** Where the shape was read: a config.json path, or the published table entry's source. */
  source: string;
}

export type ShapeResult = { shape: ModelShape } | { problem: string };

/** The model types whose parameters this module counts: the dense Llama family, as transformers builds them. */
const DENSE_TYPES = new Set(['llama', 'mistral', 'qwen2', 'qwen3']);

/** A config.json's fields -> the shape, or why the estimate cannot use it. */
export function shapeFromHfConfig(raw: unknown, source: string): ShapeResult {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { problem: `${source} is not a JSON object` };
  const c = raw as Record<string, unknown>;
  const type = typeof c.model_type === 'string' ? c.model_type : '';
  if (c.text_config !== undefined || c.vision_config !== undefined)
    return { problem: `\`${type || 'this'}\` is a vision-language model; the estimate covers text decoders only` };
  if (!DENSE_TYPES.has(type))
    return {
      problem: `model_type \`${type || '(none)'}\` in ${source}: the estimate counts parameters of dense Llama, Mistral, Qwen2 and Qwen3 decoders only`,
    };
  const int = (k: string): number | undefined =>
    typeof c[k] === 'number' && Number.isInteger(c[k]) && (c[k] as number) > 0 ? (c[k] as number) : undefined;
  const hidden = int('hidden_size');
  const layers = int('num_hidden_layers');
  const heads = int('num_attention_heads');
  const inter = int('intermediate_size');
  const vocab = int('vocab_size');
  const missing = Object.entries({
    hidden_size: hidden,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    intermediate_size: inter,
    vocab_size: vocab,
  }).filter(([, v]) => v === undefined);
  if (missing.length > 0)
    return { problem: `${source} lacks ${missing.map(([k]) => `\`${k}\``).join(', ')} (positive integers)` };
  const attentionBias = c.attention_bias === true;
  return {
    shape: {
      modelType: type,
      hiddenSize: hidden!,
      numLayers: layers!,
      numHeads: heads!,
      numKvHeads: int('num_key_value_heads') ?? heads!,
      headDim: int('head_dim') ?? Math.floor(hidden! / heads!),
      intermediateSize: inter!,
      vocabSize: vocab!,
      // transformers' PretrainedConfig default is true; Qwen2/Qwen3/Llama configs write it.
      tieWordEmbeddings: c.tie_word_embeddings !== false,
      qkvBias: type === 'qwen2' || (type !== 'mistral' && attentionBias),
      oBias: (type === 'llama' || type === 'qwen3') && attentionBias,
      mlpBias: type === 'llama' && c.mlp_bias === true,
      qkNorm: type === 'qwen3',
      torchDtype: typeof c.torch_dtype === 'string' ? c.torch_dtype : typeof c.dtype === 'string' ? c.dtype : undefined,
      source,
    },
  };
}

/**
 * Parameters of `AutoModel.from_config(...)` (embeddings, layers, final norm; no LM head), as
 * `model.num_parameters()` counts them in Trinity's GPUMemoryValidator (config_validator.py, fdfdc7b..f3c8dec).
 */
export function baseModelParams(s: ModelShape): number {
  const h = s.hiddenSize;
  const q = s.numHeads * s.headDim;
  const kv = s.numKvHeads * s.headDim;
  const attention = h * q + 2 * h * kv + q * h + (s.qkvBias ? q + 2 * kv : 0) + (s.oBias ? h : 0);
  const mlp = 3 * h * s.intermediateSize + (s.mlpBias ? 2 * s.intermediateSize + h : 0);
  const norms = 2 * h + (s.qkNorm ? 2 * s.headDim : 0);
  return s.vocabSize * h + s.numLayers * (attention + mlp + norms) + h;
}

/** Parameters of the causal LM vLLM loads: the base model plus an LM head unless it shares the embedding. */
export function causalLmParams(s: ModelShape): number {
  return baseModelParams(s) + (s.tieWordEmbeddings ? 0 : s.vocabSize * s.hiddenSize);
}
