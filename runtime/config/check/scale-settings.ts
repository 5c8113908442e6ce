/**
 * Settings a local run accepts but does not use, because they are about scale: how many engines, GPUs or nodes
 * share the same computation. The one table behind TRN319 (information at the written key, when runs are local)
 * and the run's line at its start naming what it ignores, so the two always agree.
 */
import { valueAtPath, type ConfigPath } from '../config-path';

export interface ScaleSetting {
  path: ConfigPath;
  /** Whether `value` asks for scale this runtime does not have (mode: the run's mode). */
  applies(value: unknown, mode: string): boolean;
  /** Why a local run does without it and still computes the same result. */
  why: string;
}

export const SCALE_SETTINGS: readonly ScaleSetting[] = [
  {
    path: 'explorer.rollout_model.engine_num',
    applies: (v) => Number(v) > 1,
    why: 'one local model samples every rollout; more vLLM engines only spread the same requests over more GPUs',
  },
  {
    path: 'explorer.rollout_model.tensor_parallel_size',
    applies: (v) => Number(v) > 1,
    why: "the local engine holds the whole model; tensor parallelism splits the same weights' matrix products across GPUs",
  },
  {
    path: 'synchronizer.sync_method',
    applies: (v, mode) => v === 'nccl' && (mode === 'both' || mode === 'colocate'),
    why: 'the trainer hands its weights to the explorer in this process (memory sync); NCCL broadcasts the same weights between GPUs',
  },
  {
    path: 'trainer.ulysses_sequence_parallel_size',
    applies: (v) => Number(v) > 1,
    why: "the local trainer takes each sequence whole; Ulysses sequence parallelism splits the same sequence's attention across GPUs",
  },
  {
    path: 'cluster.node_num',
    applies: (v) => Number(v) > 1,
    why: "the local run is one process on this machine; nodes only add GPUs for the engines and the trainer's data parallelism",
  },
];

/** `path: value`, quoted as the messages name a setting. */
export function scaleSettingText(s: ScaleSetting, value: unknown): string {
  return `\`${s.path}: ${String(value)}\``;
}

/** The settings of a resolved config that ask for scale a local run does without, with their values. */
export function ignoredScaleSettings(cfg: Record<string, unknown>): { setting: ScaleSetting; value: unknown }[] {
  const mode = String(cfg.mode ?? 'both');
  return SCALE_SETTINGS.map((setting) => ({
    setting,
    value: valueAtPath(cfg, setting.path),
  })).filter(({ setting, value }) => setting.applies(value, mode));
}

/** The run's one line at its start, or undefined when it asks for no such scale. */
export function scaleNotice(cfg: Record<string, unknown>): string | undefined {
  const ignored = ignoredScaleSettings(cfg);
  if (!ignored.length) return undefined;
  return (
    'settings about scale that this local run does not use (the result is the same without them): ' +
    ignored.map(({ setting, value }) => `${scaleSettingText(setting, value)}: ${setting.why}`).join('; ')
  );
}
