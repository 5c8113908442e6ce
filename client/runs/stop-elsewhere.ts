/**
 * Stop of a run this window did not start (a terminal's, another window's, another host's): SIGTERM to its process,
 * as Ctrl+C in its terminal would (the runtime stops after its current step), only when that pid is still the run's
 * process; another host's run is named with how to stop it there. No `vscode`.
 */
import { join } from 'node:path';
import { jobLockPath } from '../../runtime/protocol';
import { processRuns, type ProcessProbe } from '../../runtime/run-records';
import { stillRuns } from './job-dirs';
import { describeHolder, holderIsHere, runMode, type RunState } from './run-state';

/** What Stop did: `signalled` when SIGTERM went to the run's process; else `message` says why not. */
export type StopOutcome = { signalled: true } | { signalled: false; message: string };

export function stopElsewhere(run: RunState, label: string, isAlive: ProcessProbe = processRuns): StopOutcome {
  if (run.pid === undefined || run.runWith !== 'local')
    return { signalled: false, message: `${label} was not started here and names no process to stop.` };
  if (run.holder && !holderIsHere(run.holder))
    return {
      signalled: false,
      message: `${label} runs on ${run.holder.host} (${describeHolder(run.holder)}): stop it there (\`kill ${run.holder.pid}\` on ${run.holder.host}); if it no longer runs, delete ${join(run.jobDir, jobLockPath(runMode(run)))}.`,
    };
  // The pid may have ended, and been given to another process, since the board last looked.
  if (!stillRuns(run, isAlive)) return { signalled: false, message: `${label} has already ended.` };
  try {
    process.kill(run.pid, 'SIGTERM');
    return { signalled: true };
  } catch (e) {
    return { signalled: false, message: `Could not stop pid ${run.pid}: ${(e as Error).message}` };
  }
}
