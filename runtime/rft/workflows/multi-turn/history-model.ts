/**
 * The rollout model with Trinity's history recording (`explorer.rollout_model.enable_history`,
 * trinity/common/models/model.py @09c5b9c `ModelWrapper`): every chat/generate call's experiences are kept, and
 * `extractExperienceFromHistory()` hands them over and clears the record. Each is an ordinary single-call
 * experience: the whole rendered history as its prompt, the response sampled after it (mask all 1). Step-wise
 * workflows (step-wise.ts) turn a step's calls into that step's experiences. Each recorded experience also keeps
 * the messages it answered, with the answer, for the rollout records.
 */
import type { ChatMessage } from '../../../engine/tokenizer';
import type { Experience } from '../../experience';
import type { RolloutArgs, RolloutModel } from '../../models/rollout-model';

export class HistoryModel {
  private history: Experience[] = [];

  constructor(readonly model: RolloutModel) {}

  /** `chat`: n responses to the messages, recorded. */
  async chat(messages: readonly ChatMessage[], args: RolloutArgs = {}): Promise<Experience[]> {
    const exps = await this.model.chat(messages, args);
    for (const e of exps)
      e.messages = [...messages.map((m) => ({ ...m })), { role: 'assistant', content: e.responseText ?? '' }];
    this.history.push(...exps);
    return exps;
  }

  /** `generate`: n responses to each raw prompt, recorded. */
  async generate(prompts: readonly string[], args: RolloutArgs = {}): Promise<Experience[]> {
    const exps = await this.model.generate(prompts, args);
    this.history.push(...exps);
    return exps;
  }

  /** The experiences recorded since the last extraction, in call order; the record is cleared unless asked not to. */
  extractExperienceFromHistory(clear = true): Experience[] {
    const out = [...this.history];
    if (clear) this.history = [];
    return out;
  }
}
