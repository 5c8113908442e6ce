/**
 * The JSON files of a Hugging Face model directory (config.json, generation_config.json, the tokenizer's files):
 * read as objects, every error naming the file and thrown as the caller's error class.
 */
import { readFileSync } from 'node:fs';

export type JsonObject = Record<string, unknown>;

export interface JsonDocument {
  /** Where it came from: a file path, or a label for a document built in memory. */
  origin: string;
  /** The exact text, so that saving writes back what was loaded. */
  text: string;
  value: JsonObject;
}

export type ErrorClass = new (message: string) => Error;

export function parseJsonDocument(text: string, origin: string, Err: ErrorClass): JsonDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Err(`${origin}: not valid JSON: ${(e as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Err(`${origin}: expected a JSON object`);
  return { origin, text, value: value as JsonObject };
}

export function readJsonDocument(path: string, Err: ErrorClass): JsonDocument {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Err(code === 'ENOENT' ? `${path}: file not found` : `${path}: cannot read: ${(e as Error).message}`);
  }
  return parseJsonDocument(text, path, Err);
}

/** generation_config.json's `eos_token_id` (one id or a list of them); undefined when absent or null. */
export function generationEosIds(doc: JsonDocument, Err: ErrorClass): number[] | undefined {
  const value = doc.value.eos_token_id;
  if (value === undefined || value === null) return undefined;
  const ids = Array.isArray(value) ? value : [value];
  for (const id of ids) {
    if (!Number.isInteger(id) || (id as number) < 0)
      throw new Err(`${doc.origin}: "eos_token_id" must be a non-negative integer or a list of them`);
  }
  return ids as number[];
}
