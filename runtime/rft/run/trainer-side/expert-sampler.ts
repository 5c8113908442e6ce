/** Trinity's MixSampleStrategy for `both` mode: expert rows from `trainer_input.auxiliary_buffers[sft_dataset_name]`, cycled. */
import type { TextTokenizer } from '../../../engine/tokenizer';
import { BatchReader } from '../../data/reader';
import { readTrainData } from '../../data/train-data';
import type { Experience } from '../../experience';
import type { StageContext } from '../stage/stage-context';

export interface ExpertSampler {
  /** Expert rows in each trainer batch: ceil(expert_data_ratio · train_batch_size). */
  batchSize: number;
  /** The next batch of expert rows (as SFT experiences: no reward, zero log-probs and advantages). */
  next(): Experience[];
  /** Rows served so far (what a checkpoint records). */
  offset(): number;
}

export async function expertSampler(
  ctx: StageContext,
  args: Record<string, unknown>,
  tokenizer: TextTokenizer,
  offset: number,
): Promise<ExpertSampler> {
  const ratio = typeof args.expert_data_ratio === 'number' ? args.expert_data_ratio : 0.5;
  const name = typeof args.sft_dataset_name === 'string' ? args.sft_dataset_name : 'sft_dataset';
  const source = ctx.cfg.buffer.trainer_input.auxiliary_buffers?.[name];
  if (!source)
    throw new Error(`sample_strategy mix needs buffer.trainer_input.auxiliary_buffers.${name} (the expert SFT data)`);
  const data = await readTrainData(
    { ...source, schema_type: 'sft' },
    { baseDir: ctx.configDir, tokenizer, maxLength: ctx.cfg.model.max_model_len },
  );
  const batchSize = Math.ceil(ratio * ctx.cfg.buffer.train_batch_size);
  const reader = new BatchReader(data.experiences, { batchSize, totalEpochs: Number.MAX_SAFE_INTEGER, offset, name });
  return {
    batchSize,
    offset: () => reader.currentOffset,
    next: () =>
      (reader.next()?.items ?? []).map((e) => {
        const n = e.tokens.length - e.promptLength;
        return {
          ...e,
          reward: 0,
          logprobs: new Array<number>(n).fill(0),
          advantages: new Array<number>(n).fill(0),
          isExpert: true,
        };
      }),
  };
}
