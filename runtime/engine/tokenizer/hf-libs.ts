/**
 * The two Hugging Face libraries, loaded synchronously. Both are typed as ES modules, which a CommonJS file may not
 * `import` (TS1479), but both ship CommonJS builds, so they are required here with their ESM types attached.
 * esbuild bundles these `require` calls like imports.
 */
type TokenizersModule = typeof import('@huggingface/tokenizers', { with: { 'resolution-mode': 'import' } });
type JinjaModule = typeof import('@huggingface/jinja', { with: { 'resolution-mode': 'import' } });

export const HfTokenizer: TokenizersModule['Tokenizer'] = (require('@huggingface/tokenizers') as TokenizersModule)
  .Tokenizer;
export type HfTokenizer = InstanceType<TokenizersModule['Tokenizer']>;

export const JinjaTemplate: JinjaModule['Template'] = (require('@huggingface/jinja') as JinjaModule).Template;
export type JinjaTemplate = InstanceType<JinjaModule['Template']>;
