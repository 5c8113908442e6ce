/** Finds a tokenizer's chat template and renders it with @huggingface/jinja, as transformers' apply_chat_template does. */
import { TokenizerError, type ChatMessage, type ChatTemplateOptions } from './api';
import { CHAT_TEMPLATE_FILE, TOKENIZER_CONFIG, type TokenizerDocuments } from './files';
import { JinjaTemplate } from './hf-libs';

export interface TemplateSource {
  text: string;
  /** The file (or config key) it came from, for error messages. */
  origin: string;
}

/**
 * chat_template.jinja wins over the config's "chat_template" (transformers loads it the same way). The config value is
 * a string or a list of `{ name, template }`, of which the one named "default" is used.
 */
export function findChatTemplate(docs: TokenizerDocuments): TemplateSource | undefined {
  if (docs.chatTemplateFile) return docs.chatTemplateFile;
  const config = docs.tokenizerConfig;
  const value = config.value.chat_template;
  if (value === undefined || value === null) return undefined;
  const origin = `${config.origin} "chat_template"`;
  if (typeof value === 'string') return { text: value, origin };
  if (Array.isArray(value)) {
    const named = value.find(
      (t): t is { name: string; template: string } =>
        typeof t === 'object' && t !== null && t.name === 'default' && typeof t.template === 'string',
    );
    if (named) return { text: named.template, origin: `${origin} (default)` };
    throw new TokenizerError(`${origin}: a list of templates with none named "default"`);
  }
  throw new TokenizerError(`${origin}: must be a string or a list of { name, template }`);
}

export interface TemplateTokens {
  bosToken: string | undefined;
  eosToken: string | undefined;
}

export class ChatTemplate {
  private compiled: JinjaTemplate | undefined;

  constructor(
    private readonly source: TemplateSource,
    private readonly tokens: TemplateTokens,
  ) {}

  render(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): string {
    const context: Record<string, unknown> = {
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: opts.addGenerationPrompt ?? false,
    };
    // Only keys that have values, as transformers passes them: templates test `is defined`.
    if (opts.enableThinking !== undefined) context.enable_thinking = opts.enableThinking;
    if (this.tokens.bosToken !== undefined) context.bos_token = this.tokens.bosToken;
    if (this.tokens.eosToken !== undefined) context.eos_token = this.tokens.eosToken;
    // raise_exception is not passed: @huggingface/jinja defines it as a global (throwing Error(message)) and refuses
    // to redeclare it, so its message arrives here.
    try {
      return this.template().render(context);
    } catch (e) {
      if (e instanceof TokenizerError) throw e;
      throw new TokenizerError(`${this.source.origin}: rendering the chat template failed: ${(e as Error).message}`);
    }
  }

  private template(): JinjaTemplate {
    if (!this.compiled) {
      try {
        this.compiled = new JinjaTemplate(this.source.text);
      } catch (e) {
        throw new TokenizerError(`${this.source.origin}: the chat template does not parse: ${(e as Error).message}`);
      }
    }
    return this.compiled;
  }
}

export function noChatTemplateError(source: string): TokenizerError {
  return new TokenizerError(
    `${source}: the tokenizer has no chat template (no "chat_template" in ${TOKENIZER_CONFIG} and no ${CHAT_TEMPLATE_FILE})`,
  );
}
