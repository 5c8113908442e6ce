/**
 * Closing a stage's parts after it ended, however it ended: every step runs even when one fails. When the stage
 * failed, a step's own failure is only logged, so the run keeps the reason it failed for (a full disk fails the
 * buffer's closing write too, and that second error must not replace the first); otherwise the first is thrown.
 */
type Log = (level: 'warning', message: string) => void;

export async function closeEach(log: Log, stageFailed: boolean, steps: readonly (() => unknown)[]): Promise<void> {
  let first: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      if (stageFailed) log('warning', `while closing after the failure: ${(e as Error).message}`);
      else first ??= e;
    }
  }
  if (first !== undefined) throw first;
}
