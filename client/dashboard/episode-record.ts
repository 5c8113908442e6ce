/**
 * The multi-turn part of a rollout record as it travels to the dashboard (runtime/protocol.ts `RolloutSample`'s
 * optional fields), and its validator: host and webview both keep only what checks out, field by field, so a record
 * written by an older runtime (or a damaged line) still shows its prompt, response and reward.
 */

import type { RolloutSample } from '../../runtime/protocol';

export type EpisodeRole = NonNullable<RolloutSample['messages']>[number]['role'];

/** A multi-turn record: `messages` always, the rest as the runtime wrote them (see RolloutSample for each field). */
export type EpisodeRecord = Required<Pick<RolloutSample, 'messages'>> &
  Pick<
    RolloutSample,
    | 'task'
    | 'run'
    | 'step'
    | 'turnRewards'
    | 'invalidActions'
    | 'responseTokens'
    | 'actionMask'
    | 'tokenTexts'
    | 'metrics'
    | 'truncated'
    | 'advantage'
  >;

const ROLES: readonly string[] = ['system', 'user', 'assistant', 'tool'];

type Plain = Record<string, unknown>;
const isObj = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isInteger(v);
const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.every(isNum);

/** The episode fields of a rollout record, or undefined when it has no valid `messages` (a single-turn record). */
export function episodeOfRecord(v: Plain): EpisodeRecord | undefined {
  const msgs = v.messages;
  if (
    !Array.isArray(msgs) ||
    msgs.length === 0 ||
    !msgs.every((m) => isObj(m) && ROLES.includes(m.role as string) && typeof m.content === 'string')
  )
    return undefined;
  const e: EpisodeRecord = {
    messages: (msgs as Plain[]).map((m) => ({ role: m.role as EpisodeRole, content: m.content as string })),
  };
  if (typeof v.task === 'string') e.task = v.task;
  if (isInt(v.run)) e.run = v.run;
  if (isInt(v.step)) e.step = v.step;
  if (numbers(v.turnRewards)) e.turnRewards = v.turnRewards;
  if (Array.isArray(v.invalidActions) && v.invalidActions.every((i) => isInt(i) && i >= 0))
    e.invalidActions = v.invalidActions as number[];
  const tokens = v.responseTokens;
  const mask = v.actionMask;
  if (Array.isArray(tokens) && tokens.every(isInt) && Array.isArray(mask) && mask.length === tokens.length) {
    if (mask.every((x) => x === 0 || x === 1)) {
      e.responseTokens = tokens as number[];
      e.actionMask = mask as number[];
      const texts = v.tokenTexts;
      if (Array.isArray(texts) && texts.length === tokens.length && texts.every((t) => typeof t === 'string'))
        e.tokenTexts = texts as string[];
    }
  }
  if (isObj(v.metrics)) {
    const m = Object.entries(v.metrics).filter((kv): kv is [string, number] => isNum(kv[1]));
    if (m.length) e.metrics = Object.fromEntries(m);
  }
  if (v.truncated === true) e.truncated = true;
  if (isNum(v.advantage)) e.advantage = v.advantage;
  return e;
}
