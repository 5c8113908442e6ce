/** Reads and writes the files of a Hugging Face tokenizer directory. Every error names the file it is about. */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TokenizerError, type TokenizerJsonFiles } from './api';

export type JsonObject = Record<string, unknown>;

export interface JsonDocument {
  /** Where it came from: a file path, or a label for a tokenizer built in memory. */
  origin: string;
  /** The exact text, so that saving writes back what was loaded. */
  text: string;
  value: JsonObject;
}

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

export function parseJsonDocument(text: string, origin: string): JsonDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new TokenizerError(`${origin}: not valid JSON: ${(e as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TokenizerError(`${origin}: expected a JSON object`);
  return { origin, text, value: value as JsonObject };
}

function readJsonFile(path: string): JsonDocument {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new TokenizerError(code === 'ENOENT' ? `${path}: file not found` : `${path}: cannot read: ${(e as Error).message}`);
  }
  return parseJsonDocument(text, path);
}

export function readTokenizerDir(dir: string): TokenizerDocuments {
  if (!existsSync(dir)) throw new TokenizerError(`${dir}: tokenizer directory not found`);
  if (!statSync(dir).isDirectory()) throw new TokenizerError(`${dir}: not a directory (expected a directory holding ${TOKENIZER_JSON} and ${TOKENIZER_CONFIG})`);
  const docs: TokenizerDocuments = {
    source: dir,
    tokenizerJson: readJsonFile(join(dir, TOKENIZER_JSON)),
    tokenizerConfig: readJsonFile(join(dir, TOKENIZER_CONFIG)),
  };
  const generation = join(dir, GENERATION_CONFIG);
  if (existsSync(generation)) docs.generationConfig = readJsonFile(generation);
  const template = join(dir, CHAT_TEMPLATE_FILE);
  if (existsSync(template)) docs.chatTemplateFile = { origin: template, text: readFileSync(template, 'utf8') };
  return docs;
}

/** Documents for a tokenizer built in memory, serialised once so that `save` writes exactly this text. */
export function documentsFromJson(files: TokenizerJsonFiles, source: string): TokenizerDocuments {
  const text = (value: object): string => `${JSON.stringify(value, null, 2)}\n`;
  return {
    source,
    tokenizerJson: parseJsonDocument(text(files.tokenizerJson), `${source} (${TOKENIZER_JSON})`),
    tokenizerConfig: parseJsonDocument(text(files.tokenizerConfig), `${source} (${TOKENIZER_CONFIG})`),
  };
}

export function writeTokenizerDocuments(dir: string, docs: TokenizerDocuments): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, TOKENIZER_JSON), docs.tokenizerJson.text);
  writeFileSync(join(dir, TOKENIZER_CONFIG), docs.tokenizerConfig.text);
  if (docs.chatTemplateFile) writeFileSync(join(dir, CHAT_TEMPLATE_FILE), docs.chatTemplateFile.text);
}

/** Writes a built tokenizer's two JSON files into a (model) directory. */
export function writeTokenizerFiles(dir: string, files: TokenizerJsonFiles): void {
  writeTokenizerDocuments(dir, documentsFromJson(files, dir));
}
