/**
 * Published shapes of common model families, for a `model_path` hub id that is not on this machine. Each entry is
 * the `config.json` its publisher ships on the Hugging Face Hub (the source named beside it); only the fields the
 * estimates read are kept.
 */
import type { ModelShape } from './model-shape';

type Entry = Omit<ModelShape, 'source' | 'oBias' | 'mlpBias'> & { repo: string };

/** What a family's config.json has in common: Qwen2 biases q/k/v, Qwen3 normalises q and k per head (head dim 128). */
const FAMILY = {
  qwen2: { qkvBias: true, qkNorm: false, headDim: undefined },
  qwen3: { qkvBias: false, qkNorm: true, headDim: 128 },
  llama: { qkvBias: false, qkNorm: false, headDim: undefined },
} as const;

/** An entry from the config.json fields: hidden size, layers, attention heads, KV heads, MLP width, vocabulary, tied. */
function entry(
  repo: string,
  family: keyof typeof FAMILY,
  [hiddenSize, numLayers, numHeads, numKvHeads, intermediateSize, vocabSize, tie]: [
    number,
    number,
    number,
    number,
    number,
    number,
    boolean,
  ],
): Entry {
  const f = FAMILY[family];
  return {
    repo,
    modelType: family,
    hiddenSize,
    numLayers,
    numHeads,
    numKvHeads,
    headDim: f.headDim ?? hiddenSize / numHeads,
    intermediateSize,
    vocabSize,
    tieWordEmbeddings: tie,
    qkvBias: f.qkvBias,
    qkNorm: f.qkNorm,
    torchDtype: 'bfloat16',
  };
}

const qwen25 = (size: string, ...f: [number, number, number, number, number, number, boolean]) =>
  entry(`Qwen/Qwen2.5-${size}`, 'qwen2', f);
const qwen3 = (size: string, hidden: number, layers: number, heads: number, inter: number, tie: boolean) =>
  entry(`Qwen/Qwen3-${size}`, 'qwen3', [hidden, layers, heads, 8, inter, 151936, tie]);
const llama3 = (repo: string, hidden: number, layers: number, heads: number, inter: number, tie: boolean) =>
  entry(repo, 'llama', [hidden, layers, heads, 8, inter, 128256, tie]);

/** Keyed by the lower-cased model name without its organisation and without `-Instruct` / `-Base` suffixes. */
const TABLE: Record<string, Entry> = {
  'qwen2.5-0.5b': qwen25('0.5B', 896, 24, 14, 2, 4864, 151936, true),
  'qwen2.5-1.5b': qwen25('1.5B', 1536, 28, 12, 2, 8960, 151936, true),
  'qwen2.5-3b': qwen25('3B', 2048, 36, 16, 2, 11008, 151936, true),
  'qwen2.5-7b': qwen25('7B', 3584, 28, 28, 4, 18944, 152064, false),
  'qwen2.5-14b': qwen25('14B', 5120, 48, 40, 8, 13824, 152064, false),
  'qwen2.5-32b': qwen25('32B', 5120, 64, 40, 8, 27648, 152064, false),
  'qwen2.5-72b': qwen25('72B', 8192, 80, 64, 8, 29568, 152064, false),
  // Qwen2.5-Math-7B has Qwen2.5-7B's layers and vocabulary (only its context length differs).
  'qwen2.5-math-7b': { ...qwen25('7B', 3584, 28, 28, 4, 18944, 152064, false), repo: 'Qwen/Qwen2.5-Math-7B' },
  'qwen3-0.6b': qwen3('0.6B', 1024, 28, 16, 3072, true),
  'qwen3-1.7b': qwen3('1.7B', 2048, 28, 16, 6144, true),
  'qwen3-4b': qwen3('4B', 2560, 36, 32, 9728, true),
  // The 2507 updates keep Qwen3-4B's layers (longer context only).
  'qwen3-4b-2507': { ...qwen3('4B', 2560, 36, 32, 9728, true), repo: 'Qwen/Qwen3-4B-Instruct-2507' },
  'qwen3-8b': qwen3('8B', 4096, 36, 32, 12288, false),
  'qwen3-14b': qwen3('14B', 5120, 40, 40, 17408, false),
  'qwen3-32b': qwen3('32B', 5120, 64, 64, 25600, false),
  'llama-3.2-1b': llama3('meta-llama/Llama-3.2-1B', 2048, 16, 32, 8192, true),
  'llama-3.2-3b': llama3('meta-llama/Llama-3.2-3B', 3072, 28, 24, 8192, true),
  'llama-3.1-8b': llama3('meta-llama/Llama-3.1-8B', 4096, 32, 32, 14336, false),
  'llama-3.1-70b': llama3('meta-llama/Llama-3.1-70B', 8192, 80, 64, 28672, false),
  'meta-llama-3-8b': llama3('meta-llama/Meta-Llama-3-8B', 4096, 32, 32, 14336, false),
  'meta-llama-3-70b': llama3('meta-llama/Meta-Llama-3-70B', 8192, 80, 64, 28672, false),
  'meta-llama-3.1-8b': llama3('meta-llama/Llama-3.1-8B', 4096, 32, 32, 14336, false),
  'meta-llama-3.1-70b': llama3('meta-llama/Llama-3.1-70B', 8192, 80, 64, 28672, false),
};

/** `Qwen/Qwen2.5-7B-Instruct`, `LLM-Research/Llama-3.2-3B-Instruct`, `/models/Qwen3-8B` -> the table's key. */
function tableKey(modelPath: string): string {
  const name =
    modelPath
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? '';
  return name
    .toLowerCase()
    .replace(/-(instruct|chat|base|thinking)(?=-|$)/g, '')
    .replace(/-it$/, '');
}

/** The published shape of a model named like `modelPath`, or undefined when the family and size are not listed. */
export function publishedShape(modelPath: string): ModelShape | undefined {
  const e = TABLE[tableKey(modelPath)];
  if (!e) return undefined;
  const { repo, ...shape } = e;
  return {
    ...shape,
    oBias: false,
    mlpBias: false,
    source: `published config.json of ${repo} (https://huggingface.co/${repo}/blob/main/config.json)`,
  };
}

/** The model names the table knows, for messages. */
export function publishedFamilies(): string {
  return 'Qwen2.5 (0.5B–72B, Math-7B), Qwen3 (0.6B–32B) and Llama 3.x (1B–70B)';
}
