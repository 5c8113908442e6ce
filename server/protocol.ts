/**
 * The custom LSP messages between the server and its clients (the VS Code extension, tests). Constants and types
 * only, so a client can import it without bundling the server.
 */
import type { ReleaseSource } from './service/analyze';

export type { ResolvedConfigResponse } from './service/resolved-config';
export type { ReleaseSource };

/** Request `{ uri }` → `ResolvedConfigResponse | null`: the config Trinity will run, per stage. */
export const RESOLVED_CONFIG_REQUEST = 'trinity/resolvedConfig';

/** Notification sent with each validation: the release a document is checked against and why. */
export const DOCUMENT_RELEASE_NOTIFICATION = 'trinity/documentRelease';

export interface DocumentReleaseParams {
  uri: string;
  release: string;
  source: ReleaseSource;
}
