/**
 * Trinity's Experience: one rollout (or one SFT/DPO sample) as the buffer stores it and the trainer reads it.
 * Token arrays are plain numbers so experiences cross threads, files and SQLite unchanged.
 */

/** Experience id (Trinity's EID): batch = explorer step, task = index in the batch, run = repeat index. */
export interface ExperienceId {
  batch: number | string;
  task: number | string;
  run: number;
  step: number;
  /** Random suffix making the uid unique. */
  suffix: string;
}

export interface Experience {
  eid: ExperienceId;
  /** Prompt then response token ids. */
  tokens: number[];
  promptLength: number;
  /** Rollout log-probs of the response tokens (length = tokens.length − promptLength). */
  logprobs?: number[];
  /** The teacher's log-probs of the response tokens (on-policy distillation; length = response length). */
  teacherLogprobs?: number[];
  /**
   * The reference model's log-probs of the response tokens, when the explorer worker computed them (`both` mode, the
   * explorer in its own thread, experiences passed in memory); the trainer computes them itself otherwise. Not stored.
   */
  refLogprobs?: number[];
  /** 1 where a response token is trained on (length = response length). Default: all ones. */
  actionMask?: number[];
  reward?: number;
  /** Filled by the advantage function (per response token). */
  advantages?: number[];
  returns?: number[];
  /** Whether the response hit the token limit before a stop. */
  truncated?: boolean;
  /** The model version (trainer step of the weights) that produced it. */
  modelVersion?: number;
  promptText?: string;
  responseText?: string;
  /** Reward components and other per-rollout numbers, logged under `rollout/<name>`. */
  metrics?: Record<string, number>;
  /** Free-form task info (the raw task row, its taskset, …). */
  info?: Record<string, unknown>;
  /** DPO pairs: token ids of the chosen and rejected responses (the prompt is tokens[0..promptLength)). */
  chosen?: number[];
  rejected?: number[];
  /** Mix-style algorithms mark expert (SFT) experiences. */
  isExpert?: boolean;
  /** A multi-turn episode's conversation (Trinity's `messages`), the model's turns as role `assistant`. */
  messages?: ExperienceMessage[];
  /** A concatenated episode's reward for each of its model turns, in order (the environment's step rewards). */
  turnRewards?: number[];
  /** The model turns (their index among the model turns) whose answer named no action the environment knows. */
  invalidActions?: number[];
}

export interface ExperienceMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** The random part of an experience id (Trinity: six hex digits of a uuid4). */
export function randomEidSuffix(): string {
  return Math.floor(Math.random() * 0xffffff)
    .toString(16)
    .padStart(6, '0');
}

/** A uid unique across the run: `batch/task/run/step/suffix` as Trinity writes it. */
export function experienceUid(e: ExperienceId): string {
  return `${e.batch}/${e.task}/${e.run}/${e.step}/${e.suffix}`;
}

/** The group key GRPO-style advantages normalise within: every run of one task in one batch. */
export function taskGroupId(e: ExperienceId): string {
  return `${e.batch}/${e.task}`;
}

/** The experiences of each task group (`taskGroupId`), groups in first-seen order (Trinity's `group_by(exps, "task")`). */
export function groupByTask<E extends Experience>(exps: readonly E[]): Map<string, E[]> {
  const groups = new Map<string, E[]>();
  for (const e of exps) {
    const k = taskGroupId(e.eid);
    const g = groups.get(k);
    if (g) g.push(e);
    else groups.set(k, [e]);
  }
  return groups;
}

export function responseLength(e: Experience): number {
  return e.tokens.length - e.promptLength;
}
