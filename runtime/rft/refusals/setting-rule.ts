/** One row of a table of settings the local runtime refuses: the written key, why, and what runs instead. */
import type { Release } from '../../config/releases';

export interface SettingRule {
  /**
   * Dotted path of the written setting in the checked config; a `*` segment stands for every entry of the list or map
   * there (`explorer.auxiliary_models.*.ignore_eos`).
   */
  path: string;
  /** The first release whose meaning of the key the rule states (main when unset: the sync keys are main's). */
  since?: Release;
  /** Why the written value (at `at`, `path` with its `*`s filled in) is not what this runtime runs, or undefined. */
  refuse(value: unknown, cfg: Record<string, any>, at: string): string | undefined;
  /** What this runtime runs instead, in the message's words. */
  local: readonly string[];
  /** What the refused list of docs/runtime.md says of it. */
  doc: string;
}

/** The last sentence of every refusal. */
export const HOW =
  'To run this config for real, set `trinityWorkbench.runWith: trinity` (or run `trinity run --config` with Trinity-RFT installed).';
