/**
 * The project's own tokenizers (byte-level BPE without merges, one token per character): ids, round trips, specials,
 * the ChatML template, and the shape of the tokenizer.json / tokenizer_config.json they are built as.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  buildByteTokenizer,
  buildCharTokenizer,
  CHATML_TEMPLATE,
  tokenizerFromJson,
  TokenizerError,
} from '../../../../runtime/engine/tokenizer/index';

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const containsSpecial = (s: string): boolean => [...SPECIALS, '<unk>'].some((t) => s.includes(t));

describe('byte tokenizer', () => {
  const tok = tokenizerFromJson(buildByteTokenizer(), 'byte tokenizer');

  test('arbitrary Unicode round-trips, one token per UTF-8 byte', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        fc.pre(!containsSpecial(s));
        const ids = tok.encode(s);
        assert.equal(tok.decode(ids), s);
        assert.deepEqual(ids, [...Buffer.from(s, 'utf8')]);
      }),
      { numRuns: 300 },
    );
  });

  test('ASCII maps one byte per token, id = byte value', () => {
    const text = "Hello, world!\n\tIt's 2+3=5 ~ {ok}  ";
    assert.deepEqual(
      tok.encode(text),
      [...text].map((c) => c.charCodeAt(0)),
    );
    assert.deepEqual(tok.encode('é😀'), [195, 169, 240, 159, 152, 128]);
    assert.deepEqual(tok.encode(''), []);
  });

  test('specials are single ids after the 256 bytes, and only they are skipped', () => {
    assert.deepEqual(
      SPECIALS.map((s) => tok.encode(s)),
      [[256], [257], [258]],
    );
    assert.deepEqual(
      SPECIALS.map((s) => tok.tokenToId(s)),
      [256, 257, 258],
    );
    assert.deepEqual(tok.encode('a<|im_end|>b'), [97, 258, 98]);
    assert.equal(tok.decode([257, 104, 105, 258, 256]), '<|im_start|>hi<|im_end|><|endoftext|>');
    assert.equal(tok.decode([257, 104, 105, 258, 256], { skipSpecialTokens: true }), 'hi');
    assert.equal(tok.vocabSize, 259);
    assert.deepEqual(tok.eosTokenIds, [258]);
    assert.equal(tok.padTokenId, 256);
    assert.equal(tok.bosTokenId, undefined);
  });

  test('decode: empty list, and ids with no token are dropped', () => {
    assert.equal(tok.decode([]), '');
    assert.equal(tok.decode([104, 259, 5000, 105]), 'hi');
    assert.throws(() => tok.decode([1.5]), TokenizerError);
  });

  test('the ChatML template renders exactly', () => {
    const messages = [
      { role: 'system', content: 'You add numbers.' },
      { role: 'user', content: '2+3=' },
      { role: 'assistant', content: '5' },
      { role: 'user', content: '1+1=' },
    ] as const;
    assert.equal(
      tok.applyChatTemplate(messages, { addGenerationPrompt: true }),
      '<|im_start|>system\nYou add numbers.<|im_end|>\n<|im_start|>user\n2+3=<|im_end|>\n<|im_start|>assistant\n5<|im_end|>\n<|im_start|>user\n1+1=<|im_end|>\n<|im_start|>assistant\n',
    );
    assert.equal(tok.applyChatTemplate([{ role: 'user', content: 'hi' }]), '<|im_start|>user\nhi<|im_end|>\n');
    assert.equal(
      tok.applyChatTemplate([{ role: 'user', content: 'hi' }], { enableThinking: false }),
      '<|im_start|>user\nhi<|im_end|>\n',
    );
    assert.deepEqual(
      tok.encode(tok.applyChatTemplate([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true })),
      [257, 117, 115, 101, 114, 10, 104, 105, 258, 10, 257, 97, 115, 115, 105, 115, 116, 97, 110, 116, 10],
    );
    assert.equal(tok.hasChatTemplate, true);
  });

  test('tokenizer.json has every field Hugging Face writes; bytes follow the GPT-2 byte-to-unicode map', () => {
    const { tokenizerJson, tokenizerConfig } = buildByteTokenizer() as {
      tokenizerJson: Record<string, any>;
      tokenizerConfig: Record<string, any>;
    };
    assert.deepEqual(Object.keys(tokenizerJson).sort(), [
      'added_tokens',
      'decoder',
      'model',
      'normalizer',
      'padding',
      'post_processor',
      'pre_tokenizer',
      'truncation',
      'version',
    ]);
    assert.equal(tokenizerJson.version, '1.0');
    assert.equal(tokenizerJson.truncation, null);
    assert.equal(tokenizerJson.padding, null);
    assert.deepEqual(tokenizerJson.added_tokens[2], {
      id: 258,
      content: '<|im_end|>',
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    });
    assert.deepEqual(tokenizerJson.pre_tokenizer, {
      type: 'ByteLevel',
      add_prefix_space: false,
      trim_offsets: false,
      use_regex: true,
    });
    assert.equal(tokenizerJson.decoder.type, 'ByteLevel');
    const model = tokenizerJson.model;
    assert.deepEqual(Object.keys(model).sort(), [
      'byte_fallback',
      'continuing_subword_prefix',
      'dropout',
      'end_of_word_suffix',
      'fuse_unk',
      'ignore_merges',
      'merges',
      'type',
      'unk_token',
      'vocab',
    ]);
    assert.equal(model.type, 'BPE');
    assert.deepEqual(model.merges, []);
    const vocab = model.vocab as Record<string, number>;
    assert.equal(Object.keys(vocab).length, 256);
    assert.deepEqual(
      Object.values(vocab).sort((a, b) => a - b),
      [...Array(256).keys()],
    );
    assert.equal(vocab['Ā'], 0);
    assert.equal(vocab['Ġ'], 32, 'space');
    assert.equal(vocab['Ċ'], 10, 'newline');
    assert.equal(vocab['!'], 33);
    assert.equal(vocab['ÿ'], 255);
    assert.equal(vocab['Ń'], 173, 'soft hyphen is the last byte moved above U+0100');
    assert.equal(tokenizerConfig.chat_template, CHATML_TEMPLATE);
    assert.equal(tokenizerConfig.eos_token, '<|im_end|>');
    assert.equal(tokenizerConfig.pad_token, '<|endoftext|>');
    assert.equal(tokenizerConfig.bos_token, null);
    assert.deepEqual(tokenizerConfig.added_tokens_decoder['256'], {
      content: '<|endoftext|>',
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: true,
    });
  });
});

describe('char tokenizer', () => {
  const alphabet = '0123456789+-*/=() \nabcdefghijklmnopqrstuvwxyz';
  const chars = [...alphabet];
  const n = chars.length;
  const tok = tokenizerFromJson(buildCharTokenizer(alphabet), 'char tokenizer');

  test('strings from the alphabet round-trip, id = position in the alphabet', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...chars), maxLength: 100 }), (s) => {
        const ids = tok.encode(s);
        assert.deepEqual(
          ids,
          [...s].map((c) => alphabet.indexOf(c)),
        );
        assert.equal(tok.decode(ids), s);
      }),
      { numRuns: 300 },
    );
  });

  test('characters outside the alphabet map to <unk>, one per code point', () => {
    const unk = n + 3;
    assert.equal(tok.tokenToId('<unk>'), unk);
    assert.deepEqual(tok.encode('a😀B\tb'), [alphabet.indexOf('a'), unk, unk, unk, alphabet.indexOf('b')]);
    assert.equal(tok.decode(tok.encode('1+X=2')), '1+<unk>=2');
    assert.equal(tok.decode(tok.encode('1+X=2'), { skipSpecialTokens: true }), '1+=2');
  });

  test('specials follow the alphabet; vocabulary size and special ids', () => {
    assert.deepEqual(
      SPECIALS.map((s) => tok.encode(s)),
      [[n], [n + 1], [n + 2]],
    );
    assert.deepEqual(tok.encode('12<|im_end|>'), [1, 2, n + 2]);
    assert.equal(tok.vocabSize, n + 4);
    assert.deepEqual(tok.eosTokenIds, [n + 2]);
    assert.equal(tok.padTokenId, n);
    assert.equal(
      tok.applyChatTemplate([{ role: 'user', content: '1+1=' }], { addGenerationPrompt: true }),
      '<|im_start|>user\n1+1=<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  test('alphabets with characters outside the BMP; bad alphabets are refused', () => {
    const emoji = tokenizerFromJson(buildCharTokenizer('ab😀'));
    assert.deepEqual(emoji.encode('😀a😀'), [2, 0, 2]);
    assert.equal(emoji.decode([2, 0, 2]), '😀a😀');
    assert.throws(() => buildCharTokenizer(''), /alphabet is empty/);
    assert.throws(() => buildCharTokenizer('abca'), /"a" occurs twice/);
  });

  test('tokenizer.json: contiguous ids, specials in the vocabulary and in added_tokens', () => {
    const { tokenizerJson } = buildCharTokenizer('ab') as { tokenizerJson: Record<string, any> };
    assert.deepEqual(tokenizerJson.model.vocab, {
      a: 0,
      b: 1,
      '<|endoftext|>': 2,
      '<|im_start|>': 3,
      '<|im_end|>': 4,
      '<unk>': 5,
    });
    assert.equal(tokenizerJson.model.unk_token, '<unk>');
    assert.deepEqual(
      tokenizerJson.added_tokens.map((t: { id: number; content: string; special: boolean }) => [
        t.id,
        t.content,
        t.special,
      ]),
      [
        [2, '<|endoftext|>', true],
        [3, '<|im_start|>', true],
        [4, '<|im_end|>', true],
        [5, '<unk>', true],
      ],
    );
    assert.deepEqual(tokenizerJson.pre_tokenizer, {
      type: 'Split',
      pattern: { Regex: '[\\s\\S]' },
      behavior: 'Isolated',
      invert: false,
    });
    assert.deepEqual(tokenizerJson.decoder, { type: 'Fuse' });
  });
});
