/**
 * What an evaluation's success is called, best first: the math rewards' `accuracy`, frozen_lake_workflow's
 * `test_score` (1 at the goal), countdown_reward's `score`. The Runs view shows the first one an evaluation has; the
 * dashboard pins them all (through client/dashboard/messages.ts, the one module the webview may read). Pure.
 */
export const EVAL_SCORE_METRICS: readonly string[] = ['accuracy', 'test_score', 'score'];
