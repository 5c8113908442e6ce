/**
 * `CheckHost.promptTokens`: the token counts of a task's first prompts under the model's chat template, for the
 * episode-budget checks (TRN321, TRN322). The prompts are the workflow's own, from the builders its `run` uses
 * (frozen-lake.ts, simple.ts, tool-call.ts, distill.ts, as Trinity's workflows build them); the tokenizer is the one beside the model's config.json, loaded once per folder
 * and modification time, each count kept with it. Never throws: a model that is not on this machine, a folder
 * without a tokenizer or a row the workflow cannot read gives undefined (no finding).
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readModelConfigJson } from '../../engine/lm/config-json-cache';
import { loadTokenizer, type ChatMessage, type TextTokenizer } from '../../engine/tokenizer';
import type { PromptFormat, PromptTokensRequest } from '../../config/check/check-context';
import { distillMathMessages } from './distill';
import { frozenLakeTurnPrompts } from './frozen-lake';
import { singleTurnPrompt } from './simple';
import { toolCallMessages } from './tool-call';

/** A prompt: chat messages under the template, or raw text sent through `generate` (math_boxed's `use_base`). */
type Prompt = ChatMessage[] | string;

type TurnPrompts = (
  args: Record<string, unknown>,
  row: Record<string, unknown>,
  turns: number,
  format: PromptFormat,
) => Prompt[];

const singleTurn =
  (workflow: 'simple' | 'math' | 'math_boxed' | 'math_eval'): TurnPrompts =>
  (args, row, _turns, format) => {
    const messages = singleTurnPrompt(workflow, args, row, format);
    return messages ? [messages] : [];
  };

/**
 * The workflows whose prompts are known from `workflow_args`, the taskset's `format` and one task row: those of its
 * first `turns` turns, each earlier answer the shortest the workflow takes (a single-turn workflow has one).
 */
const TURN_PROMPTS: Record<string, TurnPrompts> = {
  frozen_lake_workflow: (args, row, turns) => frozenLakeTurnPrompts(args, row, turns),
  simple_workflow: singleTurn('simple'),
  async_simple_workflow: singleTurn('simple'),
  math_workflow: singleTurn('math'),
  async_math_workflow: singleTurn('math'),
  math_boxed_workflow: singleTurn('math_boxed'),
  async_math_boxed_workflow: singleTurn('math_boxed'),
  math_eval_workflow: singleTurn('math_eval'),
  async_math_eval_workflow: singleTurn('math_eval'),
  // From the row's raw_system, tools and conversations; a row it cannot read throws (no count).
  tool_call_workflow: (_args, row) => [toolCallMessages(row)],
  toolcall_workflow: (_args, row) => [toolCallMessages(row)],
  // The plain one sends simple_workflow's messages (distill.ts onPolicyDistillWorkflow), the math one its own.
  on_policy_distill_workflow: singleTurn('simple'),
  on_policy_distill_math_workflow: (_args, row, _turns, format) => {
    const desc = row[format.promptKey];
    return typeof desc === 'string' ? [distillMathMessages(desc)] : [];
  },
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
  const key = JSON.stringify([req.workflow, req.workflowArgs, req.row, req.turns, req.format], (_, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  if (entry.counts.has(key)) return entry.counts.get(key);
  let n: number[] | undefined;
  try {
    const prompts = build(req.workflowArgs, req.row, req.turns, req.format);
    n =
      prompts.length > 0
        ? prompts.map((p) => (typeof p === 'string' ? textTokens(tokenizer, p) : chatTokens(tokenizer, p)))
        : undefined;
  } catch {
    n = undefined;
  }
  entry.counts.set(key, n);
  if (entry.counts.size > 200) entry.counts.delete(entry.counts.keys().next().value as string);
  return n;
}

/**
 * A chat's tokens as the rollout model renders it (rollout-model.ts `renderChat`): a final assistant message (the
 * reply prefix) is continued, not closed.
 */
function chatTokens(tokenizer: TextTokenizer, messages: readonly ChatMessage[]): number {
  const last = messages[messages.length - 1];
  const prefix = last?.role === 'assistant' ? last.content : '';
  const head = prefix ? messages.slice(0, -1) : messages;
  const text = tokenizer.applyChatTemplate(head, { addGenerationPrompt: true }) + prefix;
  return tokenizer.encode(text, { addSpecialTokens: false }).length;
}

/** A raw prompt's tokens as `generate` encodes it (rollout-model.ts: special tokens added, as vLLM's generate does). */
function textTokens(tokenizer: TextTokenizer, text: string): number {
  return tokenizer.encode(text, { addSpecialTokens: true }).length;
}
