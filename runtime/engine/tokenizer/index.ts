/** Tokenizers for Hugging Face model directories, and the project's own tokenizers in the same format. */
import type { TextTokenizer, TokenizerJsonFiles } from './api';
import { documentsFromJson, readTokenizerDir } from './files';
import { HfTextTokenizer } from './hf-text-tokenizer';

export type {
  ChatMessage,
  ChatRole,
  ChatTemplateOptions,
  DecodeOptions,
  EncodeOptions,
  TextTokenizer,
  TokenizerJsonFiles,
} from './api';
export { TokenizerError } from './api';
export { buildByteTokenizer, buildCharTokenizer, CHATML_TEMPLATE } from './build';
export { writeTokenizerFiles } from './files';

/** Reads dir/tokenizer.json, dir/tokenizer_config.json and, when present, generation_config.json and chat_template.jinja. */
export function loadTokenizer(dir: string): TextTokenizer {
  return new HfTextTokenizer(readTokenizerDir(dir));
}

/** A tokenizer straight from built (or otherwise in-memory) documents; `source` names it in errors. */
export function tokenizerFromJson(files: TokenizerJsonFiles, source = 'in-memory tokenizer'): TextTokenizer {
  return new HfTextTokenizer(documentsFromJson(files, source));
}
