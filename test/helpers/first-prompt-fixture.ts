/**
 * TRN321's fixture, shared by the CLI's and the language server's tests: a folder holding a model with the byte
 * tokenizer (and its chat template) and a FrozenLake taskset of one row, the first prompt's token count for a row,
 * a FrozenLake config with its `model` lines given, and the check host `trinity-workbench check` gives.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckHost } from '../../runtime/config/check/check-context';
import { readModelConfigJson } from '../../runtime/engine/lm/config-json-cache';
import {
  buildByteTokenizer,
  loadTokenizer,
  writeTokenizerFiles,
  type ChatMessage,
} from '../../runtime/engine/tokenizer';
import { promptTokens } from '../../runtime/rft/workflows/prompt-tokens';
import { frozenLakeFirstPrompt } from '../../runtime/rft/workflows/frozen-lake';

export interface FirstPromptFixture {
  dir: string;
  /** data/train.jsonl */
  dataFile: string;
  /** The first prompt's tokens for a task row, under the model's tokenizer and chat template. */
  tokens(row: Record<string, unknown>): number;
  /**
   * Turn k's prompt tokens for k < `turns` under `workflow_args` `args` (its `agent_max_steps` given), each earlier
   * answer the bare action ```Up``` and each user message the first one with Trinity's turn number and steps remaining
   * (workflow.py @8b7fce3).
   */
  turnTokens(row: Record<string, unknown>, args: { agent_max_steps: number }, turns: number): number[];
}

export function firstPromptFixture(prefix: string, row: Record<string, unknown>, positions = 4096): FirstPromptFixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  mkdirSync(join(dir, 'model'));
  writeFileSync(
    join(dir, 'model', 'config.json'),
    JSON.stringify({ model_type: 'qwen2', max_position_embeddings: positions }),
  );
  writeTokenizerFiles(join(dir, 'model'), buildByteTokenizer());
  mkdirSync(join(dir, 'data'));
  const dataFile = join(dir, 'data', 'train.jsonl');
  writeFileSync(dataFile, JSON.stringify(row) + '\n');
  const tokenizer = loadTokenizer(join(dir, 'model'));
  const tokens = (r: Record<string, unknown>) =>
    tokenizer.encode(tokenizer.applyChatTemplate(frozenLakeFirstPrompt({}, r), { addGenerationPrompt: true }), {
      addSpecialTokens: false,
    }).length;
  const turnTokens = (r: Record<string, unknown>, args: { agent_max_steps: number }, turns: number) => {
    const agentMaxSteps = args.agent_max_steps;
    const [system, user0] = frozenLakeFirstPrompt(args, r);
    const messages: ChatMessage[] = [system];
    const out: number[] = [];
    for (let k = 0; k < turns; k++) {
      if (k > 0) messages.push({ role: 'assistant', content: '```Up```' });
      const content = user0.content
        .replace('Current Observation (0): ', `Current Observation (${k}): `)
        .replace(`remaining is ${agentMaxSteps}.`, `remaining is ${agentMaxSteps - k}.`);
      messages.push({ role: 'user', content });
      const text = tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
      out.push(tokenizer.encode(text, { addSpecialTokens: false }).length);
    }
    return out;
  };
  return { dir, dataFile, tokens, turnTokens };
}

/** An explore config on `model` (the rest of its `model:` lines) and a taskset of the given lines. */
export const budgetConfig = (model: string, taskset: string) => `# trinity-version: main
mode: explore
algorithm:
  algorithm_type: grpo
  repeat_times: 2
model:
  model_path: model
${model}cluster:
  node_num: 1
  gpu_per_node: 1
explorer:
  rollout_model:
    enable_history: true
buffer:
  batch_size: 2
  total_steps: 1
  explorer_input:
    taskset:
${taskset}`;

/**
 * A FrozenLake explore config on `model` and `data/train.jsonl`; `model` is the rest of its `model:` lines, and
 * `workflowArgs` its `workflow_args` where given.
 */
export const frozenLakeBudgetConfig = (model: string, workflowArgs?: Record<string, unknown>) =>
  budgetConfig(
    model,
    `      path: data/train.jsonl
      default_workflow_type: frozen_lake_workflow
${workflowArgs ? `      workflow_args: ${JSON.stringify(workflowArgs)}\n` : ''}`,
  );

/** The check host the CLI's `check` gives, for configs in `dir`. */
export function cliCheckHost(dir: string): CheckHost {
  return {
    baseDirs: [dir],
    env: {},
    exists: existsSync,
    modelConfig: (m, dirs) => readModelConfigJson(m, dirs, {}),
    promptTokens: (req) => promptTokens(req, {}),
  };
}
