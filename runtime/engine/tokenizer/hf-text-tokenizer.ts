/** TextTokenizer over @huggingface/tokenizers, configured by a tokenizer directory's documents. */
import {
  TokenizerError,
  type ChatMessage,
  type ChatTemplateOptions,
  type DecodeOptions,
  type EncodeOptions,
  type TextTokenizer,
} from './api';
import { ChatTemplate, findChatTemplate, noChatTemplateError } from './chat-template';
import { writeTokenizerDocuments, type TokenizerDocuments } from './files';
import type { JsonDocument } from '../json-file';
import { HfTokenizer } from './hf-libs';
import { resolveSpecialTokens } from './special-tokens';

/** Highest id + 1 over the model's vocabulary (a token -> id map, or Unigram's list of [piece, score]) and the added tokens. */
function vocabSizeOf(doc: JsonDocument): number {
  const model = doc.value.model as { vocab?: unknown } | undefined;
  let top = -1;
  const vocab = model?.vocab;
  if (Array.isArray(vocab)) top = vocab.length - 1;
  else if (vocab && typeof vocab === 'object')
    for (const id of Object.values(vocab)) if (typeof id === 'number' && id > top) top = id;
  const added = doc.value.added_tokens;
  if (Array.isArray(added)) for (const t of added) if (typeof t?.id === 'number' && t.id > top) top = t.id;
  return top + 1;
}

function checkShape(doc: JsonDocument): void {
  const model = doc.value.model;
  if (model === null || typeof model !== 'object' || Array.isArray(model))
    throw new TokenizerError(`${doc.origin}: no "model" object`);
  if (!Array.isArray(doc.value.added_tokens)) throw new TokenizerError(`${doc.origin}: "added_tokens" must be a list`);
}

export class HfTextTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly eosTokenIds: readonly number[];
  readonly padTokenId: number;
  readonly bosTokenId: number | undefined;
  readonly hasChatTemplate: boolean;
  private readonly tokenizer: HfTokenizer;
  private readonly chatTemplate: ChatTemplate | undefined;
  private readonly cleanUpSpaces: boolean;

  constructor(private readonly docs: TokenizerDocuments) {
    checkShape(docs.tokenizerJson);
    try {
      this.tokenizer = new HfTokenizer(docs.tokenizerJson.value, docs.tokenizerConfig.value);
    } catch (e) {
      throw new TokenizerError(`${docs.tokenizerJson.origin}: cannot build the tokenizer: ${(e as Error).message}`);
    }
    this.vocabSize = vocabSizeOf(docs.tokenizerJson);
    const special = resolveSpecialTokens(docs.source, docs.tokenizerConfig, docs.generationConfig, (t) =>
      this.tokenToId(t),
    );
    this.eosTokenIds = Object.freeze(special.eosTokenIds);
    this.padTokenId = special.padTokenId;
    this.bosTokenId = special.bosTokenId;
    const template = findChatTemplate(docs);
    this.chatTemplate = template && new ChatTemplate(template, special);
    this.hasChatTemplate = this.chatTemplate !== undefined;
    // The library cleans up by default; transformers (since 4.45) does not unless the config says so.
    this.cleanUpSpaces = docs.tokenizerConfig.value.clean_up_tokenization_spaces === true;
  }

  encode(text: string, opts: EncodeOptions = {}): number[] {
    const { ids } = this.tokenizer.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true });
    for (const id of ids) {
      if (!Number.isInteger(id))
        throw new TokenizerError(
          `${this.docs.source}: a token of ${JSON.stringify(text)} has no id (broken vocabulary?)`,
        );
    }
    return ids;
  }

  decode(ids: readonly number[], opts: DecodeOptions = {}): string {
    const known: number[] = [];
    for (const id of ids) {
      if (!Number.isInteger(id)) throw new TokenizerError(`decode: ${id} is not a token id`);
      if (this.tokenizer.id_to_token(id) !== undefined) known.push(id);
    }
    // The library throws on an empty list.
    if (known.length === 0) return '';
    return this.tokenizer.decode(known, {
      skip_special_tokens: opts.skipSpecialTokens ?? false,
      clean_up_tokenization_spaces: this.cleanUpSpaces,
    });
  }

  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  applyChatTemplate(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): string {
    if (!this.chatTemplate) throw noChatTemplateError(this.docs.source);
    return this.chatTemplate.render(messages, opts);
  }

  save(dir: string): void {
    writeTokenizerDocuments(dir, this.docs);
  }
}
