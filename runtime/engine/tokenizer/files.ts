/** Reads and writes the files of a Hugging Face tokenizer directory. Every error names the file it is about. */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TokenizerError, type TokenizerJsonFiles } from './api';
import { parseJsonDocument, readJsonDocument, type JsonDocument } from '../json-file';
import { writeFileNamed } from '../named-write';

/** A tokenizer's documents, whether read from a directory or built in memory. */
export interface TokenizerDocuments {
  /** The directory, or a label such as "built-in byte tokenizer"; used in error messages. */
  source: string;
  tokenizerJson: JsonDocument;
  tokenizerConfig: JsonDocument;
  generationConfig?: JsonDocument;
  /** A chat_template.jinja beside the config; newer transformers save the template there instead of in the config. */
  chatTemplateFile?: { origin: string; text: string };
}

export const TOKENIZER_JSON = 'tokenizer.json';
export const TOKENIZER_CONFIG = 'tokenizer_config.json';
export const GENERATION_CONFIG = 'generation_config.json';
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

export function readTokenizerDir(dir: string): TokenizerDocuments {
  if (!existsSync(dir)) throw new TokenizerError(`${dir}: tokenizer directory not found`);
  if (!statSync(dir).isDirectory())
    throw new TokenizerError(
      `${dir}: not a directory (expected a directory holding ${TOKENIZER_JSON} and ${TOKENIZER_CONFIG})`,
    );
  const docs: TokenizerDocuments = {
    source: dir,
    tokenizerJson: readJsonDocument(join(dir, TOKENIZER_JSON), TokenizerError),
    tokenizerConfig: readJsonDocument(join(dir, TOKENIZER_CONFIG), TokenizerError),
  };
  const generation = join(dir, GENERATION_CONFIG);
  if (existsSync(generation)) docs.generationConfig = readJsonDocument(generation, TokenizerError);
  const template = join(dir, CHAT_TEMPLATE_FILE);
  if (existsSync(template)) docs.chatTemplateFile = { origin: template, text: readFileSync(template, 'utf8') };
  return docs;
}

/** Documents for a tokenizer built in memory, serialised once so that `save` writes exactly this text. */
export function documentsFromJson(files: TokenizerJsonFiles, source: string): TokenizerDocuments {
  const text = (value: object): string => `${JSON.stringify(value, null, 2)}\n`;
  return {
    source,
    tokenizerJson: parseJsonDocument(text(files.tokenizerJson), `${source} (${TOKENIZER_JSON})`, TokenizerError),
    tokenizerConfig: parseJsonDocument(text(files.tokenizerConfig), `${source} (${TOKENIZER_CONFIG})`, TokenizerError),
  };
}

export function writeTokenizerDocuments(dir: string, docs: TokenizerDocuments): void {
  mkdirSync(dir, { recursive: true });
  writeFileNamed(join(dir, TOKENIZER_JSON), docs.tokenizerJson.text);
  writeFileNamed(join(dir, TOKENIZER_CONFIG), docs.tokenizerConfig.text);
  if (docs.chatTemplateFile) writeFileNamed(join(dir, CHAT_TEMPLATE_FILE), docs.chatTemplateFile.text);
}

/** Writes a built tokenizer's two JSON files into a (model) directory. */
export function writeTokenizerFiles(dir: string, files: TokenizerJsonFiles): void {
  writeTokenizerDocuments(dir, documentsFromJson(files, dir));
}
