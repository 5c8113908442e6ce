/**
 * A config whose GPU memory the editor estimates, shared by the LSP test and the VS Code e2e: Qwen2.5-7B (a published
 * shape), PPO (actor and critic), FSDP2 over 4 trainer GPUs, 16384-token budgets. The actor is over Trinity's 80 % on
 * an H100 and within it on an H200; the critic, without logits, is not over.
 */
export const PPO_7B_CONFIG = `# trinity-version: main
mode: both
algorithm:
  algorithm_type: ppo
  repeat_times: 8
model:
  model_path: Qwen/Qwen2.5-7B-Instruct
  max_model_len: 8192
cluster:
  node_num: 1
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 4
    tensor_parallel_size: 1
buffer:
  batch_size: 4
  explorer_input:
    taskset:
      path: data/gsm8k
trainer:
  save_interval: 100
`;
