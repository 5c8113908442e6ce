/**
 * How a step's agent episodes ended, counted from its rollout records (monitor/rollouts.jsonl, which records a
 * sample of each step's episodes, whole GRPO groups at a time). Pure. An episode is the records of one task and run
 * (`task`, `run`): one for a concatenated episode, one per model call for a step-wise one, ended by its last `step`.
 */
export interface EpisodeTally {
  /** The explorer step. */
  step: number;
  /** Recorded episodes. */
  episodes: number;
  /** Of them, the ones whose last model turn gave an invalid action (the record's `invalidActions`). */
  endedInvalid: number;
}

type RolloutRecord = Record<string, unknown>;

const assistantTurns = (r: RolloutRecord) =>
  Array.isArray(r.messages) ? r.messages.filter((m) => (m as { role?: unknown })?.role === 'assistant').length : 0;

/** Whether a record's last model turn is among its invalid actions. */
function endsInvalid(r: RolloutRecord): boolean {
  const turns = assistantTurns(r);
  return turns > 0 && Array.isArray(r.invalidActions) && r.invalidActions.includes(turns - 1);
}

/**
 * A step's tally; undefined when no record says which actions were invalid (single-turn records, a workflow that
 * does not parse actions, or a runtime that did not record them).
 */
export function tallyEpisodes(step: number, records: readonly RolloutRecord[]): EpisodeTally | undefined {
  const last = new Map<string, RolloutRecord>();
  records.forEach((r, i) => {
    if (!Array.isArray(r.messages) || !Array.isArray(r.invalidActions)) return;
    const key = typeof r.task === 'string' && typeof r.run === 'number' ? `${r.task}/${r.run}` : `#${i}`;
    const before = last.get(key);
    if (!before || Number(r.step ?? 0) >= Number(before.step ?? 0)) last.set(key, r);
  });
  if (!last.size) return undefined;
  const episodes = [...last.values()];
  return { step, episodes: episodes.length, endedInvalid: episodes.filter(endsInvalid).length };
}
