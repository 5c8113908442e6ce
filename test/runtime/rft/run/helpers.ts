/** A tiny job on disk for runtime tests: a char-level model, an addition taskset and SFT data, and a config. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveInitialModel } from '../../../../runtime/engine/lm/checkpoint';
import { newModelConfigJson, parseModelConfig } from '../../../../runtime/engine/lm/config';
import { buildCharTokenizer, tokenizerFromJson } from '../../../../runtime/engine/tokenizer';

export const ALPHABET = '0123456789+{}\\ \nabcdefghijklmnopqrstuvwxyz';

export interface TinyJob {
  dir: string;
  modelDir: string;
  write(name: string, yaml: string): string;
}

/**
 * Saves a tiny char-level model (the tiny job's architecture) to `dir`. `sharpness` scales the final norm's weight:
 * the logits scale with it, so a model of sharpness 10 has peaked next-token distributions where a fresh one's are
 * nearly uniform (a teacher worth distilling from).
 */
export function saveTinyModel(
  dir: string,
  seed: number,
  opts: { sharpness?: number; maxPositions?: number; layers?: number; hidden?: number } = {},
): void {
  const sharpness = opts.sharpness ?? 1;
  const tokenizer = tokenizerFromJson(buildCharTokenizer(ALPHABET));
  const cfg = parseModelConfig(
    newModelConfigJson({
      family: 'qwen2',
      layers: opts.layers ?? 1,
      hidden: opts.hidden ?? 32,
      heads: 4,
      kvHeads: 2,
      vocabSize: tokenizer.vocabSize,
      maxPositions: opts.maxPositions ?? 64,
      eosTokenIds: [...tokenizer.eosTokenIds],
    }),
  );
  const set = sharpness !== 1 ? { 'model.norm.weight': new Float32Array(cfg.hidden).fill(sharpness) } : undefined;
  saveInitialModel(cfg, seed, dir, { tokenizer, set });
}

/** A tiny job in a fresh folder under `parent` (the system's temp folder by default). */
export function tinyJob(seed = 1, parent = tmpdir()): TinyJob {
  const dir = mkdtempSync(join(parent, 'twb-run-'));
  const modelDir = join(dir, 'model');
  saveTinyModel(modelDir, seed);
  mkdirSync(join(dir, 'data'));
  const problems: { question: string; answer: string }[] = [];
  for (let a = 0; a < 10; a++)
    for (let b = 0; b < 10; b += 3) problems.push({ question: `${a}+${b}`, answer: String(a + b) });
  const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  writeFileSync(join(dir, 'data', 'train.jsonl'), lines(problems));
  writeFileSync(join(dir, 'data', 'eval.jsonl'), lines(problems.slice(0, 8)));
  writeFileSync(
    join(dir, 'data', 'sft.jsonl'),
    lines(problems.map((p) => ({ question: p.question, answer: `\\boxed{${p.answer}}` }))),
  );
  return {
    dir,
    modelDir,
    write(name, yaml) {
      const p = join(dir, name);
      writeFileSync(p, yaml);
      return p;
    },
  };
}

export const GRPO_STAGE = `
    mode: both
    algorithm:
      algorithm_type: grpo
      repeat_times: 4
      optimizer:
        lr: 1e-3
    buffer:
      batch_size: 4
      total_steps: 4
      explorer_input:
        taskset:
          name: sums
          storage_type: file
          path: data/train.jsonl
          format: {prompt_key: question, response_key: answer}
        eval_tasksets:
          - name: sums-eval
            storage_type: file
            path: data/eval.jsonl
            format: {prompt_key: question, response_key: answer}
            rollout_args: {temperature: 0.0}
        default_workflow_type: simple_workflow
        default_reward_fn_type: math_boxed_reward
    explorer:
      eval_on_startup: true
      eval_interval: 2
    trainer:
      save_interval: 2
`;

/** An SFT stage on the tiny job's demonstrations (data/sft.jsonl), as a `stages:` list item named `name`. */
export function sftStage(name: string, o: { steps: number; batch: number; saveInterval: number }): string {
  return `
  - stage_name: ${name}
    mode: train
    algorithm:
      algorithm_type: sft
      optimizer: {lr: 3e-3}
    buffer:
      total_steps: ${o.steps}
      train_batch_size: ${o.batch}
      trainer_input:
        experience_buffer:
          name: demos
          storage_type: file
          path: data/sft.jsonl
          format: {prompt_type: plaintext, prompt_key: question, response_key: answer}
    trainer:
      save_interval: ${o.saveInterval}
`;
}

export function header(job: TinyJob, name: string): string {
  return `# trinity-version: main
project: tests
name: ${name}
checkpoint_root_dir: ${job.dir}/checkpoints
model:
  model_path: model
  max_prompt_tokens: 48
  max_response_tokens: 8
  max_model_len: 64
cluster:
  node_num: 1
  gpu_per_node: 2
`;
}

/** Re-indents a stage body written for `stages:` (4 spaces) to the top level. */
export function topLevel(stage: string): string {
  return stage
    .split('\n')
    .map((l) => l.replace(/^ {4}/, ''))
    .join('\n');
}

/** `<name>.yaml` in the job: the GRPO stage at the top level for `steps` steps, evaluated only on startup. */
export function grpoConfig(job: TinyJob, name: string, steps: number): string {
  return job.write(
    `${name}.yaml`,
    header(job, name) +
      topLevel(GRPO_STAGE)
        .replace('total_steps: 4', `total_steps: ${steps}`)
        .replace('eval_interval: 2', 'eval_interval: 100'),
  );
}

const reEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a run writes on its disk, each of which a full disk may fail first. */
export const RUN_WRITES = [
  'checkpoint write',
  'metrics append',
  'rollouts append',
  'TensorBoard append',
  'buffer append',
  'state write',
] as const;

/**
 * A run's error for a full disk: `<operation> failed: <file>: <the system's words> (<code>)`, with one of
 * `operations` (`checkpoint write` stands for `checkpoint write (global_step_<N>)`), then what to do and how to
 * resume `config`.
 */
export function fullDiskError(operations: readonly string[], config: string): RegExp {
  const operation = (o: string): string =>
    o === 'checkpoint write' ? 'checkpoint write \\(global_step_\\d+\\)' : reEscape(o);
  return new RegExp(
    `^(${operations.map(operation).join('|')}) failed: /\\S+: ` +
      '(no space left on device \\(ENOSPC\\)|database or disk is full \\(SQLITE_FULL\\))\\. ' +
      reEscape(
        'The disk is full: free space on it, then resume the run (Resume in the editor, or ' +
          `\`trinity-workbench run --continue-from-checkpoint --config ${config}\`): it continues from its last ` +
          'checkpoint; every checkpoint and buffer row written before the failure is intact.',
      ) +
      '$',
  );
}
