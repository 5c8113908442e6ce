/**
 * A Hugging Face `config.json` read into the one architecture description the transformer runs on.
 * GPT-2 and the Llama family (Llama, Qwen2/2.5, Qwen3) differ only in the switches below.
 */

export type ModelFamily = 'gpt2' | 'llama' | 'qwen2' | 'qwen3';

export type RopeScaling =
  | { type: 'default' }
  | { type: 'linear'; factor: number }
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositions: number };

export interface ModelConfig {
  family: ModelFamily;
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  maxPositions: number;
  norm: 'layernorm' | 'rmsnorm';
  normEps: number;
  positions: 'learned' | 'rope';
  ropeTheta: number;
  ropeScaling: RopeScaling;
  /** gelu_new is GPT-2's tanh approximation; silu appears inside SwiGLU. */
  activation: 'gelu_new' | 'gelu' | 'silu';
  mlp: 'dense' | 'swiglu';
  qkvBias: boolean;
  /** GPT-2 has biases on every linear layer; the Llama family on none (Qwen2 only on q/k/v). */
  denseBias: boolean;
  qkNorm: boolean;
  tieEmbeddings: boolean;
  eosTokenIds: number[];
  bosTokenId: number | undefined;
  initializerRange: number;
  /** The file as read, so saving writes back every key we do not model. */
  raw: Record<string, unknown>;
}

export class ModelConfigError extends Error {}

const FAMILY_OF_MODEL_TYPE: Record<string, ModelFamily> = {
  gpt2: 'gpt2',
  llama: 'llama',
  mistral: 'llama',
  qwen2: 'qwen2',
  qwen3: 'qwen3',
};

export const ARCHITECTURE_OF_FAMILY: Record<ModelFamily, string> = {
  gpt2: 'GPT2LMHeadModel',
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

export function parseModelConfig(raw: Record<string, unknown>, where = 'config.json'): ModelConfig {
  const modelType = String(raw.model_type ?? '');
  const family = FAMILY_OF_MODEL_TYPE[modelType];
  if (!family) {
    const known = Object.keys(FAMILY_OF_MODEL_TYPE).join(', ');
    throw new ModelConfigError(`${where}: model_type "${modelType}" is not supported (supported: ${known})`);
  }
  const num = (key: string, fallback?: number): number => {
    const v = raw[key];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (v === undefined || v === null) {
      if (fallback !== undefined) return fallback;
      throw new ModelConfigError(`${where}: missing required key "${key}" for model_type ${modelType}`);
    }
    throw new ModelConfigError(`${where}: "${key}" must be a number, got ${JSON.stringify(v)}`);
  };
  const ids = (v: unknown): number[] =>
    Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : typeof v === 'number' ? [v] : [];

  if (family === 'gpt2') {
    const hidden = num('n_embd');
    const heads = num('n_head');
    const act = String(raw.activation_function ?? 'gelu_new');
    if (act !== 'gelu_new' && act !== 'gelu')
      throw new ModelConfigError(`${where}: activation_function "${act}" is not supported (gelu_new, gelu)`);
    return checked(
      {
        family,
        vocabSize: num('vocab_size'),
        hidden,
        layers: num('n_layer'),
        heads,
        kvHeads: heads,
        headDim: hidden / heads,
        intermediate: num('n_inner', 4 * hidden),
        maxPositions: num('n_positions'),
        norm: 'layernorm',
        normEps: num('layer_norm_epsilon', 1e-5),
        positions: 'learned',
        ropeTheta: 0,
        ropeScaling: { type: 'default' },
        activation: act,
        mlp: 'dense',
        qkvBias: true,
        denseBias: true,
        qkNorm: false,
        tieEmbeddings: raw.tie_word_embeddings !== false,
        eosTokenIds: ids(raw.eos_token_id),
        bosTokenId: typeof raw.bos_token_id === 'number' ? raw.bos_token_id : undefined,
        initializerRange: num('initializer_range', 0.02),
        raw,
      },
      where,
    );
  }

  const hidden = num('hidden_size');
  const heads = num('num_attention_heads');
  const act = String(raw.hidden_act ?? 'silu');
  if (act !== 'silu') throw new ModelConfigError(`${where}: hidden_act "${act}" is not supported (silu)`);
  return checked(
    {
      family,
      vocabSize: num('vocab_size'),
      hidden,
      layers: num('num_hidden_layers'),
      heads,
      kvHeads: num('num_key_value_heads', heads),
      headDim: num('head_dim', hidden / heads),
      intermediate: num('intermediate_size'),
      maxPositions: num('max_position_embeddings', 4096),
      norm: 'rmsnorm',
      normEps: num('rms_norm_eps', 1e-6),
      positions: 'rope',
      ropeTheta: num('rope_theta', 10000),
      ropeScaling: parseRopeScaling(raw.rope_scaling, where),
      activation: 'silu',
      mlp: 'swiglu',
      qkvBias: family === 'qwen2' ? true : raw.attention_bias === true,
      denseBias: false,
      qkNorm: family === 'qwen3',
      tieEmbeddings: raw.tie_word_embeddings === true,
      eosTokenIds: ids(raw.eos_token_id),
      bosTokenId: typeof raw.bos_token_id === 'number' ? raw.bos_token_id : undefined,
      initializerRange: num('initializer_range', 0.02),
      raw,
    },
    where,
  );
}

function parseRopeScaling(v: unknown, where: string): RopeScaling {
  if (v === undefined || v === null) return { type: 'default' };
  if (typeof v !== 'object') throw new ModelConfigError(`${where}: rope_scaling must be an object`);
  const o = v as Record<string, unknown>;
  const type = String(o.rope_type ?? o.type ?? 'default');
  const n = (k: string, d?: number): number => {
    const x = o[k];
    if (typeof x === 'number') return x;
    if (d !== undefined) return d;
    throw new ModelConfigError(`${where}: rope_scaling.${k} is required for rope_type "${type}"`);
  };
  if (type === 'default') return { type: 'default' };
  if (type === 'linear') return { type: 'linear', factor: n('factor') };
  if (type === 'llama3') {
    return {
      type: 'llama3',
      factor: n('factor'),
      lowFreqFactor: n('low_freq_factor', 1),
      highFreqFactor: n('high_freq_factor', 4),
      originalMaxPositions: n('original_max_position_embeddings', 8192),
    };
  }
  throw new ModelConfigError(`${where}: rope_scaling type "${type}" is not supported (default, linear, llama3)`);
}

function checked(c: ModelConfig, where: string): ModelConfig {
  for (const k of [
    'vocabSize',
    'hidden',
    'layers',
    'heads',
    'kvHeads',
    'headDim',
    'intermediate',
    'maxPositions',
  ] as const) {
    if (!Number.isInteger(c[k]) || c[k] <= 0)
      throw new ModelConfigError(`${where}: ${k} must be a positive integer, got ${c[k]}`);
  }
  if (c.heads % c.kvHeads !== 0) {
    throw new ModelConfigError(
      `${where}: num_attention_heads (${c.heads}) must be a multiple of num_key_value_heads (${c.kvHeads})`,
    );
  }
  if (c.positions === 'rope' && c.headDim % 2 !== 0)
    throw new ModelConfigError(`${where}: head_dim (${c.headDim}) must be even for RoPE`);
  return c;
}

export interface NewModelSpec {
  family: ModelFamily;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads?: number;
  intermediate?: number;
  vocabSize: number;
  maxPositions: number;
  tieEmbeddings?: boolean;
  eosTokenIds: number[];
  bosTokenId?: number;
  ropeTheta?: number;
}

/** The config.json a freshly created model is saved with, in its family's own keys. */
export function newModelConfigJson(s: NewModelSpec): Record<string, unknown> {
  const eos = s.eosTokenIds.length === 1 ? s.eosTokenIds[0] : s.eosTokenIds;
  if (s.family === 'gpt2') {
    return {
      architectures: [ARCHITECTURE_OF_FAMILY.gpt2],
      model_type: 'gpt2',
      vocab_size: s.vocabSize,
      n_embd: s.hidden,
      n_layer: s.layers,
      n_head: s.heads,
      n_inner: s.intermediate ?? 4 * s.hidden,
      n_positions: s.maxPositions,
      n_ctx: s.maxPositions,
      activation_function: 'gelu_new',
      layer_norm_epsilon: 1e-5,
      initializer_range: 0.02,
      tie_word_embeddings: true,
      bos_token_id: s.bosTokenId ?? s.eosTokenIds[0],
      eos_token_id: eos,
      torch_dtype: 'float32',
    };
  }
  const base: Record<string, unknown> = {
    architectures: [ARCHITECTURE_OF_FAMILY[s.family]],
    model_type: s.family,
    vocab_size: s.vocabSize,
    hidden_size: s.hidden,
    num_hidden_layers: s.layers,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kvHeads ?? s.heads,
    head_dim: s.hidden / s.heads,
    intermediate_size: s.intermediate ?? Math.round((8 * s.hidden) / 3 / 8) * 8,
    max_position_embeddings: s.maxPositions,
    hidden_act: 'silu',
    rms_norm_eps: 1e-6,
    rope_theta: s.ropeTheta ?? (s.family === 'llama' ? 10000 : 1000000),
    rope_scaling: null,
    attention_bias: false,
    attention_dropout: 0,
    initializer_range: 0.02,
    tie_word_embeddings: s.tieEmbeddings ?? true,
    bos_token_id: s.bosTokenId ?? null,
    eos_token_id: eos,
    torch_dtype: 'float32',
  };
  // transformers' Qwen2Config has no `attention_bias`: its q/k/v projections always carry a bias (which we write).
  if (s.family === 'qwen2') {
    delete base.attention_bias;
    Object.assign(base, { use_sliding_window: false, sliding_window: null, max_window_layers: s.layers });
  }
  if (s.family === 'qwen3')
    Object.assign(base, { use_sliding_window: false, sliding_window: null, max_window_layers: s.layers });
  return base;
}
