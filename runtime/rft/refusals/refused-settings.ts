/**
 * Settings of a checked config that Trinity-RFT honours and this runtime does not: main's per-side sync intervals,
 * recomputed old log-probs, rollout correction and MoE router replay (Trinity-RFT f3c8dec), the features of
 * refused-features.ts (Data-Juicer pipelines, remote engines) and the sampling, RoPE and optimizer settings of
 * refused-model-settings.ts. A run would silently do something else, so `run`
 * refuses them with the registry entries it lacks (refusals.ts) and the language server shows them as the same
 * information.
 */
import type { CheckResult } from '../../config/check-config';
import { keyRangeOf, valueSource, writtenIn } from '../../config/check-config';
import type { Range } from '../../config/load/yaml-tree';
import { valueAtPath } from '../../config/config-path';
import { rolesOf } from '../../config/model/choices';
import { atLeast } from '../../config/releases';
import { FEATURE_RULES } from './refused-features';
import { MODEL_SETTING_RULES } from './refused-model-settings';
import { HOW, type SettingRule } from './setting-rule';

export interface SettingRefusal {
  /** Dotted path in the checked config. */
  path: string;
  /** The value as written, for the message. */
  name: string;
  runIndex: number;
  range: Range;
  /** What this runtime runs instead, in the message's words. */
  local: readonly string[];
  message: string;
}

type Rule = SettingRule;

const RULES: readonly Rule[] = [
  ...(['explorer_sync_interval', 'trainer_sync_interval'] as const).map(
    (key): Rule => ({
      path: `synchronizer.${key}`,
      local: ['sync_interval'],
      doc: `\`synchronizer.${key}\` other than \`sync_interval\``,
      refuse: (v, cfg) =>
        v !== null && v !== undefined && v !== cfg.synchronizer?.sync_interval
          ? `a separate \`${key}\` (${v}) runs on Trinity-RFT only; the local runtime syncs both sides every \`sync_interval\` (${cfg.synchronizer?.sync_interval}) steps`
          : undefined,
    }),
  ),
  {
    path: 'algorithm.bypass_old_logprobs',
    local: ['true'],
    doc: '`algorithm.bypass_old_logprobs: false` (old log-probs recomputed by the trainer)',
    refuse: (v) =>
      v === false
        ? 'recomputing the old log-probs in the trainer runs on Trinity-RFT only; the local trainer uses the rollout log-probs (`bypass_old_logprobs: true`)'
        : undefined,
  },
  {
    path: 'algorithm.rollout_correction',
    local: ['null'],
    doc: '`algorithm.rollout_correction`',
    refuse: (v) =>
      v !== null && v !== undefined
        ? 'rollout correction (importance weights, rejection sampling) runs on Trinity-RFT only; the local trainer applies none'
        : undefined,
  },
  {
    path: 'algorithm.enable_router_replay',
    local: ['false'],
    doc: '`algorithm.enable_router_replay` (MoE router replay)',
    refuse: (v) =>
      v === true
        ? 'router replay runs on Trinity-RFT only (MoE models); the local runtime runs dense models and replays nothing'
        : undefined,
  },
  {
    // trinity/explorer/scheduler.py `_split_and_submit_tasks` (7d2323f … f3c8dec): a task's repeat_times runs are cut
    // into chunks of this size from run_id_base 0, each chunk a sub-task with its own runner, timeout and retries,
    // and the task's status gathers theirs. Chunks at least repeat_times long are one chunk: Trinity's unsplit task.
    path: 'explorer.max_repeat_times_per_runner',
    since: 'v0.3.0',
    local: ['null'],
    doc: "`explorer.max_repeat_times_per_runner` below a taskset's `repeat_times` (a task split into sub-tasks)",
    refuse: (v, cfg) => {
      const repeats = largestRepeatTimes(cfg);
      return typeof v === 'number' && v > 0 && v < repeats && cfg.mode !== 'serve' && rolesOf(String(cfg.mode)).explorer
        ? `splitting each task's ${repeats} runs into sub-tasks of ${v} (each on its own runner, with its own timeout and retries) runs on Trinity-RFT only; the local explorer runs a task's \`repeat_times\` runs as one task`
        : undefined;
    },
  },
  ...FEATURE_RULES,
  ...MODEL_SETTING_RULES,
];

/** The most runs a task of the config repeats: `algorithm.repeat_times` (training tasksets), each eval taskset's own. */
function largestRepeatTimes(cfg: Record<string, any>): number {
  const evals = (cfg.buffer?.explorer_input?.eval_tasksets ?? []) as { repeat_times?: unknown }[];
  const all = [cfg.algorithm?.repeat_times, ...evals.map((t) => t?.repeat_times)];
  return Math.max(1, ...all.filter((n): n is number => typeof n === 'number'));
}

/** Every refused setting, for the refused list of docs/runtime.md. */
export const REFUSED_SETTINGS: readonly Pick<SettingRule, 'path' | 'doc'>[] = RULES;

/** The paths of `cfg` that `pattern` names: each `*` segment stands for every index of a list (or key of a map) there. */
function pathsIn(cfg: Record<string, unknown>, pattern: string): string[] {
  const star = pattern.indexOf('.*');
  if (star < 0) return [pattern];
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 2);
  const held = valueAtPath(cfg, head);
  const keys = Array.isArray(held)
    ? held.map((_, i) => String(i))
    : held !== null && typeof held === 'object'
      ? Object.keys(held)
      : [];
  return keys.flatMap((k) => pathsIn(cfg, `${head}.${k}${tail}`));
}

/** The written settings of `result` (each rule from its release on) that this runtime would not honour. */
export function settingRefusals(result: CheckResult): SettingRefusal[] {
  const release = result.loaded.release;
  const out: SettingRefusal[] = [];
  const seen = new Set<string>();
  result.runs.forEach((run, runIndex) => {
    const cfg = run.resolved as Record<string, any>;
    for (const rule of RULES) {
      if (!atLeast(release, rule.since ?? 'main')) continue;
      for (const path of pathsIn(cfg, rule.path)) {
        if (!writtenIn(result, path, runIndex)) continue;
        const value = valueAtPath(cfg, path) as any;
        const why = rule.refuse(value, cfg, path);
        if (!why) continue;
        // A whole section (a pipeline) is shown at its key; a value at the value.
        const range =
          value !== null && typeof value === 'object'
            ? keyRangeOf(result, path, runIndex)
            : (valueSource(result, path, runIndex)?.range ?? [0, 0]);
        // One refusal per written place: a stage repeats it, a taskset is also the first of `tasksets`.
        if (seen.has(`${range[0]}|${why}`)) continue;
        seen.add(`${range[0]}|${why}`);
        out.push({
          path,
          name: String(value),
          runIndex,
          range,
          local: rule.local,
          message: `\`${path}\`: ${why}. ${HOW}`,
        });
      }
    }
  });
  return out;
}
