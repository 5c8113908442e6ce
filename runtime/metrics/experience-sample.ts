/**
 * A Trinity experience (trinity-experience.ts) as a rollout record the dashboard shows: its conversation, response
 * tokens and action mask, GRPO group and run, numeric info, whether the response was truncated, and its advantage.
 * The fields are runtime/protocol.ts `RolloutSample`'s (this folder may not import it; runtime/cli/rollouts.ts
 * checks at compile time that they agree, and the dashboard checks each field of what arrives,
 * client/dashboard/episode-record.ts).
 */
import type { TrinityExperience } from './trinity-experience';

type Role = 'system' | 'user' | 'assistant' | 'tool';

/** A rollout record with its episode, `reward` null where there is none (RolloutSample's fields). */
export interface ExperienceSample {
  prompt: string;
  response: string;
  reward: number | null;
  messages?: { role: Role; content: string }[];
  task?: string;
  run?: number;
  step?: number;
  responseTokens?: number[];
  actionMask?: number[];
  metrics?: Record<string, number>;
  truncated?: boolean;
  advantage?: number;
}
const ROLES: readonly string[] = ['system', 'user', 'assistant', 'tool'];

/** A message's content as text: a string, or the text parts of an OpenAI-style content list; null as empty. */
function contentText(c: unknown): string | undefined {
  if (typeof c === 'string') return c;
  if (c === null || c === undefined) return '';
  if (Array.isArray(c))
    return c
      .map((p) =>
        p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
      )
      .join('');
  return undefined;
}

function messagesOf(list: unknown[]): ExperienceSample['messages'] {
  const out: NonNullable<ExperienceSample['messages']> = [];
  for (const m of list) {
    if (!m || typeof m !== 'object') continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    const text = contentText(content);
    if (typeof role === 'string' && ROLES.includes(role) && text !== undefined)
      out.push({ role: role as Role, content: text });
  }
  return out.length ? out : undefined;
}

const int = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
};

/**
 * The record of one experience; `columns` are its row's text and reward columns (the reward column wins, as
 * Trinity's `ExperienceModel.to_experience` sets it over the pickled one).
 */
export function sampleOfExperience(
  e: TrinityExperience,
  columns: { prompt: string; response: string; reward: number | null },
): ExperienceSample {
  const messages = e.messages ? messagesOf(e.messages) : undefined;
  const lastAssistant = messages?.filter((m) => m.role === 'assistant').at(-1)?.content;
  const firstUser = messages?.find((m) => m.role === 'user')?.content;
  const reward = columns.reward ?? (e.reward !== undefined && Number.isFinite(e.reward) ? e.reward : null);
  const s: ExperienceSample = {
    prompt: e.promptText ?? (columns.prompt || firstUser || ''),
    response: e.responseText ?? (columns.response || lastAssistant || ''),
    reward,
  };
  if (messages) s.messages = messages;
  if (e.eid.batch !== undefined && e.eid.task !== undefined && e.eid.task !== '')
    s.task = `${String(e.eid.batch)}/${String(e.eid.task)}`;
  const run = int(e.eid.run);
  const step = int(e.eid.step);
  if (run !== undefined) s.run = run;
  if (step !== undefined) s.step = step;
  if (e.tokens && e.actionMask) {
    // tokens are prompt + response; action_mask covers the response (Experience: "[resp_length]").
    const response = e.tokens.slice(e.promptLength);
    if (response.length === e.actionMask.length) {
      s.responseTokens = response;
      s.actionMask = e.actionMask.map((x) => (x ? 1 : 0));
    }
  }
  const metrics = Object.entries({ ...e.info, ...e.metrics }).filter(
    (kv): kv is [string, number] => typeof kv[1] === 'number' && Number.isFinite(kv[1]),
  );
  if (metrics.length) s.metrics = Object.fromEntries(metrics);
  if (e.truncateStatus === 'response_truncated') s.truncated = true;
  // GRPO's advantage is one value per episode, spread over its tokens: the first trained token's.
  if (e.advantages?.length) {
    const at = e.actionMask ? e.actionMask.findIndex((x) => x) : 0;
    const a = e.advantages[Math.max(at, 0)];
    if (Number.isFinite(a)) s.advantage = a;
  }
  return s;
}
