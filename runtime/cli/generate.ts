/** `trinity-workbench generate`: sample from a model directory; the quickest smoke test of a checkpoint. */
import { lastValue, parseArgs, UsageError, type ParsedArgs } from './args';
import { initBackend, isBackendName, type BackendPreference } from '../engine/backend';
import { generate } from '../engine/sampling';
import { loadPretrained, stopTokenIds } from '../engine/pretrained';
import { ensureModelDir } from '../engine/lm/hub-download';

const USAGE = `Usage: trinity-workbench generate --model DIR --prompt TEXT [options]

Options:
  --model DIR|ORG/NAME      model directory, or a hub id already in the Hugging Face cache
  --prompt TEXT             prompt (repeat for a batch)
  --chat                    wrap each prompt as a user message in the model's chat template
  --system TEXT             system message (with --chat)
  --max-new-tokens N        default 64
  --min-new-tokens N        default 0
  --temperature T           0 = greedy (default: generation_config.json, else 1)
  --top-p P                 nucleus sampling (default: generation_config.json, else 1)
  --top-k K                 default: generation_config.json, else off
  --n N                     samples per prompt (default 1)
  --seed N                  default 0
  --stop TEXT               stop string (repeatable)
  --backend NAME            auto, tensorflow-gpu, tensorflow, webgpu, wasm or cpu (default auto)
  --download                fetch a hub id that is not in the Hugging Face cache (HF_ENDPOINT, HF_TOKEN)
  --json                    print tokens, text and per-token log probabilities as JSON`;

export async function runGenerate(argv: string[]): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, {
      values: [
        '--model',
        '--prompt',
        '--system',
        '--max-new-tokens',
        '--min-new-tokens',
        '--temperature',
        '--top-p',
        '--top-k',
        '--n',
        '--seed',
        '--stop',
        '--backend',
      ],
      switches: ['--chat', '--json', '--help', '--download'],
    });
    if (args.switches.has('--help')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (args.positionals.length) throw new UsageError(`unexpected argument ${args.positionals[0]}`);
    if (!lastValue(args, '--model')) throw new UsageError('--model is required');
    if (!args.values.get('--prompt')?.length) throw new UsageError('--prompt is required');
    const backend = lastValue(args, '--backend') ?? 'auto';
    if (backend !== 'auto' && !isBackendName(backend)) throw new UsageError(`--backend ${backend} is not a backend`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`generate: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  try {
    return await run(args);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`generate: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`generate: ${(e as Error).message}\n`);
    return 1;
  }
}

async function run(args: ParsedArgs): Promise<number> {
  const num = (
    flag: string,
    fallback: number | undefined,
    check: (n: number) => boolean,
    what: string,
  ): number | undefined => {
    const v = lastValue(args, flag);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${flag} must be ${what}, got ${v}`);
    return n;
  };
  const isCount = (n: number): boolean => Number.isInteger(n) && n >= 0;
  const backendPref = (lastValue(args, '--backend') ?? 'auto') as BackendPreference;
  const backend = await initBackend({ prefer: backendPref, log: (m) => process.stderr.write(`${m}\n`) });
  if (args.switches.has('--download')) process.env.TRINITY_WORKBENCH_ALLOW_DOWNLOAD = '1';
  const modelDir = await ensureModelDir(lastValue(args, '--model')!, { log: (m) => process.stderr.write(`${m}\n`) });
  const p = loadPretrained(modelDir);
  try {
    const prompts = args.values.get('--prompt')!;
    const system = lastValue(args, '--system');
    const texts = prompts.map((prompt) => {
      if (!args.switches.has('--chat')) return prompt;
      const messages = [
        ...(system ? [{ role: 'system' as const, content: system }] : []),
        { role: 'user' as const, content: prompt },
      ];
      return p.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
    });
    const encoded = texts.map((t) => p.tokenizer.encode(t));
    const started = Date.now();
    const completions = await generate(
      p.model,
      encoded,
      {
        maxNewTokens: num('--max-new-tokens', 64, (n) => Number.isInteger(n) && n > 0, 'a positive integer')!,
        minNewTokens: num('--min-new-tokens', 0, isCount, 'a non-negative integer'),
        temperature: num('--temperature', p.generation.temperature ?? 1, (n) => n >= 0, 'non-negative'),
        topP: num('--top-p', p.generation.topP ?? 1, (n) => n > 0 && n <= 1, 'in (0, 1]'),
        topK: num('--top-k', p.generation.topK ?? 0, isCount, 'a non-negative integer'),
        n: num('--n', 1, (n) => Number.isInteger(n) && n > 0, 'a positive integer'),
        seed: num('--seed', 0, Number.isInteger, 'an integer'),
        stopTokenIds: stopTokenIds(p),
        stopStrings: args.values.get('--stop'),
        validVocab: p.tokenizer.vocabSize,
        padTokenId: p.tokenizer.padTokenId,
      },
      (ids) => p.tokenizer.decode(ids, { skipSpecialTokens: true }),
    );
    const seconds = (Date.now() - started) / 1000;
    const generated = completions.reduce((n, c) => n + c.tokens.length, 0);
    if (args.switches.has('--json')) {
      const out = {
        model: p.dir,
        backend: backend.name,
        seconds,
        completions: completions.map((c) => ({
          prompt: prompts[c.promptIndex],
          promptTokens: encoded[c.promptIndex].length,
          sample: c.sampleIndex,
          text: c.text,
          tokens: c.tokens,
          tokenTexts: c.tokens.map((t) => p.tokenizer.decode([t])),
          logprobs: c.logprobs,
          finishReason: c.finishReason,
        })),
      };
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      for (const c of completions) {
        const head = completions.length > 1 ? `[${c.promptIndex}.${c.sampleIndex}] ` : '';
        process.stdout.write(`${head}${c.text}\n`);
      }
      process.stderr.write(
        `${generated} tokens in ${seconds.toFixed(2)} s (${(generated / Math.max(seconds, 1e-9)).toFixed(1)} tok/s) on ${backend.name}\n`,
      );
    }
    return 0;
  } finally {
    p.model.dispose();
  }
}
