/** What the client sends the server: its initialization options and `trinityWorkbench.*` settings, as the service takes them. */
import { parseRelease } from '../../runtime/config/releases';
import { DEFAULT_HEALTH_THRESHOLDS, type RunHealthThresholds } from '../../runtime/config/runs/run-health';
import { DEFAULT_SETTINGS, type ServiceSettings } from '../service/settings';
import { parseGpu, type GpuSpec } from '../../runtime/config/gpu-memory/gpu-cards';

export interface InitOptions {
  /** A fixed delay between the last edit and validation, in ms (default: sized from what validating the document costs). */
  debounceMs?: number;
  /** Settings to use when the client does not answer `workspace/configuration`. */
  settings?: ClientSettings;
  /** Skip looking for an installed trinity-rft (tests). */
  detectPython?: boolean;
}

/** `trinityWorkbench.*` as the client gives them (pushed, pulled or in the initialization options). */
export type ClientSettings = Partial<
  Omit<ServiceSettings, 'runHealth' | 'gpu'> & {
    gpu: string | number;
    pythonPath: string;
    pluginDirs: string[];
    runWith: string;
    runHealth: Record<string, unknown>;
  }
>;

/** The service's settings from the client's: anything unset or malformed keeps its default. */
export function serviceSettings(s: ClientSettings): ServiceSettings {
  const version = s.trinityVersion && s.trinityVersion !== 'auto' ? parseRelease(s.trinityVersion) : undefined;
  return {
    trinityVersion: version ?? 'auto',
    disabledRules: Array.isArray(s.disabledRules) ? s.disabledRules : DEFAULT_SETTINGS.disabledRules,
    inlayHints: typeof s.inlayHints === 'boolean' ? s.inlayHints : DEFAULT_SETTINGS.inlayHints,
    runsLocally: s.runWith === undefined ? DEFAULT_SETTINGS.runsLocally : s.runWith === 'local',
    runHealth: runHealthSettings(s.runHealth),
    gpu: gpuSetting(s.gpu),
  };
}

/** `trinityWorkbench.gpu`: a card name or GiB; anything unreadable keeps the default card. */
function gpuSetting(given: unknown): GpuSpec {
  const gpu = parseGpu(given);
  return 'problem' in gpu ? DEFAULT_SETTINGS.gpu : gpu;
}

/** `trinityWorkbench.runHealth.*` as given (numbers and a boolean; anything else keeps the default). */
function runHealthSettings(given: Record<string, unknown> | undefined): ServiceSettings['runHealth'] {
  const out: ServiceSettings['runHealth'] = { ...DEFAULT_SETTINGS.runHealth };
  if (!given || typeof given !== 'object') return out;
  if (typeof given.enabled === 'boolean') out.enabled = given.enabled;
  for (const k of Object.keys(DEFAULT_HEALTH_THRESHOLDS) as (keyof RunHealthThresholds)[]) {
    const v = given[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return out;
}
