/**
 * `trinity-workbench model create` and `generate` through the bundled dist/cli.js: a created directory opens as a
 * Hugging Face model, generation is seeded and its JSON carries tokens, text and log probabilities.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TRINITY_WORKBENCH_BACKEND: 'wasm' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface GenerateJson {
  backend: string;
  completions: {
    prompt: string;
    promptTokens: number;
    sample: number;
    text: string;
    tokens: number[];
    tokenTexts: string[];
    logprobs: number[];
    finishReason: string;
  }[];
}

describe('model create', () => {
  const root = mkdtempSync(join(tmpdir(), 'twb-model-'));

  test('writes a Hugging Face model directory with its own tokenizer', () => {
    const out = join(root, 'qwen');
    const r = run([
      'model',
      'create',
      '--arch',
      'qwen2',
      '--layers',
      '2',
      '--hidden',
      '64',
      '--heads',
      '4',
      '--kv-heads',
      '2',
      '--vocab',
      'char:0123456789+=',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /Created a qwen2 model with [\d.]+K parameters \(2 layers, hidden 64, 4 heads \/ 2 kv, vocab 16\)/,
    );
    assert.deepEqual(readdirSync(out).sort(), [
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const cfg = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    assert.deepEqual(
      [cfg.model_type, cfg.architectures[0], cfg.num_key_value_heads, cfg.vocab_size],
      ['qwen2', 'Qwen2ForCausalLM', 2, 16],
    );
    // transformers' Qwen2 always has q/k/v biases and its config class no `attention_bias`: the files say the same.
    assert.equal('attention_bias' in cfg, false);
    const st = readFileSync(join(out, 'model.safetensors'));
    const header = JSON.parse(st.subarray(8, 8 + Number(st.readBigUInt64LE(0))).toString('utf8'));
    assert.deepEqual(
      Object.keys(header)
        .filter((k) => k.startsWith('model.layers.0.') && k.endsWith('.bias'))
        .sort(),
      ['k_proj', 'q_proj', 'v_proj'].map((p) => `model.layers.0.self_attn.${p}.bias`),
    );
  });

  test('refuses a non-empty --out without --force, and bad sizes as usage errors', () => {
    const out = join(root, 'busy');
    run(['model', 'create', '--arch', 'gpt2', '--layers', '1', '--hidden', '32', '--out', out]);
    const again = run(['model', 'create', '--arch', 'gpt2', '--layers', '1', '--hidden', '32', '--out', out]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /exists and is not empty \(use --force to overwrite\)/);
    assert.equal(
      run(['model', 'create', '--arch', 'gpt2', '--layers', '1', '--hidden', '32', '--out', out, '--force']).code,
      0,
    );
    const bad = run(['model', 'create', '--hidden', '30', '--heads', '4', '--out', join(root, 'x')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--hidden \(30\) must be divisible by --heads \(4\)/);
    assert.match(
      run(['model', 'create', '--arch', 'bert', '--out', join(root, 'y')]).stderr,
      /--arch must be one of gpt2, llama, qwen2, qwen3/,
    );
  });
});

describe('generate', () => {
  const root = mkdtempSync(join(tmpdir(), 'twb-gen-'));
  const model = join(root, 'm');
  run(['model', 'create', '--arch', 'qwen3', '--layers', '2', '--hidden', '32', '--out', model, '--seed', '3']);

  test('--json prints tokens, text and log probabilities; a seed reproduces them', () => {
    const args = [
      'generate',
      '--model',
      model,
      '--prompt',
      'Hi',
      '--prompt',
      'Hello there',
      '--n',
      '2',
      '--max-new-tokens',
      '6',
      '--seed',
      '5',
      '--json',
    ];
    const a = run(args);
    assert.equal(a.code, 0, a.stderr);
    const out = JSON.parse(a.stdout) as GenerateJson;
    assert.equal(out.backend, 'wasm');
    assert.equal(out.completions.length, 4);
    for (const c of out.completions) {
      assert.ok(c.tokens.length >= 1 && c.tokens.length <= 6);
      assert.equal(c.logprobs.length, c.tokens.length);
      assert.ok(c.logprobs.every((l) => l <= 0 && Number.isFinite(l)));
      assert.equal(c.tokenTexts.length, c.tokens.length);
    }
    assert.deepEqual(
      out.completions.map((c) => c.prompt),
      ['Hi', 'Hi', 'Hello there', 'Hello there'],
    );
    assert.deepEqual(JSON.parse(run(args).stdout).completions, out.completions);
  });

  test('--chat renders the chat template; plain output is the text, stats go to stderr', () => {
    const r = run([
      'generate',
      '--model',
      model,
      '--prompt',
      'Hi',
      '--chat',
      '--max-new-tokens',
      '3',
      '--temperature',
      '0',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\d+ tokens in [\d.]+ s \([\d.]+ tok\/s\) on wasm/);
    assert.ok(r.stdout.endsWith('\n'));
    // <|im_start|> "user\nHi" <|im_end|> "\n" <|im_start|> "assistant\n": 1 + 7 + 1 + 1 + 1 + 10 byte-level tokens.
    const chat = JSON.parse(
      run(['generate', '--model', model, '--prompt', 'Hi', '--chat', '--max-new-tokens', '1', '--json']).stdout,
    ) as GenerateJson;
    assert.equal(chat.completions[0].promptTokens, 21);
    const plain = JSON.parse(
      run(['generate', '--model', model, '--prompt', 'Hi', '--max-new-tokens', '1', '--json']).stdout,
    ) as GenerateJson;
    assert.equal(plain.completions[0].promptTokens, 2);
  });

  test('a missing model and bad flags are reported plainly', () => {
    const missing = run(['generate', '--model', join(root, 'nope'), '--prompt', 'x']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nope: no such model directory/);
    assert.equal(run(['generate', '--prompt', 'x']).code, 2);
    const badT = run(['generate', '--model', model, '--prompt', 'x', '--temperature', '-1']);
    assert.equal(badT.code, 2);
    assert.match(badT.stderr, /--temperature must be non-negative, got -1/);
    writeFileSync(join(root, 'm', 'tokenizer.json'), '{ broken');
    const broken = run(['generate', '--model', model, '--prompt', 'x']);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /tokenizer\.json/);
  });
});
