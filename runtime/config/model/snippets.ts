/**
 * Whole-section snippets offered when a section is empty (JSON Schema `defaultSnippets`), keyed by section name.
 * Bodies use VS Code snippet syntax (`${1:placeholder}`) inside strings, and must check clean under their release.
 */
import type { Release } from '../releases';

export interface SectionSnippet {
  label: string;
  description: string;
  body: Record<string, unknown>;
  since?: Release;
}

export const SECTION_SNIPPETS: Record<string, SectionSnippet[]> = {
  AlgorithmConfig: [
    {
      label: 'GRPO',
      description: 'Group-relative advantages over repeat_times rollouts per task, PPO-clipped loss, k2 KL loss.',
      body: { algorithm_type: 'grpo', repeat_times: '^${1:8}' },
    },
    {
      label: 'PPO (with critic)',
      description: 'GAE advantages from a value model; needs a critic.',
      body: { algorithm_type: 'ppo', repeat_times: 1 },
    },
    {
      label: 'DPO (train mode)',
      description: 'Direct preference optimisation on chosen/rejected pairs; run with mode: train.',
      body: { algorithm_type: 'dpo', kl_loss_fn: 'k2', kl_loss_fn_args: { kl_coef: 0.1 } },
    },
    {
      label: 'SFT',
      description: 'Supervised fine-tuning on an SFT dataset; run with mode: train.',
      body: { algorithm_type: 'sft' },
    },
  ],
  ModelConfig: [
    {
      label: 'model from env',
      description: 'Model path from $TRINITY_MODEL_PATH with a fallback, and the token budget.',
      body: {
        model_path: '^${oc.env:TRINITY_MODEL_PATH,${1:Qwen/Qwen2.5-1.5B-Instruct}}',
        max_prompt_tokens: '^${2:1024}',
        max_response_tokens: '^${3:2048}',
      },
    },
  ],
  ClusterConfig: [
    { label: 'one node, 8 GPUs', description: 'A single 8-GPU node.', body: { node_num: 1, gpu_per_node: 8 } },
  ],
  BufferConfig: [
    {
      label: 'taskset from a local file',
      description: 'Batch size, epochs and a jsonl taskset with its question/answer keys.',
      body: {
        total_epochs: 1,
        batch_size: '^${1:32}',
        explorer_input: {
          taskset: {
            name: '${2:gsm8k}',
            storage_type: 'file',
            path: '${3:data/gsm8k}',
            split: 'train',
            format: { prompt_key: '${4:question}', response_key: '${5:answer}' },
            rollout_args: { temperature: 1.0 },
          },
          default_workflow_type: 'math_workflow',
        },
      },
    },
  ],
  ExplorerConfig: [
    {
      label: 'vLLM rollout engines',
      description: 'Rollout engines, runners and evaluation cadence.',
      body: {
        eval_interval: '^${1:50}',
        runner_per_model: 8,
        rollout_model: { engine_num: '^${2:2}', tensor_parallel_size: 1 },
      },
    },
  ],
  SynchronizerConfig: [
    {
      label: 'synchronous (on-policy)',
      description: 'Explorer waits for the trainer after every step.',
      body: { sync_method: 'nccl', sync_interval: 1, sync_timeout: 1200 },
    },
    {
      label: 'one-step off-policy',
      description: 'Explorer runs one batch ahead of the trainer.',
      body: { sync_method: 'nccl', sync_interval: 1, sync_offset: 1, sync_timeout: 1200 },
    },
  ],
  TrainerConfig: [
    {
      label: 'save every N steps',
      description: 'Checkpoint cadence and gradient clipping.',
      body: { save_interval: '^${1:100}', grad_clip: 1.0 },
      since: 'v0.3.2',
    },
  ],
  MonitorConfig: [
    {
      label: 'tensorboard',
      description: 'Log metrics to TensorBoard under the job directory.',
      body: { monitor_type: 'tensorboard' },
    },
    { label: 'wandb', description: 'Log metrics to Weights & Biases.', body: { monitor_type: 'wandb' } },
  ],
};
