/**
 * The custom LSP messages between the server and its clients (the VS Code extension, tests). Constants and types
 * only, so a client can import it without bundling the server.
 */
import type { ReleaseSource } from './service/analyze';

export type { ResolvedConfigResponse } from './service/resolved-config';
export type { RunPlanModel, RunPlanResponse, RunPlanStage } from './service/run-plan';
export type { ReleaseSource };
export { ADD_PLUGIN_DIR_COMMAND } from './service/client-commands';

/** Request `{ uri }` → `ResolvedConfigResponse | null`: the config Trinity will run, per stage (a file not open: from disk). */
export const RESOLVED_CONFIG_REQUEST = 'trinity/resolvedConfig';

/** Request `{ uri }` → `RunPlanResponse | null`: a document's errors and where its run writes (before Run). */
export const RUN_PLAN_REQUEST = 'trinity/runPlan';

/** Notification sent with each validation: the release a document is checked against and why. */
export const DOCUMENT_RELEASE_NOTIFICATION = 'trinity/documentRelease';

export interface DocumentReleaseParams {
  uri: string;
  release: string;
  source: ReleaseSource;
}

/**
 * Request `{ tags, uri? }` → `Record<tag, keys[]>`: the config keys that drive each metric (the dashboard's cards),
 * in the release of the open document `uri` (else the newest).
 */
export const METRIC_DRIVERS_REQUEST = 'trinity/metricDrivers';

export interface MetricDriversParams {
  tags: string[];
  uri?: string;
}

/**
 * Request `{ uri, key }` (a dotted config path) → `KeyLocation | null`: where to show that key in the document —
 * where it is written (at the root, else in the first stage that writes it), else its nearest written ancestor.
 */
export const KEY_LOCATION_REQUEST = 'trinity/keyLocation';

export interface KeyLocationParams {
  uri: string;
  key: string;
}

export type { KeyLocation } from './service/key-location';
