/**
 * The project's own tokenizers, as Hugging Face tokenizer.json + tokenizer_config.json documents (loadable by
 * Python `tokenizers`/`transformers` too): a byte-level BPE without merges, one token per character of an alphabet,
 * and a character BPE with learned merges over GPT-2's pre-tokenization.
 */
import { TokenizerError, type TokenizerJsonFiles } from './api';
import { bytesToUnicode } from './byte-level';

export const END_OF_TEXT = '<|endoftext|>';
export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';
export const UNK = '<unk>';
/** The specials every built tokenizer has, in id order right after its base vocabulary. */
export const CHAT_SPECIALS: readonly string[] = [END_OF_TEXT, IM_START, IM_END];

/** ChatML as Qwen2.5 renders it, without tools and without a default system message. */
export const CHATML_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

interface AddedTokenJson {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

function specialToken(id: number, content: string): AddedTokenJson {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

function bpeModel(
  vocab: Record<string, number>,
  unkToken: string | null,
  merges: readonly (readonly [string, string])[] = [],
): object {
  return {
    type: 'BPE',
    dropout: null,
    unk_token: unkToken,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
    vocab,
    // The list form: a merged token may hold a space, which the "a b" string form cannot say.
    merges: merges.map(([a, b]) => [a, b]),
  };
}

/** tokenizer_config.json as transformers writes it, for PreTrainedTokenizerFast (it needs only tokenizer.json). */
function tokenizerConfig(added: readonly AddedTokenJson[], unkToken: string | null): object {
  const addedTokensDecoder: Record<string, object> = {};
  for (const { id, ...rest } of added) {
    addedTokensDecoder[String(id)] = {
      content: rest.content,
      lstrip: rest.lstrip,
      normalized: rest.normalized,
      rstrip: rest.rstrip,
      single_word: rest.single_word,
      special: rest.special,
    };
  }
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder,
    additional_special_tokens: [IM_START, IM_END],
    bos_token: null,
    chat_template: CHATML_TEMPLATE,
    clean_up_tokenization_spaces: false,
    // Chat generation stops at <|im_end|>; <|endoftext|> pads.
    eos_token: IM_END,
    errors: 'replace',
    pad_token: END_OF_TEXT,
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: unkToken,
  };
}

/**
 * Byte-level BPE with no merges: ids 0..255 are the bytes (id = byte value), then <|endoftext|> 256, <|im_start|> 257,
 * <|im_end|> 258. Any text round-trips (as UTF-8) and ASCII is one token per character.
 */
export function buildByteTokenizer(): TokenizerJsonFiles {
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((ch, byte) => (vocab[ch] = byte));
  const added = CHAT_SPECIALS.map((content, i) => specialToken(256 + i, content));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  return {
    tokenizerJson: {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: { ...byteLevel, use_regex: true },
      post_processor: byteLevel,
      decoder: byteLevel,
      model: bpeModel(vocab, null),
    },
    tokenizerConfig: tokenizerConfig(added, null),
  };
}

/**
 * One token per character (code point) of `alphabet`, in its order, then <|endoftext|>, <|im_start|>, <|im_end|> and
 * <unk>. A BPE without merges splits every piece into characters; the Split pre-tokenizer only keeps pieces short.
 * The specials are in the model's vocabulary too, so that its ids stay contiguous (Python tokenizers numbers added
 * tokens that are missing from the vocabulary from the vocabulary's size).
 */
export function buildCharTokenizer(alphabet: string): TokenizerJsonFiles {
  const chars = Array.from(alphabet);
  if (chars.length === 0) throw new TokenizerError('buildCharTokenizer: the alphabet is empty');
  return characterBpe('buildCharTokenizer', chars, [], '[\\s\\S]');
}

/** GPT-2's pre-tokenization pattern (openai/gpt-2 src/encoder.py): contractions, words, numbers, symbol runs, spaces. */
export const GPT2_SPLIT_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * A character-level BPE: one token per character of `alphabet`, then one per merged text in merge (rank) order,
 * then <|endoftext|>, <|im_start|>, <|im_end|> and <unk>. Text is first split with GPT-2's pattern (or
 * `splitPattern`, the one trainBpe learned the merges with), so no token crosses a piece's boundary; a character
 * outside the alphabet becomes <unk>.
 */
export function buildBpeTokenizer(
  alphabet: readonly string[],
  merges: readonly (readonly [string, string])[],
  splitPattern = GPT2_SPLIT_PATTERN,
): TokenizerJsonFiles {
  return characterBpe('buildBpeTokenizer', alphabet, merges, splitPattern);
}

/**
 * The BPE both builders write: `alphabet`'s characters, then the merged texts in rank order, then the chat specials
 * and <unk>; pieces split by `splitRegex`, decoded by fusing.
 */
function characterBpe(
  who: string,
  alphabet: readonly string[],
  merges: readonly (readonly [string, string])[],
  splitRegex: string,
): TokenizerJsonFiles {
  const vocab: Record<string, number> = {};
  for (const ch of alphabet) {
    if (Object.hasOwn(vocab, ch))
      throw new TokenizerError(`${who}: ${JSON.stringify(ch)} occurs twice in the alphabet`);
    vocab[ch] = Object.keys(vocab).length;
  }
  for (const [a, b] of merges) {
    if (!Object.hasOwn(vocab, a) || !Object.hasOwn(vocab, b))
      throw new TokenizerError(`${who}: the merge ${JSON.stringify([a, b])} joins a token not yet defined`);
    // Two merges may make the same text (a+bc, ab+c): one token.
    if (!Object.hasOwn(vocab, a + b)) vocab[a + b] = Object.keys(vocab).length;
  }
  const base = Object.keys(vocab).length;
  const added = [...CHAT_SPECIALS, UNK].map((content, i) => specialToken(base + i, content));
  for (const t of added) vocab[t.content] = t.id;
  return {
    tokenizerJson: {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: added,
      normalizer: null,
      pre_tokenizer: { type: 'Split', pattern: { Regex: splitRegex }, behavior: 'Isolated', invert: false },
      post_processor: null,
      decoder: { type: 'Fuse' },
      model: bpeModel(vocab, UNK, merges),
    },
    tokenizerConfig: tokenizerConfig(added, UNK),
  };
}
