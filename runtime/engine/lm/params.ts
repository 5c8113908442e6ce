/**
 * Which tensors a model of a given config has, under their Hugging Face names, and how each is stored here.
 * nn.Linear weights are stored `[out, in]` by PyTorch; we keep them `[in, out]` (transposed once at load and
 * back at save) so the forward pass multiplies without transpose flags. GPT-2's Conv1D is already `[in, out]`.
 */
import type { ModelConfig } from './config';

export type ParamInit = 'normal' | 'zeros' | 'ones';

export interface ParamSpec {
  /** The Hugging Face tensor name, as written to model.safetensors. */
  name: string;
  /** Shape as held in memory. */
  shape: number[];
  /** True when the file holds the transpose of `shape` (nn.Linear). */
  transposed: boolean;
  init: ParamInit;
  /** Standard deviation for `normal`. */
  std?: number;
}

export function paramSpecs(c: ModelConfig): ParamSpec[] {
  return c.family === 'gpt2' ? gpt2Specs(c) : llamaSpecs(c);
}

function gpt2Specs(c: ModelConfig): ParamSpec[] {
  const D = c.hidden;
  const std = c.initializerRange;
  // GPT-2 scales the residual projections by 1/√(2·layers) at initialisation.
  const projStd = std / Math.sqrt(2 * c.layers);
  const out: ParamSpec[] = [
    { name: 'transformer.wte.weight', shape: [c.vocabSize, D], transposed: false, init: 'normal', std },
    { name: 'transformer.wpe.weight', shape: [c.maxPositions, D], transposed: false, init: 'normal', std: 0.01 },
  ];
  for (let i = 0; i < c.layers; i++) {
    const p = `transformer.h.${i}`;
    out.push(
      { name: `${p}.ln_1.weight`, shape: [D], transposed: false, init: 'ones' },
      { name: `${p}.ln_1.bias`, shape: [D], transposed: false, init: 'zeros' },
      { name: `${p}.attn.c_attn.weight`, shape: [D, 3 * D], transposed: false, init: 'normal', std },
      { name: `${p}.attn.c_attn.bias`, shape: [3 * D], transposed: false, init: 'zeros' },
      { name: `${p}.attn.c_proj.weight`, shape: [D, D], transposed: false, init: 'normal', std: projStd },
      { name: `${p}.attn.c_proj.bias`, shape: [D], transposed: false, init: 'zeros' },
      { name: `${p}.ln_2.weight`, shape: [D], transposed: false, init: 'ones' },
      { name: `${p}.ln_2.bias`, shape: [D], transposed: false, init: 'zeros' },
      { name: `${p}.mlp.c_fc.weight`, shape: [D, c.intermediate], transposed: false, init: 'normal', std },
      { name: `${p}.mlp.c_fc.bias`, shape: [c.intermediate], transposed: false, init: 'zeros' },
      { name: `${p}.mlp.c_proj.weight`, shape: [c.intermediate, D], transposed: false, init: 'normal', std: projStd },
      { name: `${p}.mlp.c_proj.bias`, shape: [D], transposed: false, init: 'zeros' },
    );
  }
  out.push(
    { name: 'transformer.ln_f.weight', shape: [D], transposed: false, init: 'ones' },
    { name: 'transformer.ln_f.bias', shape: [D], transposed: false, init: 'zeros' },
  );
  if (!c.tieEmbeddings)
    out.push({ name: 'lm_head.weight', shape: [D, c.vocabSize], transposed: true, init: 'normal', std });
  return out;
}

function llamaSpecs(c: ModelConfig): ParamSpec[] {
  const D = c.hidden;
  const std = c.initializerRange;
  const qDim = c.heads * c.headDim;
  const kvDim = c.kvHeads * c.headDim;
  const lin = (name: string, inDim: number, outDim: number): ParamSpec => ({
    name,
    shape: [inDim, outDim],
    transposed: true,
    init: 'normal',
    std,
  });
  const out: ParamSpec[] = [
    { name: 'model.embed_tokens.weight', shape: [c.vocabSize, D], transposed: false, init: 'normal', std },
  ];
  for (let i = 0; i < c.layers; i++) {
    const p = `model.layers.${i}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [D], transposed: false, init: 'ones' });
    out.push(lin(`${p}.self_attn.q_proj.weight`, D, qDim));
    out.push(lin(`${p}.self_attn.k_proj.weight`, D, kvDim));
    out.push(lin(`${p}.self_attn.v_proj.weight`, D, kvDim));
    if (c.qkvBias) {
      out.push(
        { name: `${p}.self_attn.q_proj.bias`, shape: [qDim], transposed: false, init: 'zeros' },
        { name: `${p}.self_attn.k_proj.bias`, shape: [kvDim], transposed: false, init: 'zeros' },
        { name: `${p}.self_attn.v_proj.bias`, shape: [kvDim], transposed: false, init: 'zeros' },
      );
    }
    if (c.qkNorm) {
      out.push(
        { name: `${p}.self_attn.q_norm.weight`, shape: [c.headDim], transposed: false, init: 'ones' },
        { name: `${p}.self_attn.k_norm.weight`, shape: [c.headDim], transposed: false, init: 'ones' },
      );
    }
    out.push(lin(`${p}.self_attn.o_proj.weight`, qDim, D));
    out.push({ name: `${p}.post_attention_layernorm.weight`, shape: [D], transposed: false, init: 'ones' });
    out.push(lin(`${p}.mlp.gate_proj.weight`, D, c.intermediate));
    out.push(lin(`${p}.mlp.up_proj.weight`, D, c.intermediate));
    out.push(lin(`${p}.mlp.down_proj.weight`, c.intermediate, D));
  }
  out.push({ name: 'model.norm.weight', shape: [D], transposed: false, init: 'ones' });
  if (!c.tieEmbeddings) out.push(lin('lm_head.weight', D, c.vocabSize));
  return out;
}

/**
 * The name a checkpoint tensor has in our specs, or undefined for buffers that carry no weights
 * (GPT-2's causal-mask `attn.bias`, old Llama's `rotary_emb.inv_freq`). Files saved from GPT2Model have no
 * `transformer.` prefix.
 */
export function canonicalName(c: ModelConfig, fileName: string): string | undefined {
  if (/\.attn\.(bias|masked_bias)$/.test(fileName) || fileName.endsWith('rotary_emb.inv_freq')) return undefined;
  if (c.family === 'gpt2' && !fileName.startsWith('transformer.') && fileName !== 'lm_head.weight')
    return `transformer.${fileName}`;
  return fileName;
}

export function parameterCount(c: ModelConfig): number {
  return paramSpecs(c).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
}
