/**
 * Run health: what a run's metrics say is going wrong, and the config key to change. Pure: the metrics, the
 * thresholds, the clock and the config's values come in; findings (TRN4xx) go out. The language server reads the
 * job directory and turns findings into diagnostics on the key (its nearest written ancestor when not written).
 */
import type { DiagnosticCode, Path } from '../diagnostics';
import { atLeast, NEWEST_RELEASE, type Release } from '../releases';
import { workflowArgDefault } from '../model/workflow-args';
import type { EpisodeTally } from './episode-tally';

export interface HealthPoint {
  step: number;
  value: number;
  /** Seconds since the epoch; null where the source does not record it. */
  wallTime: number | null;
}

/** A run's scalars by tag (explorer and trainer tags do not collide in Trinity's names), each in step order. */
export type HealthSeries = ReadonlyMap<string, readonly HealthPoint[]>;

export interface RunHealthThresholds {
  /** How many of the latest steps a rule looks at. */
  window: number;
  /** TRN400: mean `response_length/clip_ratio` over the window at or above this. */
  truncatedShare: number;
  /** TRN402: entropy at or below this share of its first value. */
  entropyCollapseRatio: number;
  /** TRN403: `actor/kl_loss` or |`actor/ppo_kl`| above this. */
  klMax: number;
  /** TRN404: `actor/grad_norm` above this many times the median of the steps before it (or not finite). */
  gradNormSpike: number;
  /** TRN405: a live run with no new step for this many times its median step time. */
  stallFactor: number;
  /** TRN406: explorer steps since the trainer's last step, beyond what sync_offset and sync_interval allow. */
  trainerLag: number;
  /** TRN407: the share of agent episodes ended by the token budget (not the goal, a hole or the turn limit). */
  budgetEndedShare: number;
  /** TRN408: an agent success rate at or below this (or at or above 1 − this) in every step of the window. */
  sameOutcomeMargin: number;
  /** TRN409: the share of recorded agent episodes whose last model turn gave an invalid action. */
  invalidEndedShare: number;
}

export const DEFAULT_HEALTH_THRESHOLDS: RunHealthThresholds = {
  window: 5,
  truncatedShare: 0.5,
  entropyCollapseRatio: 0.4,
  klMax: 1,
  gradNormSpike: 10,
  stallFactor: 5,
  trainerLag: 5,
  budgetEndedShare: 0.5,
  sameOutcomeMargin: 0,
  invalidEndedShare: 0.5,
};

export type HealthCode = Extract<
  DiagnosticCode,
  'TRN400' | 'TRN401' | 'TRN402' | 'TRN403' | 'TRN404' | 'TRN405' | 'TRN406' | 'TRN407' | 'TRN408' | 'TRN409'
>;

export interface HealthFinding {
  code: HealthCode;
  /** The config key to change, from the root of the (stage's) config. */
  path: Path;
  message: string;
  /** The metric that shows it, and the step it was seen at. */
  metric: string;
  step: number;
  /** A value to set the key to, where one is clear. */
  fix?: number;
}

export interface HealthInput {
  series: HealthSeries;
  thresholds?: Partial<RunHealthThresholds>;
  /** Whether the run is still going (the stall rule applies only then). */
  live: boolean;
  /** Seconds since the epoch. */
  now: number;
  /** The value Trinity uses for a dotted key of the run's config (for fixes and messages). */
  value?: (key: string) => unknown;
  /** The release the config is checked against (key names differ), default the newest. */
  release?: Release;
  /** How the recorded agent episodes of each step ended (our runtime's rollout records), in step order. */
  episodes?: readonly EpisodeTally[];
}

const fmt = (x: number) =>
  Math.abs(x) >= 100 || Number.isInteger(x) ? String(Math.round(x * 100) / 100) : x.toPrecision(3);
const finite = (ps: readonly HealthPoint[]) => ps.filter((p) => Number.isFinite(p.value));
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function first(series: HealthSeries, ...tags: string[]): { tag: string; points: readonly HealthPoint[] } | undefined {
  for (const tag of tags) {
    const points = series.get(tag);
    if (points?.length) return { tag, points };
  }
  return undefined;
}

/** Every finding of a run's metrics (the trainer's and the explorer's) under the thresholds. */
export function checkRunHealth(input: HealthInput): HealthFinding[] {
  const t = { ...DEFAULT_HEALTH_THRESHOLDS, ...input.thresholds };
  const rule: RuleInput = {
    input,
    t,
    window: Math.max(1, Math.round(t.window)),
    value: input.value ?? (() => undefined),
  };
  return HEALTH_RULES.map((check) => check(rule)).filter((f): f is HealthFinding => f !== undefined);
}

/** What each rule reads: the run's series and config values, the thresholds and the window they apply over. */
interface RuleInput {
  input: HealthInput;
  t: RunHealthThresholds;
  window: number;
  value: (path: string) => unknown;
}

/**
 * TRN400: most responses end at the length limit, so the reward sees cut-off answers. `clip_ratio` is the share of a
 * batch's responses as long as its longest (Trinity pads a batch to its longest row and veRL's metric compares with
 * that width: trinity/trainer/verl/utils.py `to_data_proto` and `compute_data_metrics` @5267498), so a step counts
 * only where its longest response (`response_length/max`) reached `max_response_tokens`, when both are known: a
 * batch of equal-length answers below the limit is not cut off.
 */
function truncatedResponses({ input, t, window, value }: RuleInput): HealthFinding | undefined {
  const clip = first(input.series, 'response_length/clip_ratio');
  if (!clip) return undefined;
  const limit = num(value('model.max_response_tokens'));
  const longest = first(input.series, 'response_length/max');
  const longestAt = new Map(longest ? finite(longest.points).map((p) => [p.step, p.value]) : []);
  const atLimit = (step: number): boolean => !limit || !longest || (longestAt.get(step) ?? limit) >= limit;
  const last = finite(clip.points).slice(-window);
  const share = last.reduce((a, p) => a + (atLimit(p.step) ? p.value : 0), 0) / last.length;
  if (!(last.length >= Math.min(window, 2) && share >= t.truncatedShare)) return undefined;
  return {
    code: 'TRN400',
    path: ['model', 'max_response_tokens'],
    metric: clip.tag,
    step: last[last.length - 1].step,
    message: `${Math.round(share * 100)}% of responses over the last ${last.length} steps stop at max_response_tokens${limit ? ` (${limit})` : ''}: answers are cut off before they end. Raise max_response_tokens (and max_model_len with it), or ask for shorter answers.`,
    ...(limit ? { fix: limit * 2 } : {}),
  };
}

/** TRN401: every group's rewards are equal, so every group-relative advantage is 0 and nothing is learned. */
function identicalGroupRewards({ input, window, value }: RuleInput): HealthFinding | undefined {
  const std = first(
    input.series,
    'experience_pipeline/group_advantages/reward_std/max',
    'pipeline/group_advantages/reward_std/max',
  );
  if (!std) return undefined;
  const last = finite(std.points).slice(-window);
  if (!(last.length >= window && last.every((p) => p.value <= 1e-12))) return undefined;
  const n = num(value('algorithm.repeat_times'));
  return {
    code: 'TRN401',
    path: ['algorithm', 'repeat_times'],
    metric: std.tag,
    step: last[last.length - 1].step,
    message: `In each of the last ${last.length} steps every group of ${n ?? 'repeat_times'} responses got identical rewards (${std.tag} is 0): the advantages are all 0 and the policy does not learn. Raise repeat_times or the sampling temperature, or use easier tasks or a denser reward.`,
    ...(n && n >= 1 ? { fix: n * 2 } : {}),
  };
}

/** TRN402: the policy's entropy has collapsed: it samples (nearly) one answer and stops exploring. */
function entropyCollapse({ input, t, value }: RuleInput): HealthFinding | undefined {
  const ent = first(input.series, 'actor/entropy', 'actor/entropy_loss');
  if (!ent) return undefined;
  const ps = finite(ent.points);
  const start = ps[0]?.value;
  const latest = ps[ps.length - 1];
  if (!(ps.length >= 2 && start > 0 && latest.value <= start * t.entropyCollapseRatio)) return undefined;
  const coef = num(value('algorithm.entropy_loss_fn_args.entropy_coef'));
  return {
    code: 'TRN402',
    path: ['algorithm', 'entropy_loss_fn_args', 'entropy_coef'],
    metric: ent.tag,
    step: latest.step,
    message: `Entropy fell from ${fmt(start)} to ${fmt(latest.value)} (${Math.round((latest.value / start) * 100)}% of its first value) by step ${latest.step}: the policy is collapsing onto few answers. Raise entropy_coef${coef !== undefined ? ` (now ${fmt(coef)})` : ''}, lower the learning rate, or clip less (clip_range_high).`,
  };
}

/** TRN403: the policy ran far from its reference (kl_loss) or from the rollout policy within one step (ppo_kl). */
function klRunaway({ input, t, value }: RuleInput): HealthFinding | undefined {
  for (const tag of ['actor/kl_loss', 'actor/ppo_kl']) {
    const ps = input.series.get(tag);
    const latest = ps?.length ? ps[ps.length - 1] : undefined;
    if (!latest || !(Math.abs(latest.value) > t.klMax || !Number.isFinite(latest.value))) continue;
    const lr = num(value('algorithm.optimizer.lr'));
    return {
      code: 'TRN403',
      path: ['algorithm', 'optimizer', 'lr'],
      metric: tag,
      step: latest.step,
      message: `${tag} is ${fmt(latest.value)} at step ${latest.step} (limit ${fmt(t.klMax)}): the policy is moving away ${tag === 'actor/kl_loss' ? 'from the reference model' : 'from the rollout policy within one update'} too fast. Lower the learning rate${lr !== undefined ? ` (now ${lr})` : ''}${tag === 'actor/kl_loss' ? ' or raise kl_loss_fn_args.kl_coef' : ' or tighten clip_range'}.`,
    };
  }
  return undefined;
}

/** TRN404: a gradient far larger than usual (or not finite): an unstable update. */
function gradNormSpike({ input, t, window }: RuleInput): HealthFinding | undefined {
  const gn = input.series.get('actor/grad_norm');
  if (!gn || gn.length < 2) return undefined;
  const latest = gn[gn.length - 1];
  const before = finite(gn.slice(0, -1)).map((p) => p.value);
  const base = before.length >= window ? median(before) : undefined;
  const spiked =
    !Number.isFinite(latest.value) || (base !== undefined && base > 0 && latest.value > base * t.gradNormSpike);
  if (!spiked) return undefined;
  return {
    code: 'TRN404',
    path: ['trainer', atLeast(input.release ?? NEWEST_RELEASE, 'v0.3.2') ? 'grad_clip' : 'actor_grad_clip'],
    metric: 'actor/grad_norm',
    step: latest.step,
    message: Number.isFinite(latest.value)
      ? `actor/grad_norm is ${fmt(latest.value)} at step ${latest.step}, ${fmt(latest.value / base!)}× its median ${fmt(base!)} so far: the update is unstable. Clip gradients harder (grad_clip) or lower the learning rate.`
      : `actor/grad_norm is ${latest.value} at step ${latest.step}: the update overflowed. Lower the learning rate or clip gradients (grad_clip).`,
  };
}

/** TRN405: a live run that has not logged a step for far longer than its steps take. */
function stalledRun({ input, t }: RuleInput): HealthFinding | undefined {
  if (!input.live) return undefined;
  const stall = stalled(input.series, input.now, t.stallFactor);
  if (!stall) return undefined;
  return {
    code: 'TRN405',
    path: ['explorer', 'max_timeout'],
    metric: stall.tag,
    step: stall.step,
    message: `No new step for ${fmt(stall.idle)} s, ${fmt(stall.idle / stall.usual)}× the usual ${fmt(stall.usual)} s a step takes (last: ${stall.tag} step ${stall.step}): the run looks stuck. A rollout can hang for up to explorer.max_timeout before it is retried; check the run's log.`,
  };
}

/**
 * TRN406: in `both` mode the explorer keeps stepping but the trainer takes no step: it gets no batch (every task
 * fails, the pipeline drops the experiences, or `train_batch_size` is more than the explorer makes). The trainer may
 * trail by `sync_offset` and `sync_interval` steps by design; `trainerLag` more is reported.
 */
function trainerBehind({ input, t, value }: RuleInput): HealthFinding | undefined {
  const mode = value('mode');
  if (mode !== 'both' && mode !== 'colocate') return undefined;
  const explorer = first(input.series, 'time/explore_step', 'rollout/model_version');
  if (!explorer) return undefined;
  const trainer = first(input.series, 'time/train_step', 'actor/grad_norm', 'actor/lr');
  const lastTrainer = trainer?.points[trainer.points.length - 1];
  // Explorer steps logged after the trainer's last one (by wall time where both have it, else by step).
  const since = explorer.points.filter((p) =>
    !lastTrainer
      ? true
      : p.wallTime !== null && lastTrainer.wallTime !== null
        ? p.wallTime > lastTrainer.wallTime
        : p.step > lastTrainer.step,
  );
  const allowed =
    t.trainerLag + (num(value('synchronizer.sync_offset')) ?? 0) + (num(value('synchronizer.sync_interval')) ?? 1);
  if (since.length < allowed) return undefined;
  const latest = since[since.length - 1];
  const made = num(value('buffer.batch_size'));
  const repeat = num(value('algorithm.repeat_times'));
  const batch = num(value('buffer.train_batch_size'));
  return {
    code: 'TRN406',
    path: ['buffer', 'train_batch_size'],
    metric: explorer.tag,
    step: latest.step,
    message: `No trainer step for ${since.length} explorer steps (explorer step ${latest.step}, ${lastTrainer ? `trainer step ${lastTrainer.step}` : 'no trainer step yet'}): the trainer gets no batch. Look at the run's output for failing tasks${batch !== undefined && made !== undefined && repeat !== undefined ? `, and compare train_batch_size (${batch}) with what a step makes (batch_size × repeat_times = ${made * repeat})` : ''}.`,
  };
}

/**
 * An agent's turn limit: its taskset's `workflow_args.agent_max_steps`, else its workflow's default (model/workflow-args.ts);
 * undefined for a workflow without one. The agent metrics are the workflow's `info` (env_steps, env_done,
 * test_score) reduced per episode, then averaged over the step's tasks.
 */
const AGENT_ARGS: Path = ['buffer', 'explorer_input', 'taskset', 'workflow_args'];
function agentMaxSteps({ value, input }: RuleInput): number | undefined {
  const workflow = value('buffer.explorer_input.taskset.default_workflow_type');
  const fallback = workflowArgDefault(workflow, 'agent_max_steps', input.release ?? NEWEST_RELEASE);
  if (fallback === undefined) return undefined;
  return num(value(`${AGENT_ARGS.join('.')}.agent_max_steps`)) ?? num(fallback);
}

/**
 * TRN407: an agent episode ends at G or a hole (`env_done`), after `agent_max_steps` turns, or when its tokens run
 * out (every token after the first prompt counts against the episode's budget, and the conversation must fit
 * `max_model_len`); the cut episode scores 0. The means bound the last kind from below: at most env_steps/L of the
 * episodes can have used all L turns, so at least (1 − env_done) − env_steps/L ended on the budget. (The means are
 * over tasks of per-task means; with `repeat_times` episodes per task that is the mean over episodes.)
 */
function budgetEndedEpisodes(rule: RuleInput): HealthFinding | undefined {
  const { input, t, window, value } = rule;
  const done = input.series.get('rollout/env_done/mean');
  const steps = input.series.get('rollout/env_steps/mean');
  const limit = agentMaxSteps(rule);
  if (!done?.length || !steps?.length || !limit) return undefined;
  const stepsAt = new Map(finite(steps).map((p) => [p.step, p.value]));
  const last = finite(done)
    .filter((p) => stepsAt.has(p.step))
    .slice(-window);
  const bound = (p: HealthPoint) => Math.max(0, 1 - p.value - stepsAt.get(p.step)! / limit);
  const share = last.reduce((a, p) => a + bound(p), 0) / Math.max(1, last.length);
  if (!(last.length >= Math.min(window, 2) && share >= t.budgetEndedShare)) return undefined;
  const at = last[last.length - 1];
  const len = num(value('model.max_model_len'));
  return {
    code: 'TRN407',
    path: ['model', 'max_model_len'],
    metric: 'rollout/env_steps/mean',
    step: at.step,
    message: `At least ${Math.round(share * 100)}% of episodes over the last ${last.length} steps ended on the token budget, not at the goal, a hole or the turn limit: at step ${at.step}, (1 − rollout/env_done/mean) − rollout/env_steps/mean ÷ agent_max_steps = (1 − ${fmt(at.value)}) − ${fmt(stepsAt.get(at.step)!)} ÷ ${limit} = ${fmt(bound(at))}. Every token after the first prompt counts against the episode's budget (10240 in Trinity) and the conversation must fit max_model_len${len ? ` (${len})` : ''}; a cut episode scores 0. Raise max_model_len, or lower agent_max_steps or ask for shorter answers.`,
  };
}

/**
 * TRN408: every episode of the window's steps failed (or every one reached the goal): each group of `repeat_times`
 * episodes has one outcome, so a group-relative advantage has nothing to compare. `rollout/test_score` is
 * FrozenLake's final reward (1 at the goal).
 */
function sameOutcomeEpisodes(rule: RuleInput): HealthFinding | undefined {
  const { input, t, window } = rule;
  const score = input.series.get('rollout/test_score/mean');
  const turns = agentMaxSteps(rule);
  if (!score?.length || turns === undefined) return undefined;
  const last = finite(score).slice(-window);
  const m = t.sameOutcomeMargin;
  const allFail = last.every((p) => p.value <= m);
  const allWin = last.every((p) => p.value >= 1 - m);
  if (!(last.length >= window && (allFail || allWin))) return undefined;
  const key = allFail ? 'agent_max_steps' : 'env_max_steps';
  return {
    code: 'TRN408',
    path: [...AGENT_ARGS, key],
    metric: 'rollout/test_score/mean',
    step: last[last.length - 1].step,
    message: allFail
      ? `No episode reached the goal in the last ${last.length} steps (rollout/test_score/mean ${m > 0 ? `≤ ${fmt(m)}` : '0'}): every group of episodes has the same outcome, so GRPO's advantages are 0. Give the agent more turns (agent_max_steps, now ${turns}), smaller maps (the rows' size) or a closer goal (env_max_steps).`
      : `Every episode reached the goal in the last ${last.length} steps (rollout/test_score/mean ${m > 0 ? `≥ ${fmt(1 - m)}` : '1'}): the groups have nothing to compare. Make the task harder: goals further away (env_max_steps) or larger maps.`,
  };
}

/**
 * TRN409: most recorded episodes end on an invalid action: the model's last answer named no move (FrozenLake:
 * `_parse_model_response` finds no fenced block naming a direction and gives `invalid_action` 0, workflow.py
 * @8b7fce3), so the episode ran out of turns or tokens while the model was not playing. Trinity logs no metric for
 * it; the rule counts the rollout records our runtime writes, a sample of each step's episodes.
 */
function invalidEndedEpisodes({ input, t, window }: RuleInput): HealthFinding | undefined {
  const last = (input.episodes ?? []).filter((e) => e.episodes > 0).slice(-window);
  if (last.length < Math.min(window, 2)) return undefined;
  const episodes = last.reduce((a, e) => a + e.episodes, 0);
  const invalid = last.reduce((a, e) => a + e.endedInvalid, 0);
  const share = invalid / episodes;
  if (share < t.invalidEndedShare) return undefined;
  const at = last[last.length - 1];
  return {
    code: 'TRN409',
    path: ['model', 'model_path'],
    metric: 'monitor/rollouts.jsonl',
    step: at.step,
    message: `${invalid} of the ${episodes} recorded episodes over the last ${last.length} steps (${Math.round(share * 100)}%) ended on an invalid action: the model's last answer named no move (no \`\`\`Up\`\`\` block with a direction), so the episode ran out of turns or tokens while the model was not playing, and GRPO mostly compares failures of format. Start from a model that answers in the format: an instruct model, or a warm-up on demonstrations (an SFT stage before GRPO).`,
  };
}

/** The rules in code order, so findings come out as TRN400…TRN409. */
const HEALTH_RULES: readonly ((rule: RuleInput) => HealthFinding | undefined)[] = [
  truncatedResponses,
  identicalGroupRewards,
  entropyCollapse,
  klRunaway,
  gradNormSpike,
  stalledRun,
  trainerBehind,
  budgetEndedEpisodes,
  sameOutcomeEpisodes,
  invalidEndedEpisodes,
];

/** The latest step of any role, and the median time between steps of the role that logged it. */
function stalled(
  series: HealthSeries,
  now: number,
  factor: number,
): { tag: string; step: number; idle: number; usual: number } | undefined {
  // One timestamp per (role's) step: the wall times of a step's tags are within milliseconds of each other.
  const byTagSteps: { tag: string; times: { step: number; wall: number }[] }[] = [];
  for (const tag of ['time/train_step', 'time/explore_step', 'actor/grad_norm', 'rollout/model_version']) {
    const ps = series.get(tag);
    if (!ps) continue;
    const times = ps.flatMap((p) => (p.wallTime === null ? [] : [{ step: p.step, wall: p.wallTime }]));
    if (times.length >= 3) byTagSteps.push({ tag, times });
  }
  let latest: { tag: string; step: number; wall: number; usual: number } | undefined;
  for (const { tag, times } of byTagSteps) {
    const gaps = times
      .slice(1)
      .map((t, i) => t.wall - times[i].wall)
      .filter((g) => g > 0);
    if (!gaps.length) continue;
    const last = times[times.length - 1];
    if (!latest || last.wall > latest.wall) latest = { tag, step: last.step, wall: last.wall, usual: median(gaps) };
  }
  if (!latest) return undefined;
  const idle = now - latest.wall;
  return idle > latest.usual * factor ? { tag: latest.tag, step: latest.step, idle, usual: latest.usual } : undefined;
}

/** Rows of a run (runtime/metrics' ScalarRow shape) as health series: by tag, each in step order. */
export function healthSeriesOf(
  rows: Iterable<{ tag: string; step: number; value: number; wallTime: number | null }>,
): Map<string, HealthPoint[]> {
  const out = new Map<string, HealthPoint[]>();
  for (const r of rows) {
    let s = out.get(r.tag);
    if (!s) out.set(r.tag, (s = []));
    s.push({ step: r.step, value: r.value, wallTime: r.wallTime });
  }
  for (const s of out.values())
    if (s.some((p, i) => i > 0 && s[i - 1].step > p.step)) s.sort((a, b) => a.step - b.step);
  return out;
}
