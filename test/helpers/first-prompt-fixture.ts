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
import { buildByteTokenizer, loadTokenizer, writeTokenizerFiles } from '../../runtime/engine/tokenizer';
import { firstPromptTokens } from '../../runtime/rft/workflows/first-prompt-tokens';
import { frozenLakeFirstPrompt } from '../../runtime/rft/workflows/frozen-lake';

export interface FirstPromptFixture {
  dir: string;
  /** data/train.jsonl */
  dataFile: string;
  /** The first prompt's tokens for a task row, under the model's tokenizer and chat template. */
  tokens(row: Record<string, unknown>): number;
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
  return { dir, dataFile, tokens };
}

/** A FrozenLake explore config on `model` and `data/train.jsonl`; `model` is the rest of its `model:` lines. */
export const frozenLakeBudgetConfig = (model: string) => `# trinity-version: main
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
      path: data/train.jsonl
      default_workflow_type: frozen_lake_workflow
`;

/** The check host the CLI's `check` gives, for configs in `dir`. */
export function cliCheckHost(dir: string): CheckHost {
  return {
    baseDirs: [dir],
    env: {},
    exists: existsSync,
    modelConfig: (m, dirs) => readModelConfigJson(m, dirs, {}),
    firstPromptTokens: (req) => firstPromptTokens(req, {}),
  };
}
