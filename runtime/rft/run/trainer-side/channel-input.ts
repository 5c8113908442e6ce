/**
 * Both mode's trainer input: the experiences the explorer hands over through the channel (exchange/), with the mix
 * sample strategy's expert rows filling each batch up to `train_batch_size`, and staleness control's lowest model
 * version (sample-strategy.ts) passing older ones over.
 */
import type { ExperienceChannel } from '../exchange/experience-channel';
import type { StageContext } from '../stage/stage-context';
import type { ExpertSampler } from './expert-sampler';
import type { TrainerInput } from './train-loop';

export function channelInput(
  ctx: StageContext,
  channel: ExperienceChannel,
  expert: ExpertSampler | undefined,
  /** The trainer steps the taskset implies (where a replaying queue's trainer stops). */
  totalSteps: number,
  /** What computes beside the training steps: the explorer's worker thread, or nothing. */
  beside: TrainerInput['beside'],
  /** Staleness control: the lowest model version a trainer step (1-based) reads. */
  minVersion?: (step: number) => number,
): TrainerInput {
  const { cfg } = ctx;
  // Experiences the channel gives each step; the mix sample strategy fills the rest with expert (SFT) samples.
  const fromChannel = cfg.buffer.train_batch_size - (expert?.batchSize ?? 0);
  return {
    beside,
    // A replay queue can serve experiences again and again: its trainer stops at the steps the taskset implies.
    stepLimit: cfg.trainer.total_steps ?? (channel.replays ? totalSteps : Number.MAX_SAFE_INTEGER),
    syncInterval: 0,
    next: async (trainer) => {
      const min = minVersion?.(trainer.step() + 1);
      const batch = await channel.take(fromChannel, min ? min : undefined);
      if (batch && expert) batch.push(...expert.next());
      return batch;
    },
    position: () => ({ ...channel.position(), ...(expert ? { expertOffset: expert.offset() } : {}) }),
    saveInto: (dir) => channel.saveInto(dir),
  };
}
