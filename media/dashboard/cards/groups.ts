/** Which card goes where: Trinity's metric prefixes as groups; the reward, the loss and eval scores pinned first. */
import { EVAL_SCORE_METRICS } from '../../../client/dashboard/messages';

export const PINNED_GROUP = 'pinned';

/** Trinity's metric prefixes, in the order their groups are shown; others follow alphabetically. */
const GROUP_ORDER = [
  'rollout',
  'eval',
  'critic',
  'actor',
  'response_length',
  'prompt_length',
  'time',
  'timing_s',
  'experience_pipeline',
  'pipeline',
];

/**
 * The reward first (the trainer's score, and the explorer's, which a run logs from its first step on), then the
 * loss: the policy loss of RL, SFT's and DPO's (their data carry no reward).
 */
const PINNED_TAGS = [
  'critic/score/mean',
  'rollout/score/mean',
  'rollout/accuracy/mean',
  'rollout/test_score/mean',
  'rollout/reward/mean',
  'actor/pg_loss',
  'actor/sft_loss',
  'actor/dpo_loss',
];
const EVAL_SCORE = new RegExp(`^eval/.+/(${EVAL_SCORE_METRICS.join('|')})/mean(@\\d+)?$`);

export function isPinned(tag: string): boolean {
  return PINNED_TAGS.includes(tag) || EVAL_SCORE.test(tag);
}

export function groupOf(tag: string): string {
  if (isPinned(tag)) return PINNED_GROUP;
  const i = tag.indexOf('/');
  return i > 0 ? tag.slice(0, i) : 'other';
}

/** Group names in display order: pinned, Trinity's prefixes, the rest alphabetically, `other` last. */
export function compareGroups(a: string, b: string): number {
  const rank = (g: string) =>
    g === PINNED_GROUP
      ? -1
      : g === 'other'
        ? GROUP_ORDER.length + 1
        : GROUP_ORDER.includes(g)
          ? GROUP_ORDER.indexOf(g)
          : GROUP_ORDER.length;
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** Tags within a group: pinned ones in their fixed order, the others alphabetically. */
export function compareTags(a: string, b: string): number {
  const rank = (t: string) => (PINNED_TAGS.includes(t) ? PINNED_TAGS.indexOf(t) : PINNED_TAGS.length);
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** The filter box: a case-insensitive regex, or plain text when it is not a valid one. */
export function tagMatcher(filter: string): (tag: string) => boolean {
  const f = filter.trim();
  if (!f) return () => true;
  try {
    const re = new RegExp(f, 'i');
    return (t) => re.test(t);
  } catch {
    const lower = f.toLowerCase();
    return (t) => t.toLowerCase().includes(lower);
  }
}
