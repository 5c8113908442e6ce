/**
 * The custom LSP messages between the server and its clients (the VS Code extension, tests). Constants and types
 * only, so a client can import it without bundling the server.
 */
import type { ReleaseSource } from './service/analyze';

export type { ResolvedConfigResponse } from './service/resolved-config';
export type { RunPlanResponse, RunPlanStage } from './service/run-plan';
export type { ReleaseSource };

/** Request `{ uri }` → `ResolvedConfigResponse | null`: the config Trinity will run, per stage. */
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
