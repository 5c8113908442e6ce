/**
 * Settings of a checked config that Trinity-RFT honours and this runtime does not: main's per-side sync intervals,
 * recomputed old log-probs, rollout correction and MoE router replay (Trinity-RFT f3c8dec). A run would silently do
 * something else, so `run` refuses them with the registry entries it lacks (refusals.ts) and the language server shows
 * them as the same information.
 */
import type { CheckResult } from '../../config/check-config';
import { valueSource, writtenIn } from '../../config/check-config';
import type { Range } from '../../config/load/yaml-tree';

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

const HOW =
  'To run this config for real, set `trinityWorkbench.runWith: trinity` (or run `trinity run --config` with Trinity-RFT installed).';

interface Rule {
  path: string;
  /** Why the written value is not what this runtime runs, or undefined when it is. */
  refuse(value: unknown, cfg: Record<string, any>): string | undefined;
  local: readonly string[];
}

const RULES: readonly Rule[] = [
  ...(['explorer_sync_interval', 'trainer_sync_interval'] as const).map(
    (key): Rule => ({
      path: `synchronizer.${key}`,
      local: ['sync_interval'],
      refuse: (v, cfg) =>
        v !== null && v !== undefined && v !== cfg.synchronizer?.sync_interval
          ? `a separate \`${key}\` (${v}) runs on Trinity-RFT only; the local runtime syncs both sides every \`sync_interval\` (${cfg.synchronizer?.sync_interval}) steps`
          : undefined,
    }),
  ),
  {
    path: 'algorithm.bypass_old_logprobs',
    local: ['true'],
    refuse: (v) =>
      v === false
        ? 'recomputing the old log-probs in the trainer runs on Trinity-RFT only; the local trainer uses the rollout log-probs (`bypass_old_logprobs: true`)'
        : undefined,
  },
  {
    path: 'algorithm.rollout_correction',
    local: ['null'],
    refuse: (v) =>
      v !== null && v !== undefined
        ? 'rollout correction (importance weights, rejection sampling) runs on Trinity-RFT only; the local trainer applies none'
        : undefined,
  },
  {
    path: 'algorithm.enable_router_replay',
    local: ['false'],
    refuse: (v) =>
      v === true
        ? 'router replay runs on Trinity-RFT only (MoE models); the local runtime runs dense models and replays nothing'
        : undefined,
  },
];

/** The written settings of `result` (main only: the keys are main's) that this runtime would not honour. */
export function settingRefusals(result: CheckResult): SettingRefusal[] {
  if (result.loaded.release !== 'main') return [];
  const out: SettingRefusal[] = [];
  const seen = new Set<string>();
  result.runs.forEach((run, runIndex) => {
    const cfg = run.resolved as Record<string, any>;
    for (const rule of RULES) {
      if (!writtenIn(result, rule.path, runIndex)) continue;
      const [section, key] = rule.path.split('.');
      const value = cfg[section]?.[key];
      const why = rule.refuse(value, cfg);
      if (!why) continue;
      const range = valueSource(result, rule.path, runIndex)?.range ?? [0, 0];
      if (seen.has(`${rule.path}|${range[0]}`)) continue;
      seen.add(`${rule.path}|${range[0]}`);
      out.push({
        path: rule.path,
        name: String(value),
        runIndex,
        range,
        local: rule.local,
        message: `\`${rule.path}\`: ${why}. ${HOW}`,
      });
    }
  });
  return out;
}
