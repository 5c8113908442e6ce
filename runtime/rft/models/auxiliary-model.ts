/**
 * An entry of `explorer.auxiliary_models` as workflows receive it (Trinity's `auxiliary_models` ModelWrappers, in
 * config order): a model of its own that can chat, generate and score sequences (`logprobs`), e.g. the teacher of
 * on-policy distillation. It owns its weights; the explorer disposes it when it closes.
 */
import type { Pretrained } from '../../engine/pretrained';
import { RolloutModel, type RolloutLimits } from './rollout-model';

export class AuxiliaryModel extends RolloutModel {
  constructor(
    /** `name`, else the position in `auxiliary_models` (Trinity's key for the model). */
    readonly name: string,
    readonly pretrained: Pretrained,
    limits: RolloutLimits,
    seed: number,
    stopTokenIds: readonly number[],
  ) {
    super(pretrained.model, pretrained.tokenizer, limits, seed, stopTokenIds);
  }

  dispose(): void {
    this.pretrained.model.dispose();
  }
}
