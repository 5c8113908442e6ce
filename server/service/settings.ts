/** What the user can configure (`trinityWorkbench.*`), as the service sees it. */
import type { Release } from '../../runtime/config/releases';

export interface ServiceSettings {
  /** `trinityWorkbench.trinityVersion`: a release, or 'auto'. */
  trinityVersion: Release | 'auto';
  /** `trinityWorkbench.disabledRules`: codes never reported, e.g. ["TRN303"]. */
  disabledRules: string[];
  /** `trinityWorkbench.inlayHints.enabled`. */
  inlayHints: boolean;
  /** `trinityWorkbench.runWith` is `local`: runs use this runtime, so what it lacks is shown (TRN312). */
  runsLocally: boolean;
}

export const DEFAULT_SETTINGS: ServiceSettings = { trinityVersion: 'auto', disabledRules: [], inlayHints: true, runsLocally: true };
