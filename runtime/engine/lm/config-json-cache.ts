/**
 * A model's `config.json`, found as the runtime finds a model (a local directory, or a hub id in the Hugging Face
 * cache: hub.ts) and read once per file and modification time, for callers that ask on every edit (the language
 * server's GPU memory estimate). Never throws.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { resolveModelPath } from './hub';

export type ConfigJsonRead = { file: string; json: unknown } | { file: string; problem: string };

/** How long a model that is not on this machine is remembered as absent before it is looked for again. */
const MISS_TTL_MS = 5000;

const located = new Map<string, { file: string } | { missUntil: number }>();
const parsed = new Map<string, { mtimeMs: number; read: ConfigJsonRead }>();

function locate(modelPath: string, baseDirs: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const candidates = isAbsolute(modelPath) || baseDirs.length === 0 ? [undefined] : baseDirs;
  for (const baseDir of candidates) {
    try {
      return join(resolveModelPath(modelPath, { baseDir, env }), 'config.json');
    } catch {
      // Not here: the next base directory, then the published shapes.
    }
  }
  return undefined;
}

export function readModelConfigJson(
  modelPath: string,
  baseDirs: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): ConfigJsonRead | undefined {
  const key = `${modelPath}\0${baseDirs.join('\0')}`;
  const now = Date.now();
  let hit = located.get(key);
  if (hit && 'missUntil' in hit && hit.missUntil > now) return undefined;
  let file = hit && 'file' in hit ? hit.file : undefined;
  let mtimeMs = file ? statMtime(file) : undefined;
  if (mtimeMs === undefined) {
    file = locate(modelPath, baseDirs, env);
    mtimeMs = file ? statMtime(file) : undefined;
    hit = file && mtimeMs !== undefined ? { file } : { missUntil: now + MISS_TTL_MS };
    located.set(key, hit);
    if (located.size > 500) located.delete(located.keys().next().value as string);
  }
  if (!file || mtimeMs === undefined) return undefined;
  const cached = parsed.get(file);
  if (cached && cached.mtimeMs === mtimeMs) return cached.read;
  let read: ConfigJsonRead;
  try {
    read = { file, json: JSON.parse(readFileSync(file, 'utf8')) };
  } catch (e) {
    read = { file, problem: `cannot read it: ${(e as Error).message}` };
  }
  parsed.set(file, { mtimeMs, read });
  return read;
}

/** Models remembered as absent are looked for again on the next read (files came, or Run wants the disk as it is now). */
export function forgetMissingModels(): void {
  for (const [key, hit] of located) if ('missUntil' in hit) located.delete(key);
}

function statMtime(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
