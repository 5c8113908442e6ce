/** `trinity-workbench model create`: a small randomly initialised model directory in Hugging Face format. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { lastValue, parseArgs, UsageError } from './args';
import { saveInitialModel } from '../engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig, type ModelFamily } from '../engine/lm/config';
import { parameterCount } from '../engine/lm/params';
import {
  buildByteTokenizer,
  buildCharTokenizer,
  loadTokenizer,
  tokenizerFromJson,
  type TextTokenizer,
} from '../engine/tokenizer';

const USAGE = `Usage: trinity-workbench model create --out DIR [options]

Creates a randomly initialised causal LM directory (config.json, model.safetensors, tokenizer.json, …) that
Hugging Face transformers and the workbench runtime both open.

Options:
  --arch gpt2|llama|qwen2|qwen3   architecture family (default qwen2)
  --layers N                      transformer layers (default 4)
  --hidden N                      hidden size (default 128)
  --heads N                       attention heads (default hidden/32)
  --kv-heads N                    key/value heads, GQA (default: heads; gpt2 always heads)
  --intermediate N                MLP width (default 4·hidden for gpt2, ~8/3·hidden for SwiGLU)
  --max-positions N               context length (default 512)
  --vocab byte|char:ALPHABET|DIR  tokenizer: byte-level (259 tokens), one token per character of ALPHABET,
                                  or the tokenizer.json in DIR (default byte)
  --untied                        separate output head (default tied to the embedding)
  --dtype F32|F16|BF16            weight dtype on disk (default F32)
  --seed N                        initialisation seed (default 0)
  --force                         overwrite a non-empty --out directory
  --json                          print the result as JSON`;

const FAMILIES: readonly ModelFamily[] = ['gpt2', 'llama', 'qwen2', 'qwen3'];

export async function runModel(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'create') {
    process.stderr.write(`Unknown model command \`${sub}\`.\n${USAGE}\n`);
    return 2;
  }
  try {
    return await create(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`model create: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`model create: ${(e as Error).message}\n`);
    return 1;
  }
}

async function create(argv: string[]): Promise<number> {
  const args = parseArgs(argv, {
    values: [
      '--arch',
      '--layers',
      '--hidden',
      '--heads',
      '--kv-heads',
      '--intermediate',
      '--max-positions',
      '--vocab',
      '--dtype',
      '--seed',
      '--out',
    ],
    switches: ['--untied', '--force', '--json', '--help'],
  });
  if (args.switches.has('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.positionals.length) throw new UsageError(`unexpected argument ${args.positionals[0]}`);
  const out = lastValue(args, '--out');
  if (!out) throw new UsageError('--out DIR is required');
  const dir = resolve(out);
  if (
    existsSync(dir) &&
    (!statSync(dir).isDirectory() || readdirSync(dir).length > 0) &&
    !args.switches.has('--force')
  ) {
    throw new UsageError(`${dir} exists and is not empty (use --force to overwrite)`);
  }
  const family = (lastValue(args, '--arch') ?? 'qwen2') as ModelFamily;
  if (!FAMILIES.includes(family)) throw new UsageError(`--arch must be one of ${FAMILIES.join(', ')}`);
  const int = (flag: string, fallback: number): number => {
    const v = lastValue(args, flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive integer, got ${v}`);
    return n;
  };
  const hidden = int('--hidden', 128);
  const heads = int('--heads', Math.max(1, Math.floor(hidden / 32)));
  if (hidden % heads !== 0) throw new UsageError(`--hidden (${hidden}) must be divisible by --heads (${heads})`);
  const dtype = (lastValue(args, '--dtype') ?? 'F32').toUpperCase();
  if (dtype !== 'F32' && dtype !== 'F16' && dtype !== 'BF16') throw new UsageError('--dtype must be F32, F16 or BF16');
  const seedText = lastValue(args, '--seed') ?? '0';
  const seed = Number(seedText);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, got ${seedText}`);
  const tokenizer = tokenizerFor(lastValue(args, '--vocab') ?? 'byte');

  const configJson = newModelConfigJson({
    family,
    layers: int('--layers', 4),
    hidden,
    heads,
    kvHeads: family === 'gpt2' ? heads : int('--kv-heads', heads),
    intermediate: lastValue(args, '--intermediate') ? int('--intermediate', 0) : undefined,
    vocabSize: tokenizer.vocabSize,
    maxPositions: int('--max-positions', 512),
    tieEmbeddings: !args.switches.has('--untied'),
    eosTokenIds: [...tokenizer.eosTokenIds],
    bosTokenId: tokenizer.bosTokenId,
  });
  const config = parseModelConfig(configJson, '--arch/--hidden/--heads');
  // Drawn and written on the host: creating a model needs no tfjs backend (and reads nothing back from a device).
  saveInitialModel(config, seed, dir, { dtype, tokenizer });
  const params = parameterCount(config);
  if (args.switches.has('--json')) {
    process.stdout.write(
      `${JSON.stringify({ dir, family, parameters: params, layers: config.layers, hidden, heads, kvHeads: config.kvHeads, vocabSize: config.vocabSize, maxPositions: config.maxPositions, dtype, seed })}\n`,
    );
  } else {
    process.stdout.write(
      `Created a ${family} model with ${formatCount(params)} parameters (${config.layers} layers, hidden ${hidden}, ` +
        `${heads} heads${config.kvHeads !== heads ? ` / ${config.kvHeads} kv` : ''}, vocab ${config.vocabSize}) in ${dir}\n`,
    );
  }
  return 0;
}

function tokenizerFor(spec: string): TextTokenizer {
  if (spec === 'byte') return tokenizerFromJson(buildByteTokenizer(), 'byte tokenizer');
  if (spec.startsWith('char:')) {
    const alphabet = spec.slice('char:'.length);
    if (!alphabet) throw new UsageError('--vocab char: needs the alphabet, e.g. char:0123456789+=');
    return tokenizerFromJson(buildCharTokenizer(alphabet), 'char tokenizer');
  }
  return loadTokenizer(resolve(spec));
}

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(n);
}
