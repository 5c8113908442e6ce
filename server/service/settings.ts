/** What the user can configure (`trinityWorkbench.*`), as the service sees it. */
import type { Release } from '../../runtime/config/releases';
import { DEFAULT_HEALTH_THRESHOLDS, type RunHealthThresholds } from '../../runtime/config/runs/run-health';
import { DEFAULT_GPU, parseGpu, type GpuSpec } from '../../runtime/config/gpu-memory/gpu-cards';

/** `trinityWorkbench.runHealth.*`: whether run health diagnostics are shown, and their thresholds. */
export type RunHealthSettings = RunHealthThresholds & { enabled: boolean };

export interface ServiceSettings {
  /** `trinityWorkbench.trinityVersion`: a release, or 'auto'. */
  trinityVersion: Release | 'auto';
  /** `trinityWorkbench.disabledRules`: codes never reported, e.g. ["TRN303"]. */
  disabledRules: string[];
  /** `trinityWorkbench.inlayHints.enabled`. */
  inlayHints: boolean;
  /** `trinityWorkbench.runWith` is `local`: runs use this runtime, so what it lacks (TRN312), misses (TRN241) and does not use (TRN319) is shown. */
  runsLocally: boolean;
  /** `trinityWorkbench.runHealth.*`: run health diagnostics (TRN4xx) and their thresholds. */
  runHealth: RunHealthSettings;
  /** `trinityWorkbench.gpu`: the GPU the memory estimates are for. */
  gpu: GpuSpec;
}

export const DEFAULT_SETTINGS: ServiceSettings = {
  trinityVersion: 'auto',
  disabledRules: [],
  inlayHints: true,
  runsLocally: true,
  runHealth: { enabled: true, ...DEFAULT_HEALTH_THRESHOLDS },
  gpu: parseGpu(DEFAULT_GPU) as GpuSpec,
};
