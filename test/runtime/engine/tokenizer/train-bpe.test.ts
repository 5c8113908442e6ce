/**
 * A character BPE learned from sample texts (trainBpe) and built as tokenizer.json (buildBpeTokenizer): the merges of
 * a hand-worked example, and the real Hugging Face tokenizer applying them: frequent words one token, any text over
 * the alphabet round-tripping, specials kept, characters outside the alphabet <unk>.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { buildBpeTokenizer } from '../../../../runtime/engine/tokenizer/build';
import { tokenizerFromJson, TokenizerError } from '../../../../runtime/engine/tokenizer/index';
import { trainBpe } from '../../../../runtime/engine/tokenizer/train-bpe';

describe('learned character BPE', () => {
  test('merges by pair count over GPT-2 pieces, most frequent first', () => {
    // Pieces: "ab" ×1, " ab" ×2, "abc" ×1. Pairs: (a,b) 4, (" ",a) 2, (b,c) 1 → a+b; then (" ",ab) 2, (ab,c) 1.
    const bpe = trainBpe(['ab ab ab', 'abc'], { maxMerges: 5 });
    assert.deepEqual(bpe.merges, [
      ['a', 'b'],
      [' ', 'ab'],
    ]);
    assert.deepEqual(bpe.alphabet, [' ', 'a', 'b', 'c']);
    // (ab,c) occurs once: below minCount 2 it is not merged; with minCount 1 it is.
    assert.deepEqual(trainBpe(['ab ab ab', 'abc'], { maxMerges: 5, minCount: 1 }).merges.at(-1), ['ab', 'c']);
  });

  const texts = ['You are walking on a frozen lake.', 'The goal is G. The hole is O.', '```Up``` ```Down```'];
  const learned = trainBpe(Array(5).fill(texts).flat(), { maxMerges: 200, extraChars: 'xyz' });
  const tok = tokenizerFromJson(buildBpeTokenizer(learned.alphabet, learned.merges), 'learned BPE');
  const pieces = (s: string) => tok.encode(s).map((id) => tok.decode([id]));

  test('the tokenizer applies them: seen words are one token, a word boundary is never crossed', () => {
    assert.deepEqual(pieces('The goal is G.'), ['The', ' goal', ' is', ' G', '.']);
    assert.deepEqual(pieces('```Down```'), ['```', 'Down', '```']);
    assert.deepEqual(pieces('zy lake'), ['z', 'y', ' lake']);
    assert.deepEqual(tok.encode('a<|im_end|>'), [tok.tokenToId('a'), tok.tokenToId('<|im_end|>')]);
    assert.equal(tok.decode(tok.encode('€')), '<unk>', 'outside the alphabet');
    assert.equal(tok.vocabSize, learned.alphabet.length + learned.merges.length + 4);
  });

  test('any text over the alphabet round-trips', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...learned.alphabet), { maxLength: 80 }), (chars) => {
        const s = chars.join('');
        assert.equal(tok.decode(tok.encode(s)), s);
      }),
      { numRuns: 200 },
    );
  });

  test('a merge of an undefined token is refused; two merges making the same text make one token', () => {
    assert.throws(() => buildBpeTokenizer(['a'], [['a', 'b']]), TokenizerError);
    const two = tokenizerFromJson(
      buildBpeTokenizer(
        ['a', 'b', 'c'],
        [
          ['b', 'c'],
          ['a', 'b'],
          ['a', 'bc'],
          ['ab', 'c'],
        ],
      ),
      'two merges to abc',
    );
    assert.equal(two.vocabSize, 3 + 3 + 4);
    assert.equal(two.encode('abc').length, 1);
  });

  test('another split pattern: pieces (here whole lines) become tokens across spaces, learned and applied alike', () => {
    const lines = '(?:[^\\n]+\\n?|\\n)';
    const text = 'the goal is G.\nthe hole is O.\n';
    const bpe = trainBpe(Array(3).fill(text), { maxMerges: 100, splitPattern: lines });
    const lineTok = tokenizerFromJson(buildBpeTokenizer(bpe.alphabet, bpe.merges, lines), 'line BPE');
    const linePieces = (s: string) => lineTok.encode(s).map((id) => lineTok.decode([id]));
    assert.deepEqual(linePieces(text), ['the goal is G.\n', 'the hole is O.\n']);
    // Under GPT-2's pattern (the default) the same texts never merge across a space.
    assert.ok(trainBpe(Array(3).fill(text), { maxMerges: 100 }).merges.every(([a, b]) => !(a + b).includes('s G')));
    // A line never seen whole falls back to shorter merges, and still round-trips.
    assert.ok(linePieces('the goal is O.').length > 1);
    assert.equal(lineTok.decode(lineTok.encode('the goal is O.')), 'the goal is O.');
  });
});
