/**
 * The metric names a Trinity run of a resolved config logs, per role, with Trinity's own names (its monitor,
 * explorer, experience pipeline, trainer and veRL metric utilities). The runtime's monitor emits the same names.
 */
import { algorithmTypeAt } from '../model/algorithms';
import { rolesOf } from '../model/choices';
import { atLeast, NEWEST_RELEASE, type Release } from '../releases';

/** A resolved config's plain values (check/'s Cfg; declared here so runs/ does not reach back into check/). */
type Cfg = Record<string, any>;

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
};

/** Per-experience metrics of workflows that score responses themselves and call no reward function. */
const WORKFLOW_METRICS: Record<string, string[]> = {
  on_policy_distill_workflow: ['kl_divergence'],
  on_policy_distill_math_workflow: ['kl_divergence', 'accuracy'],
  math_eval_workflow: ['accuracy'],
  async_math_eval_workflow: ['accuracy'],
  // MultiTurnWorkflow turns its numeric info into metrics (workflow.py `_build_experience_from_converted`).
  frozen_lake_workflow: ['env_steps', 'env_done', 'test_score'],
};

/** What the `pass_rate_calculator` operator reports: shares of the step's per-task pass rates in each range. */
const PASS_RATE_METRICS = [
  'valid_ratio',
  'strict_valid_ratio',
  '<1_ratio',
  '>0_ratio',
  '<15_16_ratio',
  '>1_16_ratio',
].map((k) => `selection/${k}`);

/** Keys each group advantage function reports under `pipeline/group_advantages/`. */
const ADVANTAGE_METRICS: Record<string, string[]> = {
  grpo: ['reward_mean', 'reward_std', 'skipped_count'],
  opmd: ['group_baseline', 'reward_mean'],
  asymre: ['group_baseline', 'reward_mean'],
  reinforce: ['reward_mean'],
  step_wise_grpo: ['reward_mean', 'reward_std'],
};

/** What `gigpo` reports (gigpo_advantage.py): per-task stats gathered as {mean,max,min}, and batch scalars. */
const GIGPO_STATS = ['gigpo/episode_reward_mean', 'gigpo/episode_reward_std'];
const GIGPO_SCALARS = [
  'gigpo/anchor_groups_total',
  'gigpo/anchor_groups_size_gt1',
  'gigpo/anchor_group_hit_ratio',
  'gigpo/mean_abs_A_E',
  'gigpo/mean_abs_A_S',
];

/** Trinity's class of each experience operator (trinity/buffer/operators), as the pipeline's timing keys name it. */
const OPERATOR_CLASSES: Record<string, string> = {
  reward_filter: 'RewardFilter',
  reward_std_filter: 'RewardSTDFilter',
  invalid_reward_filter: 'InvalidRewardFilter',
  reward_shaping_mapper: 'RewardShapingMapper',
  pass_rate_calculator: 'PassRateCalculator',
  data_juicer: 'DataJuicerOperator',
  dapo_dynamic_sampling: 'DAPODynamicSamplingFilter',
  mask_response_truncated: 'MaskResponseTruncatedOperator',
};

/** Trinity's class of each explorer-side advantage fn (trinity/algorithm/advantage_fn), the pipeline's last operator. */
const GROUP_ADVANTAGE_CLASSES: Record<string, string> = {
  grpo: 'GRPOGroupedAdvantage',
  step_wise_grpo: 'StepWiseGRPOAdvantageFn',
  reinforce: 'REINFORCEGroupAdvantage',
  opmd: 'OPMDGroupAdvantage',
  asymre: 'ASYMREGroupAdvantage',
  rec: 'RECGroupedAdvantage',
  gigpo: 'GiGPOAdvantageFn',
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
  mix: [
    'usual/pg_loss',
    'usual/pg_clipfrac',
    'usual/pg_clipfrac_lower',
    'usual/ppo_kl',
    'expert/sft_loss',
    'loss',
    'mu',
  ],
  mix_chord: [
    'usual/pg_loss',
    'usual/pg_clipfrac',
    'usual/pg_clipfrac_lower',
    'usual/ppo_kl',
    'expert/sft_loss',
    'expert/sft_phi_loss',
    'loss',
    'mu',
  ],
};

/**
 * Explorer metric names by release (rollout, experience pipeline, eval/bench), read from Trinity's history:
 * - pipeline: v0.3.0–v0.3.1 prefix every key `pipeline/`; from v0.3.2 (30ca213) keys are `experience_pipeline/<key>`
 *   and `time/…` keys stay unprefixed (trinity/buffer/pipelines/experience_pipeline.py): the pipeline's own timers
 *   `time/experience_pipeline/{operator/<i>_<class>,write,total}` (`pipelineTimeKeys`).
 * - per-run timing: v0.3.x log `time_per_task` (workflow_runner.py) and `task_run_time` (scheduler.py); from v0.4.0
 *   (4b27dff) `time/run_execution` (workflow_runner.py) and `time/task_execution` (scheduler.py).
 * - eval: v0.3.x gather each task's mean as `<prefix>/<taskset>/<key>/{mean,max,min}`; v0.4.0 turns a task's runs
 *   into `<key>/{mean,best,worst}@k` (k = 2, 4, … < n, then n) and gathers those with {mean,max,min}; from v0.5.0
 *   (fdfdc7b) a task gives `<key>/mean@n`, `<key>/std@n` (+ bootstrapped `best@k`/`worst@k` when n > 1) and
 *   `gather_eval_metrics` logs only their mean over tasks, `<prefix>/<taskset>/<key>/mean@n` (all of
 *   {mean,max,min,std} under `monitor.detailed_stats`). Time keys are averaged per task, not split by @n.
 * - `<prefix>/total_time` up to v0.3.1, `time/eval` from v0.3.2; `…/finished_task_count` from v0.4.0.
 */
export function pipelineMetricKey(release: Release, key: string): string {
  if (!atLeast(release, 'v0.3.2')) return `pipeline/${key}`;
  return key.startsWith('time/') ? key : `experience_pipeline/${key}`;
}

/** Whether the experience pipeline logs `time/experience_pipeline/…` (its `Timer`s, from v0.3.2). */
export function logsPipelineTimes(release: Release): boolean {
  return atLeast(release, 'v0.3.2');
}

/**
 * The timing key of the pipeline's operator at `index` (the configured operators in order, then the group advantage
 * fn): `time/experience_pipeline/operator/<index>_<class>`. From v0.5.2 the pipeline wraps every legacy
 * `ExperienceOperator` (all built-in operators and advantage fns) with `ensure_v1_operator`, so the class named is
 * `ExperienceOperatorV1Wrapper`. Undefined before v0.3.2 and for a name whose class is not known (plugins).
 */
export function pipelineOperatorTimeKey(
  release: Release,
  index: number,
  name: string,
  kind: 'operator' | 'advantage',
): string | undefined {
  if (!logsPipelineTimes(release)) return undefined;
  const cls = (kind === 'operator' ? OPERATOR_CLASSES : GROUP_ADVANTAGE_CLASSES)[name];
  if (!cls) return undefined;
  return `time/experience_pipeline/operator/${index}_${atLeast(release, 'v0.5.2') ? 'ExperienceOperatorV1Wrapper' : cls}`;
}

/** Every `time/experience_pipeline/…` key of a pipeline of `operators` then `advantage` (when explorer-side). */
export function pipelineTimeKeys(release: Release, operators: readonly string[], advantage?: string): string[] {
  if (!logsPipelineTimes(release)) return [];
  const ops = operators.map((o, i) => pipelineOperatorTimeKey(release, i, o, 'operator'));
  const adv =
    advantage && GROUP_ADVANTAGE_CLASSES[advantage]
      ? [pipelineOperatorTimeKey(release, operators.length, advantage, 'advantage')]
      : [];
  return [...ops, ...adv]
    .filter((k): k is string => k !== undefined)
    .concat('time/experience_pipeline/write', 'time/experience_pipeline/total');
}

/** The timing keys of one task's run (workflow runner) and of the whole task (scheduler), before gathering. */
export function runMetricKeys(release: Release): { run: string; task: string } {
  return atLeast(release, 'v0.4.0')
    ? { run: 'time/run_execution', task: 'time/task_execution' }
    : { run: 'time_per_task', task: 'task_run_time' };
}

export type EvalStyle = 'stats' | 'at-k' | 'at-n';

/** How eval runs are reduced: per-task mean then {mean,max,min} (≤ v0.3.2), @k stats (v0.4.0), @n stats (≥ v0.5.0). */
export function evalStyle(release: Release): EvalStyle {
  return atLeast(release, 'v0.5.0') ? 'at-n' : atLeast(release, 'v0.4.0') ? 'at-k' : 'stats';
}

const isTimeKey = (key: string) => key.includes('time/task_execution') || key.includes('time/run_execution');

/** v0.4.0's subset sizes: 2, 4, … below n, then n. */
export function evalKs(n: number): number[] {
  const ks: number[] = [];
  for (let k = 2; k < n; k *= 2) ks.push(k);
  ks.push(n);
  return ks;
}

/**
 * The per-task keys Trinity's `calculate_task_level_metrics(is_eval=True)` makes of one key over n runs (≥ v0.4.0);
 * from v0.5.0 best@k/worst@k are bootstrapped (n > 1).
 */
export function evalTaskKeys(release: Release, key: string, n: number): string[] {
  const style = evalStyle(release);
  if (style === 'stats' || isTimeKey(key)) return [key];
  if (style === 'at-k') return evalKs(n).flatMap((k) => [`${key}/mean@${k}`, `${key}/best@${k}`, `${key}/worst@${k}`]);
  const out = [`${key}/mean@${n}`, `${key}/std@${n}`];
  if (n > 1) for (const k of evalKs(n)) out.push(`${key}/best@${k}`, `${key}/worst@${k}`);
  return out;
}

/** The stats over tasks one per-task eval key is logged with: `/{mean,max,min}`, or (≥ v0.5.0) the bare mean. */
export function evalGatherSuffixes(release: Release, detailedStats = false): string[] {
  if (evalStyle(release) !== 'at-n') return ['/mean', '/max', '/min'];
  return detailedStats ? ['/mean', '/max', '/min', '/std'] : [''];
}

/** Every name one eval metric key of a taskset is logged under: `<prefix>/<taskset>/…`. */
export function evalMetricKeys(
  release: Release,
  prefix: string,
  taskset: string,
  key: string,
  n: number,
  detailedStats = false,
): string[] {
  const sfx = evalGatherSuffixes(release, detailedStats);
  return evalTaskKeys(release, key, n).flatMap((k) => sfx.map((s) => `${prefix}/${taskset}/${k}${s}`));
}

/** The eval wall-time key: `<prefix>/total_time` up to v0.3.1, `time/eval` after. */
export function evalTimeKey(release: Release, prefix: string): string {
  return atLeast(release, 'v0.3.2') ? 'time/eval' : `${prefix}/total_time`;
}

/** Whether `rollout/finished_task_count` and `<prefix>/<taskset>/finished_task_count` are logged (≥ v0.4.0). */
export function logsFinishedTaskCount(release: Release): boolean {
  return atLeast(release, 'v0.4.0');
}

/** The metric names a run of `cfg` logs with Trinity `release` (default: the newest modelled release). */
export function metricNames(cfg: Cfg, release: Release = NEWEST_RELEASE): MetricNames {
  const roles = rolesOf(cfg.mode as string);
  return {
    explorer: roles.explorer ? explorerMetrics(cfg, release) : [],
    trainer: roles.trainer ? trainerMetrics(cfg, release) : [],
  };
}

function tasksetsOf(cfg: Cfg): Cfg[] {
  const input = cfg.buffer?.explorer_input ?? {};
  return [...(input.taskset ? [input.taskset] : []), ...(input.tasksets ?? [])];
}

function taskMetricKeys(ts: Cfg | undefined, cfg: Cfg, release: Release): string[] {
  const workflow = ts?.default_workflow_type ?? cfg.buffer?.explorer_input?.default_workflow_type;
  const reward =
    ts?.default_reward_fn_type ?? cfg.buffer?.explorer_input?.default_reward_fn_type ?? WORKFLOW_REWARDS[workflow];
  const run = runMetricKeys(release);
  return [run.run, run.task, ...(WORKFLOW_METRICS[workflow] ?? REWARD_METRICS[reward] ?? [])];
}

/**
 * What serve mode's service reports (trinity/explorer/proxy/service.py `collect_metrics`, explorer/api/service.py up
 * to v0.3.2): per rollout engine its request count and model version, the experiences recorded, and from v0.4.0 those
 * made ready by feedback. Logged with the experience pipeline's metrics at each commit (each interval up to v0.3.2).
 */
export function serviceMetricKeys(release: Release, engines = 1): string[] {
  const out: string[] = [];
  for (let i = 0; i < engines; i++)
    out.push(`rollout/model_${i}/total_request_count`, `rollout/model_${i}/model_version`);
  out.push('rollout/total_experience_count');
  if (atLeast(release, 'v0.4.0')) out.push('rollout/ready_experience_count');
  return out;
}

function explorerMetrics(cfg: Cfg, release: Release): string[] {
  const out: string[] = [];
  const evalPrefix = cfg.mode === 'bench' ? 'bench' : 'eval';
  const pipe = (k: string) => pipelineMetricKey(release, k);
  if (cfg.mode === 'serve') {
    // No tasksets and no eval: the served requests' experiences go through the pipeline.
    const engines = cfg.explorer?.rollout_model?.engine_num;
    out.push(...serviceMetricKeys(release, typeof engines === 'number' && engines > 0 ? engines : 1));
  } else if (cfg.mode !== 'bench') {
    out.push('rollout/model_version');
    if (logsFinishedTaskCount(release)) out.push('rollout/finished_task_count');
    const keys = new Set(tasksetsOf(cfg).flatMap((ts) => taskMetricKeys(ts, cfg, release)));
    if (keys.size === 0) taskMetricKeys(undefined, cfg, release).forEach((k) => keys.add(k));
    for (const k of keys) out.push(...stats(`rollout/${k}`));
  }
  if (cfg.mode !== 'bench') {
    out.push(pipe('experience_count'));
    const adv = cfg.algorithm?.advantage_fn;
    // From v0.3.2 GRPO folds its per-group `skipped_count` into a pipeline-level `filtered_count`, and the
    // step-wise GRPO adds `filtered_count` and `skipped_group_ratio` (trinity/algorithm/advantage_fn).
    const v032 = atLeast(release, 'v0.3.2');
    for (const k of ADVANTAGE_METRICS[adv] ?? [])
      if (!(v032 && adv === 'grpo' && k === 'skipped_count')) out.push(...stats(pipe(`group_advantages/${k}`)));
    const advFiltered = v032 && (adv === 'grpo' || adv === 'step_wise_grpo');
    if (v032 && adv === 'step_wise_grpo') out.push(pipe('skipped_group_ratio'));
    if (adv === 'gigpo') out.push(...GIGPO_STATS.flatMap((k) => stats(pipe(k))), ...GIGPO_SCALARS.map(pipe));
    const ops = (cfg.data_processor?.experience_pipeline?.operators ?? []) as { name?: string }[];
    const filters = ['reward_filter', 'reward_std_filter', 'invalid_reward_filter', 'dapo_dynamic_sampling'];
    if (advFiltered || ops.some((o) => filters.includes(String(o?.name)))) out.push(pipe('filtered_count'));
    if (ops.some((o) => o?.name === 'dapo_dynamic_sampling'))
      out.push(pipe('dropped_all_correct'), pipe('dropped_all_wrong'));
    if (ops.some((o) => o?.name === 'mask_response_truncated')) out.push(pipe('masked_truncated_count'));
    if (ops.some((o) => o?.name === 'reward_shaping_mapper')) out.push(...stats(pipe('reward_diff')));
    if (ops.some((o) => o?.name === 'pass_rate_calculator')) out.push(...PASS_RATE_METRICS.map(pipe));
    out.push(
      ...pipelineTimeKeys(
        release,
        ops.map((o) => String(o?.name ?? '')),
        adv,
      ),
    );
  }
  // Serve mode never evaluates (its explorer has no scheduler to run eval tasks).
  const evals = (cfg.mode === 'serve' ? [] : (cfg.buffer?.explorer_input?.eval_tasksets ?? [])) as Cfg[];
  const detailed = atLeast(release, 'v0.5.0') && cfg.monitor?.detailed_stats === true;
  evals.forEach((ts, i) => {
    const name = ts?.name || `eval_taskset_${i}`;
    const n = typeof ts?.repeat_times === 'number' && ts.repeat_times > 0 ? ts.repeat_times : 1;
    if (logsFinishedTaskCount(release)) out.push(`${evalPrefix}/${name}/finished_task_count`);
    for (const k of taskMetricKeys(ts, cfg, release))
      out.push(...evalMetricKeys(release, evalPrefix, name, k, n, detailed));
  });
  if (evals.length) out.push(evalTimeKey(release, evalPrefix));
  return out;
}

function trainerMetrics(cfg: Cfg, release: Release): string[] {
  const a = cfg.algorithm ?? {};
  const out = [
    'time/read_experience',
    'time/gather_experience',
    'time/train_step',
    'time/sync_weight',
    'time/save_checkpoint',
  ];
  // SampleStrategy.set_model_version_metric (from v0.4.0): over the experiences an explorer made (they carry a model
  // version; SFT and DPO rows do not); the drift from main (PR #579).
  if (atLeast(release, 'v0.4.0') && algorithmTypeAt(String(a.algorithm_type), release)?.schema === 'experience') {
    out.push(...stats('sample/model_version'));
    if (release === 'main') out.push(...stats('sample/model_version_drift'));
  }
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
  out.push(
    ...stats('response_length'),
    'response_length/clip_ratio',
    ...stats('prompt_length'),
    'prompt_length/clip_ratio',
  );
  out.push('perf/total_num_tokens', 'perf/time_per_step', 'perf/throughput');
  // veRL's actor update logs its peak GPU memory and the machine's memory in use.
  out.push('perf/max_memory_allocated_gb', 'perf/max_memory_reserved_gb', 'perf/cpu_memory_used_gb');
  return out;
}
