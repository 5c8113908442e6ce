/**
 * The rollout records a step reports (the `rollouts` event, monitor/rollouts.jsonl): an experience as a record, and
 * which experiences of a step are recorded.
 */
import type { RolloutSample } from '../../protocol';
import { experienceUid, groupByTask, taskGroupId, type Experience } from '../experience';

/** What a rollout record adds to an experience: token texts need the tokenizer, the advantage the pipeline's output. */
export interface RolloutSampleExtras {
  decode?: (ids: readonly number[]) => string;
  /** The advantage the pipeline gave each experience, by uid. */
  advantages?: ReadonlyMap<string, number>;
}

/**
 * A rollout record: prompt, response and reward; an episode's conversation, per-turn rewards, mask and what a
 * transcript viewer needs besides (group, outcome numbers, token texts, advantage), all optional.
 */
export function rolloutSample(e: Experience, extras: RolloutSampleExtras = {}): RolloutSample {
  const s: RolloutSample = { prompt: e.promptText ?? '', response: e.responseText ?? '', reward: e.reward ?? 0 };
  if (!e.messages) return s;
  s.messages = e.messages;
  s.run = e.eid.run;
  s.step = e.eid.step;
  s.task = taskGroupId(e.eid);
  if (e.turnRewards) s.turnRewards = e.turnRewards;
  if (e.invalidActions) s.invalidActions = e.invalidActions;
  // An experience without a mask (a step-wise step: its answer after the whole history) trains every response
  // token, as the trainer's batch does (trainer/batch.ts).
  s.responseTokens = e.tokens.slice(e.promptLength);
  s.actionMask = e.actionMask ?? s.responseTokens.map(() => 1);
  const decode = extras.decode;
  if (decode) s.tokenTexts = s.responseTokens.map((id) => decode([id]));
  if (e.metrics && Object.keys(e.metrics).length) s.metrics = { ...e.metrics };
  if (e.truncated) s.truncated = true;
  const advantage = extras.advantages?.get(experienceUid(e.eid));
  if (advantage !== undefined && Number.isFinite(advantage)) s.advantage = advantage;
  return s;
}

/** Each experience's advantage as one number: its value on the first trained token (GRPO broadcasts one per experience). */
export function advantagesByUid(exps: readonly Experience[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of exps) {
    if (!e.advantages?.length) continue;
    const first = e.actionMask ? e.actionMask.indexOf(1) : 0;
    out.set(experienceUid(e.eid), e.advantages[Math.max(0, first)]);
  }
  return out;
}

/**
 * Up to `n` records spread over the step. Multi-turn episodes are taken a whole task group at a time (at least one
 * group), so that a viewer can set the `repeat_times` episodes of a task side by side.
 */
export function sampleRollouts(exps: readonly Experience[], n: number, extras: RolloutSampleExtras): RolloutSample[] {
  if (n <= 0 || exps.length === 0) return [];
  if (exps.some((e) => e.messages)) {
    const groups = [...groupByTask(exps).values()];
    const wanted = Math.max(1, Math.round((n * groups.length) / exps.length));
    const stride = Math.max(1, Math.floor(groups.length / wanted));
    const out: RolloutSample[] = [];
    for (let i = 0; i < groups.length && out.length < n; i += stride)
      out.push(...groups[i].map((e) => rolloutSample(e, extras)));
    return out;
  }
  const stride = Math.max(1, Math.floor(exps.length / n));
  const out: RolloutSample[] = [];
  for (let i = 0; i < exps.length && out.length < n; i += stride) {
    const e = exps[i];
    out.push(rolloutSample(e, extras));
  }
  return out;
}
