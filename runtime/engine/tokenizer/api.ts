/** The tokenizer's public types: what the engine, the CLI and the tests program against. */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface EncodeOptions {
  /** Let the tokenizer's post-processor add its special tokens (BOS/EOS templates). Default true, as in Hugging Face. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

export interface ChatTemplateOptions {
  addGenerationPrompt?: boolean;
  /** Passed to the template as `enable_thinking` only when given (Qwen3 tests `enable_thinking is defined`). */
  enableThinking?: boolean;
}

export interface TextTokenizer {
  /** Highest id + 1, including added tokens. */
  readonly vocabSize: number;
  /** tokenizer_config `eos_token`, then generation_config.json `eos_token_id` values not already listed. */
  readonly eosTokenIds: readonly number[];
  /** `pad_token`, else the first EOS id. */
  readonly padTokenId: number;
  readonly bosTokenId: number | undefined;
  encode(text: string, opts?: EncodeOptions): number[];
  /** Ids with no token (e.g. rows of a padded embedding) are dropped, as Hugging Face's Rust tokenizers do. */
  decode(ids: readonly number[], opts?: DecodeOptions): string;
  tokenToId(token: string): number | undefined;
  readonly hasChatTemplate: boolean;
  /** Throws a TokenizerError naming the tokenizer's directory when it has no chat template. */
  applyChatTemplate(messages: readonly ChatMessage[], opts?: ChatTemplateOptions): string;
  /** Writes tokenizer.json + tokenizer_config.json (and chat_template.jinja when loaded from one), byte for byte as loaded or built. */
  save(dir: string): void;
}

/** A tokenizer as the two Hugging Face JSON documents (what `model create` writes into a model directory). */
export interface TokenizerJsonFiles {
  tokenizerJson: object;
  tokenizerConfig: object;
}

export class TokenizerError extends Error {
  override name = 'TokenizerError';
}
