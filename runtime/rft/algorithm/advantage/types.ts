/**
 * Data the advantage functions work on, as plain JS numbers (float64).
 *
 * Trinity has two kinds (trinity/algorithm/advantage_fn/advantage_fn.py):
 *  - explorer-side group advantages (`GroupAdvantage`, `compute_in_trainer() == False`): a list of experiences,
 *    grouped by task id (`eid.tid` = "<batch>/<task>"), each with one scalar reward; the advantage is a number per
 *    experience broadcast over its `action_mask`. Metrics are gathered per group as `group_advantages/<k>/{mean,
 *    max,min}` and land in the explorer's `pipeline/` metrics.
 *  - trainer-side advantages: a padded batch ([B][T] token-level rewards, response mask, `uid` = task id per row,
 *    values for PPO, …). Their metrics are dropped by Trinity's trainer (`batch, _ = self.advantage_fn(batch)`).
 */

export interface ExperienceId {
  batch?: number | string;
  task?: number | string;
  run?: number;
  step?: number;
}

export interface AdvantageExperience {
  eid: ExperienceId;
  /** the scalar (outcome) reward */
  reward: number;
  /** per response token: 1 where the model acted (loss applies), 0 elsewhere */
  actionMask: ArrayLike<number>;
  /** per response token log-probs at rollout time (used by grpo's rank_penalty) */
  logprobs?: ArrayLike<number>;
}

export type WithAdvantages<E> = E & { advantages: number[]; returns: number[] };

export interface GroupAdvantageResult<E> {
  /** the experiences kept, in Trinity's order (groups in first-seen order), as new objects */
  exps: WithAdvantages<E>[];
  metrics: Record<string, number>;
}

/** Trinity's `EID.tid`: experiences of one task (all runs) share it. */
export function taskId(eid: ExperienceId): string {
  return `${eid.batch ?? ''}/${eid.task ?? ''}`;
}

/** Trinity's `EID.rid`: one run of one task (all its steps) share it. */
export function runId(eid: ExperienceId): string {
  return `${eid.batch ?? ''}/${eid.task ?? ''}/${eid.run ?? 0}`;
}

/** Trinity's `group_by`: a Map in first-seen order. */
export function groupBy<E extends AdvantageExperience>(
  exps: readonly E[],
  key: (eid: ExperienceId) => string,
): Map<string, E[]> {
  const out = new Map<string, E[]>();
  for (const e of exps) {
    const k = key(e.eid);
    const g = out.get(k);
    if (g) g.push(e);
    else out.set(k, [e]);
  }
  return out;
}

/** A copy of `exp` with `advantages = score · action_mask` and `returns` equal to them. */
export function withScore<E extends AdvantageExperience>(exp: E, score: number): WithAdvantages<E> {
  const advantages = Array.from(exp.actionMask, (m) => score * m);
  return { ...exp, advantages, returns: [...advantages] };
}

/** A padded batch for the trainer-side advantage functions; every [B][T] array has the same shape. */
export interface AdvantageBatch {
  /** [B][T] token-level rewards (after any KL penalty); the outcome reward sits on the last response token */
  tokenLevelRewards: number[][];
  /** [B][T] */
  responseMask: number[][];
  /** [B] group id per row (Trinity: `exp.eid.tid`); required by the grouped functions */
  uid?: readonly (string | number)[];
  /** [B][T] critic values (ppo) */
  values?: number[][];
  /** [B] baseline rewards (remax: the reward of the greedy rollout) */
  rewardBaselines?: number[];
  /** [B][T] log-probs at rollout time (veRL's `old_log_probs`; on_policy_distill, jsd, clipv) */
  oldLogprobs?: number[][];
  /** [B][T] teacher log-probs (on_policy_distill, jsd) */
  teacherLogprobs?: number[][];
  /** [B][T] rollout log-probs (clipb) */
  rolloutLogprobs?: number[][];
  /** [B][T] per-token entropy (clipb, clipv) */
  entropys?: number[][];
  /** [B][T] clipv's `necs` signal */
  necs?: number[][];
}

export interface TrainerAdvantageResult {
  advantages: number[][];
  returns: number[][];
  /** the response mask after token filtering (clipb, clipv); absent when unchanged */
  responseMask?: number[][];
  metrics: Record<string, number>;
}

/** Row sums of [B][T] rewards (Trinity's `token_level_rewards.sum(dim=-1)`). */
export function rowSums(x: number[][]): number[] {
  return x.map((r) => r.reduce((s, v) => s + v, 0));
}

/** Trinity's `to_data_proto`: a zero [B][T] array with each reward on its row's last attended position. */
export function outcomeTokenRewards(rewards: readonly number[], attentionMask: number[][]): number[][] {
  return attentionMask.map((mask, i) => {
    const row = mask.map(() => 0);
    let last = -1;
    for (let t = 0; t < mask.length; t++) if (mask[t] !== 0) last = t;
    // cumsum.argmax picks the first maximum: the last non-zero position, or 0 for an all-zero row
    row[last < 0 ? 0 : last] = rewards[i];
    return row;
  });
}

export function requireField<T>(value: T | undefined, fn: string, field: string): T {
  if (value === undefined) throw new Error(`advantage_fn '${fn}': the batch needs '${field}'`);
  return value;
}

/** Row indices per group id, in first-seen order (Trinity's `id2score` dict). */
export function rowsByUid(uid: readonly (string | number)[]): Map<string | number, number[]> {
  const out = new Map<string | number, number[]>();
  uid.forEach((u, i) => {
    const g = out.get(u);
    if (g) g.push(i);
    else out.set(u, [i]);
  });
  return out;
}

/**
 * The shape of the trainer-side outcome advantages: each row's score (`Σ_t r`), replaced group by group (rows with
 * the same uid) by `perGroup`, broadcast over the response mask; returns equal the advantages.
 */
export function groupedOutcomeAdvantage(
  batch: AdvantageBatch,
  fn: string,
  perGroup: (scores: number[]) => number[],
): TrainerAdvantageResult {
  const uid = requireField(batch.uid, fn, 'uid');
  const scores = rowSums(batch.tokenLevelRewards);
  const out = [...scores];
  for (const rows of rowsByUid(uid).values()) {
    const next = perGroup(rows.map((i) => scores[i]));
    rows.forEach((row, j) => (out[row] = next[j]));
  }
  const adv = broadcastScores(out, batch.responseMask);
  return { advantages: adv, returns: adv.map((r) => [...r]), metrics: {} };
}

/** `scores[i] · mask[i][t]` for every position. */
export function broadcastScores(scores: readonly number[], mask: number[][]): number[][] {
  return mask.map((row, i) => row.map((m) => scores[i] * m));
}
