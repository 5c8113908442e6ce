/**
 * A step's multi-turn rollout records as episodes: a concatenated episode is one record; a step-wise run (one record
 * per step, `eid.step`) is grouped back into one episode by its group and run. Each episode gets its turns, the
 * reward of each model turn, its token segments (trained or not) and an outcome. Pure of the DOM.
 */
import type { EpisodeRecord, EpisodeRole, RolloutSampleMessage } from '../../../client/dashboard/messages';

/**
 * How an episode ended: at the goal (`env_done` with a positive reward), failed (done without it: FrozenLake's hole),
 * truncated (its token budget or the model's context, `response_truncated`), or stopped at the turn limit (not done).
 * Without an `env_done` metric a positive reward counts as the goal.
 */
export type Outcome = 'goal' | 'failed' | 'truncated' | 'stopped';

export const OUTCOME_LABELS: Readonly<Record<Outcome, string>> = {
  goal: 'reached goal',
  failed: 'failed',
  truncated: 'truncated',
  stopped: 'stopped at turn limit',
};

/**
 * The start of the hint FrozenLake's environment message carries after a move that left the grid unchanged
 * (trinity/common/workflows/envs/frozen_lake/workflow.py @8b7fce3, `run_async`): the model turn before it was invalid.
 */
const INVALID_HINTS: readonly string[] = ['Your last response is invalid.'];

export interface Turn {
  role: EpisodeRole;
  content: string;
  /** For a step-wise episode: the step whose record the message first appears in. */
  step?: number;
  /** Model turns: their index among the model turns, the environment's reward, whether its action was invalid. */
  action?: number;
  reward?: number;
  invalid?: boolean;
}

export interface TokenSegment {
  /** The step of a step-wise episode's record (each step is trained as its own experience). */
  step?: number;
  ids: number[];
  mask: number[];
  texts?: string[];
}

export interface Episode {
  /** Unique within the step: `group#run`. */
  key: string;
  group: string;
  run: number;
  stepWise: boolean;
  reward: number | null;
  /** The advantage of the episode's experiences (step-wise: of its first step, GRPO gives every step the same). */
  advantage?: number;
  outcome: Outcome;
  envSteps?: number;
  turns: Turn[];
  modelTurns: number;
  invalidActions: number;
  tokens: TokenSegment[];
}

/** The step's records that carry an episode, as episodes in record order (step-wise runs where their first step is). */
export function episodesOf(samples: readonly RolloutSampleMessage[]): Episode[] {
  const runs = new Map<string, { reward: number | null; e: EpisodeRecord }[]>();
  samples.forEach((s, i) => {
    if (!s.episode) return;
    const e = s.episode;
    // A record without its group or run is an episode of its own.
    const key = e.task !== undefined && e.run !== undefined ? `${e.task}#${e.run}` : `record ${i}`;
    runs.set(key, [...(runs.get(key) ?? []), { reward: s.reward, e }]);
  });
  return [...runs].map(([key, records]) => episodeOf(key, records));
}

function episodeOf(key: string, records: { reward: number | null; e: EpisodeRecord }[]): Episode {
  const steps = [...records].sort((a, b) => (a.e.step ?? 0) - (b.e.step ?? 0));
  const stepWise = steps.length > 1;
  const first = steps[0].e;
  const turns = stepWise ? stepWiseTurns(steps) : concatenatedTurns(first);
  markInvalid(turns, stepWise ? undefined : first.invalidActions);
  const metrics = steps[steps.length - 1].e.metrics ?? {};
  const rewards = steps.map((s) => s.reward);
  const reward = rewards.includes(null) ? null : (rewards as number[]).reduce((a, b) => a + b, 0);
  const truncated = steps.some((s) => s.e.truncated);
  return {
    key,
    group: first.task ?? key,
    run: first.run ?? 0,
    stepWise,
    reward,
    ...(first.advantage !== undefined ? { advantage: first.advantage } : {}),
    outcome: outcomeOf(reward, metrics, truncated),
    ...(metrics.env_steps !== undefined ? { envSteps: metrics.env_steps } : {}),
    turns,
    modelTurns: turns.filter((t) => t.role === 'assistant').length,
    invalidActions: turns.filter((t) => t.invalid).length,
    tokens: steps.flatMap(({ e }) =>
      e.responseTokens && e.actionMask
        ? [
            {
              ...(stepWise ? { step: e.step ?? 0 } : {}),
              ids: e.responseTokens,
              mask: e.actionMask,
              ...(e.tokenTexts ? { texts: e.tokenTexts } : {}),
            },
          ]
        : [],
    ),
  };
}

function outcomeOf(reward: number | null, metrics: Record<string, number>, truncated: boolean): Outcome {
  if (truncated) return 'truncated';
  const positive = reward !== null && reward > 0;
  if (metrics.env_done === undefined) return positive ? 'goal' : 'failed';
  if (metrics.env_done < 1) return 'stopped';
  return positive ? 'goal' : 'failed';
}

/** A concatenated episode: its messages; the i-th model turn gets the i-th turn reward. */
function concatenatedTurns(e: EpisodeRecord): Turn[] {
  let action = 0;
  return e.messages.map((m) => {
    if (m.role !== 'assistant') return { role: m.role, content: m.content };
    const i = action++;
    const reward = e.turnRewards?.[i];
    return { role: m.role, content: m.content, action: i, ...(reward !== undefined ? { reward } : {}) };
  });
}

/**
 * A step-wise episode: each step's record holds its prompt messages and its answer. With the history kept
 * (`enable_history`) a step's messages start with the previous step's, and only the new ones are added; otherwise
 * each step's messages all follow. A step's model turn gets the step's reward.
 */
function stepWiseTurns(steps: { reward: number | null; e: EpisodeRecord }[]): Turn[] {
  const turns: Turn[] = [];
  let previous: EpisodeRecord['messages'] = [];
  let action = 0;
  for (const { reward, e } of steps) {
    const msgs = e.messages;
    let common = 0;
    while (
      common < previous.length &&
      common < msgs.length &&
      msgs[common].role === previous[common].role &&
      msgs[common].content === previous[common].content
    )
      common++;
    const fresh = common === previous.length ? msgs.slice(common) : msgs;
    const last = fresh.map((m) => m.role).lastIndexOf('assistant');
    fresh.forEach((m, i) => {
      const t: Turn = { role: m.role, content: m.content, step: e.step ?? 0 };
      if (m.role === 'assistant') t.action = action++;
      if (i === last && reward !== null) t.reward = reward;
      turns.push(t);
    });
    previous = msgs;
  }
  return turns;
}

/**
 * The model turns whose action was invalid: those the record names (our runtime records them), else each one the
 * next environment message calls invalid (the record of an older runtime, or a step-wise episode).
 */
function markInvalid(turns: Turn[], recorded: readonly number[] | undefined): void {
  if (recorded) {
    for (const t of turns) if (t.action !== undefined && recorded.includes(t.action)) t.invalid = true;
    return;
  }
  for (let i = 0; i < turns.length; i++) {
    if (turns[i].role !== 'assistant') continue;
    const next = turns.slice(i + 1).find((t) => t.role !== 'assistant');
    if (next && next.role !== 'system' && INVALID_HINTS.some((h) => next.content.includes(h))) turns[i].invalid = true;
  }
}

export type EpisodeFilter = 'all' | 'goal' | 'failed' | 'truncated' | 'invalid';

export const FILTER_LABELS: Readonly<Record<EpisodeFilter, string>> = {
  all: 'All episodes',
  goal: 'Reached goal',
  failed: 'Failed',
  truncated: 'Truncated',
  invalid: 'With an invalid action',
};

export function passesFilter(e: Episode, f: EpisodeFilter): boolean {
  switch (f) {
    case 'all':
      return true;
    case 'goal':
      return e.outcome === 'goal';
    case 'failed':
      return e.outcome === 'failed' || e.outcome === 'stopped';
    case 'truncated':
      return e.outcome === 'truncated';
    case 'invalid':
      return e.invalidActions > 0;
  }
}

/** Whether a turn holds `query` (case-insensitive substring; an empty query matches nothing). */
export function turnMatches(t: Turn, query: string): boolean {
  const q = query.trim().toLowerCase();
  return q !== '' && t.content.toLowerCase().includes(q);
}

/** Whether any turn holds `query` (an empty query: every episode). */
export function episodeMatches(e: Episode, query: string): boolean {
  return query.trim() === '' || e.turns.some((t) => turnMatches(t, query));
}

/** The spans of equal mask in a segment: [from, to) and whether they were trained. */
export function maskSpans(mask: readonly number[]): { from: number; to: number; trained: boolean }[] {
  const spans: { from: number; to: number; trained: boolean }[] = [];
  for (let i = 0; i < mask.length; ) {
    let j = i + 1;
    while (j < mask.length && mask[j] === mask[i]) j++;
    spans.push({ from: i, to: j, trained: mask[i] === 1 });
    i = j;
  }
  return spans;
}
