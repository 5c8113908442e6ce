/** Train mode's input from an SFT or DPO file (`buffer.trainer_input.experience_buffer` with `storage_type: file`). */
import type { ExperienceBufferConfig } from '../../../config/types.generated';
import type { TextTokenizer } from '../../../engine/tokenizer';
import { BatchReader } from '../../data/reader';
import { readTrainData } from '../../data/train-data';
import type { StageContext } from '../stage/stage-context';
import type { TrainerInput } from './train-loop';

/** Whether train mode reads `source` as a file of SFT or DPO samples (else as a buffer an explorer fills). */
export function isTrainFile(source: ExperienceBufferConfig): boolean {
  return source.storage_type === 'file' && (source.schema_type === 'sft' || source.schema_type === 'dpo');
}

/** The file's samples, tokenized, in batches of `train_batch_size` from `readerOffset`, for its epochs or steps. */
export async function fileInput(
  ctx: StageContext,
  source: ExperienceBufferConfig,
  tokenizer: TextTokenizer,
  readerOffset: number,
): Promise<TrainerInput & { totalSteps: number }> {
  const { cfg } = ctx;
  const trainBatch = cfg.buffer.train_batch_size;
  const data = await readTrainData(source, { baseDir: ctx.configDir, tokenizer, maxLength: cfg.model.max_model_len });
  for (const w of data.warnings) ctx.log('warning', w);
  if (data.truncated)
    ctx.log('warning', `${data.truncated} samples of ${source.name} were longer than max_model_len and were truncated`);
  const reader = new BatchReader(data.experiences, {
    batchSize: trainBatch,
    totalEpochs: source.total_epochs,
    totalSteps: source.total_steps ?? cfg.buffer.total_steps,
    offset: readerOffset,
    name: source.name,
  });
  return {
    totalSteps: cfg.trainer.total_steps ?? Math.floor(reader.totalSamples / trainBatch),
    stepLimit: cfg.trainer.total_steps || Number.MAX_SAFE_INTEGER,
    syncInterval: 0,
    beside: 'nothing',
    next: async () => reader.next()?.items ?? null,
    position: () => ({ readerOffset: reader.currentOffset }),
  };
}
