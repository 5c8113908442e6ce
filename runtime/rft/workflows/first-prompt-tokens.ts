/**
 * `CheckHost.firstPromptTokens`: the token count of a task's first prompt under the model's chat template, for the
 * episode-budget check (TRN321). The prompt is the workflow's own (frozen-lake.ts builds it); the tokenizer is the
 * one beside the model's config.json, loaded once per folder and modification time. Never throws: a model that is
 * not on this machine, a folder without a tokenizer or a row the workflow cannot read gives undefined (no finding).
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readModelConfigJson } from '../../engine/lm/config-json-cache';
import { loadTokenizer, type ChatMessage, type TextTokenizer } from '../../engine/tokenizer';
import type { FirstPromptRequest } from '../../config/check/check-context';
import { frozenLakeFirstPrompt } from './frozen-lake';

/** The workflows whose first prompt is known from `workflow_args` and one task row. */
const FIRST_PROMPTS: Record<string, (args: Record<string, unknown>, row: Record<string, unknown>) => ChatMessage[]> = {
  frozen_lake_workflow: frozenLakeFirstPrompt,
};

const tokenizers = new Map<string, { mtimeMs: number; tokenizer: TextTokenizer | undefined }>();

function tokenizerIn(dir: string): TextTokenizer | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(join(dir, 'tokenizer.json')).mtimeMs;
  } catch {
    return undefined;
  }
  const hit = tokenizers.get(dir);
  if (hit && hit.mtimeMs === mtimeMs) return hit.tokenizer;
  let tokenizer: TextTokenizer | undefined;
  try {
    tokenizer = loadTokenizer(dir);
  } catch {
    tokenizer = undefined;
  }
  tokenizers.set(dir, { mtimeMs, tokenizer });
  if (tokenizers.size > 20) tokenizers.delete(tokenizers.keys().next().value as string);
  return tokenizer;
}

export function firstPromptTokens(req: FirstPromptRequest, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const build = FIRST_PROMPTS[req.workflow];
  if (!build) return undefined;
  const config = readModelConfigJson(req.modelPath, req.baseDirs, env);
  const tokenizer = config && 'json' in config ? tokenizerIn(dirname(config.file)) : undefined;
  if (!tokenizer?.hasChatTemplate) return undefined;
  try {
    const text = tokenizer.applyChatTemplate(build(req.workflowArgs, req.row), { addGenerationPrompt: true });
    return tokenizer.encode(text, { addSpecialTokens: false }).length;
  } catch {
    return undefined;
  }
}
