/**
 * The metric names a Trinity run of a resolved config logs, per role, with Trinity's own names (its monitor,
 * explorer, experience pipeline, trainer and veRL metric utilities). The runtime's monitor emits the same names.
 */
import type { Cfg } from './check/context';
import { rolesOf } from './model/choices';

export interface MetricNames {
  explorer: string[];
  trainer: string[];
}

const STATS = ['mean', 'max', 'min'];
const stats = (prefix: string) => STATS.map((s) => `${prefix}/${s}`);

/** Per-experience metrics each built-in reward function adds, averaged per task by the explorer. */
const REWARD_METRICS: Record<string, string[]> = {
  accuracy_reward: ['accuracy'],
  math_reward: ['accuracy', 'format_score'],
  math_boxed_reward: ['accuracy', 'format_score'],
  math_dapo_reward: ['accuracy', 'format_score'],
  countdown_reward: ['score'],
  format_reward: ['format_score'],
};

/** The reward function a workflow uses when a taskset names none. */
const WORKFLOW_REWARDS: Record<string, string> = {
  math_workflow: 'math_reward',
  async_math_workflow: 'math_reward',
  math_boxed_workflow: 'math_boxed_reward',
  async_math_boxed_workflow: 'math_boxed_reward',
  math_eval_workflow: 'math_reward',
  async_math_eval_workflow: 'math_reward',
};

/** Keys each group advantage function reports under `pipeline/group_advantages/`. */
const ADVANTAGE_METRICS: Record<string, string[]> = {
  grpo: ['reward_mean', 'reward_std', 'skipped_count'],
  opmd: ['group_baseline', 'reward_mean'],
  asymre: ['group_baseline', 'reward_mean'],
  reinforce: ['reward_mean'],
  step_wise_grpo: ['reward_mean', 'reward_std'],
};

/** What each policy loss logs under `actor/`. */
const POLICY_LOSS_METRICS: Record<string, string[]> = {
  ppo: ['pg_loss', 'pg_clipfrac', 'pg_clipfrac_lower', 'ppo_kl'],
  gspo: ['pg_loss', 'pg_clipfrac', 'ppo_kl', 'ppo_kl_seq'],
  sapo: ['sapo_loss', 'ppo_kl', 'avg_soft_gate', 'avg_ratio', 'pos_adv_frac'],
  opmd: ['opmd_loss'],
  dpo: ['dpo_loss', 'chosen_reward', 'rejected_reward', 'accuracy_mean'],
  sft: ['sft_loss'],
  sft_is: ['sft_is_loss'],
  sft_phi: ['sft_phi_loss'],
  topr: ['topr_loss', 'avg_alpha', 'avg_ratio'],
  cispo: ['cispo_loss', 'ppo_kl', 'unmasked_frac'],
  sppo: ['pg_loss', 'pg_clipfrac'],
  rec: ['pg_loss', 'pg_clipfrac', 'ppo_kl'],
  mix: ['usual/pg_loss', 'usual/pg_clipfrac', 'usual/pg_clipfrac_lower', 'usual/ppo_kl', 'expert/sft_loss', 'loss', 'mu'],
  mix_chord: ['usual/pg_loss', 'usual/pg_clipfrac', 'usual/pg_clipfrac_lower', 'usual/ppo_kl', 'expert/sft_loss', 'expert/sft_phi_loss', 'loss', 'mu'],
};

export function metricNames(cfg: Cfg): MetricNames {
  const roles = rolesOf(cfg.mode as string);
  return { explorer: roles.explorer ? explorerMetrics(cfg) : [], trainer: roles.trainer ? trainerMetrics(cfg) : [] };
}

function tasksetsOf(cfg: Cfg): Cfg[] {
  const input = cfg.buffer?.explorer_input ?? {};
  return [...(input.taskset ? [input.taskset] : []), ...(input.tasksets ?? [])];
}

function taskMetricKeys(ts: Cfg | undefined, cfg: Cfg): string[] {
  const workflow = ts?.default_workflow_type ?? cfg.buffer?.explorer_input?.default_workflow_type;
  const reward = ts?.default_reward_fn_type ?? cfg.buffer?.explorer_input?.default_reward_fn_type ?? WORKFLOW_REWARDS[workflow];
  return ['time_per_task', 'task_run_time', ...(REWARD_METRICS[reward] ?? [])];
}

function explorerMetrics(cfg: Cfg): string[] {
  const out: string[] = [];
  const evalPrefix = cfg.mode === 'bench' ? 'bench' : 'eval';
  if (cfg.mode !== 'bench') {
    out.push('rollout/model_version');
    const keys = new Set(tasksetsOf(cfg).flatMap((ts) => taskMetricKeys(ts, cfg)));
    if (keys.size === 0) taskMetricKeys(undefined, cfg).forEach((k) => keys.add(k));
    for (const k of keys) out.push(...stats(`rollout/${k}`));
    out.push('pipeline/experience_count');
    const adv = cfg.algorithm?.advantage_fn;
    for (const k of ADVANTAGE_METRICS[adv] ?? []) out.push(...stats(`pipeline/group_advantages/${k}`));
    const ops = (cfg.data_processor?.experience_pipeline?.operators ?? []) as { name?: string }[];
    if (ops.some((o) => o?.name === 'reward_filter' || o?.name === 'reward_std_filter')) out.push('pipeline/filtered_count');
    if (ops.some((o) => o?.name === 'reward_shaping_mapper')) out.push(...stats('pipeline/reward_diff'));
  }
  const evals = (cfg.buffer?.explorer_input?.eval_tasksets ?? []) as Cfg[];
  evals.forEach((ts, i) => {
    const name = ts?.name || `eval_taskset_${i}`;
    for (const k of taskMetricKeys(ts, cfg)) out.push(...stats(`${evalPrefix}/${name}/${k}`));
  });
  if (evals.length) out.push(`${evalPrefix}/total_time`);
  return out;
}

function trainerMetrics(cfg: Cfg): string[] {
  const a = cfg.algorithm ?? {};
  const out = ['time/read_experience', 'time/gather_experience', 'time/train_step', 'time/sync_weight', 'time/save_checkpoint'];
  for (const m of POLICY_LOSS_METRICS[a.policy_loss_fn] ?? ['pg_loss']) out.push(`actor/${m}`);
  if (a.entropy_loss_fn && a.entropy_loss_fn !== 'none') out.push('actor/entropy_loss');
  if (a.kl_loss_fn && a.kl_loss_fn !== 'none') out.push('actor/kl_loss', 'actor/kl_coef');
  out.push('actor/grad_norm', 'actor/lr');
  if (a.algorithm_type === 'ppo') {
    out.push('critic/vf_loss', 'critic/vf_clipfrac', 'critic/vpred_mean', 'critic/grad_norm', 'critic/lr');
    out.push(...stats('critic/score'), ...stats('critic/rewards'), ...stats('critic/returns'));
  }
  if (a.kl_penalty_fn && a.kl_penalty_fn !== 'none') out.push('critic/kl', 'critic/kl_coef');
  out.push(...stats('critic/advantages'));
  out.push(...stats('response_length'), 'response_length/clip_ratio', ...stats('prompt_length'), 'prompt_length/clip_ratio');
  out.push('perf/total_num_tokens', 'perf/time_per_step', 'perf/throughput');
  return out;
}
