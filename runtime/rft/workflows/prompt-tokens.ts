/**
 * `CheckHost.promptTokens`: the token counts of a task's first prompts under the model's chat template, for the
 * episode-budget checks (TRN321, TRN322). The prompts are the workflow's own (frozen-lake.ts builds them); the
 * tokenizer is the one beside the model's config.json, loaded once per folder and modification time, each count kept
 * with it. Never throws: a model that is not on this machine, a folder without a tokenizer or a row the workflow
 * cannot read gives undefined (no finding).
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readModelConfigJson } from '../../engine/lm/config-json-cache';
import { loadTokenizer, type ChatMessage, type TextTokenizer } from '../../engine/tokenizer';
import type { PromptTokensRequest } from '../../config/check/check-context';
import { frozenLakeTurnPrompts } from './frozen-lake';

/**
 * The workflows whose prompts are known from `workflow_args` and one task row: those of its first `turns` turns, each
 * earlier answer the shortest the workflow takes.
 */
const TURN_PROMPTS: Record<
  string,
  (args: Record<string, unknown>, row: Record<string, unknown>, turns: number) => ChatMessage[][]
> = {
  frozen_lake_workflow: frozenLakeTurnPrompts,
};

/**
 * A folder's tokenizer and the prompts counted with it, both kept while tokenizer.json keeps its modification time:
 * the language server asks again after every edit of the config, and loads the tokenizer only when its file changes.
 */
interface TokenizerEntry {
  mtimeMs: number;
  tokenizer: TextTokenizer | undefined;
  counts: Map<string, number[] | undefined>;
}

const tokenizers = new Map<string, TokenizerEntry>();

function tokenizerIn(dir: string): TokenizerEntry | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(join(dir, 'tokenizer.json')).mtimeMs;
  } catch {
    return undefined;
  }
  const hit = tokenizers.get(dir);
  if (hit && hit.mtimeMs === mtimeMs) return hit;
  let tokenizer: TextTokenizer | undefined;
  try {
    tokenizer = loadTokenizer(dir);
  } catch {
    tokenizer = undefined;
  }
  const entry = { mtimeMs, tokenizer, counts: new Map<string, number[] | undefined>() };
  tokenizers.set(dir, entry);
  if (tokenizers.size > 20) tokenizers.delete(tokenizers.keys().next().value as string);
  return entry;
}

/** Turn k's prompt tokens for each k below `req.turns` (fewer where the workflow has fewer turns). */
export function promptTokens(req: PromptTokensRequest, env: NodeJS.ProcessEnv = process.env): number[] | undefined {
  const build = TURN_PROMPTS[req.workflow];
  if (!build) return undefined;
  const config = readModelConfigJson(req.modelPath, req.baseDirs, env);
  const entry = config && 'json' in config ? tokenizerIn(dirname(config.file)) : undefined;
  const tokenizer = entry?.tokenizer;
  if (!entry || !tokenizer?.hasChatTemplate) return undefined;
  const key = JSON.stringify([req.workflow, req.workflowArgs, req.row, req.turns], (_, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  if (entry.counts.has(key)) return entry.counts.get(key);
  let n: number[] | undefined;
  try {
    n = build(req.workflowArgs, req.row, req.turns).map(
      (messages) =>
        tokenizer.encode(tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }), {
          addSpecialTokens: false,
        }).length,
    );
  } catch {
    n = undefined;
  }
  entry.counts.set(key, n);
  if (entry.counts.size > 200) entry.counts.delete(entry.counts.keys().next().value as string);
  return n;
}
