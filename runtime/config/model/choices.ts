/** Closed sets of plain-string values that Trinity checks in code (not Python enums). */
import { choices } from './dsl';

export const MODES = choices(
  ['both', 'Explorer and trainer run together; weights sync between them.'],
  ['explore', 'Only the explorer runs: rollouts are written to the experience buffer.'],
  ['train', 'Only the trainer runs, reading the experience buffer (SFT, DPO, offline RL, or async RL).'],
  ['bench', 'Evaluate the model (and each saved checkpoint) on the eval tasksets.'],
  ['serve', 'Serve the rollout model behind an OpenAI-compatible API and record experiences.'],
  [
    'colocate',
    'Explorer and trainer share a single GPU (chosen automatically on a 1-GPU machine).',
    { since: 'v0.5.0' },
  ],
);

/** The roles a mode launches: the explorer (rollouts, evaluation, serving) and the trainer. */
export function rolesOf(mode: string): { explorer: boolean; trainer: boolean } {
  return {
    explorer: ['both', 'explore', 'bench', 'serve', 'colocate'].includes(mode),
    trainer: ['both', 'train', 'colocate'].includes(mode),
  };
}

export const STORAGE_TYPES = choices(
  ['file', 'A local file or directory, or a Hugging Face dataset.'],
  ['queue', 'An in-memory queue shared by explorer and trainer; optionally persisted to `path`.'],
  ['sql', 'A SQL database table (`path` is a URL such as `sqlite:///buffer.db`).'],
);

export const SAVE_HF_CHECKPOINT = choices(
  ['last', 'Write a Hugging Face checkpoint only at the end of training.'],
  ['always', 'Write a Hugging Face checkpoint at every save.'],
  ['never', 'Never write Hugging Face checkpoints.'],
);

export const CONCURRENT_MODES = choices(
  ['sequential', 'Each runner handles one task at a time.'],
  ['asynchronous', 'Runners handle several tasks concurrently with asyncio.'],
  ['multi-threading', 'Runners handle several tasks concurrently in threads.'],
);

export const TRAINER_STRATEGIES = choices(
  ['fsdp', 'PyTorch FSDP (v1).'],
  ['fsdp2', 'PyTorch FSDP2.'],
  ['megatron', 'Megatron-LM parallelism.'],
);

export const TRAINER_TYPES = choices(
  ['verl', 'veRL trainer (FSDP or Megatron).'],
  ['tinker', 'Train through the Tinker service.', { since: 'v0.4.0' }],
);

export const LOSS_AGG_MODES = choices(
  ['token-mean', 'Average the loss over all response tokens in the batch.'],
  ['seq-mean-token-sum', 'Sum over tokens per sequence, then average over sequences.'],
  ['seq-mean-token-mean', 'Average over tokens per sequence, then over sequences.'],
  ['seq-mean-token-sum-norm', 'Sum over tokens per sequence, normalised by the maximum length, then averaged.'],
);

export const LOG_LEVELS = choices(
  ['DEBUG', 'Everything, including debugging output.'],
  ['INFO', 'Progress and informational messages.'],
  ['WARNING', 'Only warnings and errors.'],
  ['ERROR', 'Only errors.'],
);

export const SCHEMA_TYPES = choices(
  ['experience', 'RL experiences (tokens, log-probs, rewards).'],
  ['sft', 'Supervised fine-tuning samples.'],
  ['dpo', 'Preference pairs (chosen / rejected).'],
);
