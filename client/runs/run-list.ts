/**
 * Every run the Runs view lists: this window's live runs, and the job directories found on disk under the search
 * roots (runs of earlier windows, of the terminal, of Trinity-RFT). A live run wins over its own directory.
 */
import { resolve } from 'node:path';
import { findJobDirs, readJobRuns } from './job-dirs';
import type { RunManager } from './run-manager';
import type { RunState } from './run-state';

export function listRuns(manager: RunManager, roots: string[], extraJobDirs: Iterable<string> = []): RunState[] {
  const byKey = new Map<string, RunState>();
  for (const dir of new Set([...findJobDirs(roots), ...[...extraJobDirs].map((d) => resolve(d))])) {
    try {
      for (const run of readJobRuns(dir)) byKey.set(run.key, run);
    } catch {
      // Deleted while being read.
    }
  }
  // What this window saw of a run it ran is at least as good as a directory without a run record (Trinity's).
  for (const done of manager.endedRuns())
    if (!byKey.has(done.state.key) || byKey.get(done.state.key)!.status === 'unknown')
      byKey.set(done.state.key, done.state);
  for (const live of manager.liveRuns()) byKey.set(live.state.key, live.state);
  // Live first, then the most recent.
  return [...byKey.values()].sort(
    (a, b) =>
      Number(b.live) - Number(a.live) || (b.startedAt ?? 0) - (a.startedAt ?? 0) || a.jobDir.localeCompare(b.jobDir),
  );
}
